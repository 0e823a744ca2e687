//! The bundle's entry in the official MCP Registry, `server.json`, in the registry's
//! 2025-12-11 schema: the server's name, description and version, and one `mcpb` package
//! with the bundle's SHA-256 and each variable the host asks for as a secret.
//!
//! What only its author knows is asked on the command line: the registry name
//! (`--registry-name io.github.USER/NAME`) and where the bundle will be downloaded from
//! (`--url`, a GitHub or GitLab release asset). Without them the file holds placeholders
//! that fit the schema, and the notes say to fill them.

use serde_json::{Value, json};

use super::mcpb::Described;
use super::{BundleError, Options};

/// The schema `server.json` follows.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's bound on a description.
const MAX_DESCRIPTION: usize = 100;

/// What the command line gives `server.json`, as the registry's schema takes it: a name of
/// 3 to 200 characters, `NAMESPACE/NAME` (`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`), and an
/// `https://` address.
pub(super) fn check(options: &Options) -> Result<(), BundleError> {
    if let Some(name) = &options.registry_name {
        let fits = |part: &str, also: &[char]| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || also.contains(&c))
        };
        let valid = (3..=200).contains(&name.len())
            && name
                .split_once('/')
                .is_some_and(|(space, server)| fits(space, &[]) && fits(server, &['_']));
        if !valid {
            return Err(BundleError::Refused(format!(
                "--registry-name `{}` is not a registry name: NAMESPACE/NAME, e.g. io.github.ada/weather (letters, digits, `.`, `-`, and `_` after the `/`; at most 200 characters)",
                crate::registry::shown(name)
            )));
        }
    }
    // No credentials in it (`https://user:pass@…`): the registry publishes the address.
    let plain = |url: &str| {
        url.strip_prefix("https://").is_some_and(|rest| {
            let host = rest.split('/').next().unwrap_or_default();
            !host.is_empty() && !host.contains('@') && !rest.contains(char::is_whitespace)
        })
    };
    if let Some(url) = &options.url
        && !plain(url)
    {
        return Err(BundleError::Refused(format!(
            "--url `{}` is not an https:// address; the registry takes a GitHub or GitLab release asset",
            crate::registry::shown(url)
        )));
    }
    Ok(())
}

pub(super) struct ServerJson {
    pub(super) json: Value,
    pub(super) notes: Vec<String>,
}

pub(super) fn document(described: &Described, options: &Options, sha256: &str) -> ServerJson {
    let mut notes = Vec::new();
    let slug: String = described
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = options.registry_name.clone().unwrap_or_else(|| {
        notes.push(
            "server.json names the server `io.github.YOUR-USER/…`: pass --registry-name with your namespace".to_owned(),
        );
        format!("io.github.YOUR-USER/{slug}")
    });
    let file = options
        .output
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("server.mcpb");
    let identifier = options.url.clone().unwrap_or_else(|| {
        notes.push(
            "server.json's package URL is a placeholder: pass --url with the release asset's address".to_owned(),
        );
        format!(
            "https://github.com/YOUR-USER/{slug}/releases/download/v{}/{file}",
            described.version
        )
    });
    let variables: Vec<Value> = described
        .asked
        .iter()
        .map(|variable| {
            json!({
                "name": variable,
                "description": format!("The secret the manifest reads as ${{env:{variable}}}"),
                "isRequired": true,
                "isSecret": true,
            })
        })
        .collect();
    let mut package = json!({
        "registryType": "mcpb",
        "identifier": identifier,
        "version": described.version,
        "fileSha256": sha256,
        "transport": {"type": "stdio"},
    });
    if !variables.is_empty() {
        package["environmentVariables"] = json!(variables);
    }
    let mut document = json!({
        "$schema": SCHEMA,
        "name": name,
        "description": shortened(&described.description),
        "version": described.version,
        "packages": [package],
    });
    if let Some(title) = described.title.as_deref().map(shortened) {
        document["title"] = json!(title);
    }
    if let Some(website) = &described.website {
        document["websiteUrl"] = json!(website);
    }
    ServerJson {
        json: document,
        notes,
    }
}

/// `text` on one line, at most the registry's 100 characters (cut at a word, with `…`).
fn shortened(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_DESCRIPTION {
        return line;
    }
    let cut: String = line.chars().take(MAX_DESCRIPTION - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(kept, _)| kept);
    format!("{cut}…")
}
