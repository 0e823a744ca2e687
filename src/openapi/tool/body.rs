//! The request body: the fields of a JSON or form object as arguments (or the whole body as
//! one), and the template that puts each back where the operation says.

use serde_json::{Map, Value, json};

use super::{Arguments, Body, is_json, primary_type};
use crate::openapi::document::Document;
use crate::openapi::operation::Operation;
use crate::openapi::schema::Converter;

/// An object body's fields, in order, and the names it requires.
struct Fields {
    fields: Vec<(String, Value)>,
    required: Vec<String>,
}

/// The request body as arguments and a template.
pub(super) fn build(
    document: &Document,
    operation: &Operation<'_>,
    converter: &mut Converter<'_>,
    arguments: &mut Arguments,
) -> Result<Body, String> {
    let Some(body) = operation.operation.get("requestBody") else {
        return Ok(Body::None);
    };
    let body = document.resolve(body)?;
    let required = body.get("required") == Some(&Value::Bool(true));
    let content = body.get("content").and_then(Value::as_object);
    let Some(content) = content.filter(|content| !content.is_empty()) else {
        return Ok(Body::None);
    };
    let json = content.iter().find(|(media, _)| is_json(media));
    let form = content.iter().find(|(media, _)| {
        media
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case("application/x-www-form-urlencoded")
    });
    let (media, form) = match (json, form) {
        (Some((_, media)), _) => (media, false),
        (None, Some((_, media))) => (media, true),
        (None, None) => {
            // Sending no body where the operation takes only one we cannot build would
            // call it in a way it was not meant to be called, even when the body is optional.
            let types: Vec<&str> = content.keys().map(String::as_str).collect();
            return Err(format!(
                "the request body is {}, which mcp-serve does not send",
                types.join(" or ")
            ));
        }
    };
    let schema = converter.convert(media.get("schema").unwrap_or(&json!({})))?;
    let fields = object_fields(converter, &schema, 0);
    if form {
        let Some(Fields {
            fields,
            required: body_required,
        }) = fields
        else {
            arguments.unsupported(
                required,
                "the form body is not an object of fields".to_owned(),
            )?;
            return Ok(Body::None);
        };
        let mut template = Vec::new();
        for (field, field_schema) in fields {
            let field_required = required && body_required.contains(&field);
            if matches!(
                primary_type(converter.peek(&field_schema)).as_deref(),
                Some("array" | "object")
            ) {
                arguments.unsupported(
                    field_required,
                    format!("form field `{field}` is a list or an object"),
                )?;
                continue;
            }
            let argument = arguments.add(&field, "body", field_schema, field_required);
            template.push((field, format!("{{{argument}}}")));
        }
        return Ok(Body::Form(template));
    }
    let Some(Fields {
        fields,
        required: body_required,
    }) = fields
    else {
        let argument = arguments.add("body", "request", schema, required);
        return Ok(Body::Json(json!(format!("{{{argument}}}"))));
    };
    let mut template = Map::new();
    for (field, field_schema) in fields {
        let field_required = required && body_required.contains(&field);
        let argument = arguments.add(&field, "body", field_schema, field_required);
        template.insert(field, json!(format!("{{{argument}}}")));
    }
    Ok(Body::Json(Value::Object(template)))
}

/// The fields of an object schema (through `allOf` of objects), and the required ones; none
/// when the body is not simply an object of named fields.
fn object_fields(converter: &Converter<'_>, schema: &Value, depth: usize) -> Option<Fields> {
    let schema = converter.peek(schema);
    let object = schema.as_object()?;
    if depth > 8
        || ["oneOf", "anyOf", "not", "if"]
            .iter()
            .any(|key| object.contains_key(*key))
    {
        return None;
    }
    let mut fields = Vec::new();
    let mut required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(ToOwned::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        for part in parts {
            let part = object_fields(converter, part, depth + 1)?;
            fields.extend(part.fields);
            required.extend(part.required);
        }
    }
    let typed_object = primary_type(schema).is_none_or(|kind| kind == "object");
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        fields.extend(
            properties
                .iter()
                .map(|(name, schema)| (name.clone(), schema.clone())),
        );
    }
    (typed_object && !fields.is_empty()).then_some(Fields { fields, required })
}
