//! Logs on stderr: lines for people (`--log-format text`, the default) or one JSON object per
//! line for collectors (`--log-format json`: `timestamp`, `level`, `target`, `fields`).
//! `RUST_LOG` overrides the levels. stdout is never written: in stdio mode it carries
//! protocol messages only.
//!
//! Every line, at every level and from every crate (rmcp's request dumps at `-vv` hold the
//! client's arguments), is written through the redactor the served manifest set
//! ([`redact_with`]): each event is formatted whole into a buffer, redacted, then written.

use std::io::{IsTerminal as _, Write as _};
use std::sync::{Arc, RwLock};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// What hides secrets in a log line (the registry's redactor).
pub trait Redact: Send + Sync {
    fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8>;
}

static REDACTOR: RwLock<Option<Arc<dyn Redact>>> = RwLock::new(None);

/// Redacts every log line from now on with `redactor` (again on each reload).
pub fn redact_with(redactor: Arc<dyn Redact>) {
    if let Ok(mut current) = REDACTOR.write() {
        *current = Some(redactor);
    }
}

/// Makes one [`Line`] per event.
struct Redacting;

impl<'a> MakeWriter<'a> for Redacting {
    type Writer = Line;

    fn make_writer(&'a self) -> Self::Writer {
        Line(Vec::with_capacity(256))
    }
}

/// One event's text, written to stderr redacted when dropped.
struct Line(Vec<u8>);

impl std::io::Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0);
        if let Ok(redactor) = REDACTOR.read()
            && let Some(redactor) = redactor.as_ref()
        {
            bytes = redactor.redact_bytes(bytes);
        }
        let _ = std::io::stderr().lock().write_all(&bytes);
    }
}

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
        .with_writer(Redacting);
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
