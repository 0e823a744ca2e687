//! `mcp-serve import openapi`: an OpenAPI 3.0 or 3.1 description becomes a manifest with one
//! HTTP tool per operation.
//!
//! The steps, one file each: [`document`] reads the description (JSON or YAML) and follows
//! its `$ref`s; [`operation`] lists the operations in the document's order; [`filter`] keeps
//! the ones the flags select and says why each other one was dropped; [`tool`] turns an
//! operation into a tool (names from [`naming`], schemas from [`schema`], credentials from
//! [`security`]), or says why it cannot; [`emit`] writes the TOML.
//!
//! Every value still reaches the request through the HTTP backend's structural sinks: the
//! importer only writes templates (`{arg}` in a path segment, a query or header value, a JSON
//! or form body), never code.

pub mod document;
pub mod emit;
pub mod filter;
pub mod naming;
pub mod operation;
pub mod schema;
pub mod security;
pub mod tool;

pub use document::{Document, ImportError};
pub use filter::Filters;

/// How to import, from the command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub filters: Filters,
    /// Replaces the description's `servers`.
    pub base_url: Option<String>,
    /// Put in front of every variable name a security scheme asks for.
    pub env_prefix: String,
    /// Leave out output schemas (for APIs whose responses stray from their description).
    pub no_output_schema: bool,
    /// An output schema larger than this many bytes of compact JSON is left out.
    pub max_output_schema: usize,
    /// The server's name; default: from the description's title.
    pub server_name: Option<String>,
    /// The command line that made the manifest, for its header comment.
    pub command_line: String,
}

/// What an import made: the manifest, and what the summary reports.
#[derive(Debug)]
pub struct Import {
    pub manifest: String,
    pub title: String,
    pub version: String,
    pub openapi: String,
    pub kept: Vec<tool::Tool>,
    pub dropped: Vec<Dropped>,
    pub secrets: Vec<security::Secret>,
}

/// An operation that did not become a tool, and why.
#[derive(Debug)]
pub struct Dropped {
    pub label: String,
    pub reason: String,
    /// Left out by a filter, rather than impossible to import.
    pub by_filter: bool,
}

/// Imports a description from its text.
pub fn import(text: &str, options: &Options) -> Result<Import, ImportError> {
    let document = Document::parse(text)?;
    let operations = operation::list(&document)?;
    let selected = options.filters.select(&operations)?;
    let mut names = naming::ToolNames::default();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let mut secrets = security::Secrets::new(&document, &options.env_prefix);
    for (operation, verdict) in operations.iter().zip(selected) {
        if let Err(reason) = verdict {
            dropped.push(Dropped {
                label: operation.label(),
                reason,
                by_filter: true,
            });
            continue;
        }
        match tool::build(&document, operation, options, &mut secrets) {
            Ok(mut built) => {
                built.name = names.claim(&built.name);
                kept.push(built);
            }
            Err(reason) => dropped.push(Dropped {
                label: operation.label(),
                reason,
                by_filter: false,
            }),
        }
    }
    if kept.is_empty() {
        let mut reasons: Vec<&str> = Vec::new();
        for reason in dropped.iter().map(|dropped| dropped.reason.as_str()) {
            if !reasons.contains(&reason) && reasons.len() < 3 {
                reasons.push(reason);
            }
        }
        return Err(ImportError::NothingKept {
            dropped: dropped.len(),
            reasons: reasons.join("; "),
        });
    }
    let secrets = secrets.into_used();
    let manifest = emit::manifest(&document, &kept, &secrets, options);
    Ok(Import {
        manifest,
        title: document.title(),
        version: document.api_version(),
        openapi: document.openapi.clone(),
        kept,
        dropped,
        secrets,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn options() -> Options {
        Options {
            filters: Filters::default(),
            base_url: None,
            env_prefix: "T_".to_owned(),
            no_output_schema: false,
            max_output_schema: 16 * 1024,
            server_name: None,
            command_line: "mcp-serve import openapi spec.json".to_owned(),
        }
    }

    /// Text with every character that could break out of TOML, a template or a header.
    fn hostile() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("'''".to_owned()),
                Just("\"\"\"".to_owned()),
                Just("\n[[tools]]\nname = \"evil\"\n".to_owned()),
                Just("{".to_owned()),
                Just("}".to_owned()),
                Just("${env:HOME}".to_owned()),
                Just("\\".to_owned()),
                Just("\u{0}".to_owned()),
                Just("\u{7f}".to_owned()),
                Just("\r\n".to_owned()),
                Just("é😀".to_owned()),
                Just(" ".to_owned()),
                Just(":/?#[]@".to_owned()),
                "[a-zA-Z0-9_.-]{1,6}",
            ],
            0..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Whatever the names and texts of a description, the import never panics, and what
        /// it writes loads with no error, as exactly the tools it reports, texts intact.
        #[test]
        fn hostile_descriptions_import_to_manifests_that_load_as_reported(
            id in hostile(),
            summary in hostile(),
            description in hostile(),
            path_name in hostile(),
            query_name in hostile(),
            header_name in hostile(),
            field in hostile(),
        ) {
            let document = json!({
                "openapi": "3.0.3",
                "info": {"title": summary, "version": description},
                "servers": [{"url": "https://api.example.com/v1"}],
                "paths": {
                    format!("/items/{{{path_name}}}"): {
                        "post": {
                            "operationId": id,
                            "summary": summary,
                            "description": description,
                            "parameters": [
                                {"name": path_name, "in": "path", "required": true, "schema": {"type": "string"}},
                                {"name": query_name, "in": "query", "schema": {"type": "integer"}, "description": description},
                                {"name": header_name, "in": "header", "schema": {"type": "string"}}
                            ],
                            "requestBody": {"content": {"application/json": {"schema": {
                                "type": "object", "properties": {field.clone(): {"type": "string", "description": summary}}
                            }}}},
                            "responses": {"200": {"description": "ok"}}
                        }
                    },
                    "/plain": {"get": {"operationId": id, "responses": {"204": {"description": "none"}}}}
                }
            });
            let imported = import(&document.to_string(), &options()).expect("one operation always imports");
            let registry = crate::manifest::parse(&imported.manifest, "tools.toml", std::path::Path::new("/"))
                .unwrap_or_else(|error| panic!("{error}\n{}", imported.manifest));
            let loaded: Vec<String> = registry.tools().map(|tool| tool.name.clone()).collect();
            let reported: Vec<String> = imported.kept.iter().map(|tool| tool.name.clone()).collect();
            prop_assert_eq!(loaded, reported);
            for (tool, kept) in registry.tools().zip(&imported.kept) {
                let description = tool.definition.get("description").and_then(serde_json::Value::as_str);
                prop_assert_eq!(description, kept.description.as_deref());
            }
        }
    }
}
