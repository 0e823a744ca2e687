//! Arguments that many operations declare alike, written once: an argument's schema that
//! several tools repeat word for word (Microsoft Graph's `$orderby` and `$select` enums,
//! one per entity, on every operation that lists it) becomes a `[schemas]` entry each of
//! them uses by `$ref`, as the description's own components already are. A client sees
//! the same schema: each tool's is made whole, and inlined unless `inline-refs = false`.
//!
//! Left as they are: an argument with a `default` anywhere, or one that admits `null`
//! (defaults are filled, and an optional argument's `null` kept or dropped, from the tool's
//! own schema, which does not follow references), one of a tool that has its own `$defs`
//! or `$schema`, and one shorter than [`MIN_BYTES`].

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::tool::Tool;

/// How many tools must repeat an argument's schema for it to be written once.
const MIN_USES: usize = 2;

/// How long (as compact JSON) an argument's schema must be to be written once: a short one
/// reads better where it is used, and saves little.
const MIN_BYTES: usize = 160;

/// `kept`'s repeated argument schemas moved into `shared` (the converter's entries, which
/// the new ones are added after), each tool's `uses` extended with those it now uses.
pub fn repeated_arguments(kept: &mut [Tool], mut shared: Map<String, Value>) -> Map<String, Value> {
    // Each argument's schema as compact JSON: how many tools declare it, and the last one
    // counted; `order` keeps the first one, which names the entry.
    let mut users: HashMap<String, (usize, usize)> = HashMap::new();
    let mut order: Vec<(String, usize, String)> = Vec::new();
    for (index, tool) in kept.iter().enumerate() {
        let Some(properties) = hoistable(&tool.input_schema) else {
            continue;
        };
        for (name, schema) in properties {
            // A `null` an argument admits is kept (`Tool::drop_null_optionals` reads the
            // tool's own schema, where a reference admits nothing it can see).
            if mentions_default(schema) || crate::schema::admits_null(schema) {
                continue;
            }
            let text = schema.to_string();
            match users.get_mut(&text) {
                Some((count, last)) if *last != index => {
                    *count += 1;
                    *last = index;
                }
                Some(_) => {}
                None => {
                    users.insert(text.clone(), (1, index));
                    order.push((text, index, name.clone()));
                }
            }
        }
    }
    let mut hoisted: HashMap<String, String> = HashMap::new();
    for (text, first, argument) in order {
        if users.get(&text).map_or(0, |(count, _)| *count) < MIN_USES || text.len() < MIN_BYTES {
            continue;
        }
        let name = entry_name(&kept[first].name, &argument, &shared);
        // A reference costs its name and some twenty bytes of JSON; below twice that, a
        // copy is as small.
        if text.len() < 2 * (name.len() + 24) {
            continue;
        }
        let Ok(schema) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        shared.insert(name.clone(), schema);
        hoisted.insert(text, name);
    }
    if hoisted.is_empty() {
        return shared;
    }
    for tool in kept.iter_mut() {
        if hoistable(&tool.input_schema).is_none() {
            continue;
        }
        let mut used = Vec::new();
        if let Some(properties) = tool
            .input_schema
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            for schema in properties.values_mut() {
                if let Some(name) = hoisted.get(&schema.to_string()) {
                    *schema = json!({"$ref": format!("#/$defs/{name}")});
                    used.push(name.clone());
                }
            }
        }
        for name in used {
            if !tool.uses.contains(&name) {
                tool.uses.push(name);
            }
        }
    }
    shared
}

/// The arguments of a schema whose references all name shared entries.
fn hoistable(schema: &Value) -> Option<&Map<String, Value>> {
    let root = schema.as_object()?;
    if ["$defs", "definitions", "$schema", "$id"]
        .iter()
        .any(|key| root.contains_key(*key))
    {
        return None;
    }
    root.get("properties")?.as_object()
}

