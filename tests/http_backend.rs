//! HTTP tools against a real local upstream: the exact request received for normal and
//! hostile values, response mapping, limits, secrets, redirects and cancellation.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::harness::{Server, Workspace, run, text};
use crate::upstream::{Recorded, Reply, Upstream};

/// Answers by path: enough routes for every test here.
fn api() -> Upstream {
    Upstream::start(|request: &Recorded, port| {
        let path = request.path();
        match path.split('?').next().unwrap_or_default() {
            "/json" => Reply::new(
                200,
                "application/json",
                r#"{"data":{"items":[1,2]},"ok":true}"#,
            ),
            "/text" => Reply::new(200, "text/plain; charset=utf-8", "plain words\n"),
            "/image" => Reply::new(200, "image/png", &b"\x89PNG\r\n\x1a\nfake"[..]),
            "/pdf" => Reply::new(200, "application/pdf", &b"%PDF-1.4 fake"[..]),
            "/status/404" => Reply::new(404, "text/plain", "no such thing here"),
            "/big" => Reply::new(200, "text/plain", vec![b'x'; 10_000]),
            "/slow" => Reply {
                delay: Duration::from_secs(5),
                ..Reply::new(200, "text/plain", "late")
            },
            "/echo" | "/echo-error" => {
                let echoed = json!({
                    "line": request.request_line,
                    "headers": request.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>(),
                    "body": String::from_utf8_lossy(&request.body),
                });
                let status = if path.starts_with("/echo-error") {
                    500
                } else {
                    200
                };
                Reply::new(status, "application/json", echoed.to_string())
            }
            "/redirect-away" => Reply {
                headers: vec![("Location".into(), format!("http://localhost:{port}/json"))],
                ..Reply::new(302, "text/plain", "")
            },
            "/redirect-here" => Reply {
                headers: vec![("Location".into(), "/text".into())],
                ..Reply::new(302, "text/plain", "")
            },
            _ => Reply::new(200, "text/plain", "ok"),
        }
    })
}

fn manifest(upstream: &Upstream, tools: &str) -> Workspace {
    Workspace::new(&tools.replace("UPSTREAM", &upstream.base()))
}

#[test]
fn values_reach_the_request_only_through_structural_sinks() {
    let upstream = api();
    let workspace = manifest(
        &upstream,
        r#"
[[tools]]
name = "get"
[tools.arguments.id]
type = "string"
[tools.arguments.q]
type = "string"
optional = true
[tools.arguments.tags]
type = "array"
items = { type = "string" }
default = []
[tools.arguments.trace]
type = "string"
optional = true
[tools.http]
url = "UPSTREAM/items/{id}/details?v=2"
query = { q = "{q}", tag = "{tags}", fixed = 7 }
headers = { X-Trace = "t-{trace}" }
"#,
    );
    let mut server = workspace.serve_legacy();
    let cases = [
        (
            json!({"id": "42"}),
            "GET /items/42/details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "../../admin"}),
            "GET /items/..%2F..%2Fadmin/details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "..."}),
            "GET /items/.../details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "a?x=1#frag"}),
            "GET /items/a%3Fx%3D1%23frag/details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "%2F"}),
            "GET /items/%252F/details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "\"quoted\" é"}),
            "GET /items/%22quoted%22%20%C3%A9/details?v=2&fixed=7 HTTP/1.1",
        ),
        (
            json!({"id": "x", "q": "a&b=c#d ?", "tags": ["one two", "&"]}),
            "GET /items/x/details?v=2&q=a%26b%3Dc%23d+%3F&tag=one+two&tag=%26&fixed=7 HTTP/1.1",
        ),
    ];
    for (arguments, expected) in cases {
        let result = server.call("get", arguments.clone());
        assert_eq!(result["isError"], json!(false), "{arguments}: {result}");
        assert_eq!(upstream.last().request_line, expected, "{arguments}");
    }
    // A value that would make a whole segment `.` or `..` is refused: URL parsers treat
    // even the percent-encoded forms as dot segments.
    let before = upstream.recorded().len();
    for dots in [".", ".."] {
        let result = server.call("get", json!({"id": dots}));
        assert_eq!(result["isError"], json!(true), "{dots}: {result}");
    }
    assert_eq!(upstream.recorded().len(), before, "no request was sent");
    server.call("get", json!({"id": "%2e%2E"}));
    assert_eq!(
        upstream.last().request_line,
        "GET /items/%252e%252E/details?v=2&fixed=7 HTTP/1.1"
    );
    let long = "z".repeat(10_000);
    server.call("get", json!({"id": long}));
    assert_eq!(
        upstream.last().path().len(),
        "/items/".len() + 10_000 + "/details?v=2&fixed=7".len()
    );

    server.call("get", json!({"id": "x", "trace": "abc"}));
    assert_eq!(upstream.last().header("X-Trace"), Some("t-abc"));
    let before = upstream.recorded().len();
    let result = server.call("get", json!({"id": "x", "trace": "a\r\nX-Admin: yes"}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "the value for the `x-trace` header contains a line break or NUL byte, which a header cannot carry"
    );
    assert_eq!(upstream.recorded().len(), before, "no request was sent");
}

