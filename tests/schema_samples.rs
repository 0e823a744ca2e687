//! Values a JSON Schema accepts, for tests that call tools they did not write: awkward
//! strings where anything goes (a space, `/`, `?`, `&`, `#`, non-ASCII), otherwise what
//! the schema allows (enums, formats, simple patterns, bounds, required fields).

use serde_json::{Map, Value, json};

/// A value for every property of the tool's input schema: awkward strings where anything
/// goes (a space, `/`, `?`, `&`, `#` and non-ASCII, to try the encodings), otherwise what the
/// schema allows.
pub(crate) fn sample_arguments(input: &Value) -> Map<String, Value> {
    let mut arguments = Map::new();
    for (name, schema) in input["properties"].as_object().into_iter().flatten() {
        if let Some(value) = sample(input, schema, 0) {
            arguments.insert(name.clone(), value);
        }
    }
    arguments
}

fn sample(root: &Value, schema: &Value, depth: usize) -> Option<Value> {
    let schema = local(root, schema);
    if depth > 6 {
        return None;
    }
    for key in ["const", "default"] {
        if let Some(value) = schema.get(key) {
            return Some(value.clone());
        }
    }
    if let Some(first) = schema["enum"]
        .as_array()
        .and_then(|values| values.iter().find(|value| !value.is_null()))
    {
        return Some(first.clone());
    }
    if let Some(example) = schema["examples"].get(0) {
        return Some(example.clone());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(option) = schema[key].get(0) {
            return sample(root, option, depth + 1);
        }
    }
    match kind(schema).as_deref() {
        Some("integer") => Some(schema.get("minimum").cloned().unwrap_or(json!(7))),
        Some("number") => Some(schema.get("minimum").cloned().unwrap_or(json!(1.5))),
        Some("boolean") => Some(json!(true)),
        Some("array") => {
            let item = sample(root, &schema["items"], depth + 1)?;
            let count = schema["minItems"].as_u64().unwrap_or(1).max(1);
            // Distinct items, for `uniqueItems`.
            Some(Value::Array(
                (0..count).map(|index| vary(&item, index)).collect(),
            ))
        }
        Some("object") => {
            // Every field it can fill; none at all when a required one cannot be filled.
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut object = Map::new();
            for (name, field) in schema["properties"].as_object().into_iter().flatten() {
                match sample(root, field, depth + 1) {
                    Some(value) => {
                        object.insert(name.clone(), value);
                    }
                    None if required.contains(&name.as_str()) => return None,
                    None => {}
                }
            }
            Some(Value::Object(object))
        }
        _ => {
            let text = string_for(schema);
            let Some(pattern) = schema["pattern"].as_str() else {
                return Some(json!(text));
            };
            let example = example_of(pattern);
            let pattern = regex::Regex::new(pattern).ok()?;
            [text, example]
                .into_iter()
                .find(|candidate| pattern.is_match(candidate))
                .map(|candidate| json!(candidate))
        }
    }
}

