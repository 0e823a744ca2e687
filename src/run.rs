//! Wiring for `main`: logging, the manifest, the runtime and the transport. This is the
//! edge where typed errors become messages and exit codes.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::backend::processes::Processes;
use crate::cli::{Cli, Command, HttpArgs, ServeArgs};
use crate::commands;
use crate::manifest;
use crate::mcp::http::{self, BearerToken, HttpOptions, SessionLimits};
use crate::mcp::{Handler, HandlerOptions, serve_stdio};
use crate::registry::Registry;

/// A problem with how we were started, or a command's failure: printed by
/// [`Failure::print`], exit code 2.
use crate::failure::{EXIT_USAGE, Failure};

/// Runs the program and returns its exit code.
pub fn run(cli: &Cli) -> ExitCode {
    let args = &cli.serve;
    crate::logging::init(args.verbose, cli.command.is_none(), args.observe.log_format);
    if let Some(command) = &cli.command {
        return match command_run(command, cli) {
            Ok(code) => code,
            Err(failure) => {
                failure.print();
                ExitCode::from(EXIT_USAGE)
            }
        };
    }
    let prepared = manifest_path(args.config.as_deref()).and_then(|path| {
        let registry = manifest::load_for(&path, &toolsets(args)).map_err(Failure::from)?;
        if args.observe.metrics && args.http.http.is_none() {
            return Err(Failure::new(
                "--metrics serves /metrics on the HTTP listener; with stdio, use --metrics-addr",
            ));
        }
        let options = args
            .http
            .http
            .map(|_| http_options(&args.http, registry.auth.as_deref()))
            .transpose()?
            .map(|mut options| {
                options.metrics_route = args.observe.metrics;
                options
            });
        let launch_secrets = options
            .iter()
            .filter_map(|options| options.token.as_ref())
            .map(crate::mcp::http::BearerToken::for_redaction)
            .filter(|token| {
                // Redacting `dev` would garble every result that says it; a token that
                // short is a guess away anyway.
                let long = token.len() >= crate::registry::DOOR_SECRET;
                if !long {
                    tracing::warn!(
                        "the bearer token is shorter than {} bytes: it is not redacted from results; use a long random one",
                        crate::registry::DOOR_SECRET
                    );
                }
                long
            })
            .collect();
        Ok((registry.with_launch_secrets(launch_secrets), path, options))
    });
    let (registry, path, options) = match prepared {
        Ok(prepared) => prepared,
        Err(failure) => {
            failure.print();
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match serve(registry, &path, args, options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Failure::new(format!("{error:#}")).print();
            ExitCode::FAILURE
        }
    }
}

/// Raises the descriptor limit and sets the connection budget every listener admits by.
fn connection_budget(args: &crate::cli::HttpArgs) {
    let descriptors = crate::connections::raise_descriptor_limit();
    let total = args
        .max_connections
        .map_or_else(|| crate::connections::room(descriptors.now), |n| n as usize);
    let per_address = args
        .max_connections_per_address
        .map_or_else(|| total.div_ceil(2), |n| n as usize);
    crate::connections::Budget::install(crate::connections::Budget::new(total, per_address));
    tracing::debug!(
        descriptors.was,
        descriptors.now,
        connections = total,
        per_address,
        "descriptor limit and connection budget"
    );
}

fn serve(
    registry: Registry,
    path: &Path,
    args: &ServeArgs,
    options: Option<HttpOptions>,
) -> anyhow::Result<()> {
    registry.redact_logs();
    registry.log_sandboxes();
    connection_budget(&args.http);
    let tools = registry.tools().count();
    let max_calls = usize::try_from(args.max_calls).unwrap_or(usize::MAX);
    let (processes, hardening) = Processes::supervising();
    tracing::debug!(?hardening, "protected the server process");
    let processes = Arc::new(processes);
    // Before the runtime: the exporter's thread and client are its own. Dropped after it,
    // which sends the last spans.
    let _traces = start_traces(args, &registry, &processes)?;
    let has_tasks = registry
        .tools()
        .any(|tool| tool.task != crate::tasks::Policy::Never);
    let tasks = crate::tasks::Tasks::with_limits(
        task_location(args).map_err(|failure| anyhow::anyhow!(failure.message().to_owned()))?,
        args.tasks.task_lease,
        args.tasks.limits(),
    );
    let metrics = (args.observe.metrics || args.observe.metrics_addr.is_some())
        .then(|| Arc::new(crate::metrics::Metrics::new()));
    let mut options = options;
    if let Some(options) = options.as_mut() {
        options.metrics.clone_from(&metrics);
        options.oauth = verifier(&registry)?;
        options.audit = audit(args);
    }
    let handler_options = HandlerOptions {
        max_calls,
        queue: args.queue,
        heartbeat: (!args.heartbeat.is_zero()).then_some(args.heartbeat),
        watching: args.watch,
        withheld_env: withheld_env(args),
        processes: Arc::clone(&processes),
        sealer: crate::mcp::state_codec(args.state_key_file.as_deref())?,
        tasks: Some(Arc::clone(&tasks)),
        metrics: metrics.clone(),
        audit: audit(args),
        discovery: args.discovery,
    };
    let handler = Handler::new(Arc::new(registry), handler_options)
        .context("could not prepare the tool list")?;
    // One client over stdio needs one thread: fewer threads to start, less memory, and no
    // hand-offs between cores on each message. Over HTTP this runtime keeps the accept loop
    // and the watchers; connections are served on `mcp::http::lanes`, one per core.
    let runtime = if options.is_some() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build()
    .context("could not start the async runtime")?;
    let outcome = runtime.block_on(async {
        // A manifest with task tools opens its store now, so a bad one stops the start.
        if has_tasks {
            tasks.store().await.with_context(|| {
                format!(
                    "could not open the task store {}",
                    tasks.location().describe()
                )
            })?;
        }
        if args.watch {
            let watch = crate::reload::watch(path.to_owned(), toolsets(args), handler.clone());
            tokio::spawn(watch);
        }
        if let (Some(address), Some(metrics)) = (args.observe.metrics_addr, &metrics) {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("could not listen on {address} for metrics"))?;
            let bound = listener.local_addr()?;
            if !bound.ip().is_loopback() {
                tracing::warn!(%bound, "metrics are served without authentication on a non-loopback address: whoever reaches it sees every tool's name and figures");
            }
            eprintln!("mcp-serve: metrics on http://{bound}/metrics");
            tokio::spawn(http::serve_metrics(listener, Arc::clone(metrics)));
        }
        let served = if let (Some(options), Some(address)) = (options, args.http.http) {
            serve_http(handler, address, options, tools).await
        } else {
            tracing::info!(tools, "serving over stdio");
            if std::io::stdin().is_terminal() {
                // A person started it by hand: say once what it waits for, and the way to try
                // a tool instead. Never on stdout, which carries protocol messages only.
                let plural = if tools == 1 { "" } else { "s" };
                eprintln!(
                    "mcp-serve: serving {tools} tool{plural} to an MCP client on stdin (a host starts it for you); to try a tool from here, run `mcp-serve call TOOL key=value` (`mcp-serve list` shows them). Ctrl-C stops."
                );
            }
            tokio::select! {
                served = serve_stdio(handler) => served.map_err(anyhow::Error::from),
                signal = shutdown_signal() => {
                    tracing::info!(signal, "shutting down");
                    Ok(())
                }
            }
        };
        // Tasks still running here end now, saying so, rather than when their lease runs out.
        let abandoned = tasks.abandon().await;
        if abandoned > 0 {
            tracing::warn!(abandoned, "tasks still running when the server stopped were failed");
        }
        served
    });
    // Dropping the runtime drops every in-flight call, which stops its process group.
    runtime.shutdown_timeout(Duration::from_secs(1));
    processes.stop_remaining();
    crate::sandbox::cgroup::teardown();
    outcome
}

