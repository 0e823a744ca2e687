//! Traces: an OTLP/HTTP receiver on 127.0.0.1 (the test's own, decoding what arrives with
//! the OpenTelemetry project's protobuf types, or reading the JSON encoding as JSON) gets a
//! span per request and per backend run, in the trace the client named in `_meta` or in
//! its HTTP headers; the command sees `TRACEPARENT` and the HTTP API `traceparent` naming
//! the run's span. With traces off, a client's context still reaches the backends as sent.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use prost::Message as _;
use serde_json::{Value, json};

use crate::harness::{Server, Workspace};
use crate::http_harness::{HttpServer, message};
use crate::upstream::{Recorded, Reply, Upstream};

/// The client's trace and its span, as a W3C `traceparent` names them.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
const STATE_TRACE: &str = "11111111111111111111111111111111";
const TASK_TRACE: &str = "22222222222222222222222222222222";
const OTHER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN: &str = "b7ad6b7169203331";

fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

/// A secret in the HTTP tool's query, and an argument value in its path: neither is in any
/// span.
const SECRET: &str = "s3cret-key-for-traces";
const CITY: &str = "Reykjavik-argument-value";

const SPAN_KIND_SERVER: i64 = 2;
const SPAN_KIND_CLIENT: i64 = 3;
const STATUS_ERROR: i64 = 2;

/// A span as the receiver got it, whichever the encoding.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    trace: String,
    id: String,
    parent: String,
    name: String,
    kind: i64,
    status: i64,
    attributes: HashMap<String, String>,
}

impl Span {
    fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map_or_else(
            || panic!("{} has no {key}: {:?}", self.name, self.attributes),
            String::as_str,
        )
    }
}

/// The receiver: answers OTLP exports with 200, and the HTTP tool's API with JSON.
fn receiver() -> Upstream {
    Upstream::start(|request: &Recorded, _port| {
        if request.path() == "/v1/traces" {
            let json = request
                .header("content-type")
                .is_some_and(|kind| kind.contains("json"));
            if json {
                Reply::new(200, "application/json", "{}")
            } else {
                Reply::new(200, "application/x-protobuf", Vec::new())
            }
        } else {
            Reply::new(200, "application/json", r#"{"temperature": 21}"#)
        }
    })
}

/// Every span the receiver got, from protobuf or JSON exports.
fn received(upstream: &Upstream) -> Vec<Span> {
    let mut spans = Vec::new();
    for export in upstream
        .recorded()
        .into_iter()
        .filter(|request| request.path() == "/v1/traces")
    {
        if export
            .header("content-type")
            .is_some_and(|kind| kind.contains("json"))
        {
            spans.extend(from_json(
                &serde_json::from_slice(&export.body).expect("OTLP JSON"),
            ));
        } else {
            spans.extend(from_protobuf(&export.body));
        }
    }
    spans
}

fn from_protobuf(body: &[u8]) -> Vec<Span> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    let text = |value: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>| match value
        .and_then(|value| value.value.as_ref())
    {
        Some(Any::StringValue(text)) => text.clone(),
        Some(Any::IntValue(number)) => number.to_string(),
        Some(Any::BoolValue(flag)) => flag.to_string(),
        other => format!("{other:?}"),
    };
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf export");
    let mut spans = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|resource| &resource.attributes)
            .find(|attribute| attribute.key == "service.name")
            .map(|attribute| text(attribute.value.as_ref()))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                spans.push(Span {
                    service: service.clone(),
                    trace: hex(&span.trace_id),
                    id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: i64::from(span.kind),
                    status: span.status.map_or(0, |status| i64::from(status.code)),
                    attributes: span
                        .attributes
                        .iter()
                        .map(|attribute| (attribute.key.clone(), text(attribute.value.as_ref())))
                        .collect(),
                });
            }
        }
    }
    spans
}

