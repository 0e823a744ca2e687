//! Stages 4 and 7: whether a call becomes a task, and the task that then runs stages 8 to 10
//! (and, for an `ask-in-task` tool, stage 5 inside it: `tasks::runner` asks through
//! `tasks/get` and `tasks/update`).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{CallError, Loaded, Services, Shape};
use crate::caller::Caller;
use crate::events::CallEvent;
use crate::inputs::Inputs;
use crate::results::ToolResult;
use crate::tasks::runner::{Execute, Job};
use crate::tasks::{Policy, Record, TaskStoreError, Tasks};
use crate::tool::Tool;

/// How a task keeps its result, already shaped for its client: the entry's encoding of it
/// (the protocol's, or the terminal's own copy for printing).
pub type Keep = Arc<dyn Fn(ToolResult) -> Map<String, Value> + Send + Sync>;

/// What an entry allows when its call may become a task.
pub struct AsTask {
    /// The request declares the tasks extension (a terminal's `--task` does).
    pub declared: bool,
    /// What the client can be asked inside the task.
    pub capabilities: crate::inputs::Capabilities,
    /// Questions may be asked inside the task (an `ask-in-task` tool); otherwise they are
    /// asked before it exists.
    pub asks_inside: bool,
    pub keep: Keep,
}

impl std::fmt::Debug for AsTask {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AsTask")
            .field("declared", &self.declared)
            .field("capabilities", &self.capabilities)
            .field("asks_inside", &self.asks_inside)
            .finish_non_exhaustive()
    }
}

/// Whether and how a call may become a task.
#[derive(Debug)]
pub enum Tasking {
    /// Never here (`mcp-serve call` without `--task`, `mcp-serve test`).
    Never,
    /// As the tool's `task` policy and the request's declaration say (a protocol client).
    Offered(AsTask),
    /// Always, whatever the tool's policy (`mcp-serve call --task`).
    Always(AsTask),
}

/// The tasks store and the terms, when the call becomes a task; a `required` tool refuses a
/// request that does not declare the extension.
pub(super) fn decide<E>(
    tool: &Tool,
    tasks: Option<&Arc<Tasks>>,
    tasking: Tasking,
) -> Result<Option<(Arc<Tasks>, AsTask)>, CallError<E>> {
    let Some(tasks) = tasks else {
        return Ok(None);
    };
    match tasking {
        Tasking::Always(as_task) => Ok(Some((Arc::clone(tasks), as_task))),
        Tasking::Offered(as_task) if tool.task != Policy::Never && as_task.declared => {
            Ok(Some((Arc::clone(tasks), as_task)))
        }
        Tasking::Offered(_) if tool.task == Policy::Required => {
            Err(CallError::TaskRequired(tool.name.clone()))
        }
        Tasking::Never | Tasking::Offered(_) => Ok(None),
    }
}

/// A call admitted as a task.
pub(super) struct Start {
    pub(super) served: Loaded,
    pub(super) services: Arc<Services>,
    pub(super) tool: Arc<Tool>,
    pub(super) arguments: Map<String, Value>,
    /// What is still to be asked, inside the task.
    pub(super) inputs: Inputs,
    pub(super) caller: Caller,
    pub(super) shape: Shape,
    pub(super) as_task: AsTask,
}

impl Start {
    pub(super) async fn start(self, tasks: &Arc<Tasks>) -> Result<Record, TaskStoreError> {
        let name = self.tool.name.clone();
        let job = Job {
            tool: name.clone(),
            owner: self.caller.task_owner(),
            bucket: self.caller.rate_key(),
            arguments: self.arguments,
            inputs: self.inputs,
            capabilities: self.as_task.capabilities,
            settings: self.served.registry.task_settings,
            execute: Box::new(Run {
                served: self.served,
                services: self.services,
                tool: self.tool,
                caller: self.caller,
                shape: self.shape,
                keep: self.as_task.keep,
            }),
        };
        let started = tasks.start(job).await;
        match &started {
            Ok(record) => tracing::info!(tool = %name, task = %record.id, "started a task"),
            Err(error) => tracing::error!(tool = %name, %error, "could not start a task"),
        }
        started
    }
}

/// A task's run: the pipeline's last stages, on the registry the call started on.
struct Run {
    served: Loaded,
    services: Arc<Services>,
    tool: Arc<Tool>,
    caller: Caller,
    shape: Shape,
    keep: Keep,
}

impl Execute for Run {
    fn execute(
        &self,
        arguments: Map<String, Value>,
        events: tokio::sync::mpsc::Sender<CallEvent>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Map<String, Value>> + Send + '_>> {
        Box::pin(async move {
            let (result, ended) = super::execute(
                &self.served,
                &self.services,
                &self.tool,
                &arguments,
                self.caller.identity.clone(),
                Some(events),
            )
            .await;
            super::record::ended(&self.services, &self.tool.name, ended.outcome, ended.ran);
            (self.keep)(self.shape.apply(result))
        })
    }

    fn refused(&self, message: String) -> Map<String, Value> {
        super::record::ended(
            &self.services,
            &self.tool.name,
            super::Outcome::Refused,
            std::time::Duration::ZERO,
        );
        (self.keep)(self.shape.apply(ToolResult::error(message)))
    }
}
