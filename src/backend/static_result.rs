//! The static backend: a result declared in the manifest, with argument values interpolated
//! into text blocks only. For prototypes, mocks and fixtures.

use serde_json::{Map, Value};

use crate::results::content::Annotations;
use crate::results::{Content, ToolResult};
use crate::schema::CompiledSchema;
use crate::template::{Sink, Template};

/// A declared result.
#[derive(Debug, Clone)]
pub struct StaticResult {
    pub blocks: Vec<StaticBlock>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

/// A declared block.
#[derive(Debug, Clone)]
pub enum StaticBlock {
    /// Any block, as declared.
    Fixed(Content),
    /// A text block whose text uses `{placeholders}`.
    Text {
        template: Template,
        annotations: Option<Annotations>,
    },
}

impl StaticBlock {
    /// The block with the arguments in its text (a value that cannot be shown is left out).
    pub fn render(&self, arguments: &Map<String, Value>) -> Content {
        match self {
            StaticBlock::Fixed(content) => content.clone(),
            StaticBlock::Text {
                template,
                annotations,
            } => Content::Text {
                text: template
                    .render(arguments, Sink::Display)
                    .ok()
                    .flatten()
                    .unwrap_or_default(),
                annotations: annotations.clone(),
            },
        }
    }
}

impl StaticResult {
    pub fn render(
        &self,
        arguments: &Map<String, Value>,
        output_schema: Option<&CompiledSchema>,
    ) -> ToolResult {
        let content = self
            .blocks
            .iter()
            .map(|block| block.render(arguments))
            .collect();
        let mut result = ToolResult {
            content,
            structured: None,
            is_error: self.is_error,
        };
        if let Some(value) = &self.structured {
            if !self.is_error
                && let Some(schema) = output_schema
            {
                let violations = schema.violations(value, "output");
                if !violations.is_empty() {
                    return ToolResult::error(format!(
                        "the declared result does not match the output schema:\n{}",
                        violations.join("\n")
                    ));
                }
            }
            if !result
                .content
                .iter()
                .any(|block| matches!(block, Content::Text { .. }))
            {
                result.content.push(Content::text(value.to_string()));
            }
            result.structured = Some(value.clone());
        }
        result
    }
}
