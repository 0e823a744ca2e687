//! `[server]` and `[[tools]]`: names, schemas and the backend become [`Tool`]s.

use std::collections::HashMap;
use std::ops::Range;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use toml::Spanned;

use super::Checker;
use super::arguments::object_schema;
use super::command::{ArgumentFacts, build_command};
use super::http::build_http;
use super::json::{table_to_json, toml_to_json};
use super::output::output_spec;
use super::static_result::build_static;
use super::wire::{AnnotationsWire, ArgumentWire, IconWire, ServerWire, ThemeWire, ToolWire};
use crate::backend::Backend;
use crate::limit::Limiter;
use crate::registry::{Registry, ServerIdentity};
use crate::results::{OutputMode, OutputSpec};
use crate::schema::{self, CompiledSchema};
use crate::tool::{Example, OutputSchema, Tool};

/// Checks every tool and builds the registry; `None` when any tool had a problem.
pub(super) fn build_tools(
    server: ServerWire,
    wires: Vec<ToolWire>,
    checker: &mut Checker,
) -> Option<Registry> {
    let identity = server_identity(server, checker);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut tools = Vec::new();
    for (index, wire) in wires.into_iter().enumerate() {
        let name = wire.name.get_ref().clone();
        if let Some(first) = seen.get(&name) {
            checker
                .error(format!("duplicate tool name `{name}`"), wire.name.span())
                .hint(format!(
                    "tool #{} already uses this name; tool names must be unique",
                    first + 1
                ));
        } else {
            seen.insert(name, index);
        }
        if let Some(tool) = build_tool(&wire, checker) {
            tools.push(tool);
        }
    }
    checker.diagnostics.is_empty().then(|| {
        let mut withheld = std::mem::take(&mut checker.withheld_env);
        withheld.sort_unstable();
        withheld.dedup();
        Registry::new(identity, tools).with_withheld_env(withheld)
    })
}

fn server_identity(server: ServerWire, checker: &mut Checker) -> ServerIdentity {
    let mut implementation = Map::new();
    implementation.insert(
        "name".into(),
        json!(server.name.unwrap_or_else(|| "mcp-serve".into())),
    );
    if let Some(title) = server.title {
        implementation.insert("title".into(), json!(title));
    }
    implementation.insert(
        "version".into(),
        json!(
            server
                .version
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").into())
        ),
    );
    if let Some(description) = server.description {
        implementation.insert("description".into(), json!(description));
    }
    if let Some(icons) = server.icons {
        implementation.insert("icons".into(), icons_json(&icons, checker));
    }
    if let Some(url) = server.website_url {
        if !(url.get_ref().starts_with("https://") || url.get_ref().starts_with("http://")) {
            checker.error(
                "`website-url` must be an http:// or https:// URL",
                url.span(),
            );
        }
        implementation.insert("websiteUrl".into(), json!(url.get_ref()));
    }
    ServerIdentity {
        implementation,
        instructions: server.instructions,
    }
}

fn build_tool(wire: &ToolWire, checker: &mut Checker) -> Option<Tool> {
    let errors_before = checker.diagnostics.len();
    let name = wire.name.get_ref().clone();
    check_tool_name(&wire.name, checker);

    let input_schema = input_schema(wire, checker);
    let input = match compile(&input_schema) {
        Ok(compiled) => Some(compiled),
        Err(error) => {
            checker.error(
                format!("the input schema of `{name}` is unusable: {error}"),
                input_schema.1.clone(),
            );
            None
        }
    };
    let output = output_schema(wire, checker).and_then(|at| match compile(&at) {
        Ok(compiled) => Some(OutputSchema {
            legacy_wrapped: schema::needs_legacy_wrap(&at.0),
            schema: at.0,
            compiled,
        }),
        Err(error) => {
            checker.error(
                format!("the output schema of `{name}` is unusable: {error}"),
                at.1,
            );
            None
        }
    });

    let facts = ArgumentFacts::from_schema(&input_schema.0);
    let (backend, output_spec) = backend(wire, &name, &facts, output.as_ref(), checker)?;

    let mut definition = Map::new();
    definition.insert("name".into(), json!(name));
    if let Some(title) = &wire.title {
        definition.insert("title".into(), json!(title));
    }
    if let Some(description) = &wire.description {
        definition.insert("description".into(), json!(description));
    }
    definition.insert("inputSchema".into(), input_schema.0.clone());
    if let Some(output) = &output {
        definition.insert("outputSchema".into(), output.schema.clone());
    }
    if let Some(annotations) = &wire.annotations {
        definition.insert("annotations".into(), annotations_json(annotations));
    }
    if let Some(icons) = &wire.icons {
        definition.insert("icons".into(), icons_json(icons, checker));
    }
    if let Some(meta) = &wire.meta {
        match table_to_json(meta.get_ref()) {
            Some(meta) => {
                definition.insert("_meta".into(), Value::Object(meta));
            }
            None => {
                checker.error("`_meta` holds a value JSON cannot represent", meta.span());
            }
        }
    }

    if checker.diagnostics.len() > errors_before {
        return None;
    }
    Some(Tool {
        name,
        definition,
        input_schema: input_schema.0,
        input: input?,
        output,
        output_spec,
        backend,
        limit: tool_limit(wire, checker),
        examples: examples(wire, checker),
    })
}

