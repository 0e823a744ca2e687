//! The concise argument form: one TOML table per argument becomes a JSON Schema property.
//!
//! An argument is required unless it has a `default` or says `optional = true`. Objects
//! declared with `properties` reject undeclared keys unless `additional-properties = true`.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use std::ops::Range;
use std::rc::Rc;

use toml::Spanned;

use super::Checker;
use super::json::toml_to_json;
use super::wire::ArgumentWire;
use crate::schema::{CompiledSchema, SchemaError};
use crate::suggest::suggest;

const TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// Builds `{"type":"object","properties":…,"required":…}` from argument tables.
pub(super) fn object_schema(
    arguments: &IndexMap<Spanned<String>, ArgumentWire>,
    reject_undeclared: bool,
    checker: &mut Checker,
) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut headers = Vec::new();
    for (name, argument) in arguments {
        let valid_name = !name.get_ref().is_empty()
            && name
                .get_ref()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            checker
                .error(format!("`{}` is not a valid argument name", name.get_ref()), name.span())
                .hint("argument names use letters, digits, `_` and `-`, so templates can refer to them as `{name}`");
            continue;
        }
        if argument.default.is_none() && argument.optional != Some(true) {
            required.push(Value::String(name.get_ref().clone()));
        }
        if let Some(header) = argument
            .items
            .as_ref()
            .and_then(|items| items.header.as_ref())
        {
            checker.error("a list's items cannot travel in a header", header.span());
        }
        let mut property = property_schema(name, argument, checker);
        if let Some(header) = &argument.header {
            mcp_header(header, &property, &mut headers, checker);
            property.insert("x-mcp-header".into(), json!(header.get_ref()));
        }
        properties.insert(name.get_ref().clone(), Value::Object(property));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    // Always, even empty: some clients' converters read `properties` unconditionally
    // (smolagents loads no tool at all without it; OpenAI's API refuses such a schema).
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if reject_undeclared {
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    schema
}

/// `header = "Region"`: an HTTP token, on a string, number, integer or boolean, used once
/// (header names are case-insensitive).
fn mcp_header(
    header: &Spanned<String>,
    property: &Map<String, Value>,
    seen: &mut Vec<String>,
    checker: &mut Checker,
) {
    let name = header.get_ref();
    let token = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
    if !token {
        checker
            .error(
                format!("`{name}` cannot be an HTTP header name"),
                header.span(),
            )
            .hint("use letters, digits and `-`; the header is `Mcp-Param-` and this name");
    }
    let primitive = property
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|kind| ["string", "integer", "boolean"].contains(&kind));
    if !primitive {
        checker.error(
            "only a string, integer or boolean argument can travel in a header",
            header.span(),
        );
    }
    if seen.iter().any(|other| other.eq_ignore_ascii_case(name)) {
        checker.error(
            format!("two arguments travel in the header `Mcp-Param-{name}`"),
            header.span(),
        );
    }
    seen.push(name.clone());
}

/// One argument's schema. Problems are recorded against the argument's name.
fn property_schema(
    name: &Spanned<String>,
    argument: &ArgumentWire,
    checker: &mut Checker,
) -> Map<String, Value> {
    let kind = match &argument.kind {
        None => "string",
        Some(kind) if TYPES.contains(&kind.get_ref().as_str()) => kind.get_ref().as_str(),
        Some(kind) => {
            checker
                .error(
                    format!("unknown argument type `{}`", kind.get_ref()),
                    kind.span(),
                )
                .suggest(suggest(kind.get_ref(), TYPES))
                .hint(format!(
                    "types are {}",
                    TYPES.map(|t| format!("`{t}`")).join(", ")
                ));
            return Map::new();
        }
    };
    let mut schema = Map::new();
    schema.insert("type".into(), json!(kind));
    if let Some(title) = &argument.title {
        schema.insert("title".into(), json!(title));
    }
    if let Some(description) = &argument.description {
        schema.insert("description".into(), json!(description));
    }

    add_constraints(kind, name, argument, &mut schema, checker);
    add_values(name, argument, &mut schema, checker);
    schema
}

/// The type-specific keywords; a keyword that does not apply to the type is an error.
fn add_constraints(
    kind: &str,
    name: &Spanned<String>,
    argument: &ArgumentWire,
    schema: &mut Map<String, Value>,
    checker: &mut Checker,
) {
    let misplaced = |key: &str, applies_to: &str, checker: &mut Checker| {
        checker
            .error(
                format!("`{key}` applies to {applies_to}, not to `{kind}` arguments"),
                name.span(),
            )
            .hint(format!(
                "remove `{key}` from argument `{}` or change its type",
                name.get_ref()
            ));
    };
    let numeric = matches!(kind, "integer" | "number");
    for (key, value) in [
        ("minimum", &argument.minimum),
        ("maximum", &argument.maximum),
        ("exclusiveMinimum", &argument.exclusive_minimum),
        ("exclusiveMaximum", &argument.exclusive_maximum),
    ] {
        let Some(value) = value else { continue };
        if !numeric {
            misplaced(&kebab(key), "`integer` and `number` arguments", checker);
        } else if matches!(
            value.get_ref(),
            toml::Value::Integer(_) | toml::Value::Float(_)
        ) {
            if let Some(number) = toml_to_json(value.get_ref()) {
                schema.insert(key.into(), number);
            }
        } else {
            checker.error(format!("`{}` must be a number", kebab(key)), value.span());
        }
    }
    for (key, value) in [
        ("minLength", argument.min_length),
        ("maxLength", argument.max_length),
    ] {
        if let Some(value) = value {
            if kind == "string" {
                schema.insert(key.into(), json!(value));
            } else {
                misplaced(&kebab(key), "`string` arguments", checker);
            }
        }
    }
    if let Some(pattern) = &argument.pattern {
        if kind == "string" {
            schema.insert("pattern".into(), json!(pattern.get_ref()));
        } else {
            misplaced("pattern", "`string` arguments", checker);
        }
    }
    if let Some(format) = &argument.format {
        if kind == "string" {
            schema.insert("format".into(), json!(format));
        } else {
            misplaced("format", "`string` arguments", checker);
        }
    }
    if let Some(items) = &argument.items {
        if kind == "array" {
            schema.insert(
                "items".into(),
                Value::Object(property_schema(name, items, checker)),
            );
        } else {
            misplaced("items", "`array` arguments", checker);
        }
    }
    for (key, value) in [
        ("minItems", argument.min_items),
        ("maxItems", argument.max_items),
    ] {
        if let Some(value) = value {
            if kind == "array" {
                schema.insert(key.into(), json!(value));
            } else {
                misplaced(&kebab(key), "`array` arguments", checker);
            }
        }
    }
    if let Some(unique) = argument.unique_items {
        if kind == "array" {
            schema.insert("uniqueItems".into(), json!(unique));
        } else {
            misplaced("unique-items", "`array` arguments", checker);
        }
    }
    if argument.properties.is_some() || argument.additional_properties.is_some() {
        if kind == "object" {
            add_properties(argument, schema, checker);
        } else {
            misplaced("properties", "`object` arguments", checker);
        }
    }
}

