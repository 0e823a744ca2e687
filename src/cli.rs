//! The command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand};

use crate::units::{parse_duration_text, parse_size_text};

/// Serve the tools a TOML manifest declares as a Model Context Protocol server.
///
/// With no options, serves `./tools.toml` over stdio, the way MCP hosts (Claude Desktop and
/// Code, Cursor, VS Code) launch servers. Logs go to stderr; stdout carries protocol messages
/// only. With `--http`, serves Streamable HTTP instead.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-serve",
    version,
    about,
    long_about,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(flatten)]
    pub serve: ServeArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The command line without its subcommands: what serving reads.
///
/// Serving is what every host launch does, so [`Cli::from_env`] tries these flags alone
/// first; the subcommands' definitions (and copying the global flags into each) were about
/// a fifth of the instructions of a cold start to the first `tools/list` answer.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-serve",
    disable_help_flag = true,
    disable_version_flag = true
)]
struct ServeOnly {
    #[command(flatten)]
    serve: ServeArgs,
}

impl Cli {
    /// Parses this process's arguments and environment, exiting on a usage error, `--help`
    /// or `--version`.
    ///
    /// A command line of serve flags only is parsed without building the subcommands.
    /// Anything else (a subcommand, `--help`, a mistake) fails that parse and is parsed
    /// again by the whole command line, which answers or reports it as usual. The serve
    /// flags are the same definitions in both, so where the short parse succeeds the whole
    /// one gives the same result (a unit test holds that over random command lines).
    pub fn from_env() -> Self {
        match ServeOnly::try_parse() {
            Ok(ServeOnly { serve }) => Self {
                serve,
                command: None,
            },
            Err(_) => Self::parse(),
        }
    }
}

/// The server's own flags; a few are global, for the subcommands that read the manifest or
/// the task store.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The manifest [default: ./tools.toml]
    #[arg(
        short,
        long,
        value_name = "FILE",
        env = "MCP_SERVE_CONFIG",
        global = true
    )]
    pub config: Option<PathBuf>,

    /// Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`,
    /// `check`, `call` and reloads see the same choice [default: the manifest's `[server]
    /// toolsets`, else every tool]
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        env = "MCP_SERVE_TOOLSETS",
        global = true
    )]
    pub toolsets: Vec<String>,

    /// More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides
    #[arg(short, long, action = ArgAction::Count, global = true)]
    pub verbose: u8,

    /// At most this many tool calls run at once; beyond, calls wait (--queue) or fail fast
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls: u32,

    /// Calls that may wait for a free slot when --max-calls are running; beyond, calls fail fast
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub queue: usize,

    /// Reload the manifest when it changes (a broken edit keeps the previous tools), and tell
    /// clients that the tool list changed
    #[arg(long)]
    pub watch: bool,

    /// List tools that find, call and add the others (`find_tools`, `call_tool`,
    /// `add_tools`) instead of every tool, as `[server] discovery = true` does
    #[arg(long)]
    pub discovery: bool,

    /// Seal the state of 2026 calls that ask the client (`input_required`) with the key in
    /// this file (at least 32 bytes), so every replica accepts it; default: a random key
    #[arg(long, value_name = "PATH")]
    pub state_key_file: Option<std::path::PathBuf>,

    /// For a call that asked for progress: report it is still running after this long without
    /// progress (0 turns heartbeats off)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_heartbeat)]
    pub heartbeat: Duration,

    #[command(flatten)]
    pub tasks: TaskArgs,

    #[command(flatten)]
    pub http: HttpArgs,

    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// What the server tells its operators.
#[derive(Debug, Args)]
#[command(next_help_heading = "Observability")]
pub struct ObserveArgs {
    /// Serve Prometheus metrics at `/metrics` on the HTTP listener, behind its authentication
    #[arg(long)]
    pub metrics: bool,

    /// Serve Prometheus metrics at `http://ADDR/metrics` on a listener of their own, with no
    /// authentication (keep it on a private network); works with stdio too
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<SocketAddr>,

