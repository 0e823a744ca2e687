//! `x-mcp-header` (SEP-2243) across a tool's whole input schema, by the rules rmcp's client
//! applies (a tool that breaks them is dropped from its `tools/list`): only on properties
//! reached through `properties` alone, on strings, integers and booleans, each header name
//! once in the whole schema (case-insensitively). The concise form's own mistakes are
//! reported where they are written (`arguments::mcp_header`); this adds what only the whole
//! schema shows.

use std::ops::Range;

use serde_json::Value;

use super::Checker;

pub(super) fn check_headers(
    schema: &Value,
    concise: bool,
    span: Range<usize>,
    checker: &mut Checker,
) {
    let mut on_chain = Vec::new();
    collect(schema.get("properties"), 0, &mut on_chain);
    let everywhere = count(schema);
    if everywhere > on_chain.len() {
        checker.error(
            "`x-mcp-header` is allowed only on properties reached through `properties` (not under `items`, `anyOf` and the like)",
            span.clone(),
        );
    }
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (name, kind, depth) in on_chain {
        if !concise {
            let token = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
            if !token {
                checker.error(
                    format!("`{name}` cannot be an HTTP header name"),
                    span.clone(),
                );
            }
            if !["string", "integer", "boolean"].contains(&kind) {
                checker.error(
                    "only a string, integer or boolean argument can travel in a header",
                    span.clone(),
                );
            }
        }
        // The concise form reports duplicates within one object itself.
        let duplicate = seen.iter().any(|(other, other_depth)| {
            other.eq_ignore_ascii_case(name) && (!concise || *other_depth != depth)
        });
        if duplicate {
            checker.error(
                format!("two arguments travel in the header `Mcp-Param-{name}`"),
                span.clone(),
            );
        }
        seen.push((name, depth));
    }
}

fn collect<'a>(
    properties: Option<&'a Value>,
    depth: usize,
    out: &mut Vec<(&'a str, &'a str, usize)>,
) {
    let Some(Value::Object(properties)) = properties else {
        return;
    };
    for property in properties.values() {
        if let Some(header) = property.get("x-mcp-header") {
            let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
            out.push((header.as_str().unwrap_or(""), kind, depth));
        }
        collect(property.get("properties"), depth + 1, out);
    }
}

fn count(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("x-mcp-header")) + map.values().map(count).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count).sum(),
        _ => 0,
    }
}

/// An HTTP header name: a token (RFC 9110), so it can never carry `{`, `$` or a separator.
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
        && !name.contains('$')
}
