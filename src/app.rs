//! MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): a tool may name a page,
//! an HTML document served as a `ui://` resource that a host renders in a sandboxed frame
//! beside the conversation, and say who may call it: the model, the page, or both.
//!
//! What a client that does not declare the extension sees is what it saw before: no
//! `_meta.ui` on a tool, no page among the resources, and no tool that only a page may
//! call (a call to one is an unknown tool). The manifest side is `manifest::app`; `mcp`
//! reads the client's declaration and serves pages through `resources/*`.

/// The extension's identifier, in `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// A page's MIME type: what a host that declares the extension says it renders.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The deprecated flat `_meta` key hosts before the nested `_meta.ui` read; still written
/// beside it, as the extension's own server helper does.
pub const FLAT_URI_KEY: &str = "ui/resourceUri";

/// Who may call a tool: the model (the host lists it to the model), the page (the host
/// forwards the page's calls), or both (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    pub model: bool,
    pub app: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Self {
            model: true,
            app: true,
        }
    }
}

impl Visibility {
    /// As the extension writes it: `["model", "app"]`, in that order.
    pub fn names(self) -> Vec<&'static str> {
        [(self.model, "model"), (self.app, "app")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect()
    }
}

/// A tool's `[tools.app]`: its page, if it has one, and who may call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolApp {
    /// The `ui://` URI of the page the host renders for this tool's results.
    pub page: Option<String>,
    pub visibility: Visibility,
}

impl ToolApp {
    /// Only a page may call it: a client that renders no pages never sees it.
    pub fn app_only(&self) -> bool {
        !self.visibility.model
    }
}

/// Removes what `[tools.app]` adds to a tool's `_meta`, for a client that renders no
/// pages; `true` when nothing is left of it.
pub fn strip(meta: &mut serde_json::Map<String, serde_json::Value>) -> bool {
    meta.remove("ui");
    meta.remove(FLAT_URI_KEY);
    meta.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visibility_is_written_model_first_and_an_app_only_tool_is_not_the_models() {
        assert_eq!(Visibility::default().names(), ["model", "app"]);
        let app_only = ToolApp {
            page: None,
            visibility: Visibility {
                model: false,
                app: true,
            },
        };
        assert_eq!(app_only.visibility.names(), ["app"]);
        assert!(app_only.app_only());
        assert!(
            !ToolApp {
                page: None,
                visibility: Visibility::default()
            }
            .app_only()
        );
    }
}
