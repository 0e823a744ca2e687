//! Who the server and its tools say they are: the `[server]` identity, and each tool's
//! annotations and icons as MCP shapes them.

use serde_json::{Map, Value, json};

use super::Checker;
use super::wire::{AnnotationsWire, IconWire, ServerWire, ThemeWire};
use crate::registry::ServerIdentity;

pub(super) fn server_identity(server: ServerWire, checker: &mut Checker) -> ServerIdentity {
    let mut implementation = Map::new();
    implementation.insert(
        "name".into(),
        json!(server.name.unwrap_or_else(|| "mcp-serve".into())),
    );
    if let Some(title) = server.title {
        implementation.insert("title".into(), json!(title));
    }
    implementation.insert(
        "version".into(),
        json!(
            server
                .version
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").into())
        ),
    );
    if let Some(description) = server.description {
        implementation.insert("description".into(), json!(description));
    }
    if let Some(icons) = server.icons {
        implementation.insert("icons".into(), icons_json(&icons, checker));
    }
    if let Some(url) = server.website_url {
        if !(url.get_ref().starts_with("https://") || url.get_ref().starts_with("http://")) {
            checker.error(
                "`website-url` must be an http:// or https:// URL",
                url.span(),
            );
        }
        implementation.insert("websiteUrl".into(), json!(url.get_ref()));
    }
    ServerIdentity {
        implementation,
        instructions: server.instructions,
        discovery: server.discovery.unwrap_or(false),
    }
}

pub(super) fn annotations_json(annotations: &AnnotationsWire) -> Value {
    let mut out = Map::new();
    if let Some(title) = &annotations.title {
        out.insert("title".into(), json!(title));
    }
    for (key, value) in [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ] {
        if let Some(value) = value {
            out.insert(key.into(), json!(value));
        }
    }
    Value::Object(out)
}

pub(super) fn icons_json(icons: &[IconWire], checker: &mut Checker) -> Value {
    let icons = icons
        .iter()
        .map(|icon| {
            let src = icon.src.get_ref();
            if !(src.starts_with("https://") || src.starts_with("data:")) {
                checker
                    .error(
                        "an icon's `src` is an https:// or data: URI",
                        icon.src.span(),
                    )
                    .hint("clients refuse other schemes");
            }
            let mut out = Map::new();
            out.insert("src".into(), json!(src));
            if let Some(mime_type) = &icon.mime_type {
                out.insert("mimeType".into(), json!(mime_type));
            }
            if let Some(sizes) = &icon.sizes {
                out.insert("sizes".into(), json!(sizes));
            }
            if let Some(theme) = icon.theme {
                out.insert(
                    "theme".into(),
                    json!(match theme {
                        ThemeWire::Light => "light",
                        ThemeWire::Dark => "dark",
                    }),
                );
            }
            Value::Object(out)
        })
        .collect();
    Value::Array(icons)
}
