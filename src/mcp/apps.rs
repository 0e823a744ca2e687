//! MCP Apps on the wire ([`crate::app`]): whether a request's client renders pages, and
//! what a client that does not is spared (the extension in the server's capabilities, a
//! tool's `_meta.ui`, the tools only a page may call).

use rmcp::model::{ClientCapabilities, ServerCapabilities, Tool};
use rmcp::service::{RequestContext, RoleServer};

use crate::app::{EXTENSION_ID, MIME_TYPE};

/// What a registry's MCP Apps change for a client that renders none.
#[derive(Debug, Clone, Copy)]
pub(super) struct Served {
    /// Some tool has an app: `tools/list` varies by what the request declares.
    pub(super) tools: bool,
    /// The only resources are tools' pages: such a client is offered no resources.
    pub(super) only_pages: bool,
}

impl Served {
    pub(super) fn of(registry: &crate::registry::Registry) -> Self {
        Self {
            tools: registry.tools().any(|tool| tool.app.is_some()),
            only_pages: registry.serves_resources() && !registry.serves_resources_besides_pages(),
        }
    }
}

/// The request's client declares the extension and the page MIME type among those it
/// renders: the request's own capabilities in 2026-07-28, else what it declared at
/// `initialize` (over stdio, or in a session: a stateless 2025 request declares nothing).
pub(super) fn declared(context: &RequestContext<RoleServer>, stateless: bool) -> bool {
    if stateless {
        context.meta.client_capabilities()
    } else {
        context
            .peer
            .peer_info()
            .map(|info| info.capabilities.clone())
    }
    .is_some_and(|capabilities| declares(&capabilities))
}

fn declares(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(serde_json::Value::as_array)
        .is_some_and(|types| types.iter().any(|kind| kind == MIME_TYPE))
}

/// The server's capabilities as this client is told them: the extension only if it
/// declared it, and no resources to it when pages are the only ones (`only_pages`).
pub(super) fn offer(
    capabilities: &mut ServerCapabilities,
    client: &ClientCapabilities,
    only_pages: bool,
) {
    if declares(client) {
        return;
    }
    if only_pages {
        capabilities.resources = None;
    }
    if let Some(extensions) = capabilities.extensions.as_mut() {
        extensions.remove(EXTENSION_ID);
        if extensions.is_empty() {
            capabilities.extensions = None;
        }
    }
}

/// A tool as a client that renders no pages is sent it: without what `[tools.app]` added
/// to its `_meta` (`None` when only a page may call it, so it is not listed at all).
pub(super) fn for_client(tool: &crate::tool::Tool, mut listed: Tool, apps: bool) -> Option<Tool> {
    let Some(app) = &tool.app else {
        return Some(listed);
    };
    if apps {
        return Some(listed);
    }
    if app.app_only() {
        return None;
    }
    if listed
        .meta
        .as_mut()
        .is_some_and(|meta| crate::app::strip(&mut meta.0))
    {
        listed.meta = None;
    }
    Some(listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(settings: &serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(serde_json::json!({ "extensions": { EXTENSION_ID: settings } }))
            .expect("capabilities")
    }

    #[test]
    fn only_a_client_naming_the_page_type_renders_pages() {
        assert!(declares(&client(
            &serde_json::json!({ "mimeTypes": [MIME_TYPE] })
        )));
        for settings in [
            serde_json::json!({}),
            serde_json::json!({ "mimeTypes": [] }),
            serde_json::json!({ "mimeTypes": ["text/html"] }),
            serde_json::json!({ "mimeTypes": MIME_TYPE }),
        ] {
            assert!(!declares(&client(&settings)), "{settings}");
        }
        assert!(!declares(&ClientCapabilities::default()));
    }
}
