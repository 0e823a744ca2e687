//! The tasks extension over rmcp: the answer to a `tools/call` that became a task (the
//! pipeline, `crate::call`, decides and starts it), and `tasks/get`, `tasks/update`,
//! `tasks/cancel` (`crate::tasks` does the work).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult, DetailedTask, GetTaskResult, Task};
use serde_json::{Map, Value};

use crate::caller::Caller;
use crate::tasks::Tasks;
use crate::tasks::runner::{TaskError, Whom};

/// The task a call became, as rmcp answers it.
pub(super) fn created(record: &crate::tasks::Record) -> Result<CallToolResponse, ErrorData> {
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
        .get(id, Whom::Caller(caller.task_owner().as_deref()))
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
        .answer(id, Whom::Caller(caller.task_owner().as_deref()), responses)
        .await
        .map_err(error)
}

/// `tasks/cancel`.
pub(super) async fn cancel(tasks: &Arc<Tasks>, id: &str, caller: &Caller) -> Result<(), ErrorData> {
    tasks
        .cancel(id, Whom::Caller(caller.task_owner().as_deref()))
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
