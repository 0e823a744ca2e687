//! Import → check → call: every tool imported from a real description is called through the
//! server against a local upstream, and each request is checked against the operation as
//! the *description* states it (method, path segments, query pairs, headers, body and
//! credentials), not against what the importer wrote.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::harness::Server;
use crate::import_openapi::{fixtures, github, import};
use crate::schema_samples::{minimal, sample_arguments};
use crate::upstream::{Recorded, Reply, Upstream};

struct Case<'a> {
    file: &'a str,
    input: Option<Vec<u8>>,
    filters: &'a [&'a str],
    env: &'a [(&'a str, &'a str)],
}

#[test]
fn petstore_tools_send_what_each_operation_says() {
    let called = check_calls(&Case {
        file: "petstore.yaml",
        input: None,
        filters: &[],
        env: &[
            ("SWAGGER_PETSTORE_PETSTORE_AUTH", "pet-token"),
            ("SWAGGER_PETSTORE_API_KEY", "special-key"),
        ],
    });
    assert_eq!(called, 20);
}

#[test]
fn readme_tools_send_what_each_operation_says() {
    let called = check_calls(&Case {
        file: "readme.json",
        input: None,
        filters: &[],
        env: &[("README_API_BEARER", "rdme_token")],
    });
    assert_eq!(called, 54);
}

#[test]
fn galaxy_tools_send_what_each_operation_says() {
    let called = check_calls(&Case {
        file: "galaxy.yaml",
        input: None,
        // The stand-in's smallest answer fits two of Galaxy's `oneOf` bodies at once.
        filters: &["--no-output-schema"],
        env: &[
            ("SCALAR_GALAXY_BEARERAUTH", "galaxy-token"),
            ("SCALAR_GALAXY_BASICAUTH", "dXNlcjpwYXNz"),
        ],
    });
    assert_eq!(called, 10);
}

#[test]
fn rclone_tools_send_what_each_operation_says() {
    let output = std::process::Command::new("gzip")
        .args(["-dc", "rclone.yaml.gz"])
        .current_dir(fixtures())
        .output()
        .expect("gzip runs");
    let called = check_calls(&Case {
        file: "-",
        input: Some(output.stdout),
        filters: &[],
        env: &[],
    });
    assert_eq!(called, 101);
}

#[test]
fn github_issue_and_pull_tools_send_what_each_operation_says() {
    let called = check_calls(&Case {
        file: "-",
        input: Some(github()),
        filters: &["--tag", "issues", "--tag", "pulls"],
        env: &[],
    });
    assert_eq!(called, 92);
}

