//! Backends: what actually runs when a tool is called.

pub mod capture;
pub mod command;
pub mod events_pipe;
pub mod files;
pub mod http;
pub mod process_group;
pub mod processes;
pub mod projector;
pub mod static_result;
mod supervise;

use serde_json::{Map, Value};

use std::sync::Arc;

use crate::caller::Identity;
use crate::results::project::Shape;
use crate::results::store::ResourceStore;
use crate::results::{OutputSpec, ToolResult};
use crate::schema::CompiledSchema;
use capture::CaptureOptions;
use command::CommandBackend;
use events_pipe::EventSender;
use http::HttpClients;
use processes::Processes;
use static_result::StaticResult;

/// What a call can reach besides its arguments. Built in one place, the call pipeline's
/// backend stage (`crate::call`), from its services: nothing here is process-wide state.
#[derive(Debug)]
pub struct CallContext<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// Where kept outputs go.
    pub store: &'a ResourceStore,
    /// Who is calling, for the outputs it keeps.
    pub caller: Identity,
    /// Where progress and log events go, when the client wants them.
    pub events: Option<EventSender>,
    /// Variables holding secrets (the manifest's, the server's token): no command sees them.
    pub withheld_env: &'a [String],
    /// The server's processes: every command is started and cleaned up through it.
    pub processes: &'a Arc<Processes>,
    /// The egress proxy (commands with a host list).
    pub egress: &'a Arc<crate::egress::Egress>,
    /// The server's HTTP clients.
    pub clients: &'a HttpClients,
    /// Every secret the manifest references: redacted from every result.
    pub redactor: &'a crate::secret::Redactor,
    /// Where `project` programs run.
    pub projector: &'a projector::Projector,
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
    /// What hides the backend's secrets, for anything that shows its arguments.
    pub fn redactor(&self) -> Option<&crate::secret::Redactor> {
        match self {
            Backend::Http(http) => Some(&http.redactor),
            Backend::Command(_) | Backend::Static(_) => None,
        }
    }

    /// Runs the backend with validated arguments and maps its outcome to a result. Every
    /// failure is a tool error with a one-line reason; nothing here is a protocol error.
    pub async fn call(
        &self,
        arguments: &Map<String, Value>,
        spec: &OutputSpec,
        output_schema: Option<&CompiledSchema>,
        context: &CallContext<'_>,
    ) -> ToolResult {
        if spec.shape.is_empty() {
            return self.run(arguments, spec, output_schema, context).await;
        }
        // The schema is checked once the output is shaped, which may be no larger than the
        // output the tool may return.
        let limit = match self {
            Self::Command(command) => command.max_output,
            Self::Http(http) => http.max_response,
            Self::Static(_) => usize::MAX,
        };
        let result = self.run(arguments, spec, None, context).await;
        Box::pin(shaped(result, &spec.shape, output_schema, limit, context)).await
    }

    async fn run(
        &self,
        arguments: &Map<String, Value>,
        spec: &OutputSpec,
        output_schema: Option<&CompiledSchema>,
        context: &CallContext<'_>,
    ) -> ToolResult {
        let store = context.store;
        match self {
            Self::Command(command) => {
                // Dropped at the end of the call: a failed or cancelled call leaves no file.
                let spool = spec.keep_full_output.then(|| store.spool()).flatten();
                let capture = CaptureOptions {
                    limit: command.max_output,
                    truncate: spec.mode.truncates(),
                    spool: spool
                        .as_ref()
                        .and_then(|spool| spool.path().map(Into::into)),
                };
                // Boxed, as the HTTP call is: otherwise every call's future (a static
                // one's too) would reserve room for the largest backend's.
                let running = command.run(
                    arguments,
                    capture,
                    spec.files.map(|files| files.max),
                    context,
                );
                match Box::pin(running).await {
                    Ok(mut output) => {
                        // A cut can split a secret, leaving its halves where no redactor
                        // finds them: what could be half of one is left out with the cut.
                        if output.stdout.is_truncated() {
                            let redactor = context.redactor;
                            let head_end = redactor.begun_at_end(&output.stdout.head);
                            let tail_start = redactor.ended_at_start(&output.stdout.tail);
                            output.stdout.hold_back(head_end, tail_start);
                        }
                        ToolResult::from_command(
                            output.stdout,
                            output.files,
                            spec,
                            output_schema,
                            &store.keeper(context.caller.clone()),
                        )
                    }
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
            Self::Http(http) => {
                Box::pin(http.call(arguments, output_schema, context.clients, context.redactor))
                    .await
            }
        }
    }
}

/// A result whose JSON the tool shapes (`project`, `max-items`): the JSON, redacted (a
/// program could change a secret past recognition), goes through the program in a worker,
/// then is capped and checked against the output schema.
async fn shaped(
    mut result: ToolResult,
    shape: &Shape,
    output_schema: Option<&CompiledSchema>,
    limit: usize,
    context: &CallContext<'_>,
) -> ToolResult {
    if result.is_error {
        return result;
    }
    let Some(mut value) = result.structured.take() else {
        return ToolResult::error(
            "the tool's output is not JSON, which its `project` and `max-items` need",
        );
    };
    if let Some(program) = &shape.project {
        context.redactor.redact_json(&mut value);
        let input = value.to_string();
        value = match context
            .projector
            .project(program, input.as_bytes(), limit)
            .await
        {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(value) => value,
                // What jq writes is JSON; what the server reads is nested 128 deep at most.
                Err(error) => {
                    return ToolResult::error(format!(
                        "the projection's value could not be read: {error}"
                    ));
                }
            },
            Err(error) => {
                tracing::info!(tool = context.tool, %error, "projection failed");
                return ToolResult::error(error.to_string());
            }
        };
    }
    crate::results::project::reshape(result, value, shape.max_items, output_schema)
}
