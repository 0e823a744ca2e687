//! `check --target`: what each host, and the converters agent frameworks put between a
//! tool's advertised schema and a model, were seen to reject or drop. The schemas linted are
//! the advertised ones (local `$ref`s inlined, `schema::inline`), as a client sees them.
//!
//! Where a rule comes from is said beside it. The converters were read and run in the pinned
//! versions `tests/frameworks.rs` drives (issue 32): openai-agents 0.24.0
//! (`agents/strict_schema.py`, `ensure_strict_json_schema`, called from
//! `agents/mcp/util.py`, `MCPUtil.to_function_tool`) and google-adk 2.13.0
//! (`google/adk/tools/_gemini_schema_util.py`, `_to_gemini_schema`, called from
//! `google/adk/tools/mcp_tool/mcp_tool.py`, `_build_declaration`, into google-genai's
//! `types.Schema`).

use serde_json::{Map, Value};

use super::{Finding, Target, target_name};
use crate::schema::inline::{Inlined, for_each_subschema, inline_refs};
use crate::tool::Tool;

pub(super) fn lint(tool: &Tool, target: Target, findings: &mut Vec<Finding>) {
    let name = tool.name.as_str();
    let host = target_name(target);
    apps(tool, target, findings);
    let strict_names = matches!(
        target,
        Target::ClaudeDesktop | Target::ClaudeCode | Target::Openai
    );
    if strict_names
        && !(name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        findings.push(Finding::error(
            "target-tool-name",
            Some(name),
            format!("{host} accepts tool names of 1 to 64 letters, digits, `_` and `-`"),
        ));
    }
    let definition = tool.whole_definition();
    let schemas = [
        ("inputSchema", definition.get("inputSchema")),
        ("outputSchema", definition.get("outputSchema")),
    ];
    for (key, schema) in schemas {
        let Some(schema) = schema else { continue };
        let composed = ["oneOf", "anyOf", "allOf"]
            .into_iter()
            .find(|keyword| schema.get(*keyword).is_some());
        if let Some(keyword) =
            composed.filter(|_| !matches!(target, Target::Cursor | Target::Vscode))
        {
            findings.push(Finding::error(
                "target-top-level-composition",
                Some(name),
                format!("{host} rejects a top-level `{keyword}` in `{key}`"),
            ));
        }
        if target == Target::Gemini {
            gemini_refs_and_types(tool, key, schema, findings);
        }
    }
    let Some(input) = definition.get("inputSchema") else {
        return;
    };
    match target {
        Target::Openai => openai_strict(tool, input, findings),
        Target::Gemini => gemini_dropped(name, input, findings),
        _ => {}
    }
}

/// Every subschema of `schema` with its JSON pointer (`""` for the root).
/// A tool with an MCP App on a target that renders none. Which do: Claude (Desktop), VS
/// Code and Cursor (the issue that asked for apps; `@modelcontextprotocol/ext-apps` 2.0.4's
/// README lists Claude, VS Code, `ChatGPT`, Goose and others). Claude Code draws in a
/// terminal; openai-agents 0.24.0 and google-adk 2.13.0 declare no extension in their MCP
/// clients (`tests/frameworks.rs` drives both), so they never see a page or an app-only tool.
fn apps(tool: &Tool, target: Target, findings: &mut Vec<Finding>) {
    let Some(app) = &tool.app else { return };
    if !matches!(target, Target::ClaudeCode | Target::Gemini | Target::Openai) {
        return;
    }
    let host = target_name(target);
    let message = if app.app_only() {
        format!("{host} renders no MCP Apps: a tool only a page may call is never offered there")
    } else if app.page.is_some() {
        format!(
            "{host} renders no MCP Apps: the tool is used without its page, through its content alone"
        )
    } else {
        return;
    };
    findings.push(Finding::warning("target-apps", &tool.name, message));
}

