//! The command backend: runs a program (never a shell unless the manifest asks) in its own
//! process group, with bounded output, a timeout, and a guarantee that the whole group is
//! killed when the call ends, is cancelled, or times out.

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, OnceLock};

use std::time::Duration;
use tokio_util::sync::CancellationToken;

use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use tokio::process::Command;

mod trace;

use super::capture::{Capture, CaptureOptions, tail_text};
use super::events_pipe::{self, EVENTS_VARIABLE};
use super::files::collect_files;
use super::process_group::GroupGuard;
use super::processes::{CALL_VARIABLE, INSTANCE_VARIABLE};
use super::supervise::{Finished, Forwarding, STDERR_TAIL_BYTES, Supervision, supervise};
use crate::egress::{Grant, PROXY_USER};
use crate::events::LogLevel;
use crate::results::Captured;
use crate::results::OutputFiles;
use crate::sandbox::cgroup::{self, CallCgroup};
use crate::sandbox::policy::CallPaths;
use crate::sandbox::{
    EXIT_CONFINE_FAILED, Exceeded, FAILURE_PREFIX, NO_PROXY_VARIABLES, Network, POLICY_VARIABLE,
    PROXY_VARIABLES, Sandbox, TRAMPOLINE,
};

use crate::template::{ArgvElement, RenderError, Sink, Template, render_argv};

