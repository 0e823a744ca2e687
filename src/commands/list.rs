//! `mcp-serve list`: the tools as a table, or exactly the `tools/list` result a client gets.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::size::Sizes;
use crate::registry::Registry;
use crate::revision::Revision;

/// The widest a column of the tool table is padded to; a longer entry runs past it.
const MAX_COLUMN: usize = 48;

/// The text to print.
pub fn render(registry: &Registry, json: bool, protocol_version: &str, apps: bool) -> String {
    if json {
        let revision = Revision::of_version(protocol_version);
        // In discovery mode a client lists discovery's own tools, whatever the manifest
        // holds: as a stdio client does (`add_tools` is for a connection that lasts, which
        // a 2026 client never has).
        let listing = if registry.server.discovery {
            crate::discovery::definitions(registry)
                .into_iter()
                .filter(|tool| {
                    revision != Revision::V2026_07
                        || tool.get("name") != Some(&Value::from(crate::discovery::ADD))
                })
                .collect()
        } else {
            registry.listing(revision, apps)
        };
        let tools: Vec<Value> = listing.into_iter().map(Value::Object).collect();
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
    // A column is as wide as its longest entry up to a bound: one tool of forty arguments
    // (GitHub has some) would otherwise push every other row's `ABOUT` off the screen.
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or(0)
            .clamp(9, MAX_COLUMN)
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
    let sizes = Sizes::new(registry, Revision::V2025_06);
    out.push_str(&toolsets_table(registry, &sizes));
    let whole = sizes.whole();
    let _ = writeln!(out, "\ntools/list (2025-11-25): {}", whole.describe());
    if registry.server.discovery {
        let _ = writeln!(
            out,
            "discovery mode: a client lists `find_tools` and `call_tool`, which find and call these, and `add_tools`, which adds them to its own list (over stdio and in 2025 sessions)"
        );
    }
    out.push_str(&prompts_table(registry));
    out.push_str(&resources_table(registry));
    out
}

/// The toolsets, when the manifest has any: name, what its `tools/list` takes, about.
fn toolsets_table(registry: &Registry, sizes: &Sizes) -> String {
    let rows: Vec<[String; 3]> = registry
        .toolsets()
        .iter()
        .map(|set| {
            let size = sizes.of(set);
            let about = set
                .title
                .clone()
                .or_else(|| set.description.clone())
                .unwrap_or_default();
            [set.name.clone(), size.describe(), about]
        })
        .collect();
    table(["TOOLSET", "TOOLS/LIST"], &rows)
}

/// The prompts, when the manifest has any: name, arguments (`?` when optional), about.
fn prompts_table(registry: &Registry) -> String {
    let rows: Vec<[String; 3]> = registry
        .prompts()
        .map(|prompt| {
            let arguments: Vec<String> = prompt
                .arguments
                .iter()
                .map(|argument| {
                    if argument.required {
                        argument.name.clone()
                    } else {
                        format!("{}?", argument.name)
                    }
                })
                .collect();
            [
                prompt.name.clone(),
                if arguments.is_empty() {
                    "-".into()
                } else {
                    arguments.join(" ")
                },
                about(&prompt.definition),
            ]
        })
        .collect();
    table(["PROMPT", "ARGUMENTS"], &rows)
}

/// Declared resources and templates, when the manifest has any: URI (or template), about.
fn resources_table(registry: &Registry) -> String {
    let resources = registry
        .resources()
        .map(|resource| (resource.uri.clone(), &resource.definition));
    let templates = registry
        .templates()
        .iter()
        .map(|template| (template.uri_template.clone(), &template.definition));
    let rows: Vec<[String; 3]> = resources
        .chain(templates)
        .map(|(uri, definition)| {
            let mime = definition
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_owned();
            [uri, mime, about(definition)]
        })
        .collect();
    table(["RESOURCE", "TYPE"], &rows)
}

fn about(definition: &serde_json::Map<String, Value>) -> String {
    definition
        .get("title")
        .or_else(|| definition.get("description"))
        .or_else(|| definition.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A blank line and a table with `headings` then ABOUT; nothing without rows.
fn table(headings: [&str; 2], rows: &[[String; 3]]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .chain([headings[column].len()])
            .max()
            .unwrap_or(0)
    };
    let (first, second) = (width(0), width(1));
    let mut out = format!("\n{:first$}  {:second$}  ABOUT\n", headings[0], headings[1]);
    for [a, b, c] in rows {
        let _ = writeln!(out, "{a:first$}  {b:second$}  {c}");
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
