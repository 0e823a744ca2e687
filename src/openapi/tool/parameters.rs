//! Path, query and header parameters as arguments, and where each value goes.

use serde_json::{Value, json};

use super::{Arguments, primary_type};
use crate::openapi::document::Document;
use crate::openapi::operation::Operation;
use crate::openapi::schema::Converter;

/// Where the parameters go: path names to argument names, and query and header templates.
#[derive(Default)]
pub(super) struct Placed {
    pub(super) path: Vec<(String, String)>,
    pub(super) query: Vec<(String, String)>,
    pub(super) headers: Vec<(String, String)>,
    /// Query parameters written in another style than repeated keys: name, style, explode.
    pub(super) styles: Vec<(String, &'static str, bool)>,
    /// Arguments whose values keep reserved characters (`allowReserved`).
    pub(super) allow_reserved: Vec<String>,
}

/// The path item's parameters, overridden by the operation's of the same name and place.
pub(super) fn place(
    document: &Document,
    operation: &Operation<'_>,
    converter: &mut Converter<'_>,
    arguments: &mut Arguments,
    credentials: &[(crate::openapi::security::Place, String)],
) -> Result<Placed, String> {
    use crate::openapi::security::Place;
    let mut list: Vec<&Value> = Vec::new();
    for source in [operation.item, operation.operation] {
        for parameter in source
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let parameter = document.resolve(parameter)?;
            let key = |value: &Value| (value.get("name").cloned(), value.get("in").cloned());
            list.retain(|kept| key(kept) != key(parameter));
            list.push(parameter);
        }
    }
    let mut placed = Placed::default();
    for parameter in list {
        let name = parameter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let place = parameter
            .get("in")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let required = place == "path" || parameter.get("required") == Some(&Value::Bool(true));
        if name.is_empty() {
            arguments.unsupported(required, format!("a {place} parameter has no name"))?;
            continue;
        }
        let Some(schema) = parameter.get("schema") else {
            let reason =
                format!("{place} parameter `{name}` is described by `content`, not `schema`");
            arguments.unsupported(required, reason)?;
            continue;
        };
        let schema = converter.convert(schema)?;
        let kind = primary_type(converter.peek(&schema));
        let style = match sent_as(parameter, place, kind.as_deref()) {
            Ok(style) => style,
            Err(reason) => {
                arguments.unsupported(required, format!("{place} parameter `{name}`: {reason}"))?;
                continue;
            }
        };
        let lower = name.to_ascii_lowercase();
        match place {
            "path" if !operation.path.contains(&format!("{{{name}}}")) => {
                arguments.notes.push(format!(
                    "path parameter `{name}` is not in the path; left out"
                ));
                continue;
            }
            "header" if !crate::openapi::naming::is_settable_header(name) => {
                // OpenAPI ignores `Accept`, `Content-Type` and `Authorization` parameters; the
                // client frames the message; credentials come from security schemes only.
                let reason = format!("header parameter `{name}` is not one a manifest may set");
                arguments.unsupported(required, reason)?;
                continue;
            }
            "header" | "query" => {
                let kind = if place == "header" {
                    Place::Header
                } else {
                    Place::Query
                };
                let taken_by_credential = credentials.contains(&(kind, lower.clone()));
                let taken_by_parameter = if kind == Place::Header {
                    placed
                        .headers
                        .iter()
                        .any(|(other, _)| other.eq_ignore_ascii_case(name))
                } else {
                    placed.query.iter().any(|(other, _)| other == name)
                };
                if taken_by_credential || taken_by_parameter {
                    arguments.notes.push(format!("{place} parameter `{name}` is set twice; only the first (or the credential) is sent"));
                    continue;
                }
            }
            _ => {}
        }
        let schema = annotate(schema, parameter);
        let argument = arguments.add(name, place, schema, required);
        let template = format!("{{{argument}}}");
        if parameter.get("allowReserved") == Some(&Value::Bool(true))
            && matches!(place, "path" | "query")
        {
            placed.allow_reserved.push(argument.clone());
        }
        match place {
            "path" => placed.path.push((name.to_owned(), argument)),
            "query" => {
                if let Some((style, explode)) = style {
                    placed.styles.push((name.to_owned(), style, explode));
                }
                placed.query.push((name.to_owned(), template));
            }
            _ => placed.headers.push((name.to_owned(), template)),
        }
    }
    Ok(placed)
}

