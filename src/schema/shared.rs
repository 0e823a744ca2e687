//! `[schemas]`: schemas a manifest declares once and any tool's schema uses by
//! `"$ref": "#/$defs/NAME"`, as if they were in that schema's own `$defs`.
//!
//! They stay one copy in memory: a tool keeps its schema as written (the root), and the
//! entries it uses, directly or through other entries, are attached only where a whole
//! schema is needed ([`Shared::attach`]): to compile it on the first call that needs it,
//! and to advertise it. An imported API of thousands of operations shares its components
//! this way instead of copying them into every tool.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// The manifest's `[schemas]`, by name, in the order written.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shared {
    entries: Map<String, Value>,
}

/// Why a schema cannot use the shared ones as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SharedError {
    #[error("`$ref: {reference}` names no `$defs` entry of its own and no `[schemas]` entry")]
    Missing { reference: String },
    #[error(
        "its own `$defs.{name}` has the name of a `[schemas]` entry it uses, which would then read it"
    )]
    Shadowed { name: String },
}

/// Whether `name` may name an entry: letters, digits, `_`, `-` and `.` (nothing a JSON
/// pointer or a URI fragment escapes).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Shared {
    pub fn new(entries: Map<String, Value>) -> Self {
        Self { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries.get(name)
    }

    pub fn entries(&self) -> &Map<String, Value> {
        &self.entries
    }

    /// The entries `root` uses, directly or through other entries, in the order met; or
    /// the first reference that names nothing, or an own entry that would shadow one used.
    pub fn closure(&self, root: &Value) -> Result<Vec<&str>, SharedError> {
        let own = own_defs(root);
        let mut pending = Vec::new();
        shared_names(root, &own, &mut pending);
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut used = Vec::new();
        pending.reverse();
        while let Some((name, reference)) = pending.pop() {
            let Some((key, target)) = self.entries.get_key_value(name.as_str()) else {
                return Err(SharedError::Missing { reference });
            };
            if !seen.insert(key.as_str()) {
                continue;
            }
            if own.contains(key.as_str()) {
                return Err(SharedError::Shadowed { name: key.clone() });
            }
            used.push(key.as_str());
            let mut next = Vec::new();
            shared_names(target, &HashSet::new(), &mut next);
            next.reverse();
            pending.extend(next);
        }
        Ok(used)
    }

    /// The first reference in `entry` (one of these entries) to no entry: each entry's own
    /// references checked once make every closure whole, with no walk through the others.
    pub fn dangling(&self, entry: &Value) -> Option<String> {
        let mut found = Vec::new();
        shared_names(entry, &HashSet::new(), &mut found);
        found
            .into_iter()
            .find(|(name, _)| !self.entries.contains_key(name))
            .map(|(_, reference)| reference)
    }

    /// `root` as one self-contained schema: the entries it uses added to its `$defs`.
    /// `None` when it uses none (the root is already whole).
    pub fn attach(&self, root: &Value) -> Result<Option<Value>, SharedError> {
        let used = self.closure(root)?;
        if used.is_empty() {
            return Ok(None);
        }
        let mut whole = root.clone();
        let Some(object) = whole.as_object_mut() else {
            return Ok(None);
        };
        let defs = object
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            for name in used {
                if let Some(entry) = self.entries.get(name) {
                    defs.insert(name.to_owned(), entry.clone());
                }
            }
        }
        Ok(Some(whole))
    }
}

/// The names of `root`'s own `$defs` entries.
fn own_defs(root: &Value) -> HashSet<&str> {
    root.get("$defs")
        .and_then(Value::as_object)
        .map(|defs| defs.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Every `"$ref": "#/$defs/NAME…"` below `schema` whose NAME is not in `own`, with the
/// reference as written.
fn shared_names(schema: &Value, own: &HashSet<&str>, into: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                if key == "$ref"
                    && let Some(reference) = value.as_str()
                    && let Some(rest) = reference.strip_prefix("#/$defs/")
                {
                    let name = rest.split('/').next().unwrap_or(rest);
                    if !own.contains(name) {
                        into.push((name.to_owned(), reference.to_owned()));
                    }
                } else if key != "enum" && key != "const" && key != "examples" && key != "default" {
                    shared_names(value, own, into);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                shared_names(item, own, into);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shared() -> Shared {
        let Value::Object(entries) = json!({
            "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}, "next": {"$ref": "#/$defs/Pet"}}},
            "Tag": {"type": "string", "examples": [{"$ref": "#/$defs/Unused"}]},
            "Unused": {"type": "integer"}
        }) else {
            unreachable!("an object")
        };
        Shared::new(entries)
    }

    #[test]
    fn a_root_gets_the_entries_it_uses_through_others_and_no_more() {
        let root = json!({"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}});
        let whole = shared()
            .attach(&root)
            .expect("resolves")
            .expect("uses some");
        let defs = whole["$defs"].as_object().expect("defs");
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["Pet", "Tag"]);
        assert_eq!(whole["properties"], root["properties"]);
        let validator = jsonschema::validator_for(&whole).expect("compiles");
        assert!(validator.is_valid(&json!({"pet": {"tag": "a", "next": {"tag": "b"}}})));
        assert!(!validator.is_valid(&json!({"pet": {"next": {"tag": 1}}})));
    }

    #[test]
    fn own_entries_win_and_may_not_shadow_a_used_one() {
        let own = json!({"$defs": {"Tag": {"type": "integer"}}, "properties": {"t": {"$ref": "#/$defs/Tag"}}});
        assert_eq!(shared().attach(&own), Ok(None));
        let shadowing = json!({"$defs": {"Tag": {"type": "integer"}}, "properties": {"p": {"$ref": "#/$defs/Pet"}}});
        assert_eq!(
            shared().attach(&shadowing),
            Err(SharedError::Shadowed { name: "Tag".into() })
        );
    }

    #[test]
    fn a_reference_to_nothing_is_named() {
        let root = json!({"properties": {"x": {"$ref": "#/$defs/Nope/properties/a"}}});
        assert_eq!(
            shared().closure(&root),
            Err(SharedError::Missing {
                reference: "#/$defs/Nope/properties/a".into()
            })
        );
        assert!(valid_name("microsoft.graph.user-2_x"));
        assert!(!valid_name("a/b") && !valid_name("") && !valid_name("a~b"));
    }
}