/// The OTLP JSON encoding: ids in hex, enums as numbers, values in `{"stringValue": …}`.
fn from_json(body: &Value) -> Vec<Span> {
    let text = |value: &Value| {
        value
            .get("stringValue")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                value.get("intValue").map(|number| {
                    number
                        .as_str()
                        .map_or_else(|| number.to_string(), str::to_owned)
                })
            })
            .unwrap_or_else(|| value.to_string())
    };
    let attributes = |list: &Value| -> HashMap<String, String> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|attribute| {
                (
                    attribute["key"].as_str().unwrap_or_default().to_owned(),
                    text(&attribute["value"]),
                )
            })
            .collect()
    };
    let mut spans = Vec::new();
    for resource in body["resourceSpans"].as_array().expect("resourceSpans") {
        let service = attributes(&resource["resource"]["attributes"])
            .remove("service.name")
            .unwrap_or_default();
        for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
            for span in scope["spans"].as_array().into_iter().flatten() {
                let field = |name: &str| span[name].as_str().unwrap_or_default().to_lowercase();
                spans.push(Span {
                    service: service.clone(),
                    trace: field("traceId"),
                    id: field("spanId"),
                    parent: field("parentSpanId"),
                    name: span["name"].as_str().unwrap_or_default().to_owned(),
                    kind: span["kind"].as_i64().unwrap_or_default(),
                    status: span["status"]["code"].as_i64().unwrap_or_default(),
                    attributes: attributes(&span["attributes"]),
                });
            }
        }
    }
    spans
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// Waits until the receiver holds a span named `name` in `trace` (exports are batched).
fn wait_for(upstream: &Upstream, trace: &str, name: &str) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let spans = received(upstream);
        if spans
            .iter()
            .any(|span| span.trace == trace && span.name == name)
        {
            return spans;
        }
        assert!(
            Instant::now() < deadline,
            "no span `{name}` in trace {trace}; received: {:#?}",
            spans
                .iter()
                .map(|span| (&span.name, &span.trace))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn only<'a>(spans: &'a [Span], trace: &str, name: &str) -> &'a Span {
    let found: Vec<_> = spans
        .iter()
        .filter(|span| span.trace == trace && span.name == name)
        .collect();
    assert_eq!(found.len(), 1, "spans `{name}` in {trace}: {found:#?}");
    found[0]
}

fn manifest(api: &str) -> String {
    format!(
        r#"
[server]
name = "traced-tools"

[[tools]]
name = "context"
description = "Prints the trace context it was given."
[tools.command]
argv = ["sh", "-c", "printf '%s|%s' \"${{{{TRACEPARENT:-none}}}}\" \"${{{{TRACESTATE:-none}}}}\""]

[[tools]]
name = "weather"
[tools.arguments.city]
type = "string"
[tools.http]
method = "GET"
url = "{api}/weather/{{city}}"
query = {{ key = "${{env:TRACES_TEST_KEY}}" }}

[[tools]]
name = "context-task"
description = "The same, as a task."
task = "required"
[tools.command]
argv = ["sh", "-c", "printf '%s' \"${{{{TRACEPARENT:-none}}}}\""]

[[tools]]
name = "fails"
[tools.command]
argv = ["sh", "-c", "echo broken >&2; exit 3"]
"#
    )
}

fn text(result: &Value) -> String {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
        .to_owned()
}

fn call_with_meta(server: &mut Server, tool: &str, meta: &Value) -> Value {
    server.request(
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": meta}),
    )
}

