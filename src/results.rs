//! The output pipeline: what a backend produced becomes an MCP tool result, checked against
//! the output schema, then shaped for the era of the client that asked.

use serde_json::{Map, Value, json};

use crate::era::Era;
use crate::schema::CompiledSchema;

/// How a backend's output maps to a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// The output is one text block.
    Text,
    /// The output is a JSON document: `structuredContent` plus the JSON as a text block.
    Json,
}

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
}

/// An era-neutral tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl ToolResult {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            structured: None,
            is_error: false,
        }
    }

    /// A tool execution error the model can read and act on.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            structured: None,
            is_error: true,
        }
    }

    /// Builds the result from a backend's successful output.
    pub fn from_output(
        stdout: &[u8],
        mode: OutputMode,
        output_schema: Option<&CompiledSchema>,
    ) -> Self {
        match mode {
            OutputMode::Text => {
                Self::text(trim_trailing_newlines(&String::from_utf8_lossy(stdout)))
            }
            OutputMode::Json => match serde_json::from_slice::<Value>(stdout) {
                Ok(value) => Self::structured(value, output_schema),
                Err(error) => Self::error(format!("the tool's output is not valid JSON: {error}")),
            },
        }
    }

    /// A structured result, checked against the output schema before it can leave.
    pub fn structured(value: Value, output_schema: Option<&CompiledSchema>) -> Self {
        if let Some(schema) = output_schema {
            let violations = schema.violations(&value, "output");
            if !violations.is_empty() {
                return Self::error(format!(
                    "the tool's output does not match its output schema:\n{}",
                    violations.join("\n")
                ));
            }
        }
        Self {
            content: vec![Content::Text(value.to_string())],
            structured: Some(value),
            is_error: false,
        }
    }

    /// Shapes the result for a client of `era`. `schema_wrapped` says whether the tool's
    /// output schema is advertised wrapped to legacy clients, so listing and result agree.
    #[must_use]
    pub fn for_era(mut self, era: Era, schema_wrapped: bool) -> Self {
        match era {
            Era::Modern => {}
            Era::Legacy => {
                if let Some(value) = self.structured.take() {
                    self.structured = Some(if schema_wrapped || !value.is_object() {
                        let mut wrapper = Map::new();
                        wrapper.insert("result".into(), value);
                        Value::Object(wrapper)
                    } else {
                        value
                    });
                }
            }
            Era::Early => self.structured = None,
        }
        self
    }

    /// The result as the MCP wire JSON of a `CallToolResult` (without era extras).
    pub fn to_json(&self) -> Value {
        let content: Vec<Value> = self
            .content
            .iter()
            .map(|block| match block {
                Content::Text(text) => json!({"type": "text", "text": text}),
            })
            .collect();
        let mut result = json!({ "content": content });
        if let Some(structured) = &self.structured {
            result["structuredContent"] = structured.clone();
        }
        if self.is_error {
            result["isError"] = Value::Bool(true);
        }
        result
    }
}

fn trim_trailing_newlines(text: &str) -> String {
    text.trim_end_matches(['\n', '\r']).to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Content, OutputMode, ToolResult};
    use crate::era::Era;
    use crate::schema::CompiledSchema;

    #[test]
    fn text_output_loses_only_trailing_newlines() {
        let result = ToolResult::from_output(b"Travel mug\nMug rack\n\n", OutputMode::Text, None);
        assert_eq!(
            result.content,
            vec![Content::Text("Travel mug\nMug rack".into())]
        );
        assert!(!result.is_error);
    }

    #[test]
    fn json_output_is_structured_with_a_text_copy() {
        let result =
            ToolResult::from_output(br#"{"name":"Mug rack","price":36}"#, OutputMode::Json, None);
        assert_eq!(
            result.structured,
            Some(json!({"name": "Mug rack", "price": 36}))
        );
        assert_eq!(
            result.content,
            vec![Content::Text(r#"{"name":"Mug rack","price":36}"#.into())]
        );
    }

    #[test]
    fn invalid_json_and_schema_violations_are_tool_errors() {
        let invalid = ToolResult::from_output(b"not json", OutputMode::Json, None);
        assert!(invalid.is_error);
        let schema = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"price": {"type": "number"}},
            "required": ["price"]
        }))
        .expect("compiles");
        let result =
            ToolResult::from_output(br#"{"price":"cheap"}"#, OutputMode::Json, Some(&schema));
        assert!(result.is_error);
        assert_eq!(
            result.content,
            vec![Content::Text(
                "the tool's output does not match its output schema:\nprice: \"cheap\" is not of type \"number\"".into()
            )]
        );
        assert_eq!(result.structured, None);
    }

    #[test]
    fn eras_shape_structured_output() {
        let array = ToolResult::structured(json!(["a", "b"]), None);
        assert_eq!(
            array.clone().for_era(Era::Modern, true).structured,
            Some(json!(["a", "b"]))
        );
        assert_eq!(
            array.clone().for_era(Era::Legacy, true).structured,
            Some(json!({"result": ["a", "b"]}))
        );
        assert_eq!(array.clone().for_era(Era::Early, true).structured, None);
        assert_eq!(array.for_era(Era::Early, true).content.len(), 1);
        let object = ToolResult::structured(json!({"a": 1}), None);
        assert_eq!(
            object.clone().for_era(Era::Legacy, false).structured,
            Some(json!({"a": 1}))
        );
        assert_eq!(
            object.for_era(Era::Legacy, true).structured,
            Some(json!({"result": {"a": 1}}))
        );
    }
}