fn subschemas(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    fn walk<'a>(schema: &'a Value, at: &str, out: &mut Vec<(String, &'a Map<String, Value>)>) {
        let Some(object) = schema.as_object() else {
            return;
        };
        out.push((at.to_owned(), object));
        for_each_subschema(object, |segments, child| {
            let mut path = at.to_owned();
            for segment in segments {
                path.push('/');
                path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
            }
            walk(child, &path, out);
        });
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

fn place(pointer: &str) -> String {
    if pointer.is_empty() {
        "the root".to_owned()
    } else {
        format!("`{pointer}`")
    }
}

/// Why the advertised schema of `tool` still holds a `$ref`.
fn why_refs_stay(written: &Value) -> String {
    match inline_refs(written) {
        Inlined::Partial { recursive, .. } => format!(
            "{} recursive",
            recursive
                .iter()
                .map(|reference| format!("`{reference}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Inlined::Kept { reason } => format!("it is advertised as written: {reason}"),
        Inlined::Inlined(_) | Inlined::Unchanged => {
            "`[server] inline-refs = false` advertises it as written".to_owned()
        }
    }
}

fn written<'a>(tool: &'a Tool, key: &str) -> std::borrow::Cow<'a, Value> {
    match (key, &tool.output) {
        ("outputSchema", Some(output)) => tool.whole_schema(&output.schema),
        _ => tool.whole_schema(&tool.input_schema),
    }
}

fn has_ref(schema: &Value) -> bool {
    subschemas(schema)
        .iter()
        .any(|(_, object)| object.contains_key("$ref"))
}

/// openai-agents converts each MCP tool's input schema to strict mode and, when
/// it cannot, sends the tool non-strict and says so only in an info log.
fn openai_strict(tool: &Tool, input: &Value, findings: &mut Vec<Finding>) {
    let name = tool.name.as_str();
    let mut open = Vec::new();
    let mut optional = Vec::new();
    for (at, object) in subschemas(input) {
        // `_ADDITIONAL_PROPERTIES_ERROR`: an object whose `additionalProperties` is not
        // `false`; `_OPEN_OBJECT_ERROR`: an object with no declared properties that is not
        // closed (`_reject_open_objects`, on for every tool that has an input schema).
        let is_object = object.get("type").and_then(Value::as_str) == Some("object")
            || object.contains_key("properties");
        let closed = object.get("additionalProperties") == Some(&Value::Bool(false));
        let declares = object
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| !properties.is_empty());
        if is_object && !closed && (object.contains_key("additionalProperties") || !declares) {
            open.push(place(&at));
        }
        // `json_schema["required"] = list(properties.keys())`: strict mode requires every
        // property, so the model must send each one.
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            let required = object.get("required").and_then(Value::as_array);
            for property in properties.keys() {
                if !required.is_some_and(|names| names.iter().any(|name| name == property)) {
                    optional.push(format!(
                        "`{at}/properties/{}`",
                        property.replace('~', "~0").replace('/', "~1")
                    ));
                }
            }
        }
    }
    if !open.is_empty() {
        findings.push(Finding::warning(
            "openai-strict-open-object",
            name,
            format!(
                "OpenAI's strict mode takes only closed objects, and the object at {} takes undeclared properties: openai-agents sends the tool non-strict (declare its properties, or `additionalProperties = false`)",
                open.join(", ")
            ),
        ));
    }
    // `_UNVALIDATED_REF_ERROR`: a `$ref` it did not unravel (one with no siblings).
    if has_ref(input) {
        findings.push(Finding::warning(
            "openai-strict-ref",
            name,
            format!(
                "its `inputSchema` keeps a `$ref` ({}): openai-agents sends the tool non-strict",
                why_refs_stay(&tool.whole_schema(&tool.input_schema))
            ),
        ));
    }
    if !optional.is_empty() {
        findings.push(Finding::warning(
            "openai-strict-optional",
            name,
            format!(
                "OpenAI's strict mode makes every property required, so the model always sends {}; let a type admit `null` where it should be able to say \"none\" (mcp-serve reads `null` for an optional argument as left out)",
                optional.join(", ")
            ),
        ));
    }
}

/// A `$ref` left, and `type` lists, in either schema.
fn gemini_refs_and_types(tool: &Tool, key: &str, schema: &Value, findings: &mut Vec<Finding>) {
    let name = tool.name.as_str();
    // `_dereference_schema` replaces a `$ref` it meets again (a recursive one) with
    // `{"type": "object", "description": "Circular ref to …"}`: its shape is lost.
    if has_ref(schema) {
        findings.push(Finding::error(
            "target-ref",
            Some(name),
            format!(
                "Gemini does not resolve `$ref`/`$defs` in `{key}` ({}); google-adk sends a recursive one as an empty object",
                why_refs_stay(&written(tool, key))
            ),
        ));
    }
    // `_sanitize_schema_type`: a `type` list keeps its first non-null type (and `null`).
    for (at, object) in subschemas(schema) {
        let Some(Value::Array(types)) = object.get("type") else {
            continue;
        };
        let kinds: Vec<&str> = types
            .iter()
            .filter_map(Value::as_str)
            .filter(|kind| *kind != "null")
            .collect();
        if kinds.len() > 1 {
            findings.push(Finding::error(
                "target-type-union",
                Some(name),
                format!(
                    "Gemini rejects `type` lists in `{key}`: google-adk keeps only `{}` of {} at {}",
                    if kinds.contains(&"array") { "array" } else { kinds[0] },
                    Value::Array(types.clone()),
                    place(&at)
                ),
            ));
        }
    }
}

/// Keywords google-adk drops from what Gemini's model sees: they are not fields of
/// google-genai's `JSONSchema` (`_sanitize_schema_formats_for_gemini` keeps only those), or
/// are dropped on purpose (`additionalProperties`; `all_of` and `not` "to come").
const GEMINI_DROPPED: [&str; 24] = [
    "allOf",
    "not",
    "const",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "patternProperties",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "uniqueItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "examples",
    "additionalProperties",
];

/// What Gemini's model never sees of the input schema; the server still checks it.
fn gemini_dropped(name: &str, input: &Value, findings: &mut Vec<Finding>) {
    let mut dropped = Vec::new();
    for (at, object) in subschemas(input) {
        for keyword in GEMINI_DROPPED {
            match object.get(keyword) {
                None => {}
                // A closed or open object says nothing the model needs; a schema for the
                // values of a map does.
                Some(Value::Bool(_)) if keyword == "additionalProperties" => {}
                Some(_) => dropped.push(format!("`{keyword}` at {}", place(&at))),
            }
        }
        // "only 'int32' and 'int64' are supported for integer or number type", "only
        // 'enum' and 'date-time' are supported for STRING type".
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            let kind = object.get("type").and_then(Value::as_str);
            let kept = match kind {
                Some("integer" | "number") => matches!(format, "int32" | "int64"),
                Some("string") => matches!(format, "date-time" | "enum"),
                _ => false,
            };
            if !kept {
                dropped.push(format!("`format = \"{format}\"` at {}", place(&at)));
            }
        }
    }
    if !dropped.is_empty() {
        findings.push(Finding::warning(
            "gemini-dropped",
            name,
            format!(
                "Gemini's schema cannot say {}: google-adk drops it, so the model never sees it (the server still checks it); a dropped `allOf` takes its properties along, and a `const` alone becomes an object",
                dropped.join(", ")
            ),
        ));
    }
}
