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
    #[error(
        "it uses `[schemas]`, which are JSON Schema 2020-12, but says `$schema: {dialect}`; drop its `$schema`"
    )]
    Dialect { dialect: String },
    #[error("it uses `[schemas]`, but its own `$defs` is `{found}`, not an object of schemas")]
    OwnDefs { found: String },
}

/// Keywords an entry may not have anywhere: each moves where references resolve, or what
/// they mean, away from the one document an entry is read in (the `$defs` of each schema
/// that uses it).
const FORBIDDEN: [&str; 9] = [
    "$id",
    "$defs",
    "definitions",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
];

/// Keywords whose values map names (never keywords) to schemas.
const NAMED: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];

/// Keywords whose values are data, never schemas.
const DATA: [&str; 4] = ["enum", "const", "default", "examples"];

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
        if let Some(defs) = root.get("$defs").filter(|defs| !defs.is_object()) {
            return Err(SharedError::OwnDefs {
                found: defs.to_string(),
            });
        }
        if let Some(dialect) = root.get("$schema")
            && !dialect.as_str().is_some_and(|uri| uri.contains("2020-12"))
        {
            return Err(SharedError::Dialect {
                dialect: dialect.to_string(),
            });
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

    /// What is wrong with `entry` (one of these entries), if anything: a keyword it may not
    /// have ([`FORBIDDEN`], at any depth), or a `$ref` that is not `#/$defs/NAME…` of an
    /// entry. Each entry checked once makes every closure whole, with no walk through the
    /// others.
    pub fn problem(&self, entry: &Value) -> Option<String> {
        match entry {
            Value::Object(object) => object.iter().find_map(|(key, value)| {
                if key == "$ref" {
                    let reference = value.as_str().unwrap_or_default();
                    let name = reference
                        .strip_prefix("#/$defs/")
                        .map(|rest| rest.split('/').next().unwrap_or(rest));
                    return match name {
                        Some(name) if self.entries.contains_key(name) => None,
                        Some(_) => Some(
                            SharedError::Missing {
                                reference: reference.to_owned(),
                            }
                            .to_string(),
                        ),
                        None => Some(format!(
                            "`$ref: {}` is not `#/$defs/NAME`: an entry refers only to other entries",
                            value.as_str().map_or_else(|| value.to_string(), str::to_owned)
                        )),
                    };
                }
                if FORBIDDEN.contains(&key.as_str()) {
                    return Some(format!(
                        "it has `{key}`, which would change what its references mean in each schema that uses it"
                    ));
                }
                if DATA.contains(&key.as_str()) {
                    return None;
                }
                if NAMED.contains(&key.as_str())
                    && let Some(named) = value.as_object()
                {
                    return named.values().find_map(|schema| self.problem(schema));
                }
                self.problem(value)
            }),
            Value::Array(items) => items.iter().find_map(|item| self.problem(item)),
            _ => None,
        }
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
                } else if !DATA.contains(&key.as_str()) {
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
    fn an_entry_refers_only_to_entries_and_moves_no_reference() {
        let shared = shared();
        assert_eq!(shared.problem(&shared.entries()["Pet"]), None);
        for (entry, said) in [
            (
                json!({"properties": {"a": {"$ref": "#"}}}),
                "is not `#/$defs/NAME`",
            ),
            (
                json!({"items": {"$ref": "#/$defs"}}),
                "is not `#/$defs/NAME`",
            ),
            (
                json!({"items": {"$ref": "#/$defs/Nope"}}),
                "names no `$defs` entry",
            ),
            (
                json!({"properties": {"x": {"$id": "urn:x", "$ref": "#/$defs/Tag"}}}),
                "has `$id`",
            ),
            (json!({"anyOf": [{"$defs": {"Tag": {}}}]}), "has `$defs`"),
            (json!({"not": {"$dynamicRef": "#t"}}), "has `$dynamicRef`"),
        ] {
            let problem = shared.problem(&entry).unwrap_or_default();
            assert!(problem.contains(said), "{entry}: {problem}");
        }
        // Data is data, and a property's name is a name.
        assert_eq!(
            shared.problem(&json!({"const": {"$ref": "#", "$id": "x"}})),
            None
        );
        assert_eq!(
            shared.problem(&json!({"properties": {"$id": {"type": "string"}, "$ref": {}}})),
            None
        );
        // And a schema that uses entries is 2020-12, as they are.
        let root = json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"p": {"$ref": "#/$defs/Pet"}}});
        assert!(matches!(
            shared.closure(&root),
            Err(SharedError::Dialect { .. })
        ));
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
