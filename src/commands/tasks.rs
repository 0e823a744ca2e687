//! `mcp-serve tasks list|get|cancel`: the operator's view of the task store the servers
//! share (`--task-store`, `--data-dir`). A task's owner shows as its tag (a keyed hash of the
//! session or subject that started it), never as the session id or subject itself.

use crate::failure::Failure;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cli::{Format, TasksAction};
use crate::tasks::owner::is_tag;
use crate::tasks::record::timestamp;
use crate::tasks::runner::Whom;
use crate::tasks::{TaskStoreLocation, Tasks};

pub fn command(location: &TaskStoreLocation, action: &TasksAction) -> Result<ExitCode, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::new(format!("could not start the async runtime: {error}")))?;
    // The lease is only used to run tasks, which this command never does.
    let tasks = Tasks::new(location.clone(), Duration::from_secs(15));
    runtime.block_on(async {
        match action {
            TasksAction::List { format } => {
                let records = tasks
                    .list()
                    .await
                    .map_err(|error| Failure::new(error.to_string()))?;
                let mut out = String::new();
                if *format == Format::Json {
                    for mut record in records {
                        record.owner = record.owner.as_deref().map(shown_owner);
                        out.push_str(&serde_json::to_string(&record).unwrap_or_default());
                        out.push('\n');
                    }
                } else if records.is_empty() {
                    eprintln!("no tasks in {}", location.describe());
                } else {
                    out.push_str(&format!(
                        "{:<32}  {:<14}  {:<24}  {:<24}  MESSAGE
",
                        "ID", "STATUS", "TOOL", "UPDATED"
                    ));
                    for record in &records {
                        out.push_str(&format!(
                            "{:<32}  {:<14}  {:<24}  {:<24}  {}
",
                            record.id,
                            record.status.as_str(),
                            record.tool,
                            timestamp(record.updated_ms),
                            record.message.as_deref().unwrap_or("")
                        ));
                    }
                }
                crate::commands::print(&out);
                Ok(ExitCode::SUCCESS)
            }
            TasksAction::Get { id } => {
                let (record, answered) = tasks
                    .get(id, Whom::Operator)
                    .await
                    .map_err(|error| Failure::new(error.to_string()))?;
                let mut shown = record.detailed(&answered);
                shown.insert("tool".into(), json!(record.tool));
                if let Some(owner) = record.owner.as_deref() {
                    shown.insert("owner".into(), json!(shown_owner(owner)));
                }
                shown.insert("replica".into(), json!(record.replica));
                if let Some(progress) = &record.progress {
                    shown.insert("progress".into(), json!(progress));
                }
                if !record.logs.is_empty() {
                    shown.insert("logs".into(), json!(record.logs));
                }
                let mut text =
                    serde_json::to_string_pretty(&Value::Object(shown)).unwrap_or_default();
                text.push('\n');
                crate::commands::print(&text);
                Ok(ExitCode::SUCCESS)
            }
            TasksAction::Cancel { id } => {
                tasks
                    .cancel(id, Whom::Operator)
                    .await
                    .map_err(|error| Failure::new(error.to_string()))?;
                let (record, _) = tasks
                    .get(id, Whom::Operator)
                    .await
                    .map_err(|error| Failure::new(error.to_string()))?;
                eprintln!("task {id} is {}", record.status.as_str());
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// A task's owner as shown: its tag; a record an older version wrote holds the session id
/// or subject itself, which is never shown.
fn shown_owner(owner: &str) -> String {
    if is_tag(owner) {
        owner.to_owned()
    } else {
        "[redacted]".to_owned()
    }
}