/// Imports, serves and calls every tool; returns how many requests matched their operation.
fn check_calls(case: &Case<'_>) -> usize {
    let reply = Arc::new(Mutex::new(json!({})));
    let answer = reply.clone();
    let upstream = Upstream::start(move |_, _| {
        let body = answer
            .lock()
            .map(|value| value.to_string())
            .unwrap_or_default();
        Reply::new(200, "application/json", body)
    });
    let base = format!("{}/base", upstream.base());
    let mut args = vec![case.file, "--base-url", &base];
    args.extend_from_slice(case.filters);
    let (code, manifest, summary) = import(&args, case.input.as_deref());
    assert_eq!(code, 0, "{summary}");
    let description_text = match &case.input {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => std::fs::read_to_string(fixtures().join(case.file)).expect("description"),
    };
    let description = mcp_serve::openapi::Document::parse(&description_text)
        .expect("parses")
        .root;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tools.toml");
    std::fs::write(&path, &manifest).expect("write");
    let tools: toml::Table = toml::from_str(&manifest).expect("the manifest is TOML");
    // The schemas the tools share, which each tool's schema reads as its own `$defs`.
    let shared: serde_json::Map<String, Value> = tools
        .get("schemas")
        .and_then(toml::Value::as_table)
        .map(|table| {
            table
                .iter()
                .map(|(name, text)| {
                    let schema = serde_json::from_str(text.as_str().expect("JSON text"));
                    (name.clone(), schema.expect("JSON"))
                })
                .collect()
        })
        .unwrap_or_default();
    let whole = |text: &str| {
        let mut schema: Value = serde_json::from_str(text).expect("JSON");
        if !shared.is_empty()
            && let Some(object) = schema.as_object_mut()
        {
            let defs = object.entry("$defs").or_insert_with(|| json!({}));
            for (name, entry) in &shared {
                defs[name] = entry.clone();
            }
        }
        schema
    };
    let tools = tools["tools"].as_array().expect("tools").clone();
    let mut server = Server::start_with(&path, &[], case.env);
    server.handshake("2025-11-25");
    let kept = kept_operations(&summary);
    assert_eq!(kept.len(), tools.len(), "{summary}");
    let mut matched = 0;
    for (tool, (name, method, op_path)) in tools.iter().zip(&kept) {
        assert_eq!(tool["name"].as_str(), Some(name.as_str()));
        let input = whole(tool["input-schema"].as_str().expect("input-schema"));
        let arguments = sample_arguments(&input);
        let output = tool
            .get("output-schema")
            .and_then(|schema| schema.as_str())
            .map(whole);
        *reply.lock().expect("reply") = output
            .as_ref()
            .map_or_else(|| json!({}), |schema| minimal(schema, schema, 0));
        let before = upstream.recorded().len();
        let result = server.call(name, Value::Object(arguments.clone()));
        // The stand-in answers with the smallest value the output schema accepts, so an
        // error here is the request or the output pipeline, never the stand-in.
        assert_ne!(
            result["isError"],
            json!(true),
            "{name} with {arguments:?}: {result}"
        );
        let requests = upstream.recorded();
        assert_eq!(requests.len(), before + 1, "{name} sent one request");
        let operation = &description["paths"][op_path.as_str()][method.to_ascii_lowercase()];
        let item = &description["paths"][op_path.as_str()];
        verify(
            &description,
            item,
            operation,
            method,
            op_path,
            &arguments,
            &requests[before],
        );
        matched += 1;
    }
    let label = if case.file == "-" {
        description["info"]["title"].as_str().unwrap_or("stdin")
    } else {
        case.file
    };
    eprintln!(
        "import calls: {label}: {matched} tools called, {matched} requests matched their operation, every answer fit its output schema"
    );
    matched
}

