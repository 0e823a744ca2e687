//! One operation as one HTTP tool: its arguments (path, query and header parameters, and
//! the fields of a JSON or form body), the request template that puts each where the
//! operation says, an output schema from the success response, and annotations from the
//! method. An operation mcp-serve cannot call faithfully is refused with the reason; a
//! parameter it cannot send is left out only when it is optional, with a note.

use serde_json::{Map, Value, json};

use super::Options;
use super::document::Document;
use super::naming::{self, ArgumentNames};
use super::operation::Operation;
use super::schema::{Converter, Direction};
use super::security::{Place, Secrets};

mod body;
mod parameters;
mod shape;

/// The largest input schema a tool gets, as compact JSON: every client reads it, and every
/// call is validated against it.
const MAX_INPUT_SCHEMA: usize = 256 * 1024;

/// A tool made from an operation.
#[derive(Debug, Default)]
pub struct Tool {
    pub name: String,
    pub method: String,
    pub path: String,
    pub operation_id: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The operation's tags as toolset names (`naming::toolset`).
    pub toolsets: Vec<String>,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Its schemas as written: they refer to the shared entries in `uses`.
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    /// The converter's entries its schemas use (the manifest's `[schemas]`), in order.
    pub uses: Vec<String>,
    /// `--project`: a jq program keeping the response's readable fields.
    pub project: Option<String>,
    /// `--max-items`, where the response has lists.
    pub max_items: Option<usize>,
    pub url: String,
    pub query: Vec<(String, String)>,
    /// Query parameters sent in another style than repeated keys: name, style, explode.
    pub query_styles: Vec<(String, &'static str, bool)>,
    /// Arguments that keep reserved characters (`allow-reserved`).
    pub allow_reserved: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// What was left out or approximated, for a comment and the summary.
    pub notes: Vec<String>,
}

/// The request body template.
#[derive(Debug, Default)]
pub enum Body {
    #[default]
    None,
    /// A `json` template: an object of `"{arg}"` values, or one `"{arg}"`.
    Json(Value),
    Form(Vec<(String, String)>),
    /// `multipart/form-data` parts.
    Multipart(Vec<MultipartField>),
}

/// One part of a multipart body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartField {
    pub name: String,
    /// `{arg}`.
    pub template: String,
    pub kind: PartKind,
}

/// What a multipart part holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartKind {
    /// Text (a number or boolean as its text).
    Text,
    /// An object or list, as JSON text.
    Json,
    /// A file's bytes, given in base64, with the media type to send them as.
    File { content_type: String },
}

/// The arguments being gathered.
pub(super) struct Arguments {
    pub(super) names: ArgumentNames,
    pub(super) properties: Map<String, Value>,
    pub(super) required: Vec<String>,
    pub(super) notes: Vec<String>,
}

impl Arguments {
    pub(super) fn add(
        &mut self,
        wanted: &str,
        prefix: &str,
        schema: Value,
        required: bool,
    ) -> String {
        let name = self.names.claim(wanted, prefix);
        self.properties.insert(name.clone(), schema);
        if required {
            self.required.push(name.clone());
        }
        name
    }

    /// An optional value that cannot be sent is left out with a note; a required one makes
    /// the operation impossible to call.
    pub(super) fn unsupported(&mut self, required: bool, reason: String) -> Result<(), String> {
        if required {
            return Err(reason);
        }
        self.notes.push(format!("{reason}; left out"));
        Ok(())
    }
}