    /// Log lines for people, or one JSON object per line for a collector
    #[arg(long, value_enum, default_value = "text", global = true)]
    pub log_format: crate::logging::LogFormat,

    /// Log an audit record per tool call: caller, tool, outcome, duration, and the names and
    /// types of the arguments
    #[arg(long)]
    pub audit: bool,

    /// With --audit, record the argument values too (the manifest's secrets redacted)
    #[arg(long, requires = "audit")]
    pub audit_values: bool,

    /// Export traces (a span per request and per backend run) over OTLP/HTTP to this
    /// collector, e.g. `http://127.0.0.1:4318`; the standard `OTEL_EXPORTER_OTLP_*` variables
    /// work too
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// Where tasks are kept.
#[derive(Debug, Args)]
#[command(next_help_heading = "Tasks")]
pub struct TaskArgs {
    /// Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password
    /// in the URL is never logged); default: an embedded `SQLite` file in --data-dir
    #[arg(long, value_name = "URL", env = "MCP_SERVE_TASK_STORE", global = true)]
    pub task_store: Option<String>,

    /// Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else
    /// ~/.local/state/mcp-serve]
    #[arg(long, value_name = "DIR", env = "MCP_SERVE_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,

    /// A running task's lease: its server renews it; a task whose server died reads as failed
    /// once it runs out
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_lease, global = true)]
    pub task_lease: Duration,

    /// The most tasks the store keeps, running or ended and kept for their `task-ttl`;
    /// beyond it a new task is refused
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tasks: u64,

    /// The most the store keeps of tasks: results, progress, logs, answers, and the
    /// arguments of running tasks; beyond it a new task or a result is refused
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size_text)]
    pub max_task_bytes: usize,

    /// As --max-tasks, per caller (a session, a token's subject; callers that nothing
    /// names, such as stateless requests without OAuth, are one caller)
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tasks_per_caller: u64,

    /// As --max-task-bytes, per caller
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size_text)]
    pub max_task_bytes_per_caller: usize,
}

impl TaskArgs {
    /// What the task store may keep.
    pub fn limits(&self) -> crate::tasks::Limits {
        let bytes = |size: usize| u64::try_from(size).unwrap_or(u64::MAX);
        crate::tasks::Limits {
            tasks: self.max_tasks,
            bytes: bytes(self.max_task_bytes),
            tasks_per_caller: self.max_tasks_per_caller,
            bytes_per_caller: bytes(self.max_task_bytes_per_caller),
        }
    }
}

fn parse_rate_text(text: &str) -> Result<crate::rate::Rate, String> {
    crate::rate::Rate::parse(text, None)
}

fn parse_lease(text: &str) -> Result<Duration, String> {
    let lease = parse_duration_text(text).map_err(|error| error.to_string())?;
    if lease < Duration::from_millis(300) {
        return Err("a lease shorter than 300ms could not be renewed in time".into());
    }
    Ok(lease)
}