/// An object argument's nested properties, strict unless `additional-properties = true`.
fn add_properties(argument: &ArgumentWire, schema: &mut Map<String, Value>, checker: &mut Checker) {
    {
        {
            let nested = object_schema(
                argument.properties.as_ref().unwrap_or(&IndexMap::new()),
                argument.additional_properties != Some(true) && argument.properties.is_some(),
                checker,
            );
            for (key, value) in nested {
                if key != "type" {
                    schema.insert(key, value);
                }
            }
            if argument.additional_properties == Some(true) {
                schema.insert("additionalProperties".into(), Value::Bool(true));
            }
        }
    }
}

/// `enum`, `default` and `examples`, each checked against the argument's own schema so that
/// a bad value is reported at the manifest, not at call time. The argument's schema is
/// compiled only when there is something to check or something that can fail to compile (a
/// `pattern`): the tool's whole schema is compiled on first use.
fn add_values(
    name: &Spanned<String>,
    argument: &ArgumentWire,
    schema: &mut Map<String, Value>,
    checker: &mut Checker,
) {
    let choices: Option<Vec<Value>> = argument
        .choices
        .as_ref()
        .map(|choices| choices.get_ref().iter().filter_map(toml_to_json).collect());
    if let Some(values) = &choices {
        schema.insert("enum".into(), Value::Array(values.clone()));
    }
    let default = argument
        .default
        .as_ref()
        .and_then(|default| Some((default.span(), toml_to_json(default.get_ref())?)));
    if choices.is_some() || default.is_some() || schema.contains_key("pattern") {
        // With the `enum` in place, a value passes when it is listed and fits the rest.
        match constraints(schema, checker) {
            Ok(compiled) => {
                check_values(
                    argument,
                    choices.as_deref(),
                    default.as_ref(),
                    &compiled,
                    checker,
                );
            }
            Err(error) => {
                checker.error(
                    format!("argument `{}`: {error}", name.get_ref()),
                    name.span(),
                );
            }
        }
    }
    if let Some((_, value)) = default {
        schema.insert("default".into(), value);
    }
    if let Some(examples) = &argument.examples {
        schema.insert(
            "examples".into(),
            Value::Array(examples.iter().filter_map(toml_to_json).collect()),
        );
    }
}

/// The argument's schema without its annotations, compiled once per distinct shape.
fn constraints(
    schema: &Map<String, Value>,
    checker: &mut Checker,
) -> Result<Rc<CompiledSchema>, SchemaError> {
    let mut constraints = schema.clone();
    for annotation in ["title", "description", "examples", "default"] {
        constraints.shift_remove(annotation);
    }
    let constraints = Value::Object(constraints);
    let key = constraints.to_string();
    if let Some(compiled) = checker.constraints.get(&key) {
        return compiled.clone();
    }
    let compiled = CompiledSchema::compile(&constraints).map(Rc::new);
    checker.constraints.insert(key, compiled.clone());
    compiled
}

fn check_values(
    argument: &ArgumentWire,
    choices: Option<&[Value]>,
    default: Option<&(Range<usize>, Value)>,
    compiled: &CompiledSchema,
    checker: &mut Checker,
) {
    if let (Some(values), Some(spanned)) = (choices, &argument.choices) {
        if values.is_empty() {
            checker.error("`enum` must list at least one value", spanned.span());
        }
        for value in values {
            if let Some(problem) = compiled.violations(value, "value").first() {
                checker.error(
                    format!("`enum` value {value} does not fit the argument: {problem}"),
                    spanned.span(),
                );
            }
        }
    }
    if let Some((span, value)) = default
        && let Some(problem) = compiled.violations(value, "default").first()
    {
        checker.error(
            format!("the default does not fit the argument: {problem}"),
            span.clone(),
        );
    }
}

/// `minLength` as the manifest spells it: `min-length`.
fn kebab(key: &str) -> String {
    let mut out = String::new();
    for character in key.chars() {
        if character.is_ascii_uppercase() {
            out.push('-');
            out.push(character.to_ascii_lowercase());
        } else {
            out.push(character);
        }
    }
    out
}