#[test]
fn over_stdio_spans_join_the_clients_trace_and_the_backends_see_their_run() {
    let upstream = receiver();
    let workspace = Workspace::new(&manifest(&upstream.base()));
    let endpoint = upstream.base();
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--otlp-endpoint", &endpoint],
        &[
            // Nothing leaves before the end: the spans arrive because closing stdin flushes them.
            ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
            ("TRACES_TEST_KEY", SECRET),
            // The server's own context never reaches a command.
            ("TRACEPARENT", &traceparent(OTHER_TRACE, HEADER_SPAN)),
        ],
    );
    server.handshake("2025-11-25");
    let parent = traceparent(TRACE, CLIENT_SPAN);
    let seen = text(&call_with_meta(
        &mut server,
        "context",
        &json!({"traceparent": parent, "tracestate": "vendor=opaque"}),
    ));
    let weather = server.request(
        "tools/call",
        json!({"name": "weather", "arguments": {"city": CITY}, "_meta": {"traceparent": parent}}),
    );
    assert_eq!(weather["result"]["isError"], json!(false), "{weather}");
    let failed = call_with_meta(&mut server, "fails", &json!({"traceparent": parent}));
    assert_eq!(failed["result"]["isError"], json!(true), "{failed}");
    // Hostile contexts are dropped: the call starts a trace of its own.
    let hostile = text(&call_with_meta(
        &mut server,
        "context",
        &json!({"traceparent": "00-zzzz-\n-01", "tracestate": "x".repeat(100_000)}),
    ));
    let unparented = text(&call_with_meta(&mut server, "context", &json!({})));
    // A valid traceparent with a tracestate no header could carry: the state is dropped.
    let unstated = text(&call_with_meta(
        &mut server,
        "context",
        &json!({"traceparent": traceparent(STATE_TRACE, CLIENT_SPAN), "tracestate": "k=v\u{0}\nX: 1"}),
    ));
    assert!(unstated.ends_with("|none"), "{unstated}");
    assert!(unstated.contains(STATE_TRACE), "{unstated}");
    // A protocol error: the span says which, and names no made-up tool.
    let unknown = call_with_meta(&mut server, "no-such-tool", &json!({"traceparent": parent}));
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
    let log = server.stderr();
    let (status, _) = server.close();
    assert!(status.success(), "{log}");

    let spans = wait_for(&upstream, TRACE, "run sh");
    eprintln!("received {} spans", spans.len());
    assert!(
        spans.iter().all(|span| span.service == "traced-tools"),
        "{spans:#?}"
    );
    let calls: Vec<_> = spans
        .iter()
        .filter(|span| span.trace == TRACE && span.name.starts_with("tools/call "))
        .collect();
    assert_eq!(calls.len(), 3, "{calls:#?}");
    for call in &calls {
        assert_eq!(call.parent, CLIENT_SPAN, "{call:#?}");
        assert_eq!(call.kind, SPAN_KIND_SERVER);
        assert_eq!(call.attribute("mcp.method.name"), "tools/call");
        assert_eq!(call.attribute("network.transport"), "pipe");
        assert_eq!(call.attribute("mcp.protocol.version"), "2025-11-25");
        assert_eq!(call.attribute("gen_ai.operation.name"), "execute_tool");
    }

    // The command ran in a span of its own, under the call's, and saw that span.
    let call = only(&spans, TRACE, "tools/call context");
    assert_eq!(call.attribute("gen_ai.tool.name"), "context");
    let runs: Vec<_> = spans
        .iter()
        .filter(|span| span.trace == TRACE && span.name == "run sh")
        .collect();
    let run = runs
        .iter()
        .find(|run| run.parent == call.id)
        .expect("the command's span under the call's");
    assert_eq!(
        seen,
        format!("{}|vendor=opaque", traceparent(TRACE, &run.id))
    );
    assert_eq!(run.attribute("process.exit.code"), "0");
    assert_eq!(run.attribute("process.executable.name"), "sh");

    assert_http_run(&spans, &upstream);

    // A tool error marks the call and the run.
    let call = only(&spans, TRACE, "tools/call fails");
    assert_eq!(call.status, STATUS_ERROR);
    assert_eq!(call.attribute("error.type"), "tool_error");
    let run = runs
        .iter()
        .find(|run| run.parent == call.id)
        .expect("its run");
    assert_eq!(run.attribute("process.exit.code"), "3");
    assert_eq!(run.attribute("error.type"), "exit_status");
    assert_eq!(run.status, STATUS_ERROR);

    assert_own_traces(&spans, &[&hostile, &unparented]);
    assert_protocol_error_span(&spans);
}