/// Commands for people; with none, mcp-serve serves the manifest.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate the manifest and lint it for the hosts you target
    Check(CheckArgs),
    /// Show the tools, as a table or as the exact `tools/list` JSON
    List(ListArgs),
    /// Run one tool exactly as the server would, from the terminal
    Call(CallArgs),
    /// Find the tools that do what you describe, best first
    Search(SearchArgs),
    /// Run the examples the manifest declares for its tools
    Test {
        /// Only this tool's examples
        tool: Option<String>,
    },
    /// Write a commented starter manifest (and its JSON Schema) that passes `check`
    Init {
        /// Where to write it
        #[arg(default_value = "tools.toml")]
        path: PathBuf,
        /// Include a command tool (the default when no kind is chosen)
        #[arg(long)]
        command_tool: bool,
        /// Include an HTTP tool
        #[arg(long)]
        http_tool: bool,
        /// Give the command tool a page (an MCP App), written beside as greet.html
        #[arg(long)]
        app: bool,
        /// Replace an existing file
        #[arg(long)]
        force: bool,
    },
    /// Add this server to a host's configuration, with absolute paths
    Install {
        /// claude-desktop, claude-code, cursor or vscode
        #[arg(value_enum)]
        host: crate::commands::install::Host,
        /// The server's name in the host [default: the manifest's server name]
        #[arg(long)]
        name: Option<String>,
        /// How the host starts the server: this binary's path, or the package, pinned to this
        /// version, through uvx or npx
        #[arg(long, value_enum, default_value_t)]
        via: crate::commands::install::Via,
        /// Print the configuration snippet only
        #[arg(long)]
        dry_run: bool,
        /// Replace an entry of the same name that another server wrote
        #[arg(long, conflicts_with = "dry_run")]
        force: bool,
    },
    /// Write a SKILL.md on using the manifest's tools, to edit and serve with [[skills]]
    Skill {
        /// The skill's name (and its folder's) [default: the server's name]
        #[arg(long)]
        name: Option<String>,
        /// The folder to write the skill's folder in
        #[arg(long, default_value = "skills")]
        output: PathBuf,
        /// Replace an existing SKILL.md
        #[arg(long)]
        force: bool,
    },
    /// Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json
    Bundle(BundleArgs),
    /// Write a manifest from an API description
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Read and cancel the tasks in the store (--task-store, --data-dir)
    Tasks {
        #[command(subcommand)]
        action: TasksAction,
    },
    /// Print the JSON Schema of the manifest format
    Schema,
    /// Print shell completions
    Completions {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
    },
}

/// `mcp-serve import`.
#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)
    Openapi(OpenapiArgs),
}

/// `mcp-serve import openapi`.
#[derive(Debug, Args)]
pub struct OpenapiArgs {
    /// The description: a file, or `-` for stdin
    pub spec: PathBuf,
    /// Write the manifest here, and its JSON Schema beside it, instead of to stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing --output file
    #[arg(long)]
    pub force: bool,
    /// Keep operations whose operationId matches this glob (repeatable)
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Drop operations whose operationId matches this glob (repeatable)
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Keep operations with this tag (repeatable)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Keep operations with this HTTP method (repeatable)
    #[arg(long, value_name = "METHOD")]
    pub method: Vec<String>,
    /// Keep operations whose path matches this glob, e.g. '/repos/*' (repeatable)
    #[arg(long, value_name = "GLOB")]
    pub path: Vec<String>,
    /// The API's base URL, instead of the description's `servers`
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Put in front of each credential variable's name [default: the server name, as
    /// `SWAGGER_PETSTORE_`]
    #[arg(long, value_name = "PREFIX")]
    pub env_prefix: Option<String>,
    /// The server's name [default: from the description's title]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Leave out output schemas (for an API whose responses stray from its description)
    #[arg(long)]
    pub no_output_schema: bool,
    /// Leave out an output schema larger than this (as compact JSON): every client reads
    /// it in `tools/list`
    #[arg(long, value_name = "SIZE", default_value = "16KiB", value_parser = parse_size_text)]
    pub max_output_schema: usize,
    /// Give each tool a `project` keeping its response's readable top-level fields (of each
    /// item, for a list): strings that are no link, numbers, booleans and lists of those;
    /// the output schema says the same
    #[arg(long)]
    pub project: bool,
    /// Give each tool whose response has lists `max-items = N`
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_items: Option<u32>,
}

