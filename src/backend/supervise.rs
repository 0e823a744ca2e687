//! Supervising one running command: feeding stdin, draining stdout (bounded) and stderr
//! (its tail, optionally as log messages), forwarding events, and waiting for the exit under
//! the timeout, or until the call is cancelled.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::AsyncWriteExt as _;
use tokio::process::Child;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::capture::{Capture, CaptureOptions, capture_stdout, capture_tail};
use super::events_pipe::{self, EventSender};
use super::process_group::GroupGuard;
use super::processes::{self, Processes, TERMINATE_GRACE};
use crate::events::LogLevel;
use crate::results::Captured;

/// How much of stderr (its end) is kept for error messages.
pub(super) const STDERR_TAIL_BYTES: usize = 4096;

/// How long stdout and stderr are still read after the command exited and its group and
/// orphans were killed. Only a process that left the group *and* cleared its environment
/// can still hold a pipe then; the call does not wait for it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Feeds stdin, drains stdout (bounded) and stderr (its tail), and waits for the exit,
/// all under the timeout; on timeout the group gets SIGTERM, a grace period, SIGKILL.
pub(super) async fn supervise(
    mut child: Child,
    group: Option<GroupGuard>,
    supervision: Supervision,
) -> Finished {
    let Supervision {
        stdin_document,
        capture,
        forwarding,
        program,
        timeout,
        cancel,
        processes,
        call_id,
    } = supervision;
    let leader = child.id();
    let drained = CancellationToken::new();
    let program = program.as_str();
    let guard = group;
    let group = guard.as_ref();
    let exited = Arc::new(Notify::new());
    let Forwarding {
        pipe,
        events,
        stderr_log,
    } = forwarding;
    let read_events = {
        let exited = exited.clone();
        let sender = events.clone();
        let program = program.to_owned();
        async move {
            if let (Some(pipe), Some(sender)) = (pipe, sender) {
                events_pipe::forward(pipe, sender, exited, program).await;
            }
        }
    };
    let stderr_forward = events.zip(stderr_log);
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let feed_drained = drained.clone();
    let feed = async move {
        if let (Some(mut stdin), Some(document)) = (stdin, stdin_document) {
            // A command that does not read its stdin closes the pipe; that is fine. Nor may a
            // survivor holding the pipe keep the call open.
            tokio::select! {
                _ = stdin.write_all(document.as_bytes()) => {}
                () = feed_drained.cancelled() => {}
            }
        }
    };
    let read_stdout = read_stdout(stdout, capture, group, drained.clone());
    let stderr_drained = drained.clone();
    let read_stderr = async move {
        match stderr {
            Some(stderr) => {
                capture_tail(stderr, STDERR_TAIL_BYTES, stderr_forward, stderr_drained).await
            }
            None => String::new(),
        }
    };
    let wait = reap(&mut child, group, &processes, &call_id, (&exited, &drained));
    let all = async {
        let (fed_stdin, stdout, stderr, status, ()) =
            tokio::join!(feed, read_stdout, read_stderr, wait, read_events);
        (fed_stdin, stdout, stderr, status)
    };
    tokio::pin!(all);
    let cancelled = tokio::select! {
        done = tokio::time::timeout(timeout, &mut all) => match done {
            Ok(((), stdout, stderr_tail, status)) => {
                return Finished::Exited { stdout, stderr_tail, status };
            }
            Err(_elapsed) => false,
        },
        () = cancel.cancelled() => true,
    };
    let stderr_tail = stop(all, group, leader).await;
    if cancelled {
        Finished::Cancelled
    } else {
        Finished::TimedOut { stderr_tail }
    }
}

