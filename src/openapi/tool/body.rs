//! The request body: the fields of a JSON or form object as arguments (or the whole body as
//! one), and the template that puts each back where the operation says.

use serde_json::{Map, Value, json};

use super::{Arguments, Body, MultipartField, PartKind, is_json, primary_type};
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
    let multipart = content.iter().find(|(media, _)| {
        media
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case("multipart/form-data")
    });
    let (media, form) = match (json, form, multipart) {
        (Some((_, media)), _, _) => (media, false),
        (None, Some((_, media)), _) => (media, true),
        (None, None, Some((_, media))) => {
            return multipart_body(converter, arguments, media, required);
        }
        (None, None, None) => {
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
    let fields = object_fields(converter, &schema);
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

/// A `multipart/form-data` body: each field a part. Text and numbers are text parts, lists
/// and objects JSON parts, and a binary field (`format: binary`, `contentMediaType`,
/// `contentEncoding`) a file part the model gives in base64 (a manifest author may point it
/// at a folder instead: docs/manifest.md).
fn multipart_body(
    converter: &mut Converter<'_>,
    arguments: &mut Arguments,
    media: &Value,
    required: bool,
) -> Result<Body, String> {
    let schema = converter.convert(media.get("schema").unwrap_or(&json!({})))?;
    let Some(Fields {
        fields,
        required: body_required,
    }) = object_fields(converter, &schema)
    else {
        arguments.unsupported(
            required,
            "the multipart body is not an object of fields".to_owned(),
        )?;
        return Ok(Body::None);
    };
    let encoding = media.get("encoding").and_then(Value::as_object);
    let mut parts = Vec::new();
    for (field, field_schema) in fields {
        let field_required = required && body_required.contains(&field);
        if !crate::backend::http::multipart::is_safe_name(&field) {
            arguments.unsupported(
                field_required,
                format!("multipart field `{field}` has a name a part's header cannot carry"),
            )?;
            continue;
        }
        let target = converter.peek(&field_schema).clone();
        let declared_type = encoding
            .and_then(|encoding| encoding.get(&field))
            .and_then(|field| field.get("contentType"))
            .and_then(Value::as_str)
            .map(|types| {
                types
                    .split(',')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            });
        let kind = primary_type(&target);
        let binary = is_binary(&target);
        if kind.as_deref() == Some("array")
            && target
                .get("items")
                .is_some_and(|items| is_binary(converter.peek(items)))
        {
            arguments.unsupported(
                field_required,
                format!("multipart field `{field}` is a list of files"),
            )?;
            continue;
        }
        let (schema, part) = if binary {
            let content_type = declared_type
                .filter(|media| is_concrete_media_type(media))
                .or_else(|| {
                    target
                        .get("contentMediaType")
                        .and_then(Value::as_str)
                        .filter(|media| is_concrete_media_type(media))
                        .map(ToOwned::to_owned)
                })
                .unwrap_or_else(|| "application/octet-stream".to_owned());
            let mut schema = json!({"type": "string", "contentEncoding": "base64"});
            let about = target
                .get("description")
                .and_then(Value::as_str)
                .map(|text| format!("{} ", text.trim()))
                .unwrap_or_default();
            schema["description"] = json!(format!(
                "{about}(the file's content, in base64; sent as {content_type})"
            ));
            (schema, PartKind::File { content_type })
        } else if matches!(kind.as_deref(), Some("array" | "object")) {
            (field_schema, PartKind::Json)
        } else {
            (field_schema, PartKind::Text)
        };
        let argument = arguments.add(&field, "body", schema, field_required);
        parts.push(MultipartField {
            name: field,
            template: format!("{{{argument}}}"),
            kind: part,
        });
    }
    Ok(Body::Multipart(parts))
}

/// A file's bytes: `format: binary` (3.0), or `contentMediaType` without a
/// `contentEncoding` (3.1). A `format: byte` or `contentEncoding: base64` field is text
/// that already holds base64, and is sent as that text.
fn is_binary(schema: &Value) -> bool {
    schema.get("format").and_then(Value::as_str) == Some("binary")
        || (schema.get("contentMediaType").is_some() && schema.get("contentEncoding").is_none())
}

/// `image/png`, not `image/*` or a list.
fn is_concrete_media_type(media: &str) -> bool {
    let media = media.trim();
    !media.contains('*')
        && media.split_once('/').is_some_and(|(kind, sub)| {
            crate::openapi::naming::is_header_name(kind)
                && crate::openapi::naming::is_header_name(sub)
        })
}

/// The most fields a body is spread into; beyond, it is one `body` argument.
const MAX_FIELDS: usize = 256;

/// The fields of an object schema (its `properties`, and those of its `allOf` parts, each
/// part and each field taken once), and the required ones that are fields; none when the body
/// is not simply an object of named fields.
fn object_fields(converter: &Converter<'_>, schema: &Value) -> Option<Fields> {
    let mut fields = Fields {
        fields: Vec::new(),
        required: Vec::new(),
    };
    let mut visited = Vec::new();
    collect(converter, schema, 0, &mut visited, &mut fields)?;
    let root = converter.peek(schema);
    let typed_object = primary_type(root).is_none_or(|kind| kind == "object");
    let names: Vec<&String> = fields.fields.iter().map(|(name, _)| name).collect();
    let required: Vec<String> = fields
        .required
        .iter()
        .filter(|name| names.contains(name))
        .cloned()
        .collect();
    fields.required = required;
    (typed_object && !fields.fields.is_empty() && fields.fields.len() <= MAX_FIELDS)
        .then_some(fields)
}

fn collect(
    converter: &Converter<'_>,
    schema: &Value,
    depth: usize,
    visited: &mut Vec<String>,
    into: &mut Fields,
) -> Option<()> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if visited.iter().any(|seen| seen == reference) {
            return Some(());
        }
        visited.push(reference.to_owned());
    }
    let object = converter.peek(schema).as_object()?;
    if depth > 8
        || into.fields.len() > MAX_FIELDS
        || ["oneOf", "anyOf", "not", "if"]
            .iter()
            .any(|key| object.contains_key(*key))
    {
        return None;
    }
    for name in object
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !into.required.iter().any(|known| known == name) {
            into.required.push(name.to_owned());
        }
    }
    for part in object
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        collect(converter, part, depth + 1, visited, into)?;
    }
    for (name, field) in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        // The first definition of a field wins; a later part naming it again adds nothing.
        if !into.fields.iter().any(|(known, _)| known == name) {
            into.fields.push((name.clone(), field.clone()));
        }
    }
    Some(())
}