#[test]
fn json_and_form_bodies_are_built_as_values() {
    let upstream = api();
    let workspace = manifest(
        &upstream,
        r#"
[[tools]]
name = "create"
[tools.arguments.name]
type = "string"
[tools.arguments.count]
type = "integer"
[tools.arguments.note]
type = "string"
optional = true
[tools.http]
method = "post"
url = "UPSTREAM/echo"
json = { name = "{name}", count = "{count}", labels = ["{name}", "fixed"], note = "{note}", greeting = "hi {name}" }

[[tools]]
name = "everything"
[tools.arguments.a]
type = "string"
[tools.arguments.b]
type = "boolean"
[tools.http]
method = "PUT"
url = "UPSTREAM/echo"
body = "arguments"

[[tools]]
name = "login"
[tools.arguments.user]
type = "string"
[tools.http]
method = "POST"
url = "UPSTREAM/echo"
form = { user = "{user}", grant = "password" }
"#,
    );
    let mut server = workspace.serve_legacy();
    let hostile = "\"},\"admin\":true,\"x\":{\"";
    server.call("create", json!({"name": hostile, "count": 3}));
    let request = upstream.last();
    assert_eq!(request.request_line, "POST /echo HTTP/1.1");
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&request.body).expect("JSON body");
    assert_eq!(
        body,
        json!({"name": hostile, "count": 3, "labels": [hostile, "fixed"], "greeting": format!("hi {hostile}")})
    );

    server.call("everything", json!({"a": "x", "b": true}));
    let request = upstream.last();
    assert_eq!(request.request_line, "PUT /echo HTTP/1.1");
    assert_eq!(
        serde_json::from_slice::<Value>(&request.body).ok(),
        Some(json!({"a": "x", "b": true}))
    );

    server.call("login", json!({"user": "a&b=c"}));
    let request = upstream.last();
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        String::from_utf8_lossy(&request.body),
        "user=a%26b%3Dc&grant=password"
    );
}

#[test]
fn responses_map_by_content_type() {
    let upstream = api();
    let workspace = manifest(
        &upstream,
        r#"
[[tools]]
name = "json"
[tools.http]
url = "UPSTREAM/json"

[[tools]]
name = "items"
output-schema = { type = "array", items = { type = "integer" } }
[tools.http]
url = "UPSTREAM/json"
response-pointer = "/data/items"

[[tools]]
name = "strict"
[tools.output.count]
type = "integer"
[tools.http]
url = "UPSTREAM/json"

[[tools]]
name = "text"
[tools.http]
url = "UPSTREAM/text"

[[tools]]
name = "image"
[tools.http]
url = "UPSTREAM/image"

[[tools]]
name = "pdf"
[tools.http]
url = "UPSTREAM/pdf"
"#,
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("json", json!({}));
    assert_eq!(
        result["structuredContent"],
        json!({"data": {"items": [1, 2]}, "ok": true})
    );
    assert_eq!(text(&result), r#"{"data":{"items":[1,2]},"ok":true}"#);
    let result = server.call("items", json!({}));
    assert_eq!(
        result["structuredContent"],
        json!({"result": [1, 2]}),
        "wrapped for a 2025 client"
    );
    let result = server.call("strict", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "the tool's output does not match its output schema:\ncount: required, but missing"
    );
    let result = server.call("text", json!({}));
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "plain words\n"}])
    );
    let result = server.call("image", json!({}));
    assert_eq!(result["content"][0]["type"], json!("image"));
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(result["content"][0]["data"].as_str().unwrap_or_default())
            .ok(),
        Some(b"\x89PNG\r\n\x1a\nfake".to_vec())
    );
    let result = server.call("pdf", json!({}));
    assert_eq!(
        result["content"][0]["resource"]["mimeType"],
        json!("application/pdf")
    );
    assert!(result["content"][0]["resource"]["blob"].is_string());
}

