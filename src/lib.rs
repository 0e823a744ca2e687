//! `mcp-serve` serves the tools a TOML manifest declares as a Model Context Protocol server.
//!
//! # Layout
//!
//! ## How a call flows
//!
//! Every tool call, whatever brought it, goes through one pipeline, [`call::run`]:
//!
//! ```text
//!  entry points (where a call came from)       the pipeline, crate::call: each stage once
//!  ─────────────────────────────────────       ──────────────────────────────────────────────
//!  mcp::handler    stdio and HTTP, every         1 find       the registry the call started on
//!                  revision, every               2 authorize  the token's scopes (caller::Caller)
//!                  input_required round          3 task?      the tool's policy, the request's
//!  commands::call  call, call --task             4 prepare    defaults, the schema; identity
//!  commands::test  test                          5 gather     through the entry's Gatherer
//!                                                6 rate       once, as the call is about to run
//!  gatherers (stage 5): mcp::elicit's           7 task       kept; tasks::runner runs stages
//!  Connection asks on the connection (2025)                   8 to 10 later, asking inside it
//!  or answers input_required (2026, mcp::mrtr);  8 slot       --max-calls, the tool's max-calls
//!  commands::answer asks at the terminal         9 backend    one CallContext; results (output)
//!                                               10 record     metrics per call, audit per request
//! ```
//!
//! An entry point only says where the call came from: its [`caller::Caller`] (the HTTP gate
//! records who it saw as `caller::Seen`; the handler resolves it for the request's lifecycle),
//! how answers are gathered (a [`call::Gatherer`]) and whether it may become a task
//! ([`call::Tasking`]). What every call can reach (processes, HTTP clients, limits, metrics,
//! audit, tasks) is one [`call::Services`]; the backend's `CallContext` is built in one place.
//!
//! ## Layers
//!
//! Each module imports only modules of its own layer or of those below it, and no two import
//! each other, directly or round about (`tests/layers.rs` reads this table and checks every
//! `crate::` path under `src/`). The one pair that is a unit: `cli`'s argument types name
//! the value types of the `commands` that take them.
//!
//! ```text
//! 9 entry      run
//! 8 front      commands cli reload
//! 7 adapters   mcp openapi bundle
//! 6 pipeline   call manifest
//! 5 catalogue  registry tool toolset prompt discovery skill
//! 4 runners    backend audit tasks
//! 3 output     results resource secret inputs sandbox egress
//! 2 facts      caller metrics template ask
//! 1 leaves     app auth connections diagnostic events failure hex limit logging outcome rate revision schema suggest traces units userfile
//! ```
//!
//! What a call carries through them is in the leaves and facts: who calls ([`caller`]: its
//! `Identity`, what the HTTP layer `Seen`, the `Caller`) and how it ended ([`outcome`]), so a
//! backend, the output store, the audit log and the metrics read them without reaching up to
//! the pipeline; a command's stdout as captured is the output pipeline's input,
//! `results::Captured`.
//!
//! ## Words
//!
//! One meaning each: a *task* is an MCP task ([`tasks`]); what tokio runs apart is a
//! *spawned* future. A *revision* is a protocol version ([`revision`]). What a call came to
//! is its *conclusion* ([`call::Conclusion`]); an *answer* replies to a question the call
//! asked ([`inputs`]). [`tasks::TaskStore`] keeps tasks, [`results::store::ResourceStore`]
//! a call's kept outputs.
//!
//! ## The modules
//!
//! ```text
//! manifest ──► registry ──► tool ──► call ──► backend ──► results ──► mcp (adapter) ──► transport
//!  (TOML,       (tools in    (defs,   (the     (command |  (output     (rmcp: JSON-RPC,   (stdio |
//!   checked)     order)       schemas) pipeline) http |    pipeline,   lifecycles,      Streamable
//!                                               static)    content)                       HTTP)
//! ```
//!
//! - [`manifest`] reads the TOML, reports every problem at once as a [`diagnostic`] pointing
//!   into the file, and builds the [`registry`]. Its `wire` shapes are never seen elsewhere
//!   (except to derive the manifest's JSON Schema); one checker file per concept (`facts`:
//!   what templates may name; `argv`, `command`, `sandbox`, `url`, `http`, `static_result`,
//!   `output`, `schemas`, `identity`, `tool`, `prompt`, `resource`).
//! - [`registry`] holds the server identity, the [`tool`]s, [`prompt`]s and declared
//!   [`resource`]s and templates in manifest order (a declared file or a template's file is
//!   opened once, beneath its folder, following no link: `resource::open`), the store of
//!   kept outputs, and one redactor over every secret the manifest references; `mcp` makes
//!   the `tools/list` answer of each protocol [`revision`] when first asked (`mcp::listing`:
//!   serialized once, one tool at a time, kept in pieces the door reads once, never joined,
//!   the tools' entries shared by revisions that list them alike (`mcp::pieces`); stdio
//!   writes it as a line, HTTP outside a session puts it in place of the empty answer rmcp
//!   framed (`mcp::http::splice`); a list cut to a caller's scopes from
//!   each tool's entry, made once). A revision says what the wire carries and which lifecycle it has
//!   (`initialize` and a session, or stateless requests).
//! - [`app`] is a tool's page (`[tools.app]`, the MCP Apps extension): a declared file
//!   served as a `ui://` resource with its CSP, and who may call the tool (the model, the
//!   page). `mcp::apps` reads whether a request's client renders pages; one that does not
//!   sees no page, no `_meta.ui` and no tool only a page may call (the pipeline's find stage
//!   knows it from the `Caller`).
//! - [`skill`]s (`[[skills]]`, the Skills extension) are folders read once at load through
//!   handles (no link followed, bounded, redacted, digested); `mcp::skills` answers
//!   `skills/list`, `skills/get`, `resources/directory/read` and reads their files;
//!   `commands::skill` drafts a `SKILL.md` for a manifest's tools.
//! - [`discovery`] finds tools by what they do (BM25 over names and titles, and at half
//!   weight the first paragraph of descriptions and argument names; `mcp-serve search`).
//!   In discovery mode (`--discovery`, `[server] discovery`) `tools/list` is its own tools:
//!   `mcp::discovery` answers `find_tools` itself, turns `call_tool` into the found tool's
//!   own call before the pipeline, so every stage names the real tool, and keeps what
//!   `add_tools` adds to one connection's list (stdio, a 2025 session).
//! - [`toolset`]s name sets of tools (`[[toolsets]]`, a tool's `toolsets`); `--toolsets`
//!   cuts the registry to their members as it is loaded (`Registry::select`, at start and
//!   on every reload), so what is not chosen is neither listed nor found by any entry point.
//!   Over HTTP each served set also has its own endpoint, `/mcp/{set}`, whose handler
//!   serves the set cut again from the served registry (`Registry::toolset`, sharing its
//!   tools' definitions and limits, and the server's services).
//! - [`tool`] is a tool as loaded: its definition per revision, its compiled [`schema`]s
//!   (compiled at load when the author wrote it, on first use when we generated it, when
//!   the manifest has 1,000 tools or more, or when it uses the manifest's `[schemas]`,
//!   `schema::shared`, whose entries are one copy that
//!   `Shared::attach` adds to a root where a whole schema is needed), the schemas it
//!   advertises (`schema::inline`: local `$ref`s inlined, per tool when `tools/list` is
//!   first made; the written ones validate) and `prepare` (defaults, validation); [`call`] runs it (above). The output pipeline is in
//!   [`results`] (a command's stdout or an HTTP response becomes content blocks and
//!   structured output; truncation; the resource store, scoped to the caller, bounded on
//!   disk, kept across reloads). A tool that shapes its JSON (`project`, `max-items`) has it
//!   redacted, run through its jq program in a worker process (`results::project::worker`,
//!   the server's binary started again, bounded in time and memory; kept between calls by
//!   `backend::projector`), capped, and only then checked against the output schema.
//! - [`ask`] is what a tool asks the user before it runs (`confirm`, `[tools.ask]`) or the
//!   client's model (`[tools.sample]`); [`inputs`] is the one engine that gathers them, with
//!   the client's roots, in rounds; its drivers are the pipeline's gatherers: `mcp::elicit`
//!   sends each round over a 2025 client's connection, `mcp::mrtr` answers a 2026 client
//!   `input_required` with a sealed `requestState`, `tasks::runner` asks inside a task,
//!   `commands::answer` at the terminal. Only an accepted answer that fits the fields
//!   reaches the backend, as placeholders.
//! - [`template`] is the one rendering routine: each argument value becomes text for one
//!   *sink* (an argv element, an environment value, a URL path segment, a query or form
//!   value, a header value, text in JSON, text to read), with that sink's encoding and what it
//!   refuses; never a shell command line. Which list argument an argv element repeats for is
//!   fixed at load (`manifest::argv`). HTTP requests are built in `backend::http` from those
//!   sinks only, with [`secret`]s resolved at load, withheld from commands, and redacted in
//!   every encoding, and in every form a URL takes, from everything any tool returns
//!   (`secret::result`, at the pipeline's output stage).
//! - [`backend`] runs commands in their own process group, supervised by a spawned future (so
//!   a cancelled call still gets SIGTERM and a grace period); `backend::processes` makes the
//!   server a child subreaper and non-dumpable, tags each call's processes, and kills what
//!   escaped the group when the call ends. It sends HTTP requests (through the server's
//!   `HttpClients`, one per redirect rule set) or returns declared results. Running commands
//!   report progress and logs as [`events`]. What a call may reach (the output store, its
//!   caller, events, the withheld variables, the processes, the clients) comes in its
//!   `CallContext`, which only the pipeline builds: no process-wide state.
//! - [`sandbox`] confines a command (`[tools.sandbox]`): a sandboxed command starts as the
//!   trampoline, `mcp-serve-sandbox` (src/bin, found beside the server by
//!   `sandbox::launcher`) or else this binary's hidden `__sandbox` subcommand (`main` runs it
//!   before parsing the command line), which reads the call's policy, confines itself
//!   (descriptors closed, `sandbox::namespace`'s user, read-only mount and PID namespaces,
//!   `no_new_privs`, Landlock, resource limits, seccomp) and `exec`s the program; in its own
//!   PID namespace (or network namespace) the trampoline stays the program's parent, and
//!   `sandbox::init` (the trampoline started again, the namespace's first process) restricts
//!   itself and spawns the program, so that nothing the call started outlives it.
//!   `manifest::sandbox` checks the tables (a tool may only narrow the server's);
//!   `sandbox::shims` follows the program's `#!` lines and version-manager shims at load;
//!   `sandbox::cgroup` gives a call its own cgroup v2 where one is delegated;
//!   `sandbox::support` probes what the kernel enforces, for `check`, the log and `required`.
//!   With a host list (`network = ["api.github.com:443"]`) the call reaches the network only
//!   through [`egress`], the server's proxy (one per server, in `call::Services`): each call
//!   gets a grant (a token naming its tool's list); `sandbox::netns` gives the call a network
//!   namespace with only loopback, forwarded to the proxy, and the trampoline then stays the
//!   program's parent. The proxy resolves names itself, reaches only the addresses the list
//!   admits (`egress::allow`, `egress::address`), holds what a tunnel carries to the name it
//!   was opened for (`egress::tunnel`: the SNI, each `Host`), logs and counts each decision.
//! - [`mcp`] is the only module that knows rmcp, the official Rust SDK: it adapts the
//!   registry to rmcp's server handler, forwards events as notifications, and owns the stdio
//!   and Streamable HTTP transports and their security layers; `mcp::prompts` answers
//!   `prompts/*` and `completion/complete`, `mcp::resources` the `resources/*` methods;
//!   `mcp::stdio::parse` reads the commonest requests without rmcp's variant-by-variant parse.
//!   Over HTTP the accept loop hands each connection to one of `mcp::http::lanes`, a
//!   single-threaded runtime per core, where its requests and their calls run.
//!   Every message leaves through `mcp::outgoing` (each stdio line, each HTTP JSON body and
//!   SSE event), the last redaction whatever door built it; every log line through
//!   `logging`'s redacting writer; [`connections`] admits every socket a listener accepts
//!   (`tests/doors.rs` and `tests/userfiles.rs` read the code for doors that skip these).
//! - [`tasks`] keeps calls that run as tasks (the `io.modelcontextprotocol/tasks` extension):
//!   `tasks::record` is what is kept (its owner only as a keyed tag, `tasks::owner`; bounded
//!   per caller and in all), `tasks::store` keeps it where every process serving the
//!   manifest can reach it (`SQLite` in `--data-dir`, or Redis with `--task-store`; a status
//!   moves only from running to one terminal status, by compare-and-set), `tasks::runner`
//!   runs a task here (its questions, the pipeline's last stages, progress kept, a lease
//!   renewed, a cancel from any process heard). `mcp::tasks` adapts it to rmcp;
//!   `commands::tasks` and `call --task` read and drive the store for people.
//! - [`openapi`] is `mcp-serve import openapi`: an `OpenAPI` 3.0/3.1 description (JSON or
//!   YAML) becomes manifest text, one HTTP tool per operation (filters, names, schemas as
//!   JSON Schema 2020-12 with `$defs`, credentials as `${env:…}`); it writes templates only,
//!   so imported tools go through the same checks and sinks as hand-written ones.
//! - [`bundle`] is `mcp-serve bundle`: the manifest, every file its checks resolve
//!   (`manifest::references`, recorded by `Checker::refer`) and this binary as an MCP Bundle
//!   (`.mcpb`) whose `user_config` asks for each `${env:…}` secret, and its registry
//!   `server.json`; both written by [`userfile`].
//! - [`reload`] watches the manifest (`--watch`) and swaps the registry in whole.
//! - [`commands`] are the commands for people (`check`, `list`, `call`, `test`, `init`,
//!   `install`; `check --target` says what each host's and framework's converters reject
//!   or drop, in `commands::check::targets`; `commands::size` measures a `tools/list`); [`cli`] parses the command line and [`run`] wires everything for `main`.
//! - Operators: [`auth`] (the OAuth resource server and the principal a token names),
//!   [`rate`] (limits per tool and caller), [`metrics`] (Prometheus), [`traces`] (OpenTelemetry
//!   spans over OTLP/HTTP: `mcp::traced` puts each request in its span, the backends hand
//!   the trace context on to commands and HTTP APIs), [`audit`] (a record per call) and
//!   [`logging`] (text or JSON lines on stderr).
//! - Small pieces: [`units`] (durations and sizes), [`suggest`] (did you mean), [`hex`]
//!   (digests as text).
//!
//! `build.rs` only talks to the linker: it packs relocations and lays out the functions a
//! server runs together (`benches/layout`, written by `scripts/layout`), so a server starts
//! with less memory, and warns when that order was made for another `Cargo.lock` or
//! compiler. Cargo.toml's `release` profile builds a clone fast; `dist` (whole-program LTO,
//! one codegen unit) is what ships (docs/performance.md, "Build profiles").
//!
//! Cargo features, all on by default: `redis` (`tasks::store::shared`), `otlp`
//! (`traces::otlp`, the exporter) and `openapi` (`openapi` and `commands::import`). Each
//! gates one module; a build without it compiles the stand-in beside it (`*_unbuilt.rs`),
//! which keeps the module's signatures and fails at start, naming the feature.
//! `scripts/dist` packages the binaries (docs/platforms.md: what is Linux-only).
//!
//! `docs/security.md` states each safety guarantee and names the tests that attack it.
//!
//! Errors are typed (`thiserror`) inside; `anyhow` appears only in [`run`] (and in the
//! benchmark, `benches/perf/`, which measures all of this beside the machine's floor). A
//! command for people, and the server's start, fail with a [`failure::Failure`], rendered
//! for the terminal in one place (labels coloured on a terminal). A `Result<_, String>`
//! stays only where a message for a person is the value (a trampoline step's line, an
//! import's reason, a jq program's error); `tests/errors.rs` lists each file with why, and
//! fails on one more.

pub mod app;
pub mod ask;
pub mod audit;
pub mod auth;
pub mod backend;
pub mod bundle;
pub mod call;
pub mod caller;
pub mod cli;
pub mod commands;
pub mod connections;
pub mod diagnostic;
pub mod discovery;
pub mod egress;
pub mod events;
pub mod failure;
pub mod hex;
pub mod inputs;
pub mod limit;
pub mod logging;
pub mod manifest;
pub mod mcp;
pub mod metrics;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod outcome;
pub mod prompt;
pub mod rate;
pub mod registry;
pub mod reload;
pub mod resource;
pub mod results;
pub mod revision;
pub mod run;
pub mod sandbox;
pub mod schema;
pub mod secret;
pub mod skill;
pub mod suggest;
pub mod tasks;
pub mod template;
pub mod tool;
pub mod toolset;
pub mod traces;
pub mod units;
pub mod userfile;