/// Stops a command past its time or cancelled: SIGTERM to its group, the grace period,
/// SIGKILL, and then `reap` finishes (group, orphans, reaping, the drain). Returns the end
/// of stderr when the command ended within the grace period.
async fn stop<F>(mut all: Pin<&mut F>, group: Option<&GroupGuard>, leader: Option<u32>) -> String
where
    F: Future<
        Output = (
            (),
            std::io::Result<Capture>,
            String,
            std::io::Result<ExitStatus>,
        ),
    >,
{
    if let Some(group) = group {
        group.signal(Signal::SIGTERM);
    }
    if let Ok(((), _, stderr_tail, _)) = tokio::time::timeout(TERMINATE_GRACE, &mut all).await {
        return stderr_tail;
    }
    if let Some(group) = group {
        group.signal(Signal::SIGKILL);
    }
    // The leader dies of it, and `reap` finishes.
    if tokio::time::timeout(DRAIN_AFTER_EXIT * 2, &mut all)
        .await
        .is_err()
    {
        // Not even SIGKILL ended it (uninterruptible sleep). It stays a leader, so no sweep
        // takes it; tokio reaps it once it dies, and from then on its group id is not ours:
        // never signal it again.
        tracing::warn!(
            ?leader,
            "a command survived SIGKILL; leaving it to the kernel"
        );
        if let Some(group) = group {
            group.reaped();
        }
    }
    String::new()
}

/// Waits for the leader to exit, kills what it left (its group, then its orphans) while it
/// is still a zombie, reaps it, and from then on gives the pipes [`DRAIN_AFTER_EXIT`].
async fn reap(
    child: &mut Child,
    group: Option<&GroupGuard>,
    processes: &Arc<Processes>,
    call_id: &str,
    (exited, drained): (&Notify, &CancellationToken),
) -> std::io::Result<ExitStatus> {
    let leader = child.id();
    // The leader stays a zombie until the group is dealt with, so the group id is still
    // ours when it is signalled.
    if let Some(pid) = leader {
        processes::exited(pid).await;
    }
    // Whatever the command left running in its group goes with it, and so does what left
    // the group, so no stray process keeps our pipes open or outlives the call.
    if let Some(group) = group {
        group.signal(Signal::SIGKILL);
    }
    let status = child.wait().await;
    if let Some(group) = group {
        group.reaped();
    }
    if let Some(pid) = leader {
        processes.forget_leader(pid);
    }
    sweep(processes, call_id).await;
    exited.notify_one();
    let drained = drained.clone();
    tokio::spawn(async move {
        tokio::time::sleep(DRAIN_AFTER_EXIT).await;
        drained.cancel();
    });
    status
}

/// Kills the call's orphans, off the async threads (it reads `/proc`).
async fn sweep(processes: &Arc<Processes>, call_id: &str) {
    // Nearly always nothing escaped: a look at our children (a few small reads) says so
    // without a trip to the blocking pool.
    if !processes.has_orphans() {
        return;
    }
    let processes = Arc::clone(processes);
    let call_id = call_id.to_owned();
    let _ = tokio::task::spawn_blocking(move || processes.sweep(&call_id)).await;
}

/// What a supervision task owns besides the child.
pub(super) struct Supervision {
    pub(super) stdin_document: Option<String>,
    pub(super) capture: CaptureOptions,
    pub(super) forwarding: Forwarding,
    pub(super) program: String,
    pub(super) timeout: Duration,
    pub(super) cancel: CancellationToken,
    pub(super) processes: Arc<Processes>,
    /// The `MCP_SERVE_CALL` tag of this call's processes.
    pub(super) call_id: String,
}

/// Where a call's events come from and go to.
pub(super) struct Forwarding {
    pub(super) pipe: Option<tokio::net::unix::pipe::Receiver>,
    pub(super) events: Option<EventSender>,
    pub(super) stderr_log: Option<LogLevel>,
}

/// How supervision ended.
pub(super) enum Finished {
    Exited {
        stdout: std::io::Result<Capture>,
        stderr_tail: String,
        status: std::io::Result<ExitStatus>,
    },
    TimedOut {
        stderr_tail: String,
    },
    Cancelled,
}

/// Captures stdout; past the limit (or the drain limit) the command has nothing more to give,
/// so its group is killed.
async fn read_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    capture: CaptureOptions,
    group: Option<&GroupGuard>,
    drained: CancellationToken,
) -> std::io::Result<Capture> {
    let Some(stdout) = stdout else {
        return Ok(Capture::Done {
            captured: Captured::default(),
            stopped_early: false,
        });
    };
    let result = capture_stdout(stdout, capture, drained).await;
    if let (
        Ok(
            Capture::Overflow
            | Capture::Done {
                stopped_early: true,
                ..
            },
        ),
        Some(group),
    ) = (&result, group)
    {
        group.signal(Signal::SIGKILL);
    }
    result
}
