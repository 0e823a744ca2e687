//! The tasks extension over rmcp: a `tools/call` that becomes a task, and `tasks/get`,
//! `tasks/update`, `tasks/cancel` (`crate::tasks` does the work).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateTaskResult, DetailedTask,
    GetTaskResult, Task,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::state::{Handler, Snapshot, State};
use super::{convert, elicit};
use crate::backend::CallContext;
use crate::era::Era;
use crate::events::CallEvent;
use crate::inputs::Inputs;
use crate::results::ToolResult;
use crate::results::store::Caller;
use crate::tasks::runner::{Execute, Job, TaskError, Whom};
use crate::tasks::{Policy, Tasks};
use crate::tool::Tool;

/// Whether this call runs as a task: the tool allows it, the server keeps tasks, and the
/// request declares the extension. A `required` tool refuses a request that does not.
pub(super) fn wanted(
    tool: &Tool,
    tasks: Option<&Arc<Tasks>>,
    context: &RequestContext<RoleServer>,
) -> Result<bool, ErrorData> {
    if tool.task == Policy::Never || tasks.is_none() {
        return Ok(false);
    }
    let declared = context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks());
    if !declared && tool.task == Policy::Required {
        let mut error = ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        );
        error.message = format!(
            "`{}` runs only as a task, and this request's clientCapabilities do not declare the io.modelcontextprotocol/tasks extension",
            tool.name
        )
        .into();
        return Err(error);
    }
    Ok(declared)
}

/// Who owns a task: the session, where one identifies the caller.
pub(super) fn owner(caller: &Caller) -> Option<String> {
    match caller {
        Caller::Session(session) => Some(session.clone()),
        // A prefix no session id has: a subject can never name a session's tasks.
        Caller::Subject(subject) => Some(format!("sub:{}", subject.0.subject)),
        Caller::Only | Caller::Anonymous => None,
    }
}

/// Starts the call as a task and answers with it.
pub(super) async fn start(
    handler: &Handler,
    tasks: &Arc<Tasks>,
    tool: Arc<Tool>,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    era: Era,
    caller: Caller,
) -> Result<CallToolResponse, ErrorData> {
    let snapshot = handler.snapshot();
    let server_info = (era == Era::Modern).then(|| snapshot.server_info.clone());
    let arguments = match tool.prepare(request.arguments) {
        Ok(arguments) => arguments,
        Err(message) => {
            let refused = tool.refuse_arguments(message, handler.metrics().map(|m| &**m));
            return Ok(convert::call_result(refused, server_info.as_ref()).into());
        }
    };
    // Questions are asked before the task exists (as in a plain call), unless the tool asks
    // them inside the task (`ask-in-task`), where `tasks/get` shows them.
    let (arguments, inputs) = if tool.ask_in_task || tool.inputs.is_empty() {
        (arguments, tool.inputs.clone())
    } else {
        let asking = elicit::Asking {
            inputs: &tool.inputs,
            method: "tools/call",
            name: &tool.name,
            responses: request.input_responses,
            state: request.request_state,
        };
        match elicit::gather(
            asking,
            arguments,
            context,
            era,
            super::handler::back_channel(context, handler.state.sessions),
            &handler.state.sealer,
        )
        .await?
        {
            elicit::Gathered::Ready(arguments) => (arguments, Inputs::default()),
            elicit::Gathered::Pending(pending) => return Ok(pending.into()),
            elicit::Gathered::Refused(message) => {
                let result = ToolResult::error(message).for_era(era, tool.legacy_wrapped());
                return Ok(convert::call_result(result, server_info.as_ref()).into());
            }
        }
    };
    let declared = context.client_capabilities().unwrap_or_default();
    let job = Job {
        tool: tool.name.clone(),
        owner: owner(&caller),
        arguments,
        inputs,
        can: [
            declared.elicitation.is_some(),
            declared.sampling.is_some(),
            declared.roots.is_some(),
        ],
        settings: snapshot.registry.task_settings,
        execute: Box::new(TaskCall {
            state: Arc::clone(&handler.state),
            snapshot,
            tool: Arc::clone(&tool),
            era,
            caller,
        }),
    };
    let record = tasks.start(job).await.map_err(|error| {
        tracing::error!(tool = %tool.name, %error, "could not start a task");
        ErrorData::internal_error(format!("could not start the task: {error}"), None)
    })?;
    tracing::info!(tool = %tool.name, task = %record.id, "started a task");
    let task: Task = serde_json::from_value(Value::Object(record.task_json()))
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// `tasks/get`.
pub(super) async fn get(
    tasks: &Arc<Tasks>,
    id: &str,
    caller: &Caller,
) -> Result<GetTaskResult, ErrorData> {
    let (record, answered) = tasks
        .get(id, Whom::Caller(owner(caller).as_deref()))
        .await
        .map_err(error)?;
    let detailed: DetailedTask = serde_json::from_value(Value::Object(record.detailed(&answered)))
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(GetTaskResult::new(detailed))
}

/// `tasks/update`.
pub(super) async fn update(
    tasks: &Arc<Tasks>,
    id: &str,
    caller: &Caller,
    responses: Map<String, Value>,
) -> Result<(), ErrorData> {
    tasks
        .answer(id, Whom::Caller(owner(caller).as_deref()), responses)
        .await
        .map_err(error)
}

/// `tasks/cancel`.
pub(super) async fn cancel(tasks: &Arc<Tasks>, id: &str, caller: &Caller) -> Result<(), ErrorData> {
    tasks
        .cancel(id, Whom::Caller(owner(caller).as_deref()))
        .await
        .map_err(error)
}

fn error(error: TaskError) -> ErrorData {
    match error {
        TaskError::Malformed(_) | TaskError::Unknown(_) => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        TaskError::Store(store) => {
            tracing::error!(error = %store, "the task store failed");
            ErrorData::internal_error(store.to_string(), None)
        }
    }
}

/// A task's call: the tool's one call path, with the server's processes and clients.
struct TaskCall {
    state: Arc<State>,
    snapshot: Arc<Snapshot>,
    tool: Arc<Tool>,
    era: Era,
    caller: Caller,
}

impl TaskCall {
    fn finish(&self, result: ToolResult) -> Map<String, Value> {
        convert::task_result(result.for_era(self.era, self.tool.legacy_wrapped()))
    }
}

impl Execute for TaskCall {
    fn execute(
        &self,
        arguments: Map<String, Value>,
        events: tokio::sync::mpsc::Sender<CallEvent>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Map<String, Value>> + Send + '_>> {
        Box::pin(async move {
            let _permit = match self.state.calls.acquire().await {
                Ok(permit) => permit,
                Err(busy) => {
                    return self.finish(ToolResult::error(format!(
                        "the server is busy: {} tool calls are already running; try again shortly",
                        busy.running
                    )));
                }
            };
            let context = CallContext {
                store: self.snapshot.registry.store(),
                caller: self.caller.clone(),
                events: Some(events),
                withheld_env: &self.snapshot.withheld_env,
                processes: &self.state.processes,
                clients: &self.state.clients,
                metrics: self.state.metrics.as_deref(),
            };
            let result = self.tool.call_prepared(&arguments, &context).await;
            self.finish(result)
        })
    }

    fn refused(&self, message: String) -> Map<String, Value> {
        self.finish(ToolResult::error(message))
    }
}