/// The HTTP API got the request's span, a client span under the call's, and no export holds
/// an argument value, a URL's path or query, or a secret, in any field.
fn assert_http_run(spans: &[Span], upstream: &Upstream) {
    let call = only(spans, TRACE, "tools/call weather");
    let get = only(spans, TRACE, "GET");
    assert_eq!(get.parent, call.id);
    assert_eq!(get.kind, SPAN_KIND_CLIENT);
    assert_eq!(get.attribute("http.response.status_code"), "200");
    assert_eq!(get.attribute("server.address"), "127.0.0.1");
    let api = upstream
        .recorded()
        .into_iter()
        .find(|request| request.path().starts_with("/weather/"))
        .expect("the API was called");
    assert_eq!(
        api.header("traceparent"),
        Some(traceparent(TRACE, &get.id).as_str())
    );

    // No argument value, URL path or query, or secret is in any export, in any field; and
    // without OTEL_EXPORTER_OTLP_PROTOCOL they are protobuf, the OTLP default.
    for export in upstream.recorded() {
        if export.path() == "/v1/traces" {
            assert_eq!(
                export.header("content-type"),
                Some("application/x-protobuf")
            );
            let bytes = String::from_utf8_lossy(&export.body);
            assert!(!bytes.contains(SECRET) && !bytes.contains(CITY), "{bytes}");
        }
    }
}

/// A protocol error's span says which, names no made-up tool; requests have spans,
/// notifications do not.
fn assert_protocol_error_span(spans: &[Span]) {
    let refused = only(spans, TRACE, "tools/call");
    assert_eq!(refused.status, STATUS_ERROR);
    assert_eq!(refused.attribute("error.type"), "-32602");
    assert_eq!(refused.attribute("rpc.response.status_code"), "-32602");
    assert!(!refused.attributes.contains_key("gen_ai.tool.name"));
    assert!(
        spans.iter().all(|span| !span.name.contains("no-such-tool")),
        "a made-up name is never a span name"
    );
    for method in ["initialize", "notifications/initialized"] {
        let expected = method == "initialize";
        assert_eq!(
            spans.iter().any(|span| span.name == method),
            expected,
            "requests have spans, notifications do not: {method}"
        );
    }
}

/// Without a valid context, each call is a trace of its own, and the command sees it, never
/// the server's own `TRACEPARENT`.
fn assert_own_traces(spans: &[Span], seen: &[&String]) {
    for seen in seen {
        let (given, state) = seen.split_once('|').expect("two values");
        let trace = given.split('-').nth(1).expect("a trace id");
        assert_ne!(trace, TRACE);
        assert_ne!(trace, OTHER_TRACE);
        assert_eq!(state, "none");
        let call = spans
            .iter()
            .find(|span| span.trace == trace && span.name == "tools/call context")
            .expect("the call's span in its own trace");
        assert_eq!(call.parent, "", "a root span: {call:#?}");
    }
}

/// Runs `context-task` as a task (a 2026 client with the tasks extension) in `TASK_TRACE`;
/// the `TRACEPARENT` its command saw.
fn task_context(server: &HttpServer) -> String {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-serve-tests", "version": "1.0.0"},
        "traceparent": traceparent(TASK_TRACE, CLIENT_SPAN),
    });
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "context-task"),
    ];
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "context-task", "arguments": {}, "_meta": meta}}),
        &headers,
    );
    let started = message(response, 3);
    let id = started["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {started}"))
        .to_owned();
    let done = crate::tasks::wait_for(server, &id, &["completed"], Duration::from_secs(10));
    done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a result: {done}"))
        .to_owned()
}

