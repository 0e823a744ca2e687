//! Backends: what actually runs when a tool is called.

pub mod command;

use serde_json::{Map, Value};

use crate::results::{OutputMode, ToolResult};
use crate::schema::CompiledSchema;
use command::CommandBackend;

/// A tool's backend.
#[derive(Debug, Clone)]
pub enum Backend {
    Command(CommandBackend),
}

impl Backend {
    /// Runs the backend with validated arguments and maps its outcome to a result. Every
    /// failure is a tool error with a one-line reason; nothing here is a protocol error.
    pub async fn call(
        &self,
        arguments: &Map<String, Value>,
        mode: OutputMode,
        output_schema: Option<&CompiledSchema>,
    ) -> ToolResult {
        match self {
            Self::Command(command) => match command.run(arguments).await {
                Ok(output) => ToolResult::from_output(&output.stdout, mode, output_schema),
                Err(error) => {
                    tracing::info!(%error, "command failed");
                    let mut text = error.to_string();
                    if let Some(detail) = error.detail() {
                        text.push_str("\n\n");
                        text.push_str(detail);
                    }
                    ToolResult::error(text)
                }
            },
        }
    }
}
