//! Logs on stderr: lines for people (`--log-format text`, the default) or one JSON object per
//! line for collectors (`--log-format json`: `timestamp`, `level`, `target`, `fields`).
//! `RUST_LOG` overrides the levels. stdout is never written: in stdio mode it carries
//! protocol messages only.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

pub fn init(verbose: u8, serving: bool, format: LogFormat) {
    let default = match verbose {
        // Commands for people keep stderr for their own messages.
        // An audit record is asked for (`--audit`), so it is written.
        0 if !serving => "mcp_serve=warn,mcp_serve::audit=info,rmcp=error",
        // rmcp logs every error response at `warn`; those are answers, not our failures.
        0 => "mcp_serve=info,rmcp=error,opentelemetry=warn",
        1 => "mcp_serve=debug,rmcp=warn",
        _ => "mcp_serve=trace,rmcp=debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(false)
            .with_current_span(false)
            .with_target(true)
            .init(),
        LogFormat::Text => {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            builder.with_ansi(color).with_target(false).init();
        }
    }
}