#[test]
fn over_http_the_header_or_meta_context_is_continued_and_exported_as_json() {
    let upstream = receiver();
    let workspace = Workspace::new(&manifest(&upstream.base()));
    let mut server = HttpServer::start_with_env(
        &workspace.manifest(),
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &upstream.base()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_SERVICE_NAME", "traces-over-http"),
            ("TRACES_TEST_KEY", SECRET),
            // Spans arrive because SIGTERM flushes them.
            ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
        ],
    );
    let call = |id: i64, meta: Value, headers: &[(&str, &str)]| {
        let mut all = vec![("MCP-Protocol-Version", "2025-11-25")];
        all.extend_from_slice(headers);
        let response = server.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "context", "arguments": {}, "_meta": meta}}),
            &all,
        );
        assert_eq!(response.status(), 200);
        text(&message(response, id))
    };
    let header = traceparent(OTHER_TRACE, HEADER_SPAN);
    let from_header = call(1, json!({}), &[("traceparent", &header)]);
    let meta = traceparent(TRACE, CLIENT_SPAN);
    // `_meta` is the request's own: it wins over the HTTP request's header.
    let from_meta = call(2, json!({"traceparent": meta}), &[("traceparent", &header)]);
    let from_task = task_context(&server);
    server.terminate();

    // A task's run, on the runner's own task, stays in the trace of the call that started it.
    let spans = wait_for(&upstream, TASK_TRACE, "run sh");
    let call = only(&spans, TASK_TRACE, "tools/call context-task");
    let run = only(&spans, TASK_TRACE, "run sh");
    assert_eq!(run.parent, call.id);
    assert_eq!(from_task, traceparent(TASK_TRACE, &run.id));
    let spans = wait_for(&upstream, OTHER_TRACE, "run sh");
    let spans = if spans
        .iter()
        .any(|span| span.trace == TRACE && span.name == "run sh")
    {
        spans
    } else {
        wait_for(&upstream, TRACE, "run sh")
    };
    assert!(
        spans.iter().all(|span| span.service == "traces-over-http"),
        "{spans:#?}"
    );
    for (trace, parent, seen) in [
        (OTHER_TRACE, HEADER_SPAN, &from_header),
        (TRACE, CLIENT_SPAN, &from_meta),
    ] {
        let call = only(&spans, trace, "tools/call context");
        assert_eq!(call.parent, parent, "{call:#?}");
        assert_eq!(call.kind, SPAN_KIND_SERVER);
        assert_eq!(call.attribute("network.transport"), "tcp");
        assert_eq!(call.attribute("client.address"), "127.0.0.1");
        let run = only(&spans, trace, "run sh");
        assert_eq!(run.parent, call.id);
        assert_eq!(seen, &format!("{}|none", traceparent(trace, &run.id)));
    }
}

#[test]
fn with_traces_off_a_clients_context_still_reaches_the_backends_unchanged() {
    let upstream = receiver();
    let workspace = Workspace::new(&manifest(&upstream.base()));
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[
            ("TRACEPARENT", &traceparent(OTHER_TRACE, HEADER_SPAN)),
            ("TRACES_TEST_KEY", SECRET),
        ],
    );
    server.handshake("2025-11-25");
    let parent = traceparent(TRACE, CLIENT_SPAN);
    let seen = text(&call_with_meta(
        &mut server,
        "context",
        &json!({"traceparent": parent, "tracestate": "vendor=opaque"}),
    ));
    assert_eq!(seen, format!("{parent}|vendor=opaque"));
    server.request(
        "tools/call",
        json!({"name": "weather", "arguments": {"city": CITY}, "_meta": {"traceparent": parent}}),
    );
    let api = upstream.last();
    assert_eq!(api.header("traceparent"), Some(parent.as_str()));
    // Nothing to hand on: the command gets no context, not the server's own.
    let seen = text(&call_with_meta(
        &mut server,
        "context",
        &json!({"traceparent": "garbage"}),
    ));
    assert_eq!(seen, "none|none");
    server.close();
    assert!(
        upstream
            .recorded()
            .iter()
            .all(|request| request.path() != "/v1/traces"),
        "nothing is exported with traces off"
    );
}

#[test]
fn a_bad_endpoint_flag_stops_the_start_and_a_bad_environment_only_turns_traces_off() {
    let workspace = Workspace::new(
        &manifest("http://127.0.0.1:9").replace("${env:TRACES_TEST_KEY}", "not-a-secret"),
    );
    let output = std::process::Command::new(crate::harness::BINARY)
        .args(["--config"])
        .arg(workspace.manifest())
        .args(["--otlp-endpoint", "collector:4318"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--otlp-endpoint `collector:4318`"),
        "{stderr}"
    );
    // Variables set for other programs never stop the server: it serves without traces.
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    );
    server.handshake("2025-11-25");
    assert_eq!(
        text(&server.request("tools/call", json!({"name": "context", "arguments": {}}))),
        "none|none"
    );
    let log = server.stderr();
    assert!(
        log.contains("serving without traces")
            && log.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported"),
        "{log}"
    );
}