/// `[[tools.examples]]`, with their schemas compiled.
fn examples(wire: &ToolWire, checker: &mut Checker) -> Vec<Example> {
    wire.examples
        .iter()
        .enumerate()
        .map(|(index, example)| {
            let example = example.get_ref();
            let schema = example.schema.as_ref().and_then(|schema| {
                let json = toml_to_json(schema.get_ref())?;
                CompiledSchema::compile(&json)
                    .map_err(|error| {
                        checker.error(
                            format!("the example's `schema` is unusable: {error}"),
                            schema.span(),
                        )
                    })
                    .ok()
            });
            Example {
                name: example
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("example {}", index + 1)),
                arguments: table_to_json(&example.arguments).unwrap_or_default(),
                is_error: example.is_error,
                text: example.text.clone(),
                text_contains: example.text_contains.clone(),
                structured: example.structured.as_ref().and_then(toml_to_json),
                schema,
            }
        })
        .collect()
}

/// `max-concurrent` and `queue`.
fn tool_limit(wire: &ToolWire, checker: &mut Checker) -> Option<Limiter> {
    let queue = match &wire.queue {
        Some(queue) if queue.get_ref() < &0 => {
            checker.error("`queue` cannot be negative", queue.span());
            0
        }
        Some(queue) => usize::try_from(*queue.get_ref()).unwrap_or(usize::MAX),
        None => 0,
    };
    match &wire.max_concurrent {
        None => {
            if let Some(queue) = &wire.queue {
                checker.error("`queue` goes with `max-concurrent`", queue.span());
            }
            None
        }
        Some(max) if *max.get_ref() < 1 => {
            checker.error("`max-concurrent` is at least 1", max.span());
            None
        }
        Some(max) => Some(Limiter::new(
            usize::try_from(*max.get_ref()).unwrap_or(usize::MAX),
            queue,
        )),
    }
}

/// The tool's one backend and how its output becomes a result.
fn backend(
    wire: &ToolWire,
    name: &str,
    facts: &ArgumentFacts,
    output: Option<&OutputSchema>,
    checker: &mut Checker,
) -> Option<(Backend, OutputSpec)> {
    let backends = [
        wire.command.is_some(),
        wire.static_result.is_some(),
        wire.http.is_some(),
    ];
    if backends.iter().filter(|present| **present).count() > 1 {
        checker
            .error(
                format!("tool `{name}` has more than one backend"),
                wire.name.span(),
            )
            .hint("a tool has one of `[tools.command]`, `[tools.http]` and `[tools.static]`");
        return None;
    }
    if let Some(http) = &wire.http {
        let backend = build_http(http, name, facts, checker)?;
        let spec = OutputSpec {
            tool: name.to_owned(),
            mode: OutputMode::Content,
            files: None,
            keep_full_output: false,
        };
        return Some((Backend::Http(Box::new(backend)), spec));
    }
    match (&wire.command, &wire.static_result) {
        (Some(command), None) => {
            let spec = output_spec(name, command.get_ref(), output.is_some(), checker);
            let backend = build_command(command, name, facts, checker)?;
            Some((Backend::Command(backend), spec))
        }
        (None, Some(result)) => {
            let result = build_static(
                result,
                facts,
                output.map(|output| &output.compiled),
                checker,
            )?;
            let spec = OutputSpec {
                tool: name.to_owned(),
                mode: OutputMode::Content,
                files: None,
                keep_full_output: false,
            };
            Some((Backend::Static(result), spec))
        }
        (Some(_), Some(result)) => {
            checker
                .error(
                    format!("tool `{name}` has both `[tools.command]` and `[tools.static]`"),
                    result.span(),
                )
                .hint("a tool has one backend");
            None
        }
        (None, None) => {
            checker
                .error(format!("tool `{name}` has no backend"), wire.name.span())
                .hint("add a `[tools.command]` table with `argv` (or `[tools.http]` with a `url`, or `[tools.static]` with a declared result)");
            None
        }
    }
}

/// SEP-986: 1 to 128 characters from `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &Spanned<String>, checker: &mut Checker) {
    let text = name.get_ref();
    if text.is_empty() || text.chars().count() > 128 {
        checker.error("a tool name has 1 to 128 characters", name.span());
    } else if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        checker
            .error(format!("tool name `{text}` contains `{bad}`"), name.span())
            .hint("tool names use letters, digits, `_`, `-` and `.`, e.g. `product-details`");
    }
}

/// The input schema and the span to blame for it.
/// A schema, its span, and whether we generated it from the concise form.
type SchemaAt = (Value, Range<usize>, bool);

/// Author-written schemas are compiled now, to report their errors; generated ones on first use.
fn compile(
    (schema, _, generated): &SchemaAt,
) -> Result<CompiledSchema, crate::schema::SchemaError> {
    if *generated {
        CompiledSchema::deferred(schema.clone())
    } else {
        CompiledSchema::compile(schema)
    }
}