/// `mcp-serve tasks`.
#[derive(Debug, Subcommand)]
pub enum TasksAction {
    /// Every task not yet forgotten, oldest first
    List {
        /// Print them as JSON, one record per line
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// One task as `tasks/get` shows it, with its progress and logs
    Get {
        /// The task id
        id: String,
    },
    /// Cancel a running task; the server running it stops its process
    Cancel {
        /// The task id
        id: String,
    },
}

/// `mcp-serve check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Also check what these hosts accept (repeatable)
    #[arg(long, value_enum)]
    pub target: Vec<crate::commands::check::Target>,
    /// Make warnings that serving would refuse errors: secrets that are not set here
    #[arg(long)]
    pub strict: bool,
    /// Print the findings as JSON
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `mcp-serve list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the `tools/list` result a client gets, as JSON
    #[arg(long)]
    pub json: bool,
    /// With --json: the protocol version of that client
    #[arg(
        long,
        value_name = "VERSION",
        default_value = "2025-11-25",
        requires = "json"
    )]
    pub protocol_version: String,
    /// With --json: for a client that renders MCP Apps (tools' `_meta.ui`, and the tools
    /// only a page may call)
    #[arg(long, requires = "json")]
    pub apps: bool,
}

/// `mcp-serve bundle`.
#[derive(Debug, Args)]
pub struct BundleArgs {
    /// The bundle to write; `server.json` is written beside it
    #[arg(short, long, value_name = "FILE.mcpb")]
    pub output: PathBuf,
    /// The bundle's author, as hosts show it
    #[arg(long, value_name = "NAME")]
    pub author: String,
    /// The server's name in the MCP Registry, e.g. `io.github.ada/weather`
    #[arg(long, value_name = "NAME")]
    pub registry_name: Option<String>,
    /// Where the bundle will be downloaded from (a GitHub or GitLab release asset)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Replace an existing bundle and server.json
    #[arg(long)]
    pub force: bool,
}

/// `mcp-serve search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What the tool should do, in words: `create an issue`
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// How many tools to show
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub limit: u16,
    /// Print the tools found as JSON: each one's name, title, description and score
    #[arg(long)]
    pub json: bool,
}

/// `mcp-serve call`.
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line flags, as clap reads them"
)]
pub struct CallArgs {
    /// The tool
    pub tool: String,
    /// Arguments as key=value, typed by the tool's schema; repeat a key for a list
    #[arg(value_name = "KEY=VALUE")]
    pub arguments: Vec<String>,
    /// All arguments as one JSON object (`-` reads it from stdin)
    #[arg(long, value_name = "JSON", conflicts_with = "arguments")]
    pub json: Option<String>,
    /// Print the structured result as JSON instead of the text blocks
    #[arg(long)]
    pub json_out: bool,
    /// Print what would run (argv, environment, stdin, HTTP request), secrets redacted, and
    /// run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Answer yes to the tool's confirmation (`confirm`)
    #[arg(long)]
    pub yes: bool,
    /// Answer a field the tool asks for (`[tools.ask]`), typed like arguments (repeatable);
    /// on a terminal, what is missing is asked
    #[arg(long = "answer", value_name = "NAME=VALUE")]
    pub answers: Vec<String>,
    /// Run the call as a task in the task store (--task-store, --data-dir), so `mcp-serve
    /// tasks` sees it from elsewhere, and follow it; Ctrl-C cancels it
    #[arg(long, conflicts_with = "dry_run")]
    pub task: bool,
    /// Where images, audio and other binary blocks are saved
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out_dir: PathBuf,
}

fn parse_heartbeat(text: &str) -> Result<Duration, String> {
    if text.trim() == "0" {
        Ok(Duration::ZERO)
    } else {
        parse_duration_text(text).map_err(|error| error.to_string())
    }
}

/// Streamable HTTP options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Streamable HTTP")]
pub struct HttpArgs {
    /// Serve Streamable HTTP on this address instead of stdio (port 0 picks a free port)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// The MCP endpoint's path
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http")]
    pub path: String,

    /// Give legacy (2025) clients sessions: a GET stream and resumable responses. The 2026
    /// protocol is always stateless
    #[arg(long, requires = "http")]
    pub sessions: bool,

    /// With --sessions: the most sessions open at once
    #[arg(long, value_name = "N", default_value_t = 100, requires = "sessions")]
    pub max_sessions: usize,

