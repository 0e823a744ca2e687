//! The command backend: runs a program (never a shell unless the manifest asks) in its own
//! process group, with bounded output, a timeout, and a guarantee that the whole group is
//! killed when the call ends, is cancelled, or times out.

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, OnceLock};

use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt as _;
use tokio::process::{Child, Command};

use super::capture::{Capture, CaptureOptions, capture_stdout, capture_tail, tail_text};
use super::events_pipe::{self, EVENTS_VARIABLE, EventSender};
use super::files::collect_files;
use crate::events::LogLevel;
use crate::results::{Captured, OutputFile};
use crate::template::{ArgvElement, RenderError, Template, render_argv};

/// The variable naming the per-call directory a command may write output files into.
pub const OUTPUT_DIR_VARIABLE: &str = "MCP_SERVE_OUTPUT_DIR";

/// How long a process group gets between SIGTERM and SIGKILL after a timeout.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// How much of stderr (its end) is kept for error messages.
const STDERR_TAIL_BYTES: usize = 4096;

/// Environment variables that hold our own secrets (the HTTP bearer token): never passed to
/// a command, whatever `inherit-env` says. Set once at start-up.
static WITHHELD_ENV: OnceLock<Vec<String>> = OnceLock::new();

/// Keeps `names` out of every command's environment. Only the first call has an effect.
pub fn withhold_env(names: Vec<String>) {
    let _ = WITHHELD_ENV.set(names);
}

/// A command tool's backend, fully checked at load.
#[derive(Debug, Clone)]
pub struct CommandBackend {
    pub program: Program,
    pub cwd: PathBuf,
    pub env: Vec<(String, Template)>,
    pub inherit_env: InheritEnv,
    pub stdin: StdinMode,
    pub timeout: Duration,
    pub max_output: usize,
    pub success_codes: Vec<i32>,
    /// The command may report progress and log lines on `$MCP_SERVE_EVENTS`.
    pub events: bool,
    /// Forward each stderr line as a log message at this level.
    pub stderr_log: Option<LogLevel>,
}

/// What runs.
#[derive(Debug, Clone)]
pub enum Program {
    /// A program and its arguments, executed directly.
    Argv(Vec<ArgvElement>),
    /// `shell -c script <tool name> args…`: arguments reach the script as `$1`… only.
    Script {
        shell: String,
        script: String,
        args: Vec<ArgvElement>,
        tool_name: String,
    },
}

/// Which variables of our environment the command sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InheritEnv {
    All,
    Nothing,
    Only(Vec<String>),
}

/// What the command reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    /// Nothing (`/dev/null`).
    Null,
    /// All arguments as one JSON document.
    Json,
}

/// A command that ran and exited with a success code.
#[derive(Debug)]
pub struct CommandOutput {
    pub stdout: Captured,
    /// What it wrote into its output directory, when it had one.
    pub files: Vec<OutputFile>,
}

/// Why a command call failed; `Display` is the one-line reason.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`{program}` exited with status {code}")]
    Exit {
        program: String,
        code: i32,
        stderr_tail: String,
        stdout_tail: String,
    },
    #[error("`{program}` was killed by signal {signal}")]
    Signal {
        program: String,
        signal: String,
        stderr_tail: String,
    },
    #[error("`{program}` timed out after {}", humanize(*after))]
    Timeout {
        program: String,
        after: Duration,
        stderr_tail: String,
    },
    #[error(
        "`{program}` wrote more than {limit} bytes of output, the tool's limit; it was stopped"
    )]
    TooMuchOutput { program: String, limit: usize },
    #[error("`{program}` left unusable output files: {problem}")]
    Files { program: String, problem: String },
    #[error("lost contact with `{program}`: {source}")]
    Io {
        program: String,
        source: std::io::Error,
    },
}