#[test]
fn failures_are_tool_errors_with_one_line_reasons() {
    let upstream = api();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let workspace = manifest(
        &upstream,
        &format!(
            r#"
[[tools]]
name = "missing"
[tools.http]
url = "UPSTREAM/status/404"

[[tools]]
name = "tolerant"
[tools.http]
url = "UPSTREAM/status/404"
success-statuses = [200, 404]

[[tools]]
name = "slow"
[tools.http]
url = "UPSTREAM/slow"
timeout = "300ms"

[[tools]]
name = "big"
[tools.http]
url = "UPSTREAM/big"
max-response = "1KiB"

[[tools]]
name = "nobody"
[tools.http]
url = "http://127.0.0.1:{closed}/"

[[tools]]
name = "away"
[tools.http]
url = "UPSTREAM/redirect-away"

[[tools]]
name = "here"
[tools.http]
url = "UPSTREAM/redirect-here"
"#
        ),
    );
    let mut server = workspace.serve_legacy();
    let base = upstream.base();
    let result = server.call("missing", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        format!("HTTP 404 Not Found from GET {base}/status/404\n\nno such thing here")
    );
    assert_eq!(
        text(&server.call("tolerant", json!({}))),
        "no such thing here"
    );
    let started = Instant::now();
    let result = server.call("slow", json!({}));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        text(&result),
        format!("the request to {base}/slow timed out after 0.3s")
    );
    let result = server.call("big", json!({}));
    assert_eq!(
        text(&result),
        format!("the response from {base}/big is larger than 1024 bytes, the tool's limit")
    );
    let result = server.call("nobody", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result).starts_with(&format!("could not reach http://127.0.0.1:{closed}/: ")),
        "{result}"
    );
    let result = server.call("away", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result).contains("a redirect to another host (`localhost`) was refused"),
        "{result}"
    );
    assert_eq!(text(&server.call("here", json!({}))), "plain words\n");
}

#[test]
fn secrets_are_resolved_at_start_and_never_shown() {
    let upstream = api();
    let token = "sk-test-9f8e7d6c";
    let workspace = manifest(
        &upstream,
        r#"
[[tools]]
name = "echo"
[tools.http]
url = "UPSTREAM/echo?key=${env:SECRET_API_TOKEN}"
headers = { Authorization = "Bearer ${env:SECRET_API_TOKEN}" }

[[tools]]
name = "fail"
[tools.http]
url = "UPSTREAM/echo-error"
headers = { Authorization = "Bearer ${env:SECRET_API_TOKEN}" }
"#,
    );
    let output = std::process::Command::new(crate::harness::BINARY)
        .args(["--config", "tools.toml"])
        .current_dir(workspace.dir.path())
        .env_remove("SECRET_API_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: `url`: the environment variable `SECRET_API_TOKEN` is not set\n --> tools.toml:5:7\n"), "{stderr}");

    let mut server = Server::start_with(
        &workspace.manifest(),
        &["-vv"],
        &[("SECRET_API_TOKEN", token)],
    );
    server.handshake("2025-11-25");
    let listed = server.request("tools/list", json!({}));
    assert!(!listed.to_string().contains(token));
    let result = server.call("echo", json!({}));
    let request = upstream.last();
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {token}").as_str())
    );
    assert!(
        request.request_line.contains(token),
        "the secret reached the upstream"
    );
    assert!(!result.to_string().contains(token), "{result}");
    assert!(result.to_string().contains("Bearer [redacted]"), "{result}");
    let result = server.call("fail", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(!result.to_string().contains(token), "{result}");
    let log = server.stderr();
    assert!(!log.contains(token), "the secret was logged:\n{log}");
}