/// The tool for `operation`, or why there is none.
pub fn build(
    document: &Document,
    operation: &Operation<'_>,
    options: &Options,
    secrets: &mut Secrets<'_>,
    converter: &mut Converter<'_>,
) -> Result<Tool, String> {
    let base = base_url(document, operation, options)?;
    let (path, path_query) = parameters::split_path(operation)?;
    converter.set_direction(Direction::Request);
    // Notes an earlier tool that failed left behind are not this one's.
    converter.take_notes();
    let mut arguments = Arguments {
        names: ArgumentNames::default(),
        properties: Map::new(),
        required: Vec::new(),
        notes: Vec::new(),
    };
    let (credentials, security_notes) = secrets.for_operation(operation);
    arguments.notes.extend(security_notes);
    let mut credential_keys: Vec<(Place, String)> = credentials
        .iter()
        .map(|credential| (credential.place, credential.name.to_ascii_lowercase()))
        .collect();
    // A query the path itself writes selects the operation: a parameter of the same name is
    // not sent again.
    credential_keys.extend(
        path_query
            .iter()
            .map(|(name, _)| (Place::Query, name.to_ascii_lowercase())),
    );
    let placed = parameters::place(
        document,
        operation,
        converter,
        &mut arguments,
        &credential_keys,
    )?;
    let path = parameters::path_template(path, &placed.path)?;
    let body = body::build(document, operation, converter, &mut arguments)?;
    let mut query = parameters::path_query_template(operation.path, path_query, &placed.path)?;
    query.extend(placed.query);
    let (placed_styles, placed_reserved) = (placed.styles, placed.allow_reserved);
    let mut headers = placed.headers;
    for credential in credentials {
        match credential.place {
            Place::Query => query.push((credential.name, credential.value)),
            Place::Header => headers.push((credential.name, credential.value)),
        }
    }
    let mut input_schema =
        json!({"type": "object", "properties": Value::Object(arguments.properties)});
    if !arguments.required.is_empty() {
        input_schema["required"] = json!(arguments.required);
    }
    input_schema["additionalProperties"] = json!(false);
    arguments.notes.extend(converter.take_notes());
    let size = converter.whole_size(&input_schema);
    if size > MAX_INPUT_SCHEMA {
        return Err(format!(
            "its input schema would be {} KiB (at most {} KiB)",
            size / 1024,
            MAX_INPUT_SCHEMA / 1024
        ));
    }
    let (output_schema, project, max_items) = response(
        document,
        operation,
        options,
        converter,
        &mut arguments.notes,
    );
    let uses = shared_uses(
        converter,
        &input_schema,
        output_schema.as_ref(),
        &mut arguments.notes,
    );
    let method = operation.method.clone();
    let deprecated = operation.operation.get("deprecated") == Some(&Value::Bool(true));
    let (title, description) = texts(operation, deprecated);
    Ok(Tool {
        name: operation.id.map_or_else(
            || naming::from_method_and_path(&method, operation.path),
            ToOwned::to_owned,
        ),
        read_only: matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS"),
        destructive: method == "DELETE",
        idempotent: idempotent(&method),
        path: operation.path.to_owned(),
        operation_id: operation.id.map(ToOwned::to_owned),
        method,
        title,
        description,
        toolsets: toolsets(&operation.tags),
        input_schema,
        output_schema,
        uses,
        project,
        max_items,
        url: format!("{}{path}", base.trim_end_matches('/')),
        query,
        query_styles: placed_styles,
        allow_reserved: placed_reserved,
        headers,
        body,
        notes: arguments.notes,
    })
}

/// The shared entries a tool's schemas use, in order; their notes join the tool's.
fn shared_uses(
    converter: &Converter<'_>,
    input: &Value,
    output: Option<&Value>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut uses = converter.used(input);
    for name in output
        .map(|output| converter.used(output))
        .unwrap_or_default()
    {
        if !uses.contains(&name) {
            uses.push(name);
        }
    }
    for note in converter.notes_of(&uses) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    uses
}

/// What the tool says of its response: the output schema (unless left out), and the
/// projection and cap `--project` and `--max-items` ask for.
fn response(
    document: &Document,
    operation: &Operation<'_>,
    options: &Options,
    converter: &mut Converter<'_>,
    notes: &mut Vec<String>,
) -> (Option<Value>, Option<String>, Option<usize>) {
    let wants_response =
        !options.no_output_schema || options.project || options.max_items.is_some();
    let mut response = wants_response
        .then(|| output_schema(document, operation, converter, notes))
        .flatten();
    // The projection first: the output schema written describes what it keeps. Both read
    // the whole schema; the narrowed root refers to the shared entries as before.
    let mut project = None;
    let mut lists = false;
    if let Some(root) = response.as_mut()
        && (options.project || options.max_items.is_some())
    {
        let mut whole = converter.attach(root);
        if options.project {
            project = shape::projection(&mut whole);
        }
        lists = shape::has_lists(&whole);
        if let Some(object) = whole.as_object_mut() {
            object.shift_remove("$defs");
        }
        *root = whole;
    }
    let max_items = options.max_items.filter(|_| lists);
    let output_schema = if options.no_output_schema {
        None
    } else {
        // A boolean schema (`true`) is no `outputSchema`: MCP lists an object.
        response.filter(Value::is_object).filter(|schema| {
            let size = converter.whole_size(schema);
            let fits = size <= options.max_output_schema;
            if !fits {
                notes.push(format!(
                    "output schema left out: {} KiB, over --max-output-schema {} KiB",
                    size.div_ceil(1024),
                    options.max_output_schema / 1024
                ));
            }
            fits
        })
    };
    (output_schema, project, max_items)
}

