//! `--project` and `--max-items`: what an operation's JSON response gives a model. A
//! projection keeps the top-level fields (of each item, for a list) a model reads as they
//! are, and the output schema is narrowed to match what it keeps.

use serde_json::{Map, Value};

/// What a field must not be called to be kept: a link, which a model rarely follows.
fn is_link_name(name: &str) -> bool {
    name == "url" || name.ends_with("_url") || name.ends_with("Url") || name == "href"
}

/// Formats of strings that are links.
const LINK_FORMATS: [&str; 4] = ["uri", "uri-reference", "uri-template", "iri"];

/// The schema `schema` stands for: itself, or the `$defs` entry its local `$ref` names.
fn resolved<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        let Some(name) = current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/$defs/"))
        else {
            return current;
        };
        match root.get("$defs").and_then(|defs| defs.get(name)) {
            Some(target) => current = target,
            None => return current,
        }
    }
    current
}

/// The types a schema admits, from `type` or its `anyOf`/`oneOf` branches; empty when it
/// says none.
fn types<'a>(schema: &'a Value, root: &'a Value) -> Vec<&'a str> {
    let schema = resolved(schema, root);
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|key| schema.get(*key).and_then(Value::as_array))
            .flatten()
            .flat_map(|branch| types(branch, root))
            .collect(),
    }
}

/// A field a model reads as it is: a string that is no link, a number, a boolean, or a
/// list of those. A field whose schema says no type is kept.
fn is_readable(name: &str, schema: &Value, root: &Value) -> bool {
    if is_link_name(name) {
        return false;
    }
    let target = resolved(schema, root);
    if target
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| LINK_FORMATS.contains(&format))
    {
        return false;
    }
    let kinds = types(schema, root);
    kinds.iter().all(|kind| match *kind {
        "string" | "number" | "integer" | "boolean" | "null" => true,
        "array" => target.get("items").is_some_and(|items| {
            let kinds = types(items, root);
            !kinds.is_empty()
                && kinds
                    .iter()
                    .all(|kind| matches!(*kind, "string" | "number" | "integer" | "boolean"))
        }),
        _ => false,
    })
}

/// The response's object: the root, or a list's items; and whether it is a list.
fn object_of(schema: &Value) -> Option<(&Map<String, Value>, bool)> {
    let root = resolved(schema, schema);
    if let Some(properties) = root.get("properties").and_then(Value::as_object) {
        return Some((properties, false));
    }
    if types(root, schema) == ["array"] {
        let items = resolved(root.get("items")?, schema);
        return Some((items.get("properties")?.as_object()?, true));
    }
    None
}

/// The projection of a response whose schema is `schema`, which is narrowed to what it
/// keeps; `None` when the response is no object (or list of objects) with fields to leave
/// out, or when nothing would be left.
pub(super) fn projection(schema: &mut Value) -> Option<String> {
    let (properties, list) = object_of(schema)?;
    let kept: Vec<String> = properties
        .iter()
        .filter(|(name, field)| is_readable(name, field, schema))
        .map(|(name, _)| name.clone())
        .collect();
    if kept.is_empty() || kept.len() == properties.len() {
        return None;
    }
    narrow(schema, list, &kept);
    let names: Vec<String> = kept
        .iter()
        .map(|name| Value::from(name.as_str()).to_string())
        .collect();
    let keep = format!(
        "with_entries(select(.key as $k | [{}] | any(. == $k)))",
        names.join(", ")
    );
    Some(if list { format!("map({keep})") } else { keep })
}

/// Leaves only `kept` in the object's `properties` and `required`, on a copy where the
/// object was a reference (others may use the definition whole).
fn narrow(schema: &mut Value, list: bool, kept: &[String]) {
    let mut object = if list {
        resolved(&schema["items"], schema).clone()
    } else {
        let root = resolved(schema, schema).clone();
        // The root's own definitions stay where they are.
        match root {
            Value::Object(mut fields) => {
                fields.remove("$defs");
                Value::Object(fields)
            }
            other => other,
        }
    };
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| kept.contains(name));
    }
    if let Some(required) = object.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| {
            name.as_str()
                .is_some_and(|name| kept.iter().any(|k| k == name))
        });
    }
    if list {
        schema["items"] = object;
    } else if let (Value::Object(root), Value::Object(object)) = (schema, object) {
        let defs = root.remove("$defs");
        *root = object;
        if let Some(defs) = defs {
            root.insert("$defs".into(), defs);
        }
    }
}

/// Whether `--max-items` applies: the response is a list, or an object with a list field.
pub(super) fn has_lists(schema: &Value) -> bool {
    let root = resolved(schema, schema);
    types(root, schema) == ["array"]
        || root
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| {
                properties
                    .values()
                    .any(|field| types(field, schema) == ["array"])
            })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{has_lists, projection};
    use crate::results::project::{compile, run};

    #[test]
    fn a_list_keeps_its_items_readable_fields_and_its_schema_says_so() {
        let mut schema = json!({
            "type": "array",
            "items": {"$ref": "#/$defs/issue"},
            "$defs": {"issue": {"type": "object", "required": ["id", "url", "user"],
                "properties": {
                    "id": {"type": "integer"}, "url": {"type": "string"},
                    "title": {"type": "string"}, "html_url": {"type": "string", "format": "uri"},
                    "home": {"type": "string", "format": "uri"},
                    "user": {"type": "object", "properties": {"login": {"type": "string"}}},
                    "labels": {"type": "array", "items": {"type": "object"}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "body": {"type": ["string", "null"]},
                    "state": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "anything": {}
                }}}
        });
        let program = projection(&mut schema).expect("a projection");
        let filter = compile(&program).expect("it compiles");
        let issue = json!({"id": 1, "url": "u", "title": "t", "html_url": "h", "home": "x",
            "user": {"login": "l"}, "labels": [{}], "tags": ["a"], "body": null});
        let out = run(&filter, json!([issue]).to_string().as_bytes()).expect("it runs");
        let out: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(
            out,
            json!([{"id": 1, "title": "t", "tags": ["a"], "body": null}]),
            "absent fields stay absent"
        );
        let items = &schema["items"];
        assert_eq!(items["required"], json!(["id"]));
        let kept: Vec<&String> = items["properties"]
            .as_object()
            .expect("fields")
            .keys()
            .collect();
        assert_eq!(kept, ["id", "title", "tags", "body", "state", "anything"]);
        assert!(
            schema["$defs"]["issue"]["properties"]["user"].is_object(),
            "the definition itself is left whole"
        );
        assert!(has_lists(&schema));
    }

    #[test]
    fn an_object_keeps_its_readable_fields_and_needs_a_field_to_leave_out() {
        let mut schema = json!({"type": "object", "properties": {
            "total_count": {"type": "integer"},
            "items": {"type": "array", "items": {"type": "object"}}}});
        assert_eq!(
            projection(&mut schema).as_deref(),
            Some(r#"with_entries(select(.key as $k | ["total_count"] | any(. == $k)))"#)
        );
        assert!(!has_lists(&schema), "its list was left out");
        let mut plain = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(projection(&mut plain), None, "nothing to leave out");
        let mut links = json!({"type": "object", "properties": {"url": {"type": "string"}}});
        assert_eq!(projection(&mut links), None, "nothing would be left");
        assert_eq!(projection(&mut json!({"type": "string"})), None);
    }
}
