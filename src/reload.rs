//! Hot reload (`--watch`): when the manifest (or a skill's or page's folder) changes, load
//! it again; if it is valid, swap it in whole (calls already running finish on the old
//! definitions), log what changed, and tell clients; if not, keep serving the old one and
//! log why.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::manifest::{self, ManifestError};
use crate::mcp::Handler;
use crate::registry::Registry;
use crate::toolset::Selection;

/// How often the manifest is checked for changes.
const POLL: Duration = Duration::from_millis(300);

/// Watches `path` forever, reloading `handler` on every change with the same choice of
/// toolsets.
pub async fn watch(path: PathBuf, toolsets: Selection, handler: Handler) {
    // The manifest, and what its skills' folders hold (read whole at load).
    let state = |handler: &Handler| {
        let registry = handler.registry();
        let pages = registry
            .resources()
            .filter_map(|resource| match &resource.source {
                crate::resource::Source::Page { folder, .. } => Some(folder.clone()),
                _ => None,
            });
        let folders: Vec<PathBuf> = registry
            .skills()
            .iter()
            .map(|skill| skill.folder.clone())
            .chain(pages)
            .collect();
        (fingerprint(&path), crate::skill::fingerprint(&folders))
    };
    let mut seen = state(&handler);
    loop {
        tokio::time::sleep(POLL).await;
        handler.notify_resource_changes().await;
        let now = state(&handler);
        if now == seen {
            continue;
        }
        // Editors write in steps; let the file settle.
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen = state(&handler);
        let loaded = {
            let path = path.clone();
            let toolsets = toolsets.clone();
            tokio::task::spawn_blocking(move || manifest::load_for(&path, &toolsets)).await
        };
        match loaded {
            Ok(Err(ManifestError::Toolsets(error))) => {
                tracing::warn!(%error, "the changed manifest lacks a chosen toolset; still serving the previous one");
            }
            Ok(Ok(registry)) if auth_changed(&handler.registry(), &registry) => {
                tracing::warn!(manifest = %path.display(), "[server.auth] changed; it is read at start-up, so restart to apply it; still serving the previous manifest");
            }
            Ok(Ok(mut registry)) => {
                let old = handler.registry();
                registry.adopt_store(&old);
                registry.adopt_limits(&old);
                registry.adopt_launch_secrets(&old);
                registry.log_sandboxes();
                for line in describe_changes(&old, &registry) {
                    tracing::info!("reload: {line}");
                }
                match handler.replace(Arc::new(registry)) {
                    Ok(()) => {
                        handler.registry().redact_logs();
                        tracing::info!(manifest = %path.display(), "reloaded the manifest");
                        handler.notify_tools_changed().await;
                    }
                    Err(error) => {
                        tracing::error!(%error, "the new manifest cannot be served; keeping the old one");
                    }
                }
            }
            Ok(Err(ManifestError::Invalid { rendered, .. })) => {
                eprintln!("{rendered}");
                tracing::warn!(manifest = %path.display(), "the changed manifest is invalid; still serving the previous one");
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not reload; still serving the previous manifest");
            }
            Err(error) => tracing::error!(%error, "the reload task failed"),
        }
    }
}

/// Whether the reloaded manifest's `[server.auth]` differs from the one served: the HTTP
/// layers that check tokens are built at start, so a reload that added it (or scopes with
/// it) would serve everything to everyone.
fn auth_changed(old: &Registry, new: &Registry) -> bool {
    let key = |registry: &Registry| {
        registry.auth.as_ref().map(|settings| {
            (
                settings.issuer.clone(),
                settings.audience.clone(),
                settings.required_scopes.clone(),
            )
        })
    };
    key(old) != key(new)
}

fn fingerprint(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// One line per tool added, removed or changed, with a warning for input schemas that may
/// reject arguments the old one accepted.
pub fn describe_changes(old: &Registry, new: &Registry) -> Vec<String> {
    let mut lines = Vec::new();
    for tool in new.tools() {
        match old.get(&tool.name) {
            Err(_) => lines.push(format!("added `{}`", tool.name)),
            Ok(previous) if !previous.same_definition(tool) => {
                let breaking = breaking_changes(&previous.input_schema, &tool.input_schema);
                if breaking.is_empty() {
                    lines.push(format!("changed `{}`", tool.name));
                } else {
                    lines.push(format!(
                        "changed `{}` incompatibly: {}; clients that cached its schema may send arguments it now rejects",
                        tool.name,
                        breaking.join(", ")
                    ));
                }
            }
            Ok(_) => {}
        }
    }
    for tool in old.tools() {
        if new.get(&tool.name).is_err() {
            lines.push(format!("removed `{}`", tool.name));
        }
    }
    lines
}

/// Ways the new input schema can reject what the old one accepted (top level only).
pub fn breaking_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut reasons = Vec::new();
    let names = |schema: &Value, key: &str| -> Vec<String> {
        match schema.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::Object(map)) => map.keys().cloned().collect(),
            _ => Vec::new(),
        }
    };
    let old_required = names(old, "required");
    for name in names(new, "required") {
        if !old_required.contains(&name) {
            reasons.push(format!("`{name}` is now required"));
        }
    }
    let new_properties = names(new, "properties");
    let strict = new.get("additionalProperties") == Some(&Value::Bool(false));
    for name in names(old, "properties") {
        if !new_properties.contains(&name) && strict {
            reasons.push(format!("`{name}` was removed"));
        } else if let (Some(before), Some(after)) = (
            old.pointer(&format!("/properties/{name}/type")),
            new.pointer(&format!("/properties/{name}/type")),
        ) && before != after
        {
            reasons.push(format!("`{name}` changed type from {before} to {after}"));
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::breaking_changes;

    #[test]
    fn finds_changes_that_reject_old_arguments() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"], "additionalProperties": false});
        let new = json!({"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "string"}}, "required": ["a", "c"], "additionalProperties": false});
        assert_eq!(
            breaking_changes(&old, &new),
            vec![
                "`c` is now required".to_owned(),
                "`a` changed type from \"string\" to \"integer\"".to_owned(),
                "`b` was removed".to_owned(),
            ]
        );
        assert!(breaking_changes(&old, &old).is_empty());
    }

    #[test]
    fn a_change_to_a_shared_schema_changes_the_tools_that_use_it_and_no_other() {
        let manifest = |tag: &str| {
            format!(
                "[schemas]\nTag = {{ type = \"{tag}\" }}\nOther = {{ type = \"string\" }}\n\
                 [[tools]]\nname = \"uses\"\ninput-schema = '{{\"type\": \"object\", \"properties\": {{\"t\": {{\"$ref\": \"#/$defs/Tag\"}}}}}}'\n[tools.static]\ncontent = [{{ type = \"text\", text = \"x\" }}]\n\
                 [[tools]]\nname = \"other\"\ninput-schema = '{{\"type\": \"object\", \"properties\": {{\"o\": {{\"$ref\": \"#/$defs/Other\"}}}}}}'\n[tools.static]\ncontent = [{{ type = \"text\", text = \"x\" }}]\n"
            )
        };
        let load = |text: &str| {
            crate::manifest::parse(text, "tools.toml", std::path::Path::new("/")).expect("loads")
        };
        let old = load(&manifest("string"));
        assert!(super::describe_changes(&old, &load(&manifest("string"))).is_empty());
        assert_eq!(
            super::describe_changes(&old, &load(&manifest("integer"))),
            ["changed `uses`"]
        );
    }
}