/// What `--audit` and `--audit-values` ask to record, for the server and `call` alike.
fn audit(args: &ServeArgs) -> crate::audit::Audit {
    crate::audit::Audit {
        enabled: args.observe.audit,
        values: args.observe.audit_values,
    }
}

/// What checks tokens when the manifest has `[server.auth]`, with its clients to the issuer.
fn verifier(
    registry: &Registry,
) -> Result<Option<Arc<crate::auth::oauth::Verifier>>, crate::auth::keys::ClientError> {
    let settings = registry.auth.as_deref();
    settings
        .map(|settings| crate::auth::oauth::Verifier::new(settings.clone()).map(Arc::new))
        .transpose()
}

/// Variables that stay in our environment but out of every command's: the token's, and
/// those that may hold the trace collector's credentials.
fn withheld_env(args: &ServeArgs) -> Vec<String> {
    args.http
        .auth_token_env
        .iter()
        .cloned()
        .chain(crate::traces::CREDENTIAL_VARIABLES.map(str::to_owned))
        .collect()
}

/// Traces, when `--otlp-endpoint` or the `OTEL_EXPORTER_OTLP_*` variables ask for them; the
/// service is named after the manifest's server unless `OTEL_SERVICE_NAME` says otherwise.
fn start_traces(
    args: &ServeArgs,
    registry: &Registry,
    processes: &Processes,
) -> anyhow::Result<Option<crate::traces::Traces>> {
    let service = registry
        .server
        .implementation
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("mcp-serve");
    let flag = args.observe.otlp_endpoint.as_deref();
    match crate::traces::init(flag, service, processes.instance()) {
        Ok(traces) => Ok(traces),
        Err(error) if flag.is_some() => Err(error.into()),
        // Variables set for other programs (a platform injects them) never stop the server.
        Err(error) => {
            tracing::warn!(%error, "serving without traces");
            Ok(None)
        }
    }
}