/// `name  METHOD /path` lines of the summary's "kept" section.
fn kept_operations(summary: &str) -> Vec<(String, String, String)> {
    summary
        .lines()
        .skip_while(|line| !line.starts_with("kept ("))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            (
                words[0].to_owned(),
                words[1].to_owned(),
                words[2].to_owned(),
            )
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn verify(
    root: &Value,
    item: &Value,
    operation: &Value,
    method: &str,
    path: &str,
    arguments: &Map<String, Value>,
    request: &Recorded,
) {
    let label = format!("{method} {path}");
    let mut parts = request.request_line.split(' ');
    assert_eq!(parts.next(), Some(method), "{label}: method");
    let target = parts.next().expect("target");
    let (sent_path, sent_query) = target.split_once('?').unwrap_or((target, ""));
    let sent_path = sent_path
        .strip_prefix("/base")
        .unwrap_or_else(|| panic!("{label}: {sent_path} keeps the base path"));
    let parameters = parameters(root, item, operation);
    let value_of = |name: &str| arguments.get(&argument_name(name));
    // Path: each `{name}` segment carries its argument, percent-encoded within the segment.
    let template: Vec<&str> = path.split('/').collect();
    let sent: Vec<&str> = sent_path.split('/').collect();
    assert_eq!(template.len(), sent.len(), "{label}: {sent_path}");
    for (expected, actual) in template.iter().zip(&sent) {
        let mut want = (*expected).to_owned();
        for (name, place, _) in &parameters {
            if place == "path" && want.contains(&format!("{{{name}}}")) {
                let value =
                    value_of(name).unwrap_or_else(|| panic!("{label}: path argument {name}"));
                want = want.replace(&format!("{{{name}}}"), &scalar(value));
            }
        }
        assert_eq!(decode(actual, false), want, "{label}: path segment");
    }
    // Query: exactly the given query parameters, lists and objects in the style the
    // description gives each (OpenAPI's table of `style` and `explode`).
    let mut want_query: Vec<(String, String)> = Vec::new();
    for (name, place, _) in &parameters {
        if place == "query"
            && let Some(value) = value_of(name)
        {
            let (style, explode) = style_of(root, item, operation, name);
            want_query.extend(styled(name, value, &style, explode));
        }
    }
    let mut sent_pairs = pairs(sent_query);
    sent_pairs.sort();
    want_query.sort();
    assert_eq!(sent_pairs, want_query, "{label}: query");
    for (name, place, _) in &parameters {
        if place == "header"
            && let Some(value) = value_of(name)
        {
            assert_eq!(
                request.header(name),
                Some(scalar(value).as_str()),
                "{label}: header {name}"
            );
        }
    }
    credentials(root, operation, request, &label);
    body(root, operation, &parameters, arguments, request, &label);
}

/// The operation's credentials, as its security requirement names them.
fn credentials(root: &Value, operation: &Value, request: &Recorded, label: &str) {
    let security = operation.get("security").or_else(|| root.get("security"));
    let Some(first) = security
        .and_then(|list| list.get(0))
        .and_then(Value::as_object)
    else {
        // `security: []`, or none at all: anonymous, so nothing is sent.
        assert_eq!(
            request.header("authorization"),
            None,
            "{label}: no credential"
        );
        assert_eq!(request.header("api_key"), None, "{label}: no credential");
        return;
    };
    for scheme in first.keys() {
        let (header, value) = match scheme.as_str() {
            "petstore_auth" => ("authorization", "Bearer pet-token"),
            "api_key" => ("api_key", "special-key"),
            "bearer" => ("authorization", "Bearer rdme_token"),
            "bearerAuth" => ("authorization", "Bearer galaxy-token"),
            "basicAuth" => ("authorization", "Basic dXNlcjpwYXNz"),
            other => panic!("{label}: a scheme this test does not know: {other}"),
        };
        assert_eq!(
            request.header(header),
            Some(value),
            "{label}: credential {scheme}"
        );
    }
}

/// The JSON or form body holds exactly the given body fields.
fn body(
    root: &Value,
    operation: &Value,
    parameters: &[(String, String, bool)],
    arguments: &Map<String, Value>,
    request: &Recorded,
    label: &str,
) {
    let Some(request_body) = operation.get("requestBody").map(|body| resolve(root, body)) else {
        assert!(request.body.is_empty(), "{label}: no body");
        return;
    };
    let content = request_body["content"].as_object().expect("content");
    let (media, spec) = content
        .iter()
        .find(|(media, _)| media.contains("json"))
        .or_else(|| {
            content
                .iter()
                .find(|(media, _)| media.contains("form-urlencoded"))
        })
        .or_else(|| {
            content
                .iter()
                .find(|(media, _)| media.contains("multipart/form-data"))
        })
        .expect("a body mcp-serve sends");
    let schema = resolve(root, &spec["schema"]);
    let fields = field_names(root, schema);
    let argument_for = |field: &str| {
        let field = argument_name(field);
        if parameters
            .iter()
            .any(|(name, _, _)| argument_name(name) == field)
        {
            format!("body_{field}")
        } else {
            field
        }
    };
    if media.contains("multipart/form-data") && fields.is_empty() {
        // Not an object of fields (rclone's `uploadfile` says `schema: {}`): an optional
        // body mcp-serve cannot build is left out, noted, and nothing is sent.
        assert_ne!(request_body["required"], json!(true), "{label}");
        assert!(request.body.is_empty(), "{label}: no body");
        return;
    }
    if media.contains("multipart/form-data") {
        use base64::Engine as _;
        // Each given field is one part of its name: a file's bytes (`format: binary`)
        // decoded from the base64 argument, anything else as text (JSON for a structure).
        let want: Vec<(String, Vec<u8>)> = fields
            .iter()
            .filter_map(|field| {
                let value = arguments.get(&argument_for(field))?;
                let property = resolve(root, &schema["properties"][field.as_str()]);
                let bytes = if property["format"] == "binary" {
                    base64::engine::general_purpose::STANDARD
                        .decode(value.as_str().expect("base64 text"))
                        .expect("base64")
                } else {
                    scalar(value).into_bytes()
                };
                Some((field.clone(), bytes))
            })
            .collect();
        let sent = multipart_parts(request, label);
        assert_eq!(sent, want, "{label}: multipart body");
        return;
    }
    if media.contains("form-urlencoded") {
        let mut want: Vec<(String, String)> = fields
            .iter()
            .filter_map(|field| {
                arguments
                    .get(&argument_for(field))
                    .map(|value| (field.clone(), scalar(value)))
            })
            .collect();
        let mut sent = pairs(&String::from_utf8_lossy(&request.body));
        want.sort();
        sent.sort();
        assert_eq!(sent, want, "{label}: form body");
        return;
    }
    let sent: Value =
        serde_json::from_slice(&request.body).unwrap_or_else(|_| panic!("{label}: a JSON body"));
    let want = if fields.is_empty() {
        arguments.get("body").cloned().unwrap_or(Value::Null)
    } else {
        Value::Object(
            fields
                .iter()
                .filter_map(|field| {
                    arguments
                        .get(&argument_for(field))
                        .map(|value| (field.clone(), value.clone()))
                })
                .collect(),
        )
    };
    assert_eq!(sent, want, "{label}: JSON body");
}

/// An argument's name as docs/import.md says the importer makes it: characters other than
/// letters, digits, `_` and `-` become `_`, runs of `_` one, none at either end.
fn argument_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    out.trim_end_matches('_').to_owned()
}

