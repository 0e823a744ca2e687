//! An HTTP response body becomes a result, by its content type: the HTTP half of the output
//! pipeline, beside the command half in [`super`].

use serde_json::Value;

use super::{Content, ToolResult, mime};
use crate::schema::CompiledSchema;

/// A successful response, as the HTTP backend read it.
#[derive(Debug)]
pub struct Response<'a> {
    pub tool: &'a str,
    /// The `Content-Type` header, when there was one.
    pub content_type: Option<&'a str>,
    pub bytes: Vec<u8>,
    /// A JSON pointer picking part of a JSON response.
    pub pointer: Option<&'a str>,
}

impl ToolResult {
    /// JSON (or anything, with a pointer) becomes structured content checked against the
    /// output schema; `image/*` and `audio/*` become media blocks; textual types text;
    /// anything else an embedded resource. Without a content type the bytes are sniffed.
    pub fn from_response(response: Response<'_>, output_schema: Option<&CompiledSchema>) -> Self {
        let Response {
            tool,
            content_type,
            bytes,
            pointer,
        } = response;
        let essence = content_type
            .and_then(|value| value.split(';').next())
            .map(|value| value.trim().to_ascii_lowercase());
        let essence = essence
            .as_deref()
            .or_else(|| mime::sniff(&bytes))
            .unwrap_or("application/octet-stream");
        let json = essence == "application/json" || essence.ends_with("+json");
        if json || pointer.is_some() {
            let mut value: Value = match serde_json::from_slice(&bytes) {
                Ok(value) => value,
                Err(error) => {
                    return Self::error(format!("the response is not valid JSON: {error}"));
                }
            };
            if let Some(pointer) = pointer {
                match value.pointer_mut(pointer) {
                    Some(part) => value = part.take(),
                    None => {
                        return Self::error(format!("the response has nothing at `{pointer}`"));
                    }
                }
            }
            return Self::structured(value, output_schema);
        }
        if output_schema.is_some() {
            return Self::error(format!(
                "the tool declares an output schema, but the response is `{essence}`, not JSON"
            ));
        }
        let content = if essence.starts_with("image/") || essence.starts_with("audio/") {
            Content::media(&bytes, essence)
        } else if mime::is_textual(essence) {
            Content::text(String::from_utf8_lossy(&bytes).into_owned())
        } else {
            Content::embedded(format!("mcp-serve://output/{tool}"), bytes, essence)
        };
        Self {
            content: vec![content],
            structured: None,
            is_error: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Response, ToolResult};
    use crate::results::Content;

    fn response(content_type: Option<&'static str>, bytes: &[u8]) -> Response<'static> {
        Response {
            tool: "t",
            content_type,
            bytes: bytes.to_vec(),
            pointer: None,
        }
    }

    #[test]
    fn bodies_map_by_content_type() {
        let json = ToolResult::from_response(
            response(Some("application/json; charset=utf-8"), br#"{"a":1}"#),
            None,
        );
        assert_eq!(json.structured, Some(serde_json::json!({"a": 1})));
        let text = ToolResult::from_response(response(Some("text/plain"), b"hi"), None);
        assert!(matches!(&text.content[0], Content::Text { text, .. } if text == "hi"));
        let sniffed = ToolResult::from_response(response(None, b"\x89PNG\r\n\x1a\nrest"), None);
        assert!(
            matches!(&sniffed.content[0], Content::Image { .. }),
            "{sniffed:?}"
        );
        let broken = ToolResult::from_response(response(Some("application/json"), b"{"), None);
        assert!(broken.is_error);
        let pointed = ToolResult::from_response(
            Response {
                pointer: Some("/data/0"),
                ..response(Some("application/json"), br#"{"data":[7]}"#)
            },
            None,
        );
        assert_eq!(pointed.structured, Some(serde_json::json!(7)));
    }
}
