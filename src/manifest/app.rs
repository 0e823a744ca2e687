//! `[tools.app]`: a tool's page (an MCP App, [`crate::app`]) and who may call the tool.
//!
//! The page is a declared file (opened at load with no symbolic link on its path, read at
//! each `resources/read`), served as a `ui://` resource of MIME type
//! `text/html;profile=mcp-app` with its `_meta.ui`: the origins the host's
//! Content-Security-Policy may admit (each checked to be an origin and nothing more, so
//! no value can add a directive to the policy a host builds from it), the permissions it
//! asks for and whether it wants a border. The tool's definition gets `_meta.ui`
//! (`resourceUri`, `visibility`) and the older flat `ui/resourceUri`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use toml::Spanned;

use super::Checker;
use super::wire::{AppWire, CspWire, ToolWire};
use crate::app::{FLAT_URI_KEY, MIME_TYPE, ToolApp, Visibility};
use crate::resource::{DeclaredResource, ResourceTemplate, Source};

/// What a page may ask the host to allow, as written and as the extension names it.
const PERMISSIONS: [(&str, &str); 4] = [
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboard-write", "clipboardWrite"),
];

/// The schemes a CSP origin may have.
const SCHEMES: [&str; 4] = ["https", "http", "wss", "ws"];

/// The tool's app as declared (its mistakes are reported by [`build_pages`]).
pub(super) fn tool_app(wire: &ToolWire) -> Option<ToolApp> {
    let app = wire.app.as_ref()?.get_ref();
    let visibility = app
        .visibility
        .as_ref()
        .map_or_else(Visibility::default, |names| {
            let has = |name: &str| names.get_ref().iter().any(|n| n.get_ref() == name);
            Visibility {
                model: has("model"),
                app: has("app"),
            }
        });
    Some(ToolApp {
        page: app
            .page
            .as_ref()
            .map(|_| page_uri(wire.name.get_ref(), app)),
        visibility,
    })
}

/// The `_meta` members a tool with an app is listed with.
pub(super) fn tool_meta(app: &ToolApp) -> Map<String, Value> {
    let mut ui = Map::new();
    if let Some(uri) = &app.page {
        ui.insert("resourceUri".into(), json!(uri));
    }
    ui.insert("visibility".into(), json!(app.visibility.names()));
    let mut meta = Map::new();
    meta.insert("ui".into(), Value::Object(ui));
    if let Some(uri) = &app.page {
        meta.insert(FLAT_URI_KEY.into(), json!(uri));
    }
    meta
}

fn page_uri(tool: &str, app: &AppWire) -> String {
    app.uri
        .as_ref()
        .map_or_else(|| format!("ui://{tool}"), |uri| uri.get_ref().clone())
}