/// A query parameter's `style` and `explode`, with OpenAPI's defaults.
fn style_of(root: &Value, item: &Value, operation: &Value, name: &str) -> (String, bool) {
    let mut found = None;
    for source in [item, operation] {
        for parameter in source["parameters"].as_array().into_iter().flatten() {
            let parameter = resolve(root, parameter);
            if parameter["name"] == json!(name) && parameter["in"] == json!("query") {
                found = Some(parameter.clone());
            }
        }
    }
    let parameter = found.unwrap_or_default();
    let style = parameter["style"].as_str().unwrap_or("form").to_owned();
    let explode = parameter["explode"]
        .as_bool()
        .unwrap_or(style == "form" || style == "deepObject");
    (style, explode)
}

/// The decoded pairs a query value makes, by the rules of OpenAPI's style table (written
/// here from the specification, not from the importer).
fn styled(name: &str, value: &Value, style: &str, explode: bool) -> Vec<(String, String)> {
    let delimiter = match (style, explode) {
        ("form", false) => Some(","),
        ("spaceDelimited", _) => Some(" "),
        ("pipeDelimited", _) => Some("|"),
        _ => None,
    };
    match (value, delimiter) {
        (Value::Array(items), Some(delimiter)) => {
            let texts: Vec<String> = items.iter().map(scalar).collect();
            if texts.is_empty() {
                Vec::new()
            } else {
                vec![(name.to_owned(), texts.join(delimiter))]
            }
        }
        (Value::Object(fields), Some(delimiter)) => {
            let texts: Vec<String> = fields
                .iter()
                .flat_map(|(key, item)| [key.clone(), scalar(item)])
                .collect();
            if texts.is_empty() {
                Vec::new()
            } else {
                vec![(name.to_owned(), texts.join(delimiter))]
            }
        }
        (Value::Object(fields), None) if style == "deepObject" => fields
            .iter()
            .flat_map(|(key, item)| styled(&format!("{name}[{key}]"), item, style, explode))
            .collect(),
        (Value::Array(items), None) if style == "deepObject" => items
            .iter()
            .flat_map(|item| styled(&format!("{name}[]"), item, style, explode))
            .collect(),
        (Value::Array(items), None) => items
            .iter()
            .map(|item| (name.to_owned(), scalar(item)))
            .collect(),
        (value, _) => vec![(name.to_owned(), scalar(value))],
    }
}

