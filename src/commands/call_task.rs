//! `mcp-serve call --task`: the call runs as a task kept in the task store (`--task-store`,
//! `--data-dir`), so `mcp-serve tasks get|cancel` see it from another terminal, and is
//! followed from the store with a progress bar. Ctrl-C cancels it.

use crate::failure::Failure;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::call::{finish_progress, show_event};
use crate::backend::http::HttpClients;
use crate::backend::processes::Processes;
use crate::call::{AsTask, Call, Conclusion, Loaded, Services, Tasking};
use crate::caller::Caller;
use crate::cli::CallArgs;
use crate::events::{CallEvent, LogLevel};
use crate::registry::Registry;
use crate::results::ToolResult;
use crate::tasks::runner::Whom;
use crate::tasks::{Record, Status, TaskStoreLocation, Tasks};
use crate::tool::Tool;

/// How often the store is read while following.
const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// Runs `mcp-serve call --task`: exit 1 for a tool error or a failed task, 130 when
/// cancelled; `Err` is a usage message.
pub fn command(
    registry: &Arc<Registry>,
    args: &CallArgs,
    location: TaskStoreLocation,
    lease: Duration,
    audit: crate::audit::Audit,
) -> Result<ExitCode, Failure> {
    let tool = Arc::clone(
        registry
            .get(&args.tool)
            .map_err(|unknown| Failure::new(unknown.to_string()))?,
    );
    let arguments = super::call::arguments(&tool, args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::new(format!("could not start the async runtime: {error}")))?;
    let processes = Arc::new(Processes::supervising().0);
    let tasks = Tasks::new(location, lease);
    let services = Arc::new(Services {
        audit,
        tasks: Some(Arc::clone(&tasks)),
        ..Services::terminal(Arc::clone(&processes), HttpClients::default())
    });
    let served = Loaded::alone(Arc::clone(registry));
    // The result is kept whole for printing as `call` prints it.
    let outcome: Arc<Mutex<Option<ToolResult>>> = Arc::new(Mutex::new(None));
    let kept = Arc::clone(&outcome);
    // The questions are asked here, at the terminal, before the task exists.
    let call = Call {
        tool: tool.name.clone(),
        arguments: Some(arguments),
        caller: Caller::only(),
        events: None,
        revision: None,
        tasking: Tasking::Always(AsTask {
            declared: true,
            capabilities: crate::inputs::Capabilities::default(),
            asks_inside: false,
            keep: Arc::new(move |result: ToolResult| {
                if let Ok(mut outcome) = kept.lock() {
                    *outcome = Some(result.clone());
                }
                crate::mcp::task_result(result)
            }),
        }),
        gatherer: super::answer::Answers::from_flags(args.yes, args.answers.clone()),
    };
    let followed = runtime.block_on(async {
        // Listening before the task starts: a Ctrl-C at any moment from here cancels it.
        let mut interrupts =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .map_err(|error| Failure::new(format!("could not listen for Ctrl-C: {error}")))?;
        let record = match crate::call::run(&served, &services, call, std::future::pending()).await
        {
            Ok(Conclusion::Task(record)) => record,
            Ok(Conclusion::Done(refused)) => return Ok(Err(refused)),
            Ok(Conclusion::Pending(never)) => match never {},
            Err(error) => return Err(Failure::new(error.to_string())),
        };
        eprintln!(
            "task {} started in {}; `mcp-serve tasks get {}` reads it",
            record.id,
            tasks.location().describe(),
            record.id
        );
        follow(&tasks, &record.id, &mut interrupts).await.map(Ok)
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    processes.stop_remaining();
    let record = match followed? {
        Ok(record) => record,
        Err(refused) => {
            // Refused before the task existed (its arguments, a question, its rate).
            let message = refused.content.iter().find_map(|block| match block {
                crate::results::Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            });
            eprintln!(
                "{} {}",
                super::label("error"),
                message.unwrap_or("the call was refused")
            );
            return Ok(ExitCode::from(super::EXIT_FAILURE));
        }
    };
    finish_progress();
    Ok(outcome_of(&record, &outcome, &tool, args))
}

/// Prints how the task ended: its result as `call` prints one, or why it did not complete.
fn outcome_of(
    record: &Record,
    outcome: &Mutex<Option<ToolResult>>,
    tool: &Tool,
    args: &CallArgs,
) -> ExitCode {
    match record.status {
        Status::Completed => {
            let result = outcome
                .lock()
                .ok()
                .and_then(|mut outcome| outcome.take())
                .unwrap_or_else(|| ToolResult::error("the task's result was lost"));
            super::call::show_result(&result, &tool.name, args)
        }
        Status::Cancelled => {
            eprintln!("task {} was cancelled", record.id);
            ExitCode::from(130)
        }
        _ => {
            let message = record
                .error
                .as_ref()
                .and_then(|error| error.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("the task failed");
            eprintln!("{} {message}", super::label("error"));
            ExitCode::from(super::EXIT_FAILURE)
        }
    }
}

/// Reads the task from the store until it ends, showing its progress and new log lines;
/// Ctrl-C cancels it.
async fn follow(
    tasks: &Arc<Tasks>,
    id: &str,
    interrupts: &mut tokio::signal::unix::Signal,
) -> Result<Record, Failure> {
    let mut shown_progress = None;
    let mut shown_logs = 0;
    let mut interrupted = false;
    loop {
        let (record, _) = tasks
            .get(id, Whom::Operator)
            .await
            .map_err(|error| Failure::new(error.to_string()))?;
        if record.progress != shown_progress {
            if let Some(progress) = &record.progress {
                show_event(&CallEvent::Progress {
                    progress: progress.progress,
                    total: progress.total,
                    message: progress.message.clone(),
                });
            }
            shown_progress.clone_from(&record.progress);
        }
        let new = usize::try_from(record.logged.saturating_sub(shown_logs)).unwrap_or(usize::MAX);
        for line in record
            .logs
            .iter()
            .skip(record.logs.len().saturating_sub(new))
        {
            show_event(&CallEvent::Log {
                level: LogLevel::parse(&line.level).unwrap_or(LogLevel::Info),
                message: line.message.clone(),
                data: line.data.clone(),
            });
        }
        shown_logs = record.logged;
        if record.status.is_terminal() {
            return Ok(record);
        }
        tokio::select! {
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
            _ = interrupts.recv(), if !interrupted => {
                interrupted = true;
                finish_progress();
                eprintln!("cancelling task {id}");
                tasks.cancel(id, Whom::Operator).await.map_err(|error| Failure::new(error.to_string()))?;
            }
        }
    }
}
