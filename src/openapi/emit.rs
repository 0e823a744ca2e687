//! The manifest as TOML text: a header that says where it came from and which variables
//! to set, `[server]`, then one `[[tools]]` per kept operation with a comment naming it,
//! and last `[schemas]`, the components the tools' schemas share (each written once).
//! Schemas are written as JSON (`input-schema = '''…'''`), as the description had them.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::Options;
use super::document::Document;
use super::security::Secret;
use super::tool::{Body, PartKind, Tool};

/// The manifest's text, and where each part starts in it.
#[derive(Debug)]
pub struct Emitted {
    pub text: String,
    /// Where each tool's text starts (its comment line), in order.
    pub tools: Vec<usize>,
    /// Where each `[schemas]` entry starts, with its name, in order.
    pub schemas: Vec<(usize, String)>,
}

pub fn manifest(
    document: &Document,
    tools: &[Tool],
    secrets: &[Secret],
    options: &Options,
    shared: &Map<String, Value>,
) -> Emitted {
    let mut starts = Vec::with_capacity(tools.len());
    let mut out = String::new();
    let title = document.title();
    let version = document.api_version();
    let _ = writeln!(out, "#:schema ./tools.schema.json");
    let _ = writeln!(
        out,
        "# {} {}, imported from its OpenAPI {} description by",
        printable(&title),
        printable(&version),
        printable(&document.openapi)
    );
    let _ = writeln!(out, "#   {}", printable(&options.command_line));
    let _ = writeln!(
        out,
        "# Check it with `mcp-serve check`; docs/manifest.md has every key."
    );
    if !secrets.is_empty() {
        let _ = writeln!(
            out,
            "#\n# Credentials are read from the environment when the server starts:"
        );
        let width = secrets
            .iter()
            .map(|secret| secret.variable.len())
            .max()
            .unwrap_or(0);
        for secret in secrets {
            let _ = writeln!(
                out,
                "#   {:width$}  {} (scheme `{}`)",
                secret.variable,
                printable(&secret.explanation),
                printable(&secret.scheme)
            );
        }
    }
    let _ = writeln!(out, "\n[server]");
    let _ = writeln!(out, "name = {}", string(&server_name(document, options)));
    if !version.is_empty() {
        let _ = writeln!(out, "version = {}", string(&version));
    }
    let _ = writeln!(out, "title = {}", string(&title));
    toolsets(&mut out, document, tools);
    for tool in tools {
        out.push('\n');
        starts.push(out.len());
        tool_table(&mut out, tool);
    }
    let schemas = shared_schemas(&mut out, tools, shared);
    Emitted {
        text: out,
        tools: starts,
        schemas,
    }
}

/// `[schemas]`: the entries the tools use, in the order they were made.
fn shared_schemas(
    out: &mut String,
    tools: &[Tool],
    shared: &Map<String, Value>,
) -> Vec<(usize, String)> {
    let used: std::collections::HashSet<&str> = tools
        .iter()
        .flat_map(|tool| tool.uses.iter().map(String::as_str))
        .collect();
    let mut starts = Vec::new();
    if used.is_empty() {
        return starts;
    }
    let _ = writeln!(
        out,
        "\n# The schemas the tools share: a tool's schema uses one as `\"$ref\": \"#/$defs/NAME\"`.\n[schemas]"
    );
    for (name, schema) in shared
        .iter()
        .filter(|(name, _)| used.contains(name.as_str()))
    {
        starts.push((out.len(), name.clone()));
        let _ = writeln!(out, "{} = {}", key(name), json_text(schema));
    }
    starts
}

/// `--name`, else the title in lower case with `-` between words.
pub fn server_name(document: &Document, options: &Options) -> String {
    if let Some(name) = &options.server_name {
        return name.clone();
    }
    let mut name = String::new();
    for c in document.title().chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "api".to_owned()
    } else {
        name.to_owned()
    }
}