/// Checks every tool's `[tools.app]`; returns the pages they declare, one per URI (tools
/// may share a page by giving the same `page` and `uri`).
/// A page's URI must be no declared resource's and match no template (which would serve
/// its own file under the page's URI to a client that renders no pages).
pub(super) fn build_pages(
    tools: &[ToolWire],
    (declared, templates): (&[DeclaredResource], &[ResourceTemplate]),
    checker: &mut Checker,
) -> Vec<DeclaredResource> {
    let mut pages: Vec<DeclaredResource> = Vec::new();
    // Each page's file and `_meta.ui`, which every tool sharing it must declare alike.
    let mut files: HashMap<String, (String, Map<String, Value>)> = HashMap::new();
    for wire in tools {
        let Some(app) = &wire.app else { continue };
        let tool = wire.name.get_ref();
        check_visibility(app.get_ref(), checker);
        check_meta_keys(wire, checker);
        let app = app.get_ref();
        let Some(page) = &app.page else {
            if let Some(uri) = &app.uri {
                checker.error(
                    format!("`uri` names a page, and `{tool}`'s `[tools.app]` has no `page`"),
                    uri.span(),
                );
            }
            continue;
        };
        let uri = page_uri(tool, app);
        let uri_span = app.uri.as_ref().map_or_else(|| page.span(), Spanned::span);
        if !valid_uri(&uri) {
            checker.error(
                format!("`{uri}` is not a page URI: an MCP App's page is `ui://` and a name"),
                uri_span,
            );
            continue;
        }
        if declared.iter().any(|resource| resource.uri == uri)
            || templates
                .iter()
                .any(|template| template.matches(&uri).is_some())
        {
            checker.error(
                format!(
                    "`{uri}` is this tool's page and also a declared resource's or a template's URI"
                ),
                uri_span,
            );
            continue;
        }
        let meta = page_meta(app, checker);
        let folder = is_folder(page, checker);
        if app.entry.is_some() && !folder {
            if let Some(entry) = &app.entry {
                checker.error(
                    "`entry` names the entry page of a folder, and `page` is a file",
                    entry.span(),
                );
            }
            continue;
        }
        if let Some((first, first_meta)) = files.get(&uri) {
            if first != page.get_ref() {
                checker
                    .error(format!("two tools give the page `{uri}` different files"), page.span())
                    .hint("tools share a page by naming the same `page` and `uri`; give this one its own `uri`");
            } else if *first_meta != meta {
                checker
                    .error(format!("two tools give the page `{uri}` different `csp`, `permissions` or `prefers-border`"), page.span())
                    .hint("a page has one policy: declare the same in every tool that shares it");
            }
            continue;
        }
        let source = if folder {
            folder_page(page, app.entry.as_ref(), checker)
        } else {
            super::resource::declared_file(page, Some(&MIME_TYPE.to_owned()), checker)
                .map(|(source, _)| source)
        };
        let Some(source) = source else { continue };
        files.insert(uri.clone(), (page.get_ref().clone(), meta.clone()));
        let mut definition = Map::new();
        definition.insert("uri".into(), json!(uri));
        definition.insert("name".into(), json!(tool));
        if let Some(title) = &wire.title {
            definition.insert("title".into(), json!(title));
        }
        definition.insert("mimeType".into(), json!(MIME_TYPE));
        definition.insert("_meta".into(), json!({ "ui": meta }));
        pages.push(DeclaredResource {
            uri,
            definition,
            mime_type: MIME_TYPE.to_owned(),
            source,
            scopes: Vec::new(),
            app: Some(meta),
        });
    }
    pages
}

/// Whether `page` names a folder (opened with no symbolic link on its path).
fn is_folder(page: &Spanned<String>, checker: &Checker) -> bool {
    crate::resource::open::folder(&super::resource::lexical(&checker.resolve(page.get_ref())))
        .is_ok_and(|folder| {
            std::fs::File::from(folder)
                .metadata()
                .is_ok_and(|metadata| metadata.is_dir())
        })
}

/// A folder's page: its entry beneath it, made one document now (once: a read costs
/// nothing more), so that a reference to a file the folder lacks is a load error.
fn folder_page(
    page: &Spanned<String>,
    entry: Option<&Spanned<String>>,
    checker: &mut Checker,
) -> Option<Source> {
    let folder = super::resource::lexical(&checker.refer(page.get_ref(), super::Use::Resource));
    let (entry, span) = entry.map_or_else(
        || ("index.html".to_owned(), page.span()),
        |entry| (entry.get_ref().clone(), entry.span()),
    );
    match crate::resource::page::inlined(&folder, &entry) {
        Ok(document) => Some(Source::Page {
            folder,
            document: document.into(),
        }),
        Err(error) => {
            checker.error(format!("the page in `{}`: {error}", page.get_ref()), span);
            None
        }
    }
}

fn check_visibility(app: &AppWire, checker: &mut Checker) {
    let Some(names) = &app.visibility else { return };
    if names.get_ref().is_empty() {
        checker
            .error(
                "`visibility` is empty: no one could call this tool",
                names.span(),
            )
            .hint("`[\"model\", \"app\"]` (the default), `[\"model\"]` or `[\"app\"]`");
    }
    let mut seen = Vec::new();
    for name in names.get_ref() {
        if !matches!(name.get_ref().as_str(), "model" | "app") {
            checker
                .error(
                    format!("unknown visibility `{}`", name.get_ref()),
                    name.span(),
                )
                .hint("`model` (the host lists the tool to its model) or `app` (its page may call it)");
        } else if seen.contains(name.get_ref()) {
            checker.error(format!("`{}` is listed twice", name.get_ref()), name.span());
        }
        seen.push(name.get_ref().clone());
    }
}

/// A tool's own `_meta` may not also write what `[tools.app]` writes.
fn check_meta_keys(wire: &ToolWire, checker: &mut Checker) {
    let Some(meta) = &wire.meta else { return };
    for key in ["ui", FLAT_URI_KEY] {
        if meta.get_ref().contains_key(key) {
            checker
                .error(
                    format!("`_meta` has `{key}`, which `[tools.app]` writes"),
                    meta.span(),
                )
                .hint("declare the page and visibility in `[tools.app]` only");
        }
    }
}