impl CommandError {
    /// The end of what the command wrote to stderr (or stdout, when stderr was empty).
    pub fn detail(&self) -> Option<&str> {
        let detail = match self {
            Self::Exit {
                stderr_tail,
                stdout_tail,
                ..
            } => {
                if stderr_tail.trim().is_empty() {
                    stdout_tail
                } else {
                    stderr_tail
                }
            }
            Self::Signal { stderr_tail, .. } | Self::Timeout { stderr_tail, .. } => stderr_tail,
            _ => return None,
        };
        let detail = detail.trim_end();
        (!detail.is_empty()).then_some(detail)
    }
}

fn humanize(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

impl CommandBackend {
    /// Runs the command for one call, capturing stdout as `capture` says and, with
    /// `output_dir`, giving it a directory for files (`MCP_SERVE_OUTPUT_DIR`). Dropping the
    /// returned future kills the process group.
    pub async fn run(
        &self,
        arguments: &Map<String, Value>,
        capture: CaptureOptions,
        output_dir: bool,
        events: Option<&EventSender>,
    ) -> Result<CommandOutput, CommandError> {
        let (mut command, program) = self.command(arguments)?;
        let events = events.filter(|_| self.events || self.stderr_log.is_some());
        let pipe_wanted = self.events && events.is_some();
        let io_error = |source| CommandError::Io {
            program: program.clone(),
            source,
        };
        let directory = if output_dir || pipe_wanted {
            Some(
                tempfile::Builder::new()
                    .prefix("mcp-serve-call-")
                    .tempdir()
                    .map_err(io_error)?,
            )
        } else {
            None
        };
        let mut outputs = None;
        let mut pipe = None;
        if let Some(directory) = &directory {
            if output_dir {
                let files = directory.path().join("output");
                std::fs::create_dir(&files).map_err(io_error)?;
                command.env(OUTPUT_DIR_VARIABLE, &files);
                outputs = Some(files);
            }
            if pipe_wanted {
                let (path, receiver) = events_pipe::create(directory.path()).map_err(io_error)?;
                command.env(EVENTS_VARIABLE, &path);
                pipe = Some(receiver);
            }
        }
        let forwarding = Forwarding {
            pipe,
            events: events.cloned(),
            stderr_log: self.stderr_log,
        };
        let child = command.spawn().map_err(|source| CommandError::Spawn {
            program: program.clone(),
            source,
        })?;
        tracing::debug!(tool_program = %program, pid = ?child.id(), "started command");
        let group = child.id().map(GroupGuard::new);
        let stdin_document = matches!(self.stdin, StdinMode::Json)
            .then(|| Value::Object(arguments.clone()).to_string());
        // The process is supervised on its own task, so that when this call is dropped
        // (cancelled) the command still gets SIGTERM and a grace period with its pipes open.
        let cancel = CancellationToken::new();
        let supervision = tokio::spawn(supervise(
            child,
            group,
            Supervision {
                stdin_document,
                capture,
                forwarding,
                program: program.clone(),
                timeout: self.timeout,
                cancel: cancel.clone(),
            },
        ));
        let stop_on_drop = cancel.drop_guard();
        let finished = supervision.await;
        stop_on_drop.disarm();
        let finished = finished.map_err(|error| CommandError::Io {
            program: program.clone(),
            source: std::io::Error::other(error),
        })?;
        let (stdout, stderr_tail, status) = match finished {
            Finished::Exited {
                stdout,
                stderr_tail,
                status,
            } => (stdout, stderr_tail, status),
            Finished::TimedOut { stderr_tail } => {
                return Err(CommandError::Timeout {
                    program,
                    after: self.timeout,
                    stderr_tail,
                });
            }
            Finished::Cancelled => {
                return Err(CommandError::Io {
                    program,
                    source: std::io::Error::other("the call was cancelled"),
                });
            }
        };
        let status = status.map_err(|source| CommandError::Io {
            program: program.clone(),
            source,
        })?;
        let stdout = match stdout {
            Ok(Capture::Done { captured, .. }) => captured,
            Ok(Capture::Overflow) => {
                return Err(CommandError::TooMuchOutput {
                    program,
                    limit: self.max_output,
                });
            }
            Err(source) => return Err(CommandError::Io { program, source }),
        };
        let stdout = self.classify(program.clone(), status, stdout, stderr_tail)?;
        let files = match &outputs {
            Some(directory) => collect_files(directory, self.max_output)
                .map_err(|problem| CommandError::Files { program, problem })?,
            None => Vec::new(),
        };
        Ok(CommandOutput { stdout, files })
    }

    /// The process to start, fully configured, and the program's name for messages.
    fn command(&self, arguments: &Map<String, Value>) -> Result<(Command, String), CommandError> {
        let argv = match &self.program {
            Program::Argv(elements) => render_argv(elements, arguments)?,
            Program::Script {
                shell,
                script,
                args,
                tool_name,
            } => {
                let mut argv = vec![
                    shell.clone(),
                    "-c".into(),
                    script.clone(),
                    tool_name.clone(),
                ];
                argv.extend(render_argv(args, arguments)?);
                argv
            }
        };
        let Some((program, rest)) = argv.split_first() else {
            return Err(RenderError::Missing {
                name: "argv[0]".into(),
            }
            .into());
        };
        let mut command = Command::new(program);
        command
            .args(rest)
            .current_dir(&self.cwd)
            .process_group(0)
            .stdin(match self.stdin {
                StdinMode::Null => Stdio::null(),
                StdinMode::Json => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match &self.inherit_env {
            InheritEnv::All => {}
            InheritEnv::Nothing => {
                command.env_clear();
            }
            InheritEnv::Only(names) => {
                command.env_clear();
                for name in names {
                    if let Some(value) = std::env::var_os(name) {
                        command.env(name, value);
                    }
                }
            }
        }
        for name in WITHHELD_ENV.get().into_iter().flatten() {
            command.env_remove(name);
        }
        for (name, template) in &self.env {
            if let Some(value) = template.render_optional(arguments)? {
                command.env(name, value);
            }
        }
        Ok((command, program.clone()))
    }

    fn classify(
        &self,
        program: String,
        status: ExitStatus,
        stdout: Captured,
        stderr_tail: String,
    ) -> Result<Captured, CommandError> {
        match (status.code(), status.signal()) {
            (Some(code), _) if self.success_codes.contains(&code) => Ok(stdout),
            (Some(code), _) => Err(CommandError::Exit {
                program,
                code,
                stderr_tail,
                stdout_tail: tail_text(
                    if stdout.tail.is_empty() {
                        &stdout.head
                    } else {
                        &stdout.tail
                    },
                    STDERR_TAIL_BYTES,
                ),
            }),
            (None, signal) => Err(CommandError::Signal {
                program,
                signal: signal
                    .and_then(|number| Signal::try_from(number).ok())
                    .map_or_else(|| "unknown".to_owned(), |signal| signal.as_str().to_owned()),
                stderr_tail,
            }),
        }
    }
}

/// Feeds stdin, drains stdout (bounded) and stderr (its tail), and waits for the exit,
/// all under the timeout; on timeout the group gets SIGTERM, a grace period, SIGKILL.
async fn supervise(
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
    } = supervision;
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
    let feed = async move {
        if let (Some(mut stdin), Some(document)) = (stdin, stdin_document) {
            // A command that does not read its stdin closes the pipe; that is fine.
            let _ = stdin.write_all(document.as_bytes()).await;
        }
    };
    let read_stdout = async move {
        let Some(stdout) = stdout else {
            return Ok(Capture::Done {
                captured: Captured::default(),
                stopped_early: false,
            });
        };
        let result = capture_stdout(stdout, capture).await;
        // Past the limit (or the drain limit), the command has nothing more to give.
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
    };
    let read_stderr = async move {
        match stderr {
            Some(stderr) => capture_tail(stderr, STDERR_TAIL_BYTES, stderr_forward).await,
            None => String::new(),
        }
    };
    let wait = async {
        let status = child.wait().await;
        // Whatever the command left running in its group goes with it, so no stray
        // process keeps our pipes open or outlives the call.
        if let Some(group) = group {
            group.signal(Signal::SIGKILL);
        }
        exited.notify_one();
        status
    };
    let all = async {
        let (fed_stdin, stdout, stderr, status, ()) =
            tokio::join!(feed, read_stdout, read_stderr, wait, read_events);
        (fed_stdin, stdout, stderr, status)
    };
    tokio::pin!(all);
    let cancelled = tokio::select! {
        done = tokio::time::timeout(timeout, &mut all) => match done {
            Ok(((), stdout, stderr_tail, status)) => {
                if let Some(guard) = &guard {
                    guard.disarm();
                }
                return Finished::Exited { stdout, stderr_tail, status };
            }
            Err(_elapsed) => false,
        },
        () = cancel.cancelled() => true,
    };
    if let Some(group) = group {
        group.signal(Signal::SIGTERM);
    }
    let stderr_tail = if let Ok(((), _, stderr_tail, _)) =
        tokio::time::timeout(TERMINATE_GRACE, &mut all).await
    {
        stderr_tail
    } else {
        if let Some(group) = group {
            group.signal(Signal::SIGKILL);
        }
        String::new()
    };
    if cancelled {
        Finished::Cancelled
    } else {
        Finished::TimedOut { stderr_tail }
    }
}

/// What a supervision task owns besides the child.
struct Supervision {
    stdin_document: Option<String>,
    capture: CaptureOptions,
    forwarding: Forwarding,
    program: String,
    timeout: Duration,
    cancel: CancellationToken,
}

/// Where a call's events come from and go to.
struct Forwarding {
    pipe: Option<tokio::net::unix::pipe::Receiver>,
    events: Option<EventSender>,
    stderr_log: Option<LogLevel>,
}

/// How supervision ended.
enum Finished {
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

/// Kills the child's whole process group when dropped, unless disarmed after a clean reap.
#[derive(Debug)]
struct GroupGuard {
    group: Pid,
    armed: std::sync::atomic::AtomicBool,
}

impl GroupGuard {
    fn new(pid: u32) -> Self {
        Self {
            group: Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX)),
            armed: std::sync::atomic::AtomicBool::new(true),
        }
    }

    fn signal(&self, signal: Signal) {
        if self.armed.load(std::sync::atomic::Ordering::Acquire) {
            // ESRCH (nothing left in the group) is the normal case after a clean exit.
            let _ = killpg(self.group, signal);
        }
    }

    fn disarm(&self) {
        self.armed
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

impl Drop for GroupGuard {
    /// A call dropped mid-run (cancelled, or the server stopping): SIGTERM now, SIGKILL after
    /// the grace period, for whatever in the group is still there.
    fn drop(&mut self) {
        if !self.armed.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let group = self.group;
        let _ = killpg(group, Signal::SIGTERM);
        if let Ok(mut stopping) = STOPPING.lock() {
            stopping.push(group);
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(TERMINATE_GRACE).await;
                    finish_stopping(group);
                });
            }
            Err(_) => finish_stopping(group),
        }
    }
}

/// Groups sent SIGTERM whose grace period has not run out yet.
static STOPPING: std::sync::Mutex<Vec<Pid>> = std::sync::Mutex::new(Vec::new());

fn finish_stopping(group: Pid) {
    let mut stopping = STOPPING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(index) = stopping.iter().position(|pending| *pending == group) {
        stopping.swap_remove(index);
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// At exit: gives groups still stopping the rest of a grace period, then kills them, so no
/// command outlives the server.
pub fn stop_remaining() {
    let pending: Vec<Pid> = STOPPING
        .lock()
        .map(|stopping| stopping.clone())
        .unwrap_or_default();
    if pending.is_empty() {
        return;
    }
    let deadline = std::time::Instant::now() + TERMINATE_GRACE;
    while std::time::Instant::now() < deadline
        && pending.iter().any(|group| killpg(*group, None).is_ok())
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    for group in pending {
        finish_stopping(group);
    }
}
