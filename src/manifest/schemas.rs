//! A tool's input and output schemas: from the concise form, a table, JSON text or a file;
//! author-written ones compiled at load (so their errors are load errors), generated ones on
//! first use.

use std::ops::Range;

use indexmap::IndexMap;
use serde_json::{Value, json};
use toml::Spanned;

use super::Checker;
use super::arguments::object_schema;
use super::json::toml_to_json;
use super::wire::{ArgumentWire, ToolWire};
use crate::schema::{CompiledSchema, SchemaError};

/// The input schema and the span to blame for it.
/// A schema, its span, and whether we generated it from the concise form.
pub(super) type SchemaAt = (std::sync::Arc<Value>, Range<usize>, bool);

/// Author-written schemas are compiled now, to report their errors; generated ones on first
/// use. One that uses `[schemas]` is compiled whole on first use too (so the shared entries
/// are not copied into every tool), and now as a trial when checking (`check`); so is every
/// schema of a manifest of [`super::DEFER_COMPILES_FROM`] tools or more, when serving (a
/// compiled schema takes several times its JSON: an import of a big API would hold every
/// tool's, most never called).
pub(super) fn compile(
    (schema, _, generated): &SchemaAt,
    checker: &Checker,
) -> Result<CompiledSchema, SchemaError> {
    if *generated {
        return CompiledSchema::deferred(std::sync::Arc::clone(schema));
    }
    if !checker.shared.is_empty() && !checker.shared.closure(schema)?.is_empty() {
        let compiled = CompiledSchema::deferred_shared(
            std::sync::Arc::clone(schema),
            std::sync::Arc::clone(&checker.shared),
        )?;
        if checker.compile == super::Compile::All {
            compiled.trial()?;
        }
        return Ok(compiled);
    }
    if checker.compile == super::Compile::OnUse {
        return CompiledSchema::deferred(std::sync::Arc::clone(schema));
    }
    CompiledSchema::compile(schema)
}

pub(super) fn input_schema(wire: &ToolWire, checker: &mut Checker) -> SchemaAt {
    let span = wire.name.span();
    match pick_schema(
        wire.arguments.as_ref(),
        wire.input_schema.as_ref(),
        wire.input_schema_file.as_ref(),
        ["arguments", "input-schema", "input-schema-file"],
        checker,
    ) {
        Some(SchemaSource::Concise(arguments)) => (
            Value::Object(object_schema(arguments.get_ref(), true, checker)).into(),
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
            let mut schema = schema;
            // An object root without `properties` gets an empty one, as ours have: what
            // it accepts is unchanged, and every client's converter can read it.
            if let Some(root) = schema.as_object_mut()
                && root.get("type").and_then(Value::as_str) == Some("object")
                && !root.contains_key("properties")
            {
                root.insert("properties".into(), json!({}));
            }
            (schema.into(), span, false)
        }
        None => (
            json!({"type": "object", "properties": {}, "additionalProperties": false}).into(),
            span,
            true,
        ),
    }
}

pub(super) fn output_schema(wire: &ToolWire, checker: &mut Checker) -> Option<SchemaAt> {
    match pick_schema(
        wire.output.as_ref(),
        wire.output_schema.as_ref(),
        wire.output_schema_file.as_ref(),
        ["output", "output-schema", "output-schema-file"],
        checker,
    )? {
        SchemaSource::Concise(fields) => Some((
            Value::Object(object_schema(fields.get_ref(), false, checker)).into(),
            fields.span(),
            true,
        )),
        SchemaSource::Full(schema, span) => {
            if !schema.is_object() {
                checker
                    .error("an output schema must be a JSON object", span.clone())
                    .hint("MCP lists `outputSchema` as an object; `{}` accepts any value");
            }
            Some((schema.into(), span, false))
        }
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
    let path = checker.refer(file.get_ref(), super::Use::Schema);
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