/// The parts of a `multipart/form-data` body: each part's name and bytes.
fn multipart_parts(request: &Recorded, label: &str) -> Vec<(String, Vec<u8>)> {
    let content_type = request.header("content-type").unwrap_or_default();
    let Some((_, boundary)) = content_type.split_once("boundary=") else {
        panic!("{label}: {content_type} names a boundary");
    };
    let delimiter = format!("--{boundary}");
    let body = &request.body;
    let positions: Vec<usize> = (0..=body.len().saturating_sub(delimiter.len()))
        .filter(|&at| body[at..].starts_with(delimiter.as_bytes()))
        .collect();
    assert!(!positions.is_empty(), "{label}: a multipart body");
    let mut parts = Vec::new();
    for window in positions.windows(2) {
        let part = &body[window[0] + delimiter.len() + 2..window[1] - 2];
        let split = part
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("{label}: a part's headers end"));
        let headers = String::from_utf8_lossy(&part[..split]).into_owned();
        let name = headers
            .split("\r\n")
            .find_map(|line| line.strip_prefix("Content-Disposition: form-data; name=\""))
            .and_then(|rest| rest.split_once('"'))
            .map(|(name, _)| name.to_owned())
            .unwrap_or_default();
        parts.push((name, part[split + 4..].to_vec()));
    }
    assert!(
        body.ends_with(format!("{delimiter}--\r\n").as_bytes()),
        "{label}: the body closes"
    );
    parts
}

/// The property names of an object schema (through `allOf`); none for other schemas.
fn field_names(root: &Value, schema: &Value) -> Vec<String> {
    let schema = resolve(root, schema);
    if schema.get("oneOf").is_some() || schema.get("anyOf").is_some() {
        return Vec::new();
    }
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    for part in schema["allOf"].as_array().into_iter().flatten() {
        names.extend(field_names(root, part));
    }
    names
}

/// (name, in, required) of the path item's and operation's parameters.
fn parameters(root: &Value, item: &Value, operation: &Value) -> Vec<(String, String, bool)> {
    let mut list: Vec<(String, String, bool)> = Vec::new();
    for source in [item, operation] {
        for parameter in source["parameters"].as_array().into_iter().flatten() {
            let parameter = resolve(root, parameter);
            let name = parameter["name"].as_str().unwrap_or_default().to_owned();
            let place = parameter["in"].as_str().unwrap_or_default().to_owned();
            list.retain(|(kept, kept_place, _)| !(kept == &name && kept_place == &place));
            list.push((name, place, parameter["required"] == json!(true)));
        }
    }
    list
}

fn resolve<'a>(root: &'a Value, mut value: &'a Value) -> &'a Value {
    while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
        value = root
            .pointer(reference.trim_start_matches('#'))
            .expect("reference");
    }
    value
}

/// A value as text in a URL, header or form field.
fn scalar(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), ToOwned::to_owned)
}

fn pairs(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key, true), decode(value, true))
        })
        .collect()
}

fn decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' => {
                out.push(u8::from_str_radix(&text[index + 1..index + 3], 16).expect("hex"));
                index += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                index += 1;
            }
            byte => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8(out).expect("utf-8")
}