/// The variable naming the per-call directory a command may write output files into.
pub const OUTPUT_DIR_VARIABLE: &str = "MCP_SERVE_OUTPUT_DIR";

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
    /// Kernel confinement: the command starts through the trampoline.
    pub sandbox: Option<Box<Sandbox>>,
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
    pub files: OutputFiles,
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
    #[error("`{program}` exceeded {exceeded}")]
    Exceeded {
        program: String,
        exceeded: Exceeded,
        stderr_tail: String,
    },
    #[error("`{program}` could not start in its sandbox: {reason}")]
    Sandbox { program: String, reason: String },
    #[error("`{program}` could not start in its sandbox: {source}")]
    Egress {
        program: String,
        source: crate::egress::EgressError,
    },
    #[error("`{program}` could not start in its sandbox: its cgroup could not be made: {source}")]
    Cgroup {
        program: String,
        source: cgroup::CgroupError,
    },
    #[error("`{program}` left unusable output files: {problem}")]
    Files {
        program: String,
        problem: super::files::FilesError,
    },
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
            Self::Signal { stderr_tail, .. }
            | Self::Timeout { stderr_tail, .. }
            | Self::Exceeded { stderr_tail, .. } => stderr_tail,
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
    /// `output_files` (the most files taken), giving it a directory for files
    /// (`MCP_SERVE_OUTPUT_DIR`). Dropping the returned future kills the process group.
    pub async fn run(
        &self,
        arguments: &Map<String, Value>,
        capture: CaptureOptions,
        output_files: Option<usize>,
        context: &super::CallContext<'_>,
    ) -> Result<CommandOutput, CommandError> {
        let events = context.events.as_ref();
        let (mut command, program) = self.command(arguments, context.withheld_env)?;
        let call_id = context.processes.call_id();
        command.env(CALL_VARIABLE, &call_id);
        command.env(INSTANCE_VARIABLE, context.processes.instance());
        let run = trace::start(&mut command, &program);
        // Every way out of the run goes through here, so its span says how it ended.
        let ran = async {
            let events = events.filter(|_| self.events || self.stderr_log.is_some());
            // Held to the end of the call: its tunnels close with it.
            let grant = self
                .egress(context, &call_id, &mut command, &program)
                .await?;
            let directory = self
                .prepare(
                    &mut command,
                    output_files.is_some(),
                    self.events && events.is_some(),
                    grant.as_ref(),
                    &program,
                )
                .await?;
            let CallDirectory {
                guard: _directory,
                outputs,
                pipe,
                cgroup,
                ..
            } = directory;
            let forwarding = Forwarding {
                pipe,
                events: events.cloned(),
                stderr_log: self.stderr_log,
            };
            let spawned =
                crate::connections::for_a_call(|| context.processes.spawn(&mut command)).await;
            let child = match spawned {
                Ok(child) => child,
                Err(source) => {
                    return Err(CommandError::Spawn {
                        program: program.clone(),
                        source,
                    });
                }
            };
            tracing::debug!(tool_program = %program, pid = ?child.id(), "started command");
            trace::started(run.as_ref(), child.id());
            let group = child
                .id()
                .map(|pid| GroupGuard::new(pid, Arc::clone(context.processes)));
            let stdin_document = matches!(self.stdin, StdinMode::Json).then(|| {
                Value::Object(crate::auth::without_identity(arguments).into_owned()).to_string()
            });
            // The process is supervised on a spawned future of its own, so that when this call is dropped
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
                    processes: Arc::clone(context.processes),
                    call_id,
                },
            ));
            let stop_on_drop = cancel.drop_guard();
            let finished = supervision.await;
            stop_on_drop.disarm();
            let finished = finished.map_err(|error| CommandError::Io {
                program: program.clone(),
                source: std::io::Error::other(error),
            })?;
            trace::finished(run.as_ref(), &finished);
            let counted = cgroup.as_ref().map(CallCgroup::events).unwrap_or_default();
            let stdout = self.outcome(finished, program.clone(), counted)?;
            let files = match &outputs {
                Some(directory) => crate::connections::for_a_call(|| {
                    collect_files(directory, self.max_output, output_files.unwrap_or(0))
                })
                .await
                .map_err(|problem| CommandError::Files { program, problem })?,
                None => OutputFiles::default(),
            };
            Ok(CommandOutput { stdout, files })
        }
        .await;
        trace::end(run.as_ref(), &ran);
        ran
    }

    /// The captured stdout of a command that finished as the tool expects; otherwise why not.
    fn outcome(
        &self,
        finished: Finished,
        program: String,
        counted: cgroup::Events,
    ) -> Result<Captured, CommandError> {
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
        if stdout.stopped_early {
            // We stopped it (it wrote more than anyone reads): its signal is ours, and the
            // text it wrote is the answer, cut short.
            Ok(stdout)
        } else {
            self.classify(program, status, stdout, stderr_tail, counted)
        }
    }

    /// With a host list, the call's allowance at the egress proxy, and the variables that
    /// point the command at it (and none that would send a host around it).
    async fn egress(
        &self,
        context: &super::CallContext<'_>,
        call_id: &str,
        command: &mut Command,
        program: &str,
    ) -> Result<Option<Grant>, CommandError> {
        let Some(Network::Hosts(allowance)) = self.sandbox.as_deref().map(|s| &s.network) else {
            return Ok(None);
        };
        // In a namespace of its own the forwarder names the call; on the host's loopback the
        // program's credentials do.
        let in_namespace = self
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.kernel.network_namespaces);
        let grant = crate::connections::for_a_call(|| {
            context
                .egress
                .grant(context.tool, call_id, Arc::clone(allowance), in_namespace)
        })
        .await
        .map_err(|source| CommandError::Egress {
            program: program.to_owned(),
            source,
        })?;
        let url = if in_namespace {
            format!("http://127.0.0.1:{}", grant.port)
        } else {
            format!(
                "http://{PROXY_USER}:{}@127.0.0.1:{}",
                grant.token, grant.port
            )
        };
        for name in PROXY_VARIABLES {
            command.env(name, &url);
        }
        for name in NO_PROXY_VARIABLES {
            command.env_remove(name);
        }
        Ok(Some(grant))
    }

    /// The call's directory, and for a sandboxed command its policy for this call (which
    /// the trampoline reads).
    async fn prepare(
        &self,
        command: &mut Command,
        output_dir: bool,
        pipe_wanted: bool,
        egress: Option<&Grant>,
        program: &str,
    ) -> Result<CallDirectory, CommandError> {
        let temp_wanted = self
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.temp_dir);
        let directory = crate::connections::for_a_call(|| {
            CallDirectory::prepare(command, output_dir, pipe_wanted, temp_wanted)
        })
        .await
        .map_err(|source| CommandError::Io {
            program: program.to_owned(),
            source,
        })?;
        let Some(sandbox) = &self.sandbox else {
            return Ok(directory);
        };
        let mut directory = directory;
        directory.cgroup = cgroup::for_call(sandbox).map_err(|source| CommandError::Cgroup {
            program: program.to_owned(),
            source,
        })?;
        let policy = sandbox.policy(&CallPaths {
            output_dir: directory.outputs.as_deref(),
            temp_dir: directory.temp.as_deref(),
            events_pipe: directory.pipe_path.as_deref(),
            cgroup: directory.cgroup.as_ref().map(CallCgroup::path),
            egress,
        });
        let policy = serde_json::to_string(&policy).map_err(|error| CommandError::Sandbox {
            program: program.to_owned(),
            reason: error.to_string(),
        })?;
        command.env(POLICY_VARIABLE, policy);
        Ok(directory)
    }

    /// What `run` would start, for `mcp-serve call --dry-run`: argv, working directory,
    /// environment additions and stdin.
    pub fn describe(&self, arguments: &Map<String, Value>) -> Result<String, RenderError> {
        let argv = self.argv(arguments)?;
        let mut out = format!(
            "argv: {}\ncwd: {}\n",
            serde_json::to_string(&argv).unwrap_or_default(),
            self.cwd.display()
        );
        out.push_str(&match &self.inherit_env {
            InheritEnv::All => "environment: inherited, plus:\n".to_owned(),
            InheritEnv::Nothing => "environment: empty, plus:\n".to_owned(),
            InheritEnv::Only(names) => format!("environment: only {}, plus:\n", names.join(", ")),
        });
        for (name, template) in &self.env {
            if let Some(value) = template.render(arguments, Sink::Env)? {
                out.push_str(&format!("  {name}={value}\n"));
            }
        }
        match self.stdin {
            StdinMode::Null => out.push_str("stdin: nothing\n"),
            StdinMode::Json => {
                let document = Value::Object(crate::auth::without_identity(arguments).into_owned());
                out.push_str(&format!("stdin: {document}\n"));
            }
        }
        if let Some(sandbox) = &self.sandbox {
            let enforcement = sandbox.enforcement();
            out.push_str("sandbox:\n");
            for line in &enforcement.enforced {
                out.push_str(&format!("  {line}\n"));
            }
            for line in &enforcement.missing {
                out.push_str(&format!("  not enforced here: {line}\n"));
            }
        }
        Ok(out)
    }

    fn argv(&self, arguments: &Map<String, Value>) -> Result<Vec<String>, RenderError> {
        Ok(match &self.program {
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
        })
    }

    /// The process to start, fully configured, and the program's name for messages;
    /// `withheld` variables are never passed on, whatever `inherit-env` says.
    fn command(
        &self,
        arguments: &Map<String, Value>,
        withheld: &[String],
    ) -> Result<(Command, String), CommandError> {
        let argv = self.argv(arguments)?;
        let Some((program, rest)) = argv.split_first() else {
            return Err(RenderError::Missing {
                name: "argv[0]".into(),
            }
            .into());
        };
        let mut command = if self.sandbox.is_some() {
            let mut command = Command::new(&crate::sandbox::launcher::launcher().program);
            command.arg(TRAMPOLINE).arg(program);
            command
        } else {
            Command::new(program)
        };
        command
            .args(rest)
            .current_dir(&self.cwd)
            .process_group(0)
            .stdin(match self.stdin {
                StdinMode::Null => null_input(),
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
        for name in withheld {
            command.env_remove(name);
        }
        for (name, template) in &self.env {
            if let Some(value) = template.render(arguments, Sink::Env)? {
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
        counted: cgroup::Events,
    ) -> Result<Captured, CommandError> {
        let succeeded = status
            .code()
            .is_some_and(|code| self.success_codes.contains(&code));
        if let Some(sandbox) = self.sandbox.as_ref().filter(|_| !succeeded)
            && let Some(error) = sandbox_failure(sandbox, &program, status, &stderr_tail, counted)
        {
            return Err(error);
        }
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

/// `/dev/null` as stdin: opened once, and duplicated for each command (a `dup` costs less
/// than the path walk `Stdio::null` makes every time).
fn null_input() -> Stdio {
    static DEV_NULL: OnceLock<Option<std::fs::File>> = OnceLock::new();
    DEV_NULL
        .get_or_init(|| std::fs::File::open("/dev/null").ok())
        .as_ref()
        .and_then(|file| file.try_clone().ok())
        .map_or_else(Stdio::null, Stdio::from)
}

/// What the sandbox did to a command that did not succeed: the trampoline could not confine
/// or start it, or it hit one of its limits.
fn sandbox_failure(
    sandbox: &Sandbox,
    program: &str,
    status: ExitStatus,
    stderr_tail: &str,
    counted: cgroup::Events,
) -> Option<CommandError> {
    let code = status.code();
    if let Some(reason) = crate::sandbox::explain_denied(sandbox, code, stderr_tail) {
        return Some(CommandError::Sandbox {
            program: program.to_owned(),
            reason,
        });
    }
    if code.is_some_and(|code| [i32::from(EXIT_CONFINE_FAILED), 126, 127].contains(&code))
        && let Some(reason) = stderr_tail
            .lines()
            .find_map(|line| line.strip_prefix(FAILURE_PREFIX))
    {
        return Some(CommandError::Sandbox {
            program: program.to_owned(),
            reason: reason.to_owned(),
        });
    }
    sandbox
        .limits
        .exceeded(status.signal(), stderr_tail, counted)
        .map(|exceeded| CommandError::Exceeded {
            program: program.to_owned(),
            exceeded,
            stderr_tail: stderr_tail.to_owned(),
        })
}

/// A per-call directory, when the command gets an output directory, an events pipe or (in a
/// sandbox with `{temp-dir}`) a private temporary directory. It lives as long as `guard`.
#[derive(Debug, Default)]
struct CallDirectory {
    guard: Option<tempfile::TempDir>,
    outputs: Option<PathBuf>,
    pipe: Option<tokio::net::unix::pipe::Receiver>,
    pipe_path: Option<PathBuf>,
    temp: Option<PathBuf>,
    /// The sandboxed call's own cgroup: removed (after what is left in it is killed) when
    /// the call is done.
    cgroup: Option<CallCgroup>,
}

impl CallDirectory {
    fn prepare(
        command: &mut Command,
        output_dir: bool,
        pipe_wanted: bool,
        temp_wanted: bool,
    ) -> std::io::Result<Self> {
        if !output_dir && !pipe_wanted && !temp_wanted {
            return Ok(Self::default());
        }
        let directory = tempfile::Builder::new()
            .prefix("mcp-serve-call-")
            .tempdir()?;
        // Canonical, so that a sandbox can refuse any symlink in these paths.
        let base = std::fs::canonicalize(directory.path())?;
        let mut call = Self::default();
        if output_dir {
            let files = base.join("output");
            std::fs::create_dir(&files)?;
            command.env(OUTPUT_DIR_VARIABLE, &files);
            call.outputs = Some(files);
        }
        if pipe_wanted {
            let (path, receiver) = events_pipe::create(&base)?;
            command.env(EVENTS_VARIABLE, &path);
            call.pipe = Some(receiver);
            call.pipe_path = Some(path);
        }
        if temp_wanted {
            let temp = base.join("tmp");
            std::fs::create_dir(&temp)?;
            command.env("TMPDIR", &temp);
            call.temp = Some(temp);
        }
        call.guard = Some(directory);
        Ok(call)
    }
}