/// The page's `_meta.ui`: `csp`, `permissions`, `prefersBorder`, as the extension names them.
fn page_meta(app: &AppWire, checker: &mut Checker) -> Map<String, Value> {
    let mut meta = Map::new();
    if let Some(csp) = &app.csp {
        meta.insert("csp".into(), Value::Object(csp_meta(csp, checker)));
    }
    if let Some(permissions) = &app.permissions {
        let mut asked = Map::new();
        for permission in permissions {
            match PERMISSIONS
                .iter()
                .find(|(written, _)| written == permission.get_ref())
            {
                Some((_, key)) => {
                    asked.insert((*key).into(), json!({}));
                }
                None => {
                    checker
                        .error(
                            format!("unknown permission `{}`", permission.get_ref()),
                            permission.span(),
                        )
                        .hint("`camera`, `microphone`, `geolocation` or `clipboard-write`");
                }
            }
        }
        meta.insert("permissions".into(), Value::Object(asked));
    }
    if let Some(border) = app.prefers_border {
        meta.insert("prefersBorder".into(), json!(border));
    }
    meta
}

fn csp_meta(csp: &CspWire, checker: &mut Checker) -> Map<String, Value> {
    let mut meta = Map::new();
    for (key, origins) in [
        ("connectDomains", &csp.connect_domains),
        ("resourceDomains", &csp.resource_domains),
        ("frameDomains", &csp.frame_domains),
        ("baseUriDomains", &csp.base_uri_domains),
    ] {
        let Some(origins) = origins else { continue };
        let mut kept = Vec::new();
        for origin in origins {
            if is_origin(origin.get_ref()) {
                kept.push(json!(origin.get_ref()));
            } else {
                checker
                    .error(
                        format!("`{}` is not an origin", origin.get_ref()),
                        origin.span(),
                    )
                    .hint("a scheme and a host, with a port if needed: `https://api.example.com`, `https://*.example.com`, `http://127.0.0.1:8080`");
            }
        }
        meta.insert(key.into(), Value::Array(kept));
    }
    meta
}

/// `ui://` and a name: printable ASCII without spaces, quotes or angle brackets.
fn valid_uri(uri: &str) -> bool {
    uri.strip_prefix("ui://").is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|byte| byte.is_ascii_graphic() && !b"\"'<>\\`{}|^".contains(&byte))
    })
}

/// A CSP origin and nothing else: `scheme://host[:port]`, the host a name, an IPv4
/// address, or `*.` and a name; the port digits or `*`. No path, no space, no `;` or `'`:
/// a host builds its policy by joining these, and one of them must never end a directive.
fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    if !SCHEMES.contains(&scheme) {
        return false;
    }
    let (host, port) = rest.rsplit_once(':').unwrap_or((rest, ""));
    let port_ok = port.is_empty() && !rest.ends_with(':')
        || port == "*"
        || port.bytes().all(|byte| byte.is_ascii_digit())
            && port.parse::<u16>().is_ok_and(|port| port > 0);
    let name = host.strip_prefix("*.").unwrap_or(host);
    port_ok
        && !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_origins_pass_and_nothing_that_could_end_a_csp_directive() {
        for origin in [
            "https://api.example.com",
            "https://*.example.com",
            "http://127.0.0.1:8080",
            "wss://live.example.com:*",
            "http://localhost",
        ] {
            assert!(is_origin(origin), "{origin}");
        }
        for text in [
            "api.example.com",
            "https://",
            "https://example.com/path",
            "https://example.com; script-src *",
            "https://example.com 'unsafe-eval'",
            "https://exa mple.com",
            "javascript://x",
            "https://*",
            "https://a.*.example.com",
            "https://example.com:",
            "https://example.com:123456",
            "https://example.com:99999",
            "https://example.com:0",
            "https://-bad.example.com",
            "*",
            "'self'",
            "data:",
        ] {
            assert!(!is_origin(text), "{text}");
        }
    }

    #[test]
    fn page_uris_are_ui_and_a_name() {
        assert!(valid_uri("ui://catalog/product-card"));
        for uri in [
            "ui://",
            "https://x",
            "ui://a b",
            "ui://a\"b",
            "ui://<x>",
            "UI://x",
        ] {
            assert!(!valid_uri(uri), "{uri}");
        }
    }
}