async fn serve_http(
    handler: Handler,
    address: SocketAddr,
    options: HttpOptions,
    tools: usize,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("could not listen on {address}"))?;
    let bound = listener.local_addr().context("no local address")?;
    // Always printed, whatever the log level: scripts and tests read it.
    eprintln!("{}", http::announce(bound, &options.path));
    tracing::info!(tools, "serving Streamable HTTP");
    let shutdown = async {
        let signal = shutdown_signal().await;
        tracing::info!(signal, "shutting down");
    };
    http::serve_listener(handler, listener, options, shutdown)
        .await
        .context("the HTTP server failed")
}

/// Checks the HTTP flags against each other and reads the token.
fn http_options(
    args: &HttpArgs,
    oauth: Option<&crate::auth::oauth::Settings>,
) -> Result<HttpOptions, Failure> {
    let address = args
        .http
        .ok_or_else(|| Failure::new("--http needs an address"))?;
    if !args.path.starts_with('/') || args.path.len() < 2 {
        return Err(Failure::new(format!(
            "the endpoint path `{}` must start with `/` and name something, e.g. `/mcp`",
            args.path
        )));
    }
    // Segments a client can name as written: none empty (`//`), no `.` or `..` (a client
    // normalizes them away), none under `/.well-known/`, whose paths the OAuth metadata
    // takes.
    let segments: Vec<&str> = args.path[1..].trim_end_matches('/').split('/').collect();
    if segments
        .iter()
        .any(|segment| segment.is_empty() || *segment == "." || *segment == "..")
        || segments.first() == Some(&".well-known")
    {
        return Err(Failure::new(format!(
            "the endpoint path `{}` must be `/` and names, none empty, `.`, `..` or `.well-known` first, e.g. `/mcp` or `/api/mcp`",
            args.path
        )));
    }
    // A literal path only: the router reads `{…}` as a capture, and `?`, `#` or a space can
    // never arrive in a request's path.
    if args
        .path
        .chars()
        .any(|c| matches!(c, '{' | '}' | '?' | '#') || c.is_whitespace())
    {
        return Err(Failure::new(format!(
            "the endpoint path `{}` may not contain `{{`, `}}`, `?`, `#` or spaces",
            args.path
        )));
    }
    if matches!(args.path.as_str(), "/healthz" | "/readyz") {
        return Err(Failure::new(format!(
            "the endpoint path `{}` is taken by the health checks; choose another, e.g. `/mcp`",
            args.path
        )));
    }
    let token = read_token(args)?;
    if token.is_some() && oauth.is_some() {
        return Err(Failure::new(
            "the manifest's [server.auth] and --auth-token-* both say how clients authenticate; choose one",
        ));
    }
    let loopback = address.ip().is_loopback();
    if !loopback && token.is_none() && oauth.is_none() && !args.allow_unauthenticated {
        return Err(Failure::new(format!(
            "refusing to serve `{address}` without authentication: anyone who can reach it could run the tools"
        ))
        .hint(
            "require a token with `--auth-token-env NAME` or `--auth-token-file PATH`, or pass \
             `--allow-unauthenticated` if something in front of mcp-serve authenticates",
        ));
    }
    let allowed_hosts = if !args.allowed_hosts.is_empty() {
        args.allowed_hosts.clone()
    } else if loopback {
        http::loopback_hosts()
    } else if address.ip().is_unspecified() {
        tracing::warn!(
            "bound to all interfaces with no --allowed-host: the Host header is not checked"
        );
        Vec::new()
    } else {
        let mut hosts = http::loopback_hosts();
        hosts.push(address.ip().to_string());
        hosts
    };
    let allowed_origins = if !args.allowed_origins.is_empty() {
        args.allowed_origins.clone()
    } else if loopback {
        http::loopback_origins()
    } else {
        Vec::new()
    };
    Ok(HttpOptions {
        path: args.path.clone(),
        sessions: args.sessions.then_some(SessionLimits {
            max_sessions: args.max_sessions,
            idle: args.session_idle,
        }),
        // Plain JSON is cheaper to write, parse and proxy; a call that sends notifications
        // still switches to a stream.
        json_response: !args.sse,
        allowed_hosts,
        allowed_origins,
        token,
        // Made in `serve`, where a client that cannot be made stops the start (exit 1).
        oauth: None,
        metrics: None,
        metrics_route: false,
        max_body_bytes: args.max_body,
        header_read_timeout: args.header_timeout,
        body_read_timeout: args.body_timeout,
        shutdown_grace: args.shutdown_grace,
        request_rate: args.request_rate.map(|rate| {
            match args.request_burst.and_then(std::num::NonZeroU32::new) {
                Some(burst) => crate::rate::Rate { burst, ..rate },
                None => rate,
            }
        }),
        // Set in `serve`, with the handler's.
        audit: crate::audit::Audit::default(),
        trusted_proxies: crate::mcp::http::TrustedProxies::new(args.trusted_proxy.clone()),
    })
}

