//! Backends: what actually runs when a tool is called.

pub mod capture;
pub mod command;
pub mod events_pipe;
pub mod files;
pub mod http;
pub mod process_group;
pub mod static_result;
mod supervise;

use serde_json::{Map, Value};

use crate::results::store::ResourceStore;
use crate::results::{OutputSpec, ToolResult};
use crate::schema::CompiledSchema;
use capture::CaptureOptions;
use command::CommandBackend;
use events_pipe::EventSender;
use static_result::StaticResult;

/// What a call can reach besides its arguments.
#[derive(Debug)]
pub struct CallContext<'a> {
    /// Where kept outputs go.
    pub store: &'a ResourceStore,
    /// Where progress and log events go, when the client wants them.
    pub events: Option<EventSender>,
}

/// A tool's backend.
#[derive(Debug, Clone)]
pub enum Backend {
    Command(CommandBackend),
    /// A result declared in the manifest, for prototypes and mocks.
    Static(StaticResult),
    /// An HTTP request.
    Http(Box<http::HttpBackend>),
}

impl Backend {
    /// Runs the backend with validated arguments and maps its outcome to a result. Every
    /// failure is a tool error with a one-line reason; nothing here is a protocol error.
    pub async fn call(
        &self,
        arguments: &Map<String, Value>,
        spec: &OutputSpec,
        output_schema: Option<&CompiledSchema>,
        context: &CallContext<'_>,
    ) -> ToolResult {
        let store = context.store;
        match self {
            Self::Command(command) => {
                let capture = CaptureOptions {
                    limit: command.max_output,
                    truncate: spec.mode.truncates(),
                    spool: spec.keep_full_output.then(|| store.spool_path()).flatten(),
                };
                match command
                    .run(
                        arguments,
                        capture,
                        spec.files.is_some(),
                        context.events.as_ref(),
                    )
                    .await
                {
                    Ok(output) => ToolResult::from_command(
                        output.stdout,
                        output.files,
                        spec,
                        output_schema,
                        store,
                    ),
                    Err(error) => {
                        tracing::info!(%error, "command failed");
                        let mut text = error.to_string();
                        if let Some(detail) = error.detail() {
                            text.push_str("\n\n");
                            text.push_str(detail);
                        }
                        ToolResult::error(text)
                    }
                }
            }
            Self::Static(result) => result.render(arguments, output_schema),
            Self::Http(http) => http.call(arguments, output_schema).await,
        }
    }
}
