//! `[schemas]`: the schemas tools share, each a TOML table or a string of JSON, checked and
//! compiled once ([`crate::schema::shared`] attaches them where a whole schema is needed).

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use toml::Spanned;

use super::Checker;
use super::json::toml_to_json;
use crate::schema::CompiledSchema;
use crate::schema::shared::{Shared, valid_name};

/// The entries as written.
pub(super) type SchemasWire = IndexMap<Spanned<String>, Spanned<toml::Value>>;

/// Checks each entry and compiles them all once; entries with errors are left out (the
/// load fails with the errors reported).
pub(super) fn build(wire: SchemasWire, checker: &mut Checker) -> Shared {
    let mut entries = Map::new();
    let mut spans = Vec::new();
    for (name, value) in wire {
        let span = name.span();
        let name = name.into_inner();
        if !valid_name(&name) {
            checker
                .error(format!("`{name}` cannot name a shared schema"), span)
                .hint("use letters, digits, `_`, `-` and `.`: the name is read in `\"$ref\": \"#/$defs/NAME\"`");
            continue;
        }
        let Some(schema) = schema(&name, &value, checker) else {
            continue;
        };
        entries.insert(name.clone(), schema);
        spans.push((name, value.span()));
    }
    let shared = Shared::new(entries);
    let mut resolved = true;
    for (name, span) in &spans {
        if let Some(entry) = shared.get(name)
            && let Some(problem) = shared.problem(entry)
        {
            resolved = false;
            checker.error(format!("`[schemas] {name}`: {problem}"), span.clone());
        }
    }
    if resolved && !shared.is_empty() {
        compile_all(&shared, &spans, checker);
    }
    shared
}

/// One entry's JSON value: an object or a boolean, without `$defs` or `$id` of its own.
fn schema(name: &str, value: &Spanned<toml::Value>, checker: &mut Checker) -> Option<Value> {
    let span = value.span();
    let schema = match value.get_ref() {
        toml::Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(schema) => schema,
            Err(error) => {
                checker.error(
                    format!("`[schemas] {name}` is not valid JSON: {error}"),
                    span,
                );
                return None;
            }
        },
        toml::Value::Table(_) => toml_to_json(value.get_ref())?,
        _ => {
            checker.error(
                format!("`[schemas] {name}` is a table, or a string of JSON"),
                span,
            );
            return None;
        }
    };
    let Some(object) = schema.as_object() else {
        if schema.is_boolean() {
            return Some(schema);
        }
        checker.error(
            format!("`[schemas] {name}` is not a schema: a JSON Schema is an object or a boolean"),
            span,
        );
        return None;
    };
    for key in ["$defs", "definitions"] {
        if object.contains_key(key) {
            checker
                .error(format!("`[schemas] {name}` has `{key}`"), span.clone())
                .hint("a shared schema is read as an entry of the `$defs` of each schema that uses it: declare what it refers to as `[schemas]` entries of their own");
            return None;
        }
    }
    Some(schema)
}

/// Compiles every entry at once, in one document; when that fails, each entry alone, to
/// say which.
fn compile_all(shared: &Shared, spans: &[(String, std::ops::Range<usize>)], checker: &mut Checker) {
    let every: Vec<Value> = shared
        .entries()
        .keys()
        .map(|name| json!({ "$ref": format!("#/$defs/{name}") }))
        .collect();
    let document = json!({ "$defs": shared.entries(), "anyOf": every });
    if CompiledSchema::compile(&document).is_ok() {
        return;
    }
    for (name, span) in spans {
        let alone = json!({ "$defs": shared.entries(), "$ref": format!("#/$defs/{name}") });
        if let Err(error) = CompiledSchema::compile(&alone) {
            checker.error(
                format!("`[schemas] {name}` is unusable: {error}"),
                span.clone(),
            );
        }
    }
}
