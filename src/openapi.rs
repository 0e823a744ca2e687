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
mod tests;