/// Whether a `default` is declared anywhere in `schema`.
fn mentions_default(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("default") || map.values().any(mentions_default),
        Value::Array(items) => items.iter().any(mentions_default),
        _ => false,
    }
}

/// `TOOL.ARGUMENT`, with anything a `[schemas]` name may not hold as `_`, and a number
/// after it if an entry already has the name.
fn entry_name(tool: &str, argument: &str, shared: &Map<String, Value>) -> String {
    let plain: String = format!("{tool}.{argument}")
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || matches!(character, '_' | '-' | '.') {
                character
            } else {
                '_'
            }
        })
        .collect();
    let mut name = plain.clone();
    let mut suffix = 2;
    while shared.contains_key(&name) {
        name = format!("{plain}-{suffix}");
        suffix += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, input_schema: Value) -> Tool {
        Tool {
            name: name.to_owned(),
            input_schema,
            ..Tool::default()
        }
    }

    const ORDER: &str = r#"{"type": "array", "items": {"enum": ["id", "id desc", "name", "name desc", "size", "size desc", "createdDateTime", "createdDateTime desc", "lastModifiedDateTime", "lastModifiedDateTime desc"]}, "description": "Order items"}"#;

    #[test]
    fn an_argument_two_tools_repeat_is_written_once_and_used_by_reference() {
        let order: Value = serde_json::from_str(ORDER).expect("json");
        let mut kept = vec![
            tool(
                "a.list",
                json!({"type": "object", "properties": {"orderby": order, "id": {"type": "string"}}}),
            ),
            tool(
                "b.list",
                json!({"type": "object", "properties": {"sort": order}}),
            ),
            tool(
                "c.own",
                json!({"type": "object", "$defs": {}, "properties": {"orderby": order}}),
            ),
            tool(
                "d.default",
                json!({"type": "object", "properties": {"orderby": {"type": "array", "items": order["items"], "description": "Order items", "default": ["id"]}}}),
            ),
            tool(
                "e.null",
                json!({"type": "object", "properties": {"orderby": {"type": ["array", "null"], "items": order["items"], "description": "Order items"}}}),
            ),
            tool(
                "f.null",
                json!({"type": "object", "properties": {"orderby": {"type": ["array", "null"], "items": order["items"], "description": "Order items"}}}),
            ),
        ];
        let shared = repeated_arguments(&mut kept, Map::new());
        assert_eq!(shared.len(), 1, "{shared:?}");
        assert_eq!(shared["a.list.orderby"], order);
        assert_eq!(
            kept[0].input_schema["properties"]["orderby"],
            json!({"$ref": "#/$defs/a.list.orderby"})
        );
        assert_eq!(
            kept[1].input_schema["properties"]["sort"],
            json!({"$ref": "#/$defs/a.list.orderby"})
        );
        assert_eq!(kept[0].uses, ["a.list.orderby"]);
        // A short one stays; a tool with its own `$defs` and one with a default are left alone.
        assert_eq!(
            kept[0].input_schema["properties"]["id"],
            json!({"type": "string"})
        );
        assert_eq!(kept[2].input_schema["properties"]["orderby"], order);
        assert!(kept[2].uses.is_empty() && kept[3].uses.is_empty());
        // Two alike that admit `null` stay where they are.
        assert!(kept[4].uses.is_empty() && kept[5].uses.is_empty());
    }

    #[test]
    fn an_argument_one_tool_declares_stays_and_names_never_collide() {
        let order: Value = serde_json::from_str(ORDER).expect("json");
        let mut kept = vec![tool(
            "only",
            json!({"type": "object", "properties": {"orderby": order}}),
        )];
        assert!(repeated_arguments(&mut kept, Map::new()).is_empty());
        let mut taken = Map::new();
        taken.insert("t.a_b".to_owned(), json!(true));
        assert_eq!(entry_name("t", "a b", &taken), "t.a_b-2");
        assert_eq!(entry_name("t", "$select", &Map::new()), "t._select");
    }
}
