//! Our era-neutral types to rmcp's wire types. Tool definitions and the server identity are
//! converted once at start-up; results once per call.

use rmcp::model::{CallToolResult, ContentBlock, Implementation, MetaObject, Tool};
use serde_json::{Map, Value};

use crate::results::{Content, ToolResult};

/// The `_meta` key carrying the server identity on 2026-07-28 results.
pub(super) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// A tool definition we built as MCP JSON, as rmcp's `Tool`.
pub(super) fn tool(definition: &Map<String, Value>) -> Result<Tool, serde_json::Error> {
    serde_json::from_value(Value::Object(definition.clone()))
}

pub(super) fn implementation(
    definition: &Map<String, Value>,
) -> Result<Implementation, serde_json::Error> {
    serde_json::from_value(Value::Object(definition.clone()))
}

/// A result as rmcp's `CallToolResult`; `server_info` is stamped into `_meta` when given.
pub(super) fn call_result(result: ToolResult, server_info: Option<&Value>) -> CallToolResult {
    let content: Vec<ContentBlock> = result
        .content
        .into_iter()
        .map(|block| match block {
            Content::Text(text) => ContentBlock::text(text),
        })
        .collect();
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

pub(super) fn server_info_meta(server_info: &Value) -> MetaObject {
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.into(), server_info.clone());
    MetaObject(meta)
}