/// Whether HTTP calls the method idempotent (RFC 9110, 9.2.2).
fn idempotent(method: &str) -> bool {
    matches!(method, "GET" | "HEAD" | "OPTIONS" | "PUT" | "DELETE")
}

/// Each tag once, as a toolset name.
fn toolsets(tags: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in tags.iter().filter_map(|tag| naming::toolset(tag)) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The first non-null `type` of a schema.
pub(super) fn primary_type(schema: &Value) -> Option<String> {
    match schema.get("type")? {
        Value::String(kind) => Some(kind.clone()),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .map(ToOwned::to_owned),
        _ => None,
    }
}

/// `--base-url`, else the first server of the operation, its path item or the document,
/// with its variables' defaults.
fn base_url(
    document: &Document,
    operation: &Operation<'_>,
    options: &Options,
) -> Result<String, String> {
    if let Some(base) = &options.base_url {
        return Ok(base.clone());
    }
    let server = [operation.operation, operation.item, &document.root]
        .into_iter()
        .find_map(|source| {
            source
                .get("servers")
                .and_then(Value::as_array)
                .and_then(|servers| servers.first())
        });
    let Some(server) = server else {
        return Err("the description names no server; pass --base-url".to_owned());
    };
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Some(variables) = server.get("variables").and_then(Value::as_object) {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    // The URL is copied into the manifest, where `${…}` would read a secret and `{…}` an
    // argument: a description's server may carry neither, nor a query or fragment.
    if url.contains('$') || url.contains('}') || url.contains('?') || url.contains('#') {
        return Err(format!(
            "the server URL `{url}` has `$`, `}}`, `?` or `#`; pass --base-url"
        ));
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains('{') {
        return Err(format!(
            "the server URL `{url}` is not an absolute http(s) URL; pass --base-url"
        ));
    }
    Ok(url)
}

/// Title from `summary`, description from `description` (else the summary).
fn texts(operation: &Operation<'_>, deprecated: bool) -> (Option<String>, Option<String>) {
    let clean = |text: &str| {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    };
    let summary = operation.text("summary").and_then(clean);
    let description = operation.text("description").and_then(clean);
    // Without a summary, a short first line of the description names the tool well enough.
    let title = summary
        .as_deref()
        .or_else(|| {
            description
                .as_deref()
                .and_then(|text| text.lines().next())
                .filter(|line| line.len() <= 80)
        })
        .map(|line| {
            line.lines()
                .next()
                .unwrap_or_default()
                .trim_end_matches('.')
                .to_owned()
        });
    let mut description = description.or(summary);
    if deprecated {
        description = Some(match description {
            Some(text) => format!("Deprecated. {text}"),
            None => "Deprecated.".to_owned(),
        });
    }
    (title, description)
}

/// `application/json`, `application/problem+json`, `application/json; charset=utf-8`.
pub fn is_json(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

/// The JSON schema of the first success response that has one.
fn output_schema(
    document: &Document,
    operation: &Operation<'_>,
    converter: &mut Converter<'_>,
    notes: &mut Vec<String>,
) -> Option<Value> {
    let responses = operation.operation.get("responses")?.as_object()?;
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|code| code.starts_with('2'))
        .collect();
    codes.sort();
    for code in codes {
        let Ok(response) = document.resolve(&responses[code]) else {
            continue;
        };
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            continue;
        };
        let Some(schema) = content
            .iter()
            .find(|(media, _)| is_json(media))
            .and_then(|(_, media)| media.get("schema"))
        else {
            continue;
        };
        converter.set_direction(Direction::Response);
        return match converter.convert(schema) {
            Ok(schema) => {
                notes.extend(
                    converter
                        .take_notes()
                        .into_iter()
                        .map(|note| format!("output schema: {note}")),
                );
                Some(converter.output_root(schema))
            }
            Err(reason) => {
                notes.push(format!("no output schema: {reason}"));
                None
            }
        };
    }
    None
}
