//! `mcp-serve list`: the tools as a table, or exactly the `tools/list` result a client gets.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::era::Era;
use crate::registry::Registry;

/// The text to print.
pub fn render(registry: &Registry, json: bool, protocol_version: &str) -> String {
    if json {
        let era = Era::of_version(protocol_version);
        let tools: Vec<Value> = registry
            .listing(era)
            .into_iter()
            .map(Value::Object)
            .collect();
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "tools": tools })).unwrap_or_default()
        );
    }
    let rows: Vec<[String; 3]> = registry
        .tools()
        .map(|tool| {
            let definition = &tool.definition;
            let about = definition
                .get("title")
                .or_else(|| definition.get("description"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            [
                tool.name.clone(),
                arguments_summary(&tool.input_schema),
                about,
            ]
        })
        .collect();
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or(0)
            .max(9)
    };
    let (name_width, arguments_width) = (width(0), width(1));
    let mut out = format!(
        "{:name_width$}  {:arguments_width$}  ABOUT\n",
        "TOOL", "ARGUMENTS"
    );
    for [name, arguments, about] in rows {
        let _ = writeln!(
            out,
            "{name:name_width$}  {arguments:arguments_width$}  {about}"
        );
    }
    out
}

/// `query limit?` : required names, then optional ones marked `?`.
fn arguments_summary(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                .map(|name| {
                    if required.contains(&name.as_str()) {
                        name.clone()
                    } else {
                        format!("{name}?")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(" ")
    }
}