/// A `[[toolsets]]` table for each tag the kept tools have, in order of first use, with the
/// tag's own spelling as its title and the description's words for it.
fn toolsets(out: &mut String, document: &Document, tools: &[Tool]) {
    let mut names: Vec<&str> = Vec::new();
    for name in tools.iter().flat_map(|tool| &tool.toolsets) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let declared: Vec<&Value> = document
        .root
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| tags.iter().collect())
        .unwrap_or_default();
    for name in names {
        let _ = writeln!(out, "\n[[toolsets]]\nname = {}", string(name));
        let tag = declared.iter().find(|tag| {
            tag.get("name")
                .and_then(Value::as_str)
                .and_then(super::naming::toolset)
                .is_some_and(|slug| slug == name)
        });
        let spelling = tag
            .and_then(|tag| tag.get("name"))
            .and_then(Value::as_str)
            .filter(|spelling| *spelling != name);
        if let Some(spelling) = spelling {
            let _ = writeln!(out, "title = {}", string(spelling));
        }
        if let Some(description) = tag
            .and_then(|tag| tag.get("description"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
        {
            let _ = writeln!(out, "description = {}", text(description));
        }
    }
}

fn tool_table(out: &mut String, tool: &Tool) {
    let _ = write!(out, "# {} {}", tool.method, printable(&tool.path));
    match &tool.operation_id {
        Some(id) if *id != tool.name => {
            let _ = writeln!(out, " (operationId `{}`)", printable(id));
        }
        _ => out.push('\n'),
    }
    for note in &tool.notes {
        let _ = writeln!(out, "# note: {}", printable(note));
    }
    let _ = writeln!(out, "[[tools]]");
    let _ = writeln!(out, "name = {}", string(&tool.name));
    if let Some(title) = &tool.title {
        let _ = writeln!(out, "title = {}", string(title));
    }
    if let Some(description) = &tool.description {
        let _ = writeln!(out, "description = {}", text(description));
    }
    if !tool.toolsets.is_empty() {
        let names: Vec<String> = tool.toolsets.iter().map(|name| string(name)).collect();
        let _ = writeln!(out, "toolsets = [{}]", names.join(", "));
    }
    let mut annotations = Vec::new();
    if tool.read_only {
        annotations.push("read-only = true");
    }
    if tool.destructive {
        annotations.push("destructive = true");
    }
    if tool.idempotent {
        annotations.push("idempotent = true");
    }
    annotations.push("open-world = true");
    let _ = writeln!(out, "annotations = {{ {} }}", annotations.join(", "));
    let _ = writeln!(out, "input-schema = {}", json_text(&tool.input_schema));
    if let Some(schema) = &tool.output_schema {
        let _ = writeln!(out, "output-schema = {}", json_text(schema));
    }
    if let Some(program) = &tool.project {
        let _ = writeln!(out, "project = {}", string(program));
    }
    if let Some(max) = tool.max_items {
        let _ = writeln!(out, "max-items = {max}");
    }
    let _ = writeln!(out, "[tools.http]");
    let _ = writeln!(out, "method = {}", string(&tool.method));
    let _ = writeln!(out, "url = {}", string(&tool.url));
    if !tool.allow_reserved.is_empty() {
        let names: Vec<String> = tool
            .allow_reserved
            .iter()
            .map(|name| string(name))
            .collect();
        let _ = writeln!(out, "allow-reserved = [{}]", names.join(", "));
    }
    if let Body::Json(Value::String(whole)) = &tool.body {
        let _ = writeln!(out, "json = {}", string(whole));
    }
    query(out, tool);
    pairs(out, "headers", &tool.headers);
    match &tool.body {
        Body::Json(Value::Object(fields)) => {
            let _ = writeln!(out, "[tools.http.json]");
            for (field, template) in fields {
                let _ = writeln!(
                    out,
                    "{} = {}",
                    key(field),
                    string(template.as_str().unwrap_or_default())
                );
            }
        }
        Body::Form(fields) => pairs(out, "form", fields),
        Body::Multipart(fields) => {
            let _ = writeln!(out, "[tools.http.multipart]");
            for field in fields {
                let value = match &field.kind {
                    PartKind::Text => string(&field.template),
                    PartKind::Json => format!(
                        "{{ value = {}, content-type = \"application/json\" }}",
                        string(&field.template)
                    ),
                    PartKind::File { content_type } => format!(
                        "{{ base64 = {}, filename = {}, content-type = {} }}",
                        string(&field.template),
                        // A template: the name's braces stand for themselves.
                        string(&field.name.replace('{', "{{").replace('}', "}}")),
                        string(content_type)
                    ),
                };
                let _ = writeln!(out, "{} = {value}", key(&field.name));
            }
        }
        Body::Json(_) | Body::None => {}
    }
}

/// `[tools.http.query]`: a plain template, or a table with the style it is written in.
fn query(out: &mut String, tool: &Tool) {
    if tool.query.is_empty() {
        return;
    }
    let _ = writeln!(out, "[tools.http.query]");
    for (name, value) in &tool.query {
        match tool
            .query_styles
            .iter()
            .find(|(styled, _, _)| styled == name)
        {
            Some((_, style, explode)) => {
                let _ = writeln!(
                    out,
                    "{} = {{ value = {}, style = \"{style}\", explode = {explode} }}",
                    key(name),
                    string(value)
                );
            }
            None => {
                let _ = writeln!(out, "{} = {}", key(name), string(value));
            }
        }
    }
}

fn pairs(out: &mut String, table: &str, pairs: &[(String, String)]) {
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(out, "[tools.http.{table}]");
    for (name, value) in pairs {
        let _ = writeln!(out, "{} = {}", key(name), string(value));
    }
}

/// Text from the description made safe for a comment or a terminal: control characters
/// (a line break that would end the comment, an escape sequence) are shown escaped.
pub fn printable(text: &str) -> String {
    // Control characters, and the invisible ones that reorder or hide text on a terminal.
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    };
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A bare key when it can be one, else a quoted one.
fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        name.to_owned()
    } else {
        string(name)
    }
}

