//! A command run in the request's trace: its span, and `TRACEPARENT`/`TRACESTATE` in its
//! environment, so the script's own spans are its children.

use std::borrow::Cow;

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;
use tokio::process::Command;

use super::super::supervise::Finished;
use super::CommandError;
use crate::traces::Run;

/// The variable a command finds its trace context in (the OpenTelemetry convention for
/// environment carriers).
pub(super) const TRACEPARENT_VARIABLE: &str = "TRACEPARENT";
/// The variable a command finds vendors' trace state in.
pub(super) const TRACESTATE_VARIABLE: &str = "TRACESTATE";

/// Starts the run's span (or only carries the client's context, with traces off) and gives
/// the command its context, unless the manifest sets `TRACEPARENT` itself. Without one, the
/// command gets none: not the server's own `TRACEPARENT`, which would join every call to
/// whatever started the server.
pub(super) fn start(command: &mut Command, program: &str) -> Option<Run> {
    let declared = command
        .as_std()
        .get_envs()
        .any(|(name, value)| name == TRACEPARENT_VARIABLE && value.is_some());
    let run = Run::start(SpanKind::Internal, || {
        let executable = std::path::Path::new(program).file_name().map_or_else(
            || program.to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        (
            Cow::Owned(format!("run {executable}")),
            vec![KeyValue::new("process.executable.name", executable)],
        )
    });
    if declared {
        return run;
    }
    if let Some(outgoing) = run.as_ref().and_then(Run::outgoing) {
        command.env(TRACEPARENT_VARIABLE, outgoing.traceparent);
        match outgoing.tracestate {
            Some(state) => command.env(TRACESTATE_VARIABLE, state),
            None => command.env_remove(TRACESTATE_VARIABLE),
        };
    } else {
        command.env_remove(TRACEPARENT_VARIABLE);
        command.env_remove(TRACESTATE_VARIABLE);
    }
    run
}

/// Records the process the run started.
pub(super) fn started(run: Option<&Run>, pid: Option<u32>) {
    if let (Some(run), Some(pid)) = (run, pid) {
        run.record(|| vec![KeyValue::new("process.pid", i64::from(pid))]);
    }
}

/// Records how the process exited, whatever the tool makes of it.
pub(super) fn finished(run: Option<&Run>, finished: &Finished) {
    if let (
        Some(run),
        Finished::Exited {
            status: Ok(status), ..
        },
    ) = (run, finished)
        && let Some(code) = status.code()
    {
        run.record(|| vec![KeyValue::new("process.exit.code", i64::from(code))]);
    }
}

/// Records how the run ended, by kind only: messages can name what a command wrote.
pub(super) fn end<T>(run: Option<&Run>, outcome: &Result<T, CommandError>) {
    let (Some(run), Err(error)) = (run, outcome) else {
        return;
    };
    let kind = match error {
        CommandError::Exit { .. } => "exit_status",
        CommandError::Signal { .. } => "signal",
        CommandError::Timeout { .. } => "timeout",
        CommandError::TooMuchOutput { .. } | CommandError::Exceeded { .. } => "limit_exceeded",
        CommandError::Spawn { .. }
        | CommandError::Sandbox { .. }
        | CommandError::Egress { .. }
        | CommandError::Cgroup { .. } => "spawn",
        CommandError::Files { .. } => "output_files",
        _ => "io",
    };
    run.fail(kind, kind);
}
