//! Our revision-neutral types to rmcp's wire types. Tool definitions are converted when
//! `tools/list` is made, the server identity once at start-up; results once per call.

use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, MetaObject, Resource, ResourceContents, Tool,
};
use serde_json::{Map, Value};

use crate::results::content::ResourceLink;
use crate::results::{Content, ToolResult, mime};

/// The `_meta` key carrying the server identity on 2026-07-28 results.
pub(super) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// A tool definition we built as MCP JSON, as rmcp's `Tool`.
/// The schemas, most of a definition's values, are moved in whole rather than read again
/// value by value (a whole Graph listing spent most of its time allocating for that).
pub(super) fn tool(mut definition: Map<String, Value>) -> Result<Tool, serde_json::Error> {
    let mut take = |key: &str| match definition.get_mut(key) {
        Some(Value::Object(schema)) => Some(std::mem::take(schema)),
        _ => None,
    };
    let (input, output) = (take("inputSchema"), take("outputSchema"));
    let mut tool: Tool = serde_json::from_value(Value::Object(definition))?;
    if let Some(input) = input {
        tool.input_schema = std::sync::Arc::new(input);
    }
    if let Some(output) = output {
        tool.output_schema = Some(std::sync::Arc::new(output));
    }
    Ok(tool)
}

pub(super) fn implementation(
    definition: &Map<String, Value>,
) -> Result<Implementation, serde_json::Error> {
    serde_json::from_value(Value::Object(definition.clone()))
}

/// A result as rmcp's `CallToolResult`; `server_info` is stamped into `_meta` when given.
pub(super) fn call_result(result: ToolResult, server_info: Option<&Value>) -> CallToolResult {
    let content: Vec<ContentBlock> = result.content.into_iter().map(content_block).collect();
    let mut converted = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    converted.structured_content = result.structured;
    if let Some(server_info) = server_info {
        converted.meta = Some(server_info_meta(server_info));
    }
    converted
}

/// A result as a task keeps it (`CallToolResult` JSON, without `resultType`).
pub fn task_result(result: ToolResult) -> serde_json::Map<String, Value> {
    match serde_json::to_value(call_result(result, None)) {
        Ok(Value::Object(mut object)) => {
            object.remove("resultType");
            object
        }
        _ => serde_json::Map::new(),
    }
}

/// One block as rmcp's type: plain text directly, the rest through the shared wire shape.
pub(super) fn content_block(block: Content) -> ContentBlock {
    match block {
        Content::Text {
            text,
            annotations: None,
        } => ContentBlock::text(text),
        other => serde_json::to_value(&other)
            .and_then(serde_json::from_value)
            .unwrap_or_else(|error| {
                // Our blocks are checked before they get here; this is a bug, not input.
                tracing::error!(%error, "a content block did not convert");
                ContentBlock::text(format!("[a content block could not be sent: {error}]"))
            }),
    }
}

/// A kept output as an entry of `resources/list`.
pub(super) fn resource(link: &ResourceLink) -> Option<Resource> {
    let mut value = serde_json::to_value(link).ok()?;
    if let Some(object) = value.as_object_mut() {
        object.remove("annotations");
    }
    serde_json::from_value(value).ok()
}

/// A kept output's bytes for `resources/read`: text when they are textual UTF-8.
pub(super) fn resource_contents(
    uri: String,
    mime_type: String,
    bytes: Vec<u8>,
) -> ResourceContents {
    let textual = mime::is_textual(&mime_type);
    match String::from_utf8(bytes) {
        Ok(text) if textual => ResourceContents::TextResourceContents {
            uri,
            mime_type: Some(mime_type),
            text,
            meta: None,
        },
        Ok(text) => blob(uri, mime_type, text.as_bytes()),
        Err(error) => blob(uri, mime_type, error.as_bytes()),
    }
}

pub(super) fn blob(uri: String, mime_type: String, bytes: &[u8]) -> ResourceContents {
    use base64::Engine as _;
    ResourceContents::BlobResourceContents {
        uri,
        mime_type: Some(mime_type),
        blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        meta: None,
    }
}

pub(super) fn server_info_meta(server_info: &Value) -> MetaObject {
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.into(), server_info.clone());
    MetaObject(meta)
}