/// A TOML basic string.
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text of several lines as a multi-line literal string when it can be one.
fn text(value: &str) -> String {
    if value.contains('\n') && literal_safe(value) {
        format!("'''\n{value}'''")
    } else {
        string(value)
    }
}

/// A schema as JSON in a multi-line literal string, small parts on one line.
fn json_text(schema: &Value) -> String {
    let mut pretty = String::new();
    compact_json(schema, 0, &mut pretty);
    if literal_safe(&pretty) {
        format!("'''\n{pretty}\n'''")
    } else {
        string(&pretty)
    }
}

/// Pretty JSON where an array or object that fits in 72 columns stays on one line.
fn compact_json(value: &Value, indent: usize, out: &mut String) {
    const WIDTH: usize = 72;
    let inline = inline_json(value);
    if inline.len() + indent <= WIDTH || !(value.is_array() || value.is_object()) {
        out.push_str(&inline);
        return;
    }
    let pad = " ".repeat(indent + 2);
    match value {
        // A long list of plain values (an enum) fills its lines.
        Value::Array(items)
            if items
                .iter()
                .all(|item| !(item.is_array() || item.is_object())) =>
        {
            out.push('[');
            let mut column = WIDTH;
            for (index, item) in items.iter().enumerate() {
                let text = item.to_string();
                let last = index + 1 == items.len();
                let width = text.len() + usize::from(!last);
                if column + 1 + width > WIDTH {
                    let _ = write!(out, "\n{pad}");
                    column = pad.len();
                } else {
                    out.push(' ');
                    column += 1;
                }
                out.push_str(&text);
                if !last {
                    out.push(',');
                }
                column += width;
            }
            let _ = write!(out, "\n{}]", " ".repeat(indent));
        }
        Value::Array(items) => {
            out.push_str("[\n");
            for (index, item) in items.iter().enumerate() {
                out.push_str(&pad);
                compact_json(item, indent + 2, out);
                out.push_str(if index + 1 < items.len() { ",\n" } else { "\n" });
            }
            let _ = write!(out, "{}]", " ".repeat(indent));
        }
        Value::Object(map) => {
            out.push_str("{\n");
            for (index, (key, item)) in map.iter().enumerate() {
                let _ = write!(out, "{pad}{}: ", Value::String(key.clone()));
                compact_json(item, indent + 2, out);
                out.push_str(if index + 1 < map.len() { ",\n" } else { "\n" });
            }
            let _ = write!(out, "{}}}", " ".repeat(indent));
        }
        _ => {}
    }
}

/// JSON on one line, with a space after `:` and `,` as people write it.
fn inline_json(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(inline_json).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, item)| format!("{}: {}", Value::String(key.clone()), inline_json(item)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => value.to_string(),
    }
}

/// A multi-line literal string holds anything but `'''`, a `'` at its end, and control
/// characters other than tab and newline.
fn literal_safe(text: &str) -> bool {
    !text.contains("'''")
        && !text.ends_with('\'')
        && !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_survive_a_round_trip_through_toml() {
        for sample in [
            "plain",
            "quote \" and \\ back",
            "line\nbreak",
            "tab\tand \u{7f} del",
            "''' triple",
            "ends with '",
        ] {
            let document = format!("a = {}\nb = {}\n", string(sample), text(sample));
            let parsed: toml::Table = toml::from_str(&document).expect(&document);
            assert_eq!(parsed["a"].as_str(), Some(sample));
            assert_eq!(parsed["b"].as_str(), Some(sample), "{document}");
        }
        assert_eq!(key("X-Api-Key"), "X-Api-Key");
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string", "description": "x".repeat(80)}, "b": {"enum": [1, 2]}}});
        let mut pretty = String::new();
        compact_json(&schema, 0, &mut pretty);
        assert_eq!(
            serde_json::from_str::<Value>(&pretty).expect("json"),
            schema
        );
        assert!(pretty.contains("\"b\": {\"enum\": [1, 2]}"), "{pretty}");
        assert_eq!(key("page[size]"), "\"page[size]\"");
    }
}