/// The bearer token, from an environment variable or a file, never from argv (where `ps`
/// would show it).
fn read_token(args: &HttpArgs) -> Result<Option<BearerToken>, Failure> {
    let (token, source) = match (&args.auth_token_env, &args.auth_token_file) {
        (Some(name), _) => (
            std::env::var(name).map_err(|_| {
                Failure::new(format!(
                    "--auth-token-env names `{name}`, but that environment variable is not set"
                ))
            })?,
            format!("environment variable `{name}`"),
        ),
        (None, Some(path)) => (
            std::fs::read_to_string(path)
                .map_err(|error| {
                    Failure::new(format!(
                        "could not read the token file `{}`: {error}",
                        path.display()
                    ))
                })?
                .trim()
                .to_owned(),
            format!("file `{}`", path.display()),
        ),
        (None, None) => return Ok(None),
    };
    if token.is_empty() {
        return Err(Failure::new(format!("the token in {source} is empty")));
    }
    Ok(Some(BearerToken::new(&token)))
}

async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    }
}

/// Runs a command for people (`check`, `list`, `call`, `completions`).
/// `--task-store`, else `--data-dir`.
fn task_location(args: &ServeArgs) -> Result<crate::tasks::TaskStoreLocation, Failure> {
    crate::tasks::TaskStoreLocation::from_options(
        args.tasks.task_store.as_deref(),
        args.tasks.data_dir.as_deref(),
    )
    .map_err(|error| Failure::new(error.to_string()))
}

/// The registry as the command line asks: `--discovery` as the manifest's own `[server]
/// discovery`, so that `check` and `list` say what serving so would do.
fn asked(mut registry: Registry, cli: &Cli) -> Registry {
    registry.server.discovery |= cli.serve.discovery;
    registry
}

