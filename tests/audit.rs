//! `--audit` and `--log-format json`: a record per call with who, what, how it ended and
//! the argument *shapes*; values only with `--audit-values`, with the manifest's secrets
//! redacted; every log line one JSON object.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace};

const TOOLS: &str = r#"
[[tools]]
name = "search"
[tools.arguments.q]
[tools.arguments.limit]
type = "integer"
default = 5
[tools.static]
content = [{ type = "text", text = "found" }]

[[tools]]
name = "fails"
[tools.command]
argv = ["false"]
"#;

/// The audit records on stderr so far, waiting until there are `count`.
fn records(server: &Server, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.stderr();
        let lines: Vec<Value> = log
            .lines()
            .map(|line| {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|_| panic!("not a JSON line: {line}"))
            })
            .collect();
        let audit: Vec<Value> = lines
            .into_iter()
            .filter(|line| line["target"] == "mcp_serve::audit")
            .collect();
        if audit.len() >= count || Instant::now() > deadline {
            return audit;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn each_call_gets_a_json_audit_record_with_shapes_and_no_values() {
    let workspace = Workspace::new(TOOLS);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--audit", "--log-format", "json"],
        &[],
    );
    server.handshake("2025-11-25");
    server.call("search", json!({"q": "my private query"}));
    server.call("fails", json!({}));
    let records = records(&server, 2);
    assert_eq!(records.len(), 2, "{records:?}");
    let first = &records[0]["fields"];
    assert_eq!(first["message"], "audit");
    assert_eq!(first["tool"], "search");
    assert_eq!(first["caller"], "stdio");
    assert_eq!(first["outcome"], "ok");
    assert!(first["duration_ms"].as_u64().is_some());
    assert_eq!(first["arguments"], r#"{"q":"string"}"#);
    assert_eq!(first["values"], "");
    assert!(records[0]["timestamp"].as_str().is_some() && records[0]["level"] == "INFO");
    assert_eq!(records[1]["fields"]["outcome"], "error");
    assert!(!server.stderr().contains("my private query"));
}

#[test]
fn values_are_recorded_only_when_asked_and_secrets_never() {
    let tools = r#"
[[tools]]
name = "send"
[tools.arguments.note]
[tools.http]
url = "http://127.0.0.1:9/x"
headers = { Authorization = "Bearer ${env:AUDIT_TEST_SECRET}" }
timeout = "1s"
"#;
    let workspace = Workspace::new(tools);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--audit", "--audit-values", "--log-format", "json"],
        &[("AUDIT_TEST_SECRET", "sk-audit-secret-42")],
    );
    server.handshake("2025-11-25");
    // A client that knows the secret and sends it: the record still hides it.
    server.call("send", json!({"note": "hello sk-audit-secret-42"}));
    let records = records(&server, 1);
    let values = records[0]["fields"]["values"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(values.contains("hello"), "{values}");
    assert!(
        !server.stderr().contains("sk-audit-secret-42"),
        "{}",
        server.stderr()
    );
}
