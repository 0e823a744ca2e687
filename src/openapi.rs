//! `mcp-serve import openapi`: an OpenAPI 3.0 or 3.1 description becomes a manifest with one
//! HTTP tool per operation.
//!
//! The steps, one file each: [`document`] reads the description (JSON or YAML) and follows
//! its `$ref`s; [`operation`] lists the operations in the document's order; [`filter`] keeps
//! the ones the flags select and says why each other one was dropped; [`tool`] turns an
//! operation into a tool (names from [`naming`], schemas from [`schema`], credentials from
//! [`security`]), or says why it cannot; [`hoist`] moves argument schemas that several
//! tools repeat into the shared `[schemas]`; [`emit`] writes the TOML.
//!
//! Every value still reaches the request through the HTTP backend's structural sinks: the
//! importer only writes templates (`{arg}` in a path segment, a query or header value, a JSON
//! or form body), never code.
//!
//! Why an operation or a schema cannot be imported is a `String` (`Result<_, String>` in
//! [`tool`], [`schema`], [`security`]): the value is a message for the person reading the
//! import's report, which lists each skipped operation with it; no program branches on it.

pub mod document;
pub mod emit;
pub mod filter;
pub mod hoist;
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
    /// Write a projection keeping each response's readable top-level fields (`project`).
    pub project: bool,
    /// Write `max-items` on tools whose responses have lists.
    pub max_items: Option<usize>,
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
    /// The schemas the kept tools share, as the manifest's `[schemas]` has them.
    pub schemas: crate::schema::shared::Shared,
}

impl Import {
    /// A kept tool's schema (as written, referring to `schemas`) made whole.
    pub fn whole(&self, root: &serde_json::Value) -> serde_json::Value {
        self.schemas
            .attach(root)
            .ok()
            .flatten()
            .unwrap_or_else(|| root.clone())
    }
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
    let mut converter = schema::Converter::new(&document, schema::Direction::Request);
    for (operation, verdict) in operations.iter().zip(selected) {
        if let Err(reason) = verdict {
            dropped.push(Dropped {
                label: operation.label(),
                reason,
                by_filter: true,
            });
            continue;
        }
        match tool::build(&document, operation, options, &mut secrets, &mut converter) {
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
    let shared = hoist::repeated_arguments(&mut kept, converter.defs().clone());
    let manifest = loadable(
        &document,
        &mut kept,
        &mut dropped,
        &secrets,
        options,
        &shared,
    )?;
    let used: std::collections::HashSet<&String> =
        kept.iter().flat_map(|tool| &tool.uses).collect();
    let schemas = crate::schema::shared::Shared::new(
        shared
            .iter()
            .filter(|(name, _)| used.contains(name))
            .map(|(name, schema)| (name.clone(), schema.clone()))
            .collect(),
    );
    Ok(Import {
        schemas,
        manifest,
        title: document.title(),
        version: document.api_version(),
        openapi: document.openapi.clone(),
        kept,
        dropped,
        secrets,
    })
}

/// The manifest, loaded as `check` loads it before it is handed out: the importer's rule is
/// that what it writes passes `check`. A tool the loader would refuse anyway (a case the
/// steps above did not foresee) is dropped with the loader's reason, so the import still
/// either writes a manifest that loads or refuses plainly.
fn loadable(
    document: &Document,
    kept: &mut Vec<tool::Tool>,
    dropped: &mut Vec<Dropped>,
    secrets: &[security::Secret],
    options: &Options,
    shared: &serde_json::Map<String, serde_json::Value>,
) -> Result<String, ImportError> {
    loop {
        let emitted = emit::manifest(document, kept, secrets, options, shared);
        let manifest = emitted.text;
        let starts = emitted.tools;
        let diagnostics = match crate::manifest::parse_without_secrets(
            &manifest,
            "tools.toml",
            std::path::Path::new("/"),
        ) {
            Ok(_) => return Ok(manifest),
            Err(crate::manifest::ManifestError::Invalid { diagnostics, .. }) => diagnostics,
            Err(error) => {
                return Err(ImportError::Unloadable {
                    reason: error.to_string(),
                });
            }
        };
        // Each diagnostic points into a tool's text (the last one starting before it), or
        // into a shared schema, which every tool that uses it is refused with.
        let mut refused: Vec<(usize, String)> = Vec::new();
        for diagnostic in diagnostics {
            let at = diagnostic.span.as_ref().map_or(0, |span| span.start);
            let entry = emitted.schemas.partition_point(|(start, _)| *start <= at);
            if entry > 0 {
                let name = &emitted.schemas[entry - 1].1;
                for (index, tool) in kept.iter().enumerate() {
                    if tool.uses.contains(name) && !refused.iter().any(|(known, _)| *known == index)
                    {
                        refused.push((index, diagnostic.message.clone()));
                    }
                }
                continue;
            }
            let index = starts.partition_point(|start| *start <= at);
            if index == 0 {
                return Err(ImportError::Unloadable {
                    reason: diagnostic.message,
                });
            }
            if !refused.iter().any(|(known, _)| *known == index - 1) {
                refused.push((index - 1, diagnostic.message));
            }
        }
        if refused.is_empty() {
            return Err(ImportError::Unloadable {
                reason: "a shared schema no tool uses does not load".to_owned(),
            });
        }
        refused.sort_by_key(|(index, _)| std::cmp::Reverse(*index));
        for (index, reason) in refused {
            let tool = kept.remove(index);
            let label = match &tool.operation_id {
                Some(id) => format!("{id} ({} {})", tool.method, tool.path),
                None => format!("{} {}", tool.method, tool.path),
            };
            dropped.push(Dropped {
                label,
                reason: format!("the manifest would not load it: {reason}"),
                by_filter: false,
            });
        }
        if kept.is_empty() {
            return Err(ImportError::NothingKept {
                dropped: dropped.len(),
                reasons: dropped
                    .iter()
                    .rev()
                    .take(3)
                    .map(|dropped| dropped.reason.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
    }
}

#[cfg(test)]
mod tests;