fn input_schema(wire: &ToolWire, checker: &mut Checker) -> SchemaAt {
    let span = wire.name.span();
    match pick_schema(
        wire.arguments.as_ref(),
        wire.input_schema.as_ref(),
        wire.input_schema_file.as_ref(),
        ["arguments", "input-schema", "input-schema-file"],
        checker,
    ) {
        Some(SchemaSource::Concise(arguments)) => (
            Value::Object(object_schema(arguments.get_ref(), true, checker)),
            arguments.span(),
            true,
        ),
        Some(SchemaSource::Full(schema, span)) => {
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                checker
                    .error(
                        "an input schema's root must be `type = \"object\"`",
                        span.clone(),
                    )
                    .hint("MCP passes arguments as an object; declare each one under `properties`");
            }
            (schema, span, false)
        }
        None => (
            json!({"type": "object", "additionalProperties": false}),
            span,
            true,
        ),
    }
}

fn output_schema(wire: &ToolWire, checker: &mut Checker) -> Option<SchemaAt> {
    match pick_schema(
        wire.output.as_ref(),
        wire.output_schema.as_ref(),
        wire.output_schema_file.as_ref(),
        ["output", "output-schema", "output-schema-file"],
        checker,
    )? {
        SchemaSource::Concise(fields) => Some((
            Value::Object(object_schema(fields.get_ref(), false, checker)),
            fields.span(),
            true,
        )),
        SchemaSource::Full(schema, span) => Some((schema, span, false)),
    }
}

enum SchemaSource<'a> {
    Concise(&'a Spanned<IndexMap<Spanned<String>, ArgumentWire>>),
    Full(Value, Range<usize>),
}

/// Takes the one schema form used, reading inline TOML, inline JSON text or a JSON file.
fn pick_schema<'a>(
    concise: Option<&'a Spanned<IndexMap<Spanned<String>, ArgumentWire>>>,
    inline: Option<&Spanned<toml::Value>>,
    file: Option<&Spanned<String>>,
    keys: [&str; 3],
    checker: &mut Checker,
) -> Option<SchemaSource<'a>> {
    let used = [
        concise.map(Spanned::span),
        inline.map(Spanned::span),
        file.map(Spanned::span),
    ];
    let present: Vec<(usize, Range<usize>)> = used
        .iter()
        .enumerate()
        .filter_map(|(index, span)| span.clone().map(|span| (index, span)))
        .collect();
    if present.len() > 1 {
        checker
            .error(
                format!(
                    "`{}` and `{}` cannot both be given",
                    keys[present[0].0], keys[present[1].0]
                ),
                present[1].1.clone(),
            )
            .hint("declare the schema in one form only");
        return None;
    }
    if let Some(concise) = concise {
        return Some(SchemaSource::Concise(concise));
    }
    if let Some(inline) = inline {
        let span = inline.span();
        let value = match inline.get_ref() {
            toml::Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => value,
                Err(error) => {
                    checker.error(format!("`{}` is not valid JSON: {error}", keys[1]), span);
                    return None;
                }
            },
            toml::Value::Table(_) => toml_to_json(inline.get_ref())?,
            _ => {
                checker.error(
                    format!("`{}` is a table, or a string of JSON", keys[1]),
                    span,
                );
                return None;
            }
        };
        return Some(SchemaSource::Full(value, span));
    }
    let file = file?;
    let path = checker.resolve(file.get_ref());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            checker.error(
                format!("could not read `{}`: {error}", path.display()),
                file.span(),
            );
            return None;
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => Some(SchemaSource::Full(value, file.span())),
        Err(error) => {
            checker.error(
                format!("`{}` is not valid JSON: {error}", path.display()),
                file.span(),
            );
            None
        }
    }
}

fn annotations_json(annotations: &AnnotationsWire) -> Value {
    let mut out = Map::new();
    if let Some(title) = &annotations.title {
        out.insert("title".into(), json!(title));
    }
    for (key, value) in [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ] {
        if let Some(value) = value {
            out.insert(key.into(), json!(value));
        }
    }
    Value::Object(out)
}

fn icons_json(icons: &[IconWire], checker: &mut Checker) -> Value {
    let icons = icons
        .iter()
        .map(|icon| {
            let src = icon.src.get_ref();
            if !(src.starts_with("https://") || src.starts_with("data:")) {
                checker
                    .error(
                        "an icon's `src` is an https:// or data: URI",
                        icon.src.span(),
                    )
                    .hint("clients refuse other schemes");
            }
            let mut out = Map::new();
            out.insert("src".into(), json!(src));
            if let Some(mime_type) = &icon.mime_type {
                out.insert("mimeType".into(), json!(mime_type));
            }
            if let Some(sizes) = &icon.sizes {
                out.insert("sizes".into(), json!(sizes));
            }
            if let Some(theme) = icon.theme {
                out.insert(
                    "theme".into(),
                    json!(match theme {
                        ThemeWire::Light => "light",
                        ThemeWire::Dark => "dark",
                    }),
                );
            }
            Value::Object(out)
        })
        .collect();
    Value::Array(icons)
}