    /// With --sessions: close a session after this long without requests
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration_text, requires = "sessions")]
    pub session_idle: Duration,

    /// Answer every POST with an SSE stream; by default the answer is plain JSON unless a notification (progress, a log) comes before the result
    #[arg(long, requires = "http")]
    pub sse: bool,

    /// Accept this Host header (repeatable); default: the loopback names, plus the bound address
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,

    /// Accept this Origin, e.g. `https://app.example.com:443` or `http://localhost:*` (repeatable);
    /// default when bound to loopback: localhost origins; requests without Origin always pass
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this environment variable
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "auth_token_file",
        requires = "http"
    )]
    pub auth_token_env: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this file
    #[arg(long, value_name = "PATH", requires = "http")]
    pub auth_token_file: Option<PathBuf>,

    /// Serve a non-loopback address without a token (when something in front authenticates)
    #[arg(long, requires = "http")]
    pub allow_unauthenticated: bool,

    /// The largest request body accepted
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = parse_size_text, requires = "http")]
    pub max_body: usize,

    /// Every caller's allowance of requests, whatever they ask, e.g. `100/s`, `6000/m`: the
    /// token's subject, else the client's address; over it, 429 with Retry-After
    #[arg(long, value_name = "RATE", value_parser = parse_rate_text, requires = "http")]
    pub request_rate: Option<crate::rate::Rate>,

    /// With --request-rate: how many requests may come at once [default: the rate's count]
    #[arg(long, value_name = "N", requires = "request_rate", value_parser = clap::value_parser!(u32).range(1..))]
    pub request_burst: Option<u32>,

    /// How long a client may take to send request headers, and how long an idle connection stays open
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration_text, requires = "http")]
    pub header_timeout: Duration,

    /// How long a client may take to send a request's body once its headers have arrived
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration_text, requires = "http")]
    pub body_timeout: Duration,

    /// A reverse proxy (an address or a network, e.g. 10.0.0.0/8; repeatable) whose
    /// X-Forwarded-For names the client, for per-caller rates, task bounds, audit and traces
    #[arg(long, value_name = "NETWORK", requires = "http")]
    pub trusted_proxy: Vec<crate::mcp::http::Network>,

    /// The most connections open at once (the HTTP endpoint's and the egress proxy's, whose
    /// tunnels count as two); at it,
    /// the oldest idle one is closed to make room [default: the descriptor limit, raised to
    /// its hard limit at start, less a quarter (at most 256) kept for commands; at most 16384]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: Option<u32>,

    /// The most of them one client address may hold [default: half of --max-connections]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_address: Option<u32>,

    /// On SIGTERM or SIGINT, how long in-flight calls get to finish before they are stopped
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration_text, requires = "http")]
    pub shutdown_grace: Duration,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, Parser as _};
    use proptest::prelude::*;

    use super::{Cli, ServeOnly};

    #[test]
    fn both_command_lines_are_well_formed() {
        Cli::command().debug_assert();
        ServeOnly::command().debug_assert();
    }

    /// Every serve flag (from the definitions, so a new flag is covered), with a value that
    /// fits it when it takes one.
    fn flags() -> Vec<(String, Option<String>)> {
        // Built, so that each argument says how many values it takes.
        let mut command = ServeOnly::command();
        command.build();
        command
            .get_arguments()
            .flat_map(|arg| {
                let takes_value = arg.get_num_args().is_some_and(|count| count.takes_values());
                let fitting = takes_value.then(|| {
                    let choices = arg.get_possible_values();
                    if let Some(choice) = choices.first() {
                        return choice.get_name().to_owned();
                    }
                    let names = arg.get_value_names().unwrap_or_default();
                    match names.first().map(clap::builder::Str::as_str) {
                        Some("ADDR") => "127.0.0.1:0",
                        Some("DURATION") => "10s",
                        Some("SIZE") => "4MiB",
                        Some("RATE") => "100/s",
                        Some("URL") => "redis://127.0.0.1",
                        Some("HOST") => "localhost",
                        Some("ORIGIN") => "http://localhost:*",
                        Some("NAME") => "TOKEN",
                        Some("N") => "4",
                        _ => "x.toml",
                    }
                    .to_owned()
                });
                let long = arg.get_long().map(|long| format!("--{long}"));
                let short = arg.get_short().map(|short| format!("-{short}"));
                long.into_iter()
                    .chain(short)
                    .map(move |name| (name, fitting.clone()))
            })
            .collect()
    }

    /// Values that may not fit: of other kinds, empty, or looking like something else.
    const VALUES: [&str; 12] = [
        "0", "64", "100ms", "json", "/mcp", "100/s", "-", "", "check", "--help", "-v", "x.toml",
    ];

    /// What is not a serve flag: the subcommands, what clap treats specially, mistakes.
    const OTHERS: [&str; 20] = [
        "-vv",
        "-vc",
        "--config=",
        "--config=x.toml",
        "--max-calls=0",
        "--",
        "-h",
        "--help",
        "-V",
        "--version",
        "--nope",
        "check",
        "list",
        "call",
        "test",
        "init",
        "schema",
        "import",
        "completions",
        "help",
    ];

    /// Flags that others require (`--path` needs `--http`, and so on).
    const REQUIRED: [&str; 6] = [
        "--http",
        "127.0.0.1:0",
        "--sessions",
        "--audit",
        "--request-rate",
        "10/s",
    ];

    #[test]
    fn a_command_line_the_short_parse_accepts_means_the_same_to_the_whole_one() {
        let flags = flags();
        let (short, fell_back) = (std::cell::Cell::new(0_u32), std::cell::Cell::new(0_u32));
        // Each word is a flag, with a value when it takes one (one time in four a value
        // that may not fit), or, one time in seven or so, something else.
        let word = (
            0..flags.len() * 6 + OTHERS.len(),
            0..4_usize,
            0..VALUES.len(),
        );
        let line = (any::<bool>(), prop::collection::vec(word, 0..6));
        proptest!(ProptestConfig::with_cases(2000), |((required, words) in line)| {
            let mut argv = vec!["mcp-serve"];
            if required {
                argv.extend(REQUIRED);
            }
            for (pick, fits, value) in words {
                match flags.get(pick / 6) {
                    Some((flag, fitting)) => {
                        argv.push(flag);
                        match fitting {
                            Some(fitting) if fits > 0 => argv.push(fitting),
                            Some(_) => argv.push(VALUES[value]),
                            None => {}
                        }
                    }
                    None => argv.push(OTHERS[pick - flags.len() * 6]),
                }
            }
            match ServeOnly::try_parse_from(&argv) {
                Ok(ServeOnly { serve }) => {
                    if argv.len() > 1 {
                        short.set(short.get() + 1);
                    }
                    let whole = Cli::try_parse_from(&argv);
                    prop_assert!(whole.is_ok(), "{argv:?}: the whole parse refused what the short one took");
                    let whole = whole.expect("checked");
                    prop_assert!(whole.command.is_none(), "{argv:?}: a subcommand");
                    prop_assert_eq!(format!("{serve:?}"), format!("{:?}", whole.serve), "{:?}", argv);
                }
                Err(_) => fell_back.set(fell_back.get() + 1),
            }
        });
        let (short, fell_back) = (short.get(), fell_back.get());
        eprintln!(
            "command lines: {short} (not empty) parsed short, {fell_back} by the whole command line"
        );
        assert!(
            short > 300 && fell_back > 300,
            "both paths must be exercised"
        );
    }

    #[test]
    fn what_is_not_serving_goes_to_the_whole_command_line() {
        for argv in [
            &["mcp-serve", "check"][..],
            &["mcp-serve", "-c", "x.toml", "list"],
            &["mcp-serve", "--help"],
            &["mcp-serve", "-h"],
            &["mcp-serve", "--version"],
            &["mcp-serve", "--max-calls", "0"],
        ] {
            assert!(ServeOnly::try_parse_from(argv).is_err(), "{argv:?}");
        }
        let ServeOnly { serve } =
            ServeOnly::try_parse_from(["mcp-serve", "-c", "check", "-vv", "--http", "127.0.0.1:0"])
                .expect("serve flags");
        assert_eq!(serve.config.as_deref(), Some(std::path::Path::new("check")));
        assert_eq!(serve.verbose, 2);
        assert!(serve.http.http.is_some());
    }
}