/// How a parameter's value is sent: `None` as it is (or as repeated keys for a list), else
/// the query style and explode the manifest writes; `Err` with the reason when it cannot be
/// sent as the operation says.
fn sent_as(
    parameter: &Value,
    place: &str,
    kind: Option<&str>,
) -> Result<Option<(&'static str, bool)>, String> {
    let style = parameter.get("style").and_then(Value::as_str);
    let explode = parameter.get("explode").and_then(Value::as_bool);
    let structured = matches!(kind, Some("array" | "object"));
    match place {
        "path" if style.is_some_and(|style| style != "simple") => Err(format!(
            "style `{}` is not sent",
            style.unwrap_or_default()
        )),
        "path" | "header" if structured => Err(format!(
            "{} values are not sent in a {place}",
            kind.unwrap_or_default()
        )),
        "path" | "header" => Ok(None),
        "query" => match (style.unwrap_or("form"), explode) {
            ("deepObject", None | Some(true)) => Ok(Some(("deepObject", true))),
            ("spaceDelimited", None | Some(false)) if structured => {
                Ok(Some(("spaceDelimited", false)))
            }
            ("pipeDelimited", None | Some(false)) if structured => {
                Ok(Some(("pipeDelimited", false)))
            }
            ("form", Some(false)) if structured => Ok(Some(("form", false))),
            ("form", None | Some(true)) if kind == Some("object") => Err(
                "an object whose fields become parameters of their own (`style: form`, `explode: true`) is not sent: its keys could name any parameter"
                    .to_owned(),
            ),
            // Space- and pipe-delimited scalars are the scalar itself.
            ("form", _) | ("spaceDelimited" | "pipeDelimited", None | Some(false)) => Ok(None),
            (style, explode) => Err(format!(
                "style `{style}`{} is not one mcp-serve sends",
                explode.map_or_else(String::new, |explode| format!(" with `explode: {explode}`"))
            )),
        },
        _ => Err(format!("`in: {place}` is not sent")),
    }
}

/// The schema with the parameter's own description, examples and deprecation.
fn annotate(mut schema: Value, parameter: &Value) -> Value {
    let Some(object) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(description) = parameter.get("description").and_then(Value::as_str) {
        object.insert("description".to_owned(), json!(description.trim()));
    }
    if parameter.get("deprecated") == Some(&Value::Bool(true)) {
        object.insert("deprecated".to_owned(), json!(true));
    }
    if let Some(example) = parameter.get("example") {
        object.insert("examples".to_owned(), json!([example]));
    } else if let Some(examples) = parameter.get("examples").and_then(Value::as_object) {
        let values: Vec<Value> = examples
            .values()
            .filter_map(|example| example.get("value").cloned())
            .collect();
        if !values.is_empty() {
            object.insert("examples".to_owned(), Value::Array(values));
        }
    }
    schema
}

/// Name and value pairs.
type Pairs = Vec<(String, String)>;

/// The path without the query it may write (`/rest?method=flickr.photos.search`), and that
/// query's pairs, decoded. An operation HTTP cannot call as its path says is refused: a
/// fragment (`/#X-Amz-Target=…`) is never sent, so what it selects would be lost.
pub(super) fn split_path<'a>(operation: &Operation<'a>) -> Result<(&'a str, Pairs), String> {
    let path = operation.path;
    if let Some(at) = path.find('#') {
        return Err(format!(
            "the path `{path}` has a fragment (`{}`), which HTTP never sends: the request cannot say what it selects",
            &path[at..]
        ));
    }
    // `$` then a placeholder would read as a secret reference (`${…}`) in the manifest.
    if path.contains('$') {
        return Err(format!(
            "the path `{path}` has a `$`, which a manifest URL cannot hold literally"
        ));
    }
    if operation.method == "TRACE" {
        return Err(
            "TRACE is not a method mcp-serve sends: it echoes the request back, credentials and all"
                .to_owned(),
        );
    }
    match path.split_once('?') {
        None => Ok((path, Vec::new())),
        Some((path, query)) => Ok((
            path,
            form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .filter(|(name, _)| !name.is_empty())
                .collect(),
        )),
    }
}

/// The query pairs the path writes, as `query` templates: a literal value as it is, a value
/// that is exactly `{name}` (a path parameter written in the query, as some descriptions
/// do) from that parameter's argument. Any other placeholder cannot be sent as written.
pub(super) fn path_query_template(
    path: &str,
    pairs: Vec<(String, String)>,
    arguments: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(pairs.len());
    for (name, value) in pairs {
        let placeholder = value
            .strip_prefix('{')
            .and_then(|rest| rest.strip_suffix('}'))
            .filter(|inner| !inner.contains(['{', '}']));
        let template = match placeholder {
            _ if name.contains(['{', '}']) => None,
            Some(parameter) => arguments
                .iter()
                .find(|(known, _)| known == parameter)
                .map(|(_, argument)| format!("{{{argument}}}")),
            None if !value.contains(['{', '}']) => Some(value),
            None => None,
        };
        let Some(template) = template else {
            return Err(format!(
                "the path `{path}` has a placeholder in its query that is not a whole value of a declared parameter"
            ));
        };
        out.push((name, template));
    }
    Ok(out)
}

/// The path with each `{name}` replaced by its argument's placeholder.
pub(super) fn path_template(path: &str, arguments: &[(String, String)]) -> Result<String, String> {
    // `$` then a placeholder would read as a secret reference (`${…}`) in the manifest.
    if path.contains('$') {
        return Err(format!(
            "the path `{path}` has a `$`, which a manifest URL cannot hold literally"
        ));
    }
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("the path `{path}` has an unclosed `{{`"))?;
        let name = &rest[start + 1..start + end];
        let (_, argument) = arguments
            .iter()
            .find(|(parameter, _)| parameter == name)
            .ok_or_else(|| format!("the path names `{{{name}}}`, which no parameter defines"))?;
        out.push('{');
        out.push_str(argument);
        out.push('}');
        rest = &rest[start + end + 1..];
    }
    if rest.contains('}') {
        return Err(format!("the path `{path}` has an unopened `}}`"));
    }
    out.push_str(rest);
    Ok(out)
}
