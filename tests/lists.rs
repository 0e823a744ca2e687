//! A full `tools/list` answer is kept in pieces and sent from them, never joined or made
//! again per request: over stdio as a line, over HTTP as a JSON body or an SSE event. What a
//! client reads is the message rmcp sends, byte for byte: the control is rmcp's own path (a
//! request in an HTTP session, and a traced stdio server, whose every request goes through
//! rmcp), for every protocol version. And what each request adds still passes the door.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta};
use crate::http_harness::HttpServer;

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Sends every stdio request through rmcp (nothing listens there; spans are dropped).
const TRACED: (&str, &str) = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");

/// Many tools (an answer of many pieces), one whose words JSON must escape, and two with
/// output schemas, which revisions list differently (none before 2025-06-18; an array's
/// wrapped in an object until 2026-07-28).
fn workspace() -> Workspace {
    let mut manifest = crate::harness::many_tools(1_500);
    manifest.push_str(
        r#"[[tools]]
name = "odd"
description = "naïve \"quoted\" </script> \\ back\tslash \u2028 line"
input-schema = '{"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}}'
[tools.static]
content = [{ type = "text", text = "odd" }]

[[tools]]
name = "weather"
output-schema = '{"type": "object", "properties": {"temperature": {"type": "number"}}}'
[tools.static]
structured-content = { temperature = 21.5 }

[[tools]]
name = "names"
output-schema = { type = "array", items = { type = "string" } }
[tools.static]
structured-content = ["a", "b"]
"#,
    );
    Workspace::new(&manifest)
}

/// The JSON-RPC message in a response body, as sent: the body, or the SSE event's `data:`
/// line that holds it.
fn raw_message(response: reqwest::blocking::Response) -> String {
    let body = response.text().expect("body");
    if serde_json::from_str::<Value>(&body).is_ok() {
        return body;
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim_start)
        .find(|data| {
            serde_json::from_str::<Value>(data).is_ok_and(|message| message.get("id").is_some())
        })
        .unwrap_or_else(|| panic!("no message in {} bytes", body.len()))
        .to_owned()
}

fn list_request(id: &Value, version: &str) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
    if version == "2026-07-28" {
        request["params"]["_meta"] = modern_meta();
    }
    request
}

/// `tools/list` over HTTP outside a session, as sent.
fn listed_over_http(server: &HttpServer, id: &Value, version: &str) -> String {
    let mut headers = vec![("MCP-Protocol-Version", version)];
    if version == "2026-07-28" {
        headers.push(("Mcp-Method", "tools/list"));
    }
    let response = server.post(&list_request(id, version), &headers);
    assert_eq!(response.status(), 200, "{version}");
    raw_message(response)
}

/// `tools/list` in a session of `version` (rmcp's path), as sent.
fn listed_in_session(server: &HttpServer, version: &str) -> String {
    let mut initialize = crate::harness::initialize_request();
    initialize["params"]["protocolVersion"] = json!(version);
    let response = server.post(&initialize, &[]);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("session id")
        .to_owned();
    crate::http_harness::message(response, 1);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", version),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(server.post(&initialized, &headers).status(), 202);
    let id = json!(2);
    let response = server.post(&list_request(&id, version), &headers);
    raw_message(response)
}

/// `tools/list` over stdio, as sent: after a handshake at `version`, or stateless in 2026.
fn listed_over_stdio(workspace: &Workspace, version: &str, env: &[(&str, &str)]) -> String {
    let mut server = Server::start_with(&workspace.manifest(), &[], env);
    if version != "2026-07-28" {
        server.handshake(version);
    }
    server.send(&list_request(&json!(2), version));
    server
        .next_line(Instant::now() + Duration::from_secs(30))
        .unwrap_or_else(|| panic!("{version}: no answer"))
}

#[test]
fn a_full_list_is_sent_from_its_pieces_as_rmcp_sends_it() {
    let workspace = workspace();
    let json_bodies = HttpServer::start(&workspace.manifest(), &[]);
    let events = HttpServer::start(&workspace.manifest(), &["--sse"]);
    let sessions = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let id = json!(2);
    for version in LEGACY {
        let control = listed_in_session(&sessions, version);
        let listed: Value = serde_json::from_str(&control).expect("JSON");
        assert_eq!(
            listed["result"]["tools"].as_array().map(Vec::len),
            Some(1_503),
            "{version}"
        );
        for (server, how) in [(&json_bodies, "JSON"), (&events, "SSE")] {
            let sent = listed_over_http(server, &id, version);
            assert!(
                sent == control,
                "{version} over HTTP ({how}) differs from rmcp's"
            );
        }
        let traced = listed_over_stdio(&workspace, version, &[TRACED]);
        assert!(
            traced == control,
            "{version}: rmcp's stdio line differs from its HTTP"
        );
        let sent = listed_over_stdio(&workspace, version, &[]);
        assert!(sent == control, "{version} over stdio differs from rmcp's");
    }
    // 2026-07-28 is stateless everywhere: rmcp's answer is the traced stdio server's.
    let control = listed_over_stdio(&workspace, "2026-07-28", &[TRACED]);
    let listed: Value = serde_json::from_str(&control).expect("JSON");
    assert_eq!(
        listed["result"]["resultType"],
        "complete",
        "{}",
        &control[..200]
    );
    assert_eq!(listed["result"]["tools"][1_500]["name"], "odd");
    for (server, how) in [(&json_bodies, "JSON"), (&events, "SSE")] {
        let sent = listed_over_http(server, &id, "2026-07-28");
        assert!(
            sent == control,
            "2026-07-28 over HTTP ({how}) differs from rmcp's"
        );
    }
    let sent = listed_over_stdio(&workspace, "2026-07-28", &[]);
    assert!(sent == control, "2026-07-28 over stdio differs from rmcp's");
}

/// Over HTTP too, a list kept in pieces leaves through the door with what the request adds:
/// an id that is a secret comes back redacted, in a JSON body and in an SSE event, with every
/// tool listed; the control, an id that is not, comes back as sent.
#[test]
fn a_list_over_http_is_read_by_the_door_with_what_the_request_adds() {
    const SECRET: &str = "lists-secret-8d2e61a3";
    let tools = crate::harness::many_tools(1_500);
    let workspace = Workspace::new(&crate::harness::holding_secret("${file:token.txt}", &tools));
    std::fs::write(workspace.path("token.txt"), format!("{SECRET}\n")).expect("token");
    for mode in [&[][..], &["--sse"][..]] {
        let server = HttpServer::start(&workspace.manifest(), mode);
        for (id, shown) in [(SECRET, "[redacted]"), ("list-1", "list-1")] {
            let sent = listed_over_http(&server, &json!(id), "2025-11-25");
            assert!(!sent.contains(SECRET), "{mode:?} {id}");
            let answer: Value = serde_json::from_str(&sent).expect("JSON");
            assert_eq!(answer["id"], shown, "{mode:?} {id}");
            let tools = answer["result"]["tools"].as_array().expect("tools");
            assert_eq!(tools.len(), 1_501, "{mode:?} {id}");
        }
    }
}