/// The commands that read no manifest; `None` for the others.
fn without_manifest(command: &Command, cli: &Cli) -> Option<Result<ExitCode, Failure>> {
    let done = |message: String| {
        eprint!("{message}");
        ExitCode::SUCCESS
    };
    match command {
        Command::Tasks { action } => Some(
            task_location(&cli.serve)
                .and_then(|location| commands::tasks::command(&location, action)),
        ),
        Command::Init {
            path,
            command_tool,
            http_tool,
            app,
            force,
        } => Some(
            commands::init::write(
                path,
                commands::init::Starter {
                    command_tool: *command_tool,
                    http_tool: *http_tool,
                    app: *app,
                    force: *force,
                },
            )
            .map(done),
        ),
        Command::Import {
            source: crate::cli::ImportSource::Openapi(args),
        } => Some(commands::import::openapi(args).map(done)),
        Command::Schema => {
            commands::print(&manifest::json_schema());
            Some(Ok(ExitCode::SUCCESS))
        }
        Command::Completions { shell } => {
            commands::completions(*shell, &mut std::io::stdout());
            Some(Ok(ExitCode::SUCCESS))
        }
        _ => None,
    }
}

fn command_run(command: &Command, cli: &Cli) -> Result<ExitCode, Failure> {
    if let Some(ran) = without_manifest(command, cli) {
        return ran;
    }
    let config = cli.serve.config.as_deref();
    let path = manifest_path(config)?;
    if let Command::Bundle(args) = command {
        let message = commands::bundle::write(&path, args, &cli.serve.toolsets)?;
        eprint!("{message}");
        return Ok(ExitCode::SUCCESS);
    }
    // Checking and listing need no secret (only serving and calling send one): an unset
    // one is a warning of `check`, and `list` shows the tools all the same.
    if let Command::Check(args) = command {
        let loaded = match manifest::load_without_secrets(&path) {
            Ok((registry, unset)) => {
                Ok((asked(registry, cli).select(&toolsets(&cli.serve))?, unset))
            }
            Err(error) => Err(error),
        };
        return Ok(commands::check::command(loaded, args));
    }
    let choice = toolsets(&cli.serve);
    let loaded = if matches!(
        command,
        Command::List(_) | Command::Search(_) | Command::Skill { .. }
    ) {
        manifest::load_without_secrets(&path)
            .and_then(|(registry, _)| Ok(registry.select(&choice)?))
    } else {
        manifest::load_for(&path, &choice)
    };
    let registry = asked(loaded.map_err(Failure::from)?, cli);
    registry.redact_logs();
    match command {
        Command::Search(args) => {
            commands::print(&commands::search::render(&registry, args));
            Ok(ExitCode::SUCCESS)
        }
        Command::Skill {
            name,
            output,
            force,
        } => {
            let written = commands::skill::write(&registry, name.as_deref(), output, *force)?;
            commands::print(&written);
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            commands::print(&commands::list::render(
                &registry,
                args.json,
                &args.protocol_version,
                args.apps,
            ));
            Ok(ExitCode::SUCCESS)
        }
        Command::Test { tool } => {
            commands::test::command(registry, tool.as_deref(), audit(&cli.serve))
        }
        Command::Install {
            host,
            name,
            via,
            dry_run,
            force,
        } => commands::install::command(
            &registry,
            &path,
            *host,
            commands::install::Start {
                via: *via,
                toolsets: &cli.serve.toolsets,
            },
            name.as_deref(),
            *dry_run,
            *force,
        ),
        Command::Call(args) if args.task => commands::call_task::command(
            &std::sync::Arc::new(registry),
            args,
            task_location(&cli.serve)?,
            cli.serve.tasks.task_lease,
            audit(&cli.serve),
        ),
        Command::Call(args) => commands::call::command(registry, args, audit(&cli.serve)),
        Command::Check(_)
        | Command::Tasks { .. }
        | Command::Import { .. }
        | Command::Bundle(_)
        | Command::Completions { .. }
        | Command::Schema
        | Command::Init { .. } => Ok(ExitCode::SUCCESS),
    }
}

/// The toolsets `--toolsets` chose (every tool without it).
fn toolsets(args: &ServeArgs) -> crate::toolset::Selection {
    crate::toolset::Selection::of(&args.toolsets)
}

/// `--config`, else `./tools.toml`, else a message with a hint.
fn manifest_path(config: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(path) = config {
        return Ok(path.to_owned());
    }
    let default = PathBuf::from("tools.toml");
    if default.is_file() {
        Ok(default)
    } else {
        Err(
            Failure::new("no manifest given and there is no `tools.toml` in the current directory")
                .hint(
                    "pass one with `mcp-serve --config path/to/tools.toml`; hosts often start \
                     servers in `/`, so give an absolute path in their configuration",
                ),
        )
    }
}