#[test]
fn cancelling_a_call_aborts_the_request() {
    let upstream = api();
    let workspace = manifest(
        &upstream,
        "[[tools]]\nname = \"slow\"\n[tools.http]\nurl = \"UPSTREAM/slow\"\n",
    );
    let mut server = workspace.serve_legacy();
    let id = server.start_request("tools/call", json!({"name": "slow", "arguments": {}}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while upstream.recorded().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.notify("notifications/cancelled", Some(json!({"requestId": id})));
    let deadline = Instant::now() + Duration::from_secs(3);
    while !upstream.aborted.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        upstream.aborted.load(Ordering::SeqCst),
        "the upstream never saw the request go away"
    );
    server.expect_silence(Duration::from_millis(200));
}

#[test]
fn connections_are_reused_across_calls() {
    let upstream = api();
    let workspace = manifest(
        &upstream,
        "[[tools]]\nname = \"text\"\n[tools.http]\nurl = \"UPSTREAM/text\"\n",
    );
    let mut server = workspace.serve_legacy();
    for _ in 0..10 {
        assert_eq!(text(&server.call("text", json!({}))), "plain words\n");
    }
    // Without a pool every call would connect anew; a pooled connection can still be
    // replaced now and then when a call races its return to the pool.
    let connections = upstream.connections.load(Ordering::SeqCst);
    assert!(connections <= 3, "{connections} connections for 10 calls");
}

#[test]
fn hosts_can_never_come_from_arguments() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"x\"\n[tools.arguments.host]\ntype = \"string\"\n[tools.http]\nurl = \"http://{host}/api\"\n",
    );
    let (code, _, stderr) = run(&["--config", "tools.toml"], workspace.dir.path());
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: the scheme, host and port of `url` must be written out\n --> tools.toml:6:7\n  |\n6 | url = \"http://{host}/api\"\n  |       ^^^^^^^^^^^^^^^^^^^\n  = hint: arguments can fill path segments and query parameters, never the host\n\nerror: could not load `tools.toml` due to 1 previous error\n"
    );
}

/// `url = "${env:API_BASE}/…"`: the base URL comes from the environment, as written, and
/// the path after it still takes arguments; a base that is not a plain URL is refused.
#[test]
fn a_base_url_can_come_from_the_environment() {
    let upstream = api();
    let workspace = Workspace::new(
        "[[tools]]\nname = \"get\"\n[tools.arguments.id]\ntype = \"string\"\n[tools.http]\nurl = \"${env:API_BASE_TEST}/echo/{id}\"\n\n[[tools]]\nname = \"post\"\n[tools.arguments.note]\ntype = \"string\"\n[tools.http]\nmethod = \"POST\"\nurl = \"${env:API_BASE_TEST}/echo\"\nbody = \"arguments\"\n",
    );
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("API_BASE_TEST", &format!("{}/", upstream.base()))],
    );
    server.handshake("2025-11-25");
    let result = server.call("get", json!({"id": "a/b c"}));
    assert_ne!(result["isError"], json!(true), "{result}");
    assert!(
        upstream
            .last()
            .request_line
            .starts_with("GET /echo/a%2Fb%20c HTTP/1.1"),
        "{}",
        upstream.last().request_line
    );
    // Its value is a secret like any reference's: an answer that quotes it shows it redacted.
    let link = format!("{}/items/7", upstream.base());
    let result = server.call("post", json!({"note": link}));
    assert!(
        !result
            .to_string()
            .contains(&format!("{}/", upstream.base()))
            && result.to_string().contains("[redacted]items/7"),
        "{result}"
    );
    for base in ["ftp://example.com", "http://x/?q=1", "http://h/{x}"] {
        let output = std::process::Command::new(crate::harness::BINARY)
            .args(["--config", "tools.toml"])
            .current_dir(workspace.dir.path())
            .env("API_BASE_TEST", base)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{base}: {stderr}");
        assert!(
            stderr.starts_with(
                "error: `url` starts with `${env:API_BASE_TEST}`, which must hold a base URL"
            ),
            "{base}: {stderr}"
        );
        assert!(!stderr.contains(base), "the value was shown: {stderr}");
    }
    // What follows the base must start a path or a query, never extend the host.
    let joined = Workspace::new(
        "[[tools]]\nname = \"x\"\n[tools.http]\nurl = \"${env:API_BASE_TEST}${env:API_BASE_TEST}/x\"\n",
    );
    let output = std::process::Command::new(crate::harness::BINARY)
        .args(["--config", "tools.toml"])
        .current_dir(joined.dir.path())
        .env("API_BASE_TEST", "http://example.com")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("which must hold a base URL"));
}