/// A string a simple regular expression matches: the first alternative of each group, the
/// first character of each class, the fewest repetitions allowed.
fn example_of(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut index = 0;
    // Characters written since the last group or class closed, to repeat for `{n}`.
    let mut last = String::new();
    while index < chars.len() {
        let c = chars[index];
        index += 1;
        match c {
            '^' | '$' | ')' | '+' => {}
            '(' => {
                if chars.get(index) == Some(&'?') {
                    index += 2;
                }
            }
            '|' => {
                // Skip the other alternatives, to the end of this group.
                let mut depth = 0;
                while index < chars.len() {
                    match chars[index] {
                        '\\' => index += 1,
                        '(' => depth += 1,
                        ')' if depth == 0 => break,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    index += 1;
                }
            }
            '[' => {
                let negated = chars.get(index) == Some(&'^');
                let mut first = None;
                while index < chars.len() && chars[index] != ']' {
                    if chars[index] == '\\' {
                        index += 1;
                        first = first.or(match chars.get(index) {
                            Some('d') => Some('1'),
                            Some('w') => Some('a'),
                            other => other.copied(),
                        });
                    } else if chars[index] != '^' {
                        first = first.or(Some(chars[index]));
                    }
                    index += 1;
                }
                index += 1;
                last = if negated {
                    "ä".to_owned()
                } else {
                    first.unwrap_or('a').to_string()
                };
                out.push_str(&last);
            }
            '\\' => {
                let escaped = chars.get(index).copied().unwrap_or('a');
                index += 1;
                last = match escaped {
                    'd' => "1".to_owned(),
                    'w' => "a".to_owned(),
                    's' => " ".to_owned(),
                    other => other.to_string(),
                };
                out.push_str(&last);
            }
            '*' | '?' => {
                out.truncate(out.len() - last.len());
                last.clear();
            }
            '{' => {
                let end = chars[index..]
                    .iter()
                    .position(|c| *c == '}')
                    .map_or(chars.len(), |end| index + end);
                let spec: String = chars[index..end].iter().collect();
                let times: usize = spec
                    .split(',')
                    .next()
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(1);
                out.truncate(out.len() - last.len());
                out.push_str(&last.repeat(times));
                index = end + 1;
            }
            '.' => {
                "a".clone_into(&mut last);
                out.push('a');
            }
            other => {
                last = other.to_string();
                out.push(other);
            }
        }
    }
    out
}

fn vary(value: &Value, index: u64) -> Value {
    match value {
        _ if index == 0 => value.clone(),
        Value::String(text) => json!(format!("{text}{index}")),
        Value::Number(number) => {
            json!(number.as_i64().unwrap_or(0) + i64::try_from(index).unwrap_or(0))
        }
        _ => value.clone(),
    }
}

fn string_for(schema: &Value) -> String {
    if schema["contentEncoding"] == "base64" {
        // A file's bytes: NUL, 0xFF, a line break and what a multipart boundary starts with.
        return "AP8NCiItLW1jcC1zZXJ2ZS0NCg==".to_owned();
    }
    match schema["format"].as_str() {
        Some("date-time") => "2026-11-30T12:00:00Z".to_owned(),
        Some("date") => "2026-11-30".to_owned(),
        Some("email") => "ada@example.com".to_owned(),
        Some("uri" | "url") => "https://example.com/a?b=c".to_owned(),
        Some("uuid") => "123e4567-e89b-12d3-a456-426614174000".to_owned(),
        _ => {
            let mut text = "a b/c?d&e#f ü".to_owned();
            if let Some(max) = schema["maxLength"].as_u64() {
                text = text
                    .chars()
                    .take(usize::try_from(max).unwrap_or(0).max(1))
                    .collect();
            }
            let min = schema["minLength"].as_u64().unwrap_or(0);
            while (text.chars().count() as u64) < min {
                text.push('x');
            }
            text
        }
    }
}

/// The smallest value a schema accepts that this test can build: required fields only,
/// `null` where allowed, empty lists.
pub(crate) fn minimal(root: &Value, schema: &Value, depth: usize) -> Value {
    let schema = local(root, schema);
    if let Some(value) = schema.get("const").or_else(|| schema["enum"].get(0)) {
        return value.clone();
    }
    if schema["type"]
        .as_array()
        .is_some_and(|kinds| kinds.contains(&json!("null")))
    {
        return Value::Null;
    }
    if let Some(option) = schema["anyOf"].get(0).or_else(|| schema["oneOf"].get(0)) {
        return minimal(root, option, depth + 1);
    }
    let mut object = Map::new();
    for part in schema["allOf"].as_array().into_iter().flatten() {
        match minimal(root, part, depth + 1) {
            Value::Object(fields) => object.extend(fields),
            // `allOf` of a string schema and its annotations is that string.
            other if kind(schema).is_none() => return other,
            _ => {}
        }
    }
    match kind(schema).as_deref() {
        Some("integer" | "number") => schema.get("minimum").cloned().unwrap_or(json!(0)),
        Some("boolean") => json!(false),
        Some("string") => sample(root, schema, 0).unwrap_or_else(|| json!(string_for(schema))),
        Some("array") => {
            let count = schema["minItems"].as_u64().unwrap_or(0);
            Value::Array(
                (0..count)
                    .map(|_| minimal(root, &schema["items"], depth + 1))
                    .collect(),
            )
        }
        Some("null") => Value::Null,
        _ if depth > 12 => Value::Object(object),
        _ => {
            for name in schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let field = &schema["properties"][name];
                object.insert(name.to_owned(), minimal(root, field, depth + 1));
            }
            Value::Object(object)
        }
    }
}

fn kind(schema: &Value) -> Option<String> {
    match &schema["type"] {
        Value::String(kind) => Some(kind.clone()),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .map(ToOwned::to_owned),
        _ => None,
    }
}

/// Follows `#/$defs/…` references within one tool schema.
fn local<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        schema = root
            .pointer(reference.trim_start_matches('#'))
            .expect("$defs entry");
    }
    schema
}
