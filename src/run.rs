//! Wiring for `main`: logging, the manifest, the runtime and the transport. This is the
//! edge where typed errors become messages and exit codes.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tracing_subscriber::EnvFilter;

use crate::cli::Cli;
use crate::manifest::{self, ManifestError};
use crate::mcp::{Handler, serve_stdio};

/// Exit code for a usage or manifest error (clap uses 2 for usage errors too).
const EXIT_USAGE: u8 = 2;

/// Runs the program and returns its exit code.
pub fn run(cli: &Cli) -> ExitCode {
    init_logging(cli.verbose);
    let path = match manifest_path(cli.config.as_deref()) {
        Ok(path) => path,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let registry = match manifest::load(&path) {
        Ok(registry) => registry,
        Err(error @ ManifestError::Invalid { .. }) => {
            eprintln!("{error}");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match serve(registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve(registry: crate::registry::Registry) -> anyhow::Result<()> {
    let tools = registry.tools().count();
    let handler = Handler::new(Arc::new(registry)).context("could not prepare the tool list")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    tracing::info!(tools, "serving over stdio");
    let outcome = runtime.block_on(async {
        tokio::select! {
            served = serve_stdio(handler) => served.map_err(anyhow::Error::from),
            signal = shutdown_signal() => {
                tracing::info!(signal, "shutting down");
                Ok(())
            }
        }
    });
    // Dropping the runtime drops every in-flight call, which kills its process group.
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome
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

/// `--config`, else `./tools.toml`, else a message with a hint.
fn manifest_path(config: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = config {
        return Ok(path.to_owned());
    }
    let default = PathBuf::from("tools.toml");
    if default.is_file() {
        Ok(default)
    } else {
        Err(
            "error: no manifest given and there is no `tools.toml` in the current directory\n\n\
             hint: pass one with `mcp-serve --config path/to/tools.toml`; hosts often start \
             servers in `/`, so give an absolute path in their configuration"
                .into(),
        )
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        // rmcp logs every error response at `warn`; those are answers, not our failures.
        0 => "mcp_serve=info,rmcp=error",
        1 => "mcp_serve=debug,rmcp=warn",
        _ => "mcp_serve=trace,rmcp=debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(false)
        .init();
}
