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
pub(crate) fn records(server: &Server, count: usize) -> Vec<Value> {
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

/// Requests refused before the pipeline (no token, a bad token, over the request rate, a
/// foreign `Origin`) get a record too, with their status, what their headers say they
/// asked for, and who asked; without `--audit` they get none.
#[test]
fn requests_refused_at_the_http_layer_get_a_record() {
    use crate::http_harness::HttpServer;
    let workspace = Workspace::new(TOOLS);
    let token = "tok-audit-4d1e-secret";
    let refuse = |extra: &[&str]| {
        let mut args = vec![
            "--auth-token-env",
            "AUDIT_TOKEN",
            "--log-format",
            "json",
            "--request-rate",
            "1/min",
            "--request-burst",
            "2",
        ];
        args.extend_from_slice(extra);
        let server =
            HttpServer::start_with_env(&workspace.manifest(), &args, &[("AUDIT_TOKEN", token)]);
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search", "arguments": {"q": "x"}}});
        let bearer = format!("Bearer {token}");
        let named = [("Mcp-Method", "tools/call"), ("Mcp-Name", "search")];
        let with = |extra: &[(&'static str, &'static str)]| {
            named.iter().chain(extra).copied().collect::<Vec<_>>()
        };
        let authorized = [
            ("Authorization", bearer.as_str()),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "search"),
        ];
        let foreign = [authorized.as_slice(), &[("Origin", "https://evil.example")]].concat();
        // No token, a wrong one, then (authenticated, counted against the burst of 2) a
        // foreign Origin, an answered call, and one over the rate.
        let statuses: Vec<u16> = [
            with(&[]),
            with(&[("Authorization", "Bearer wrong")]),
            foreign,
            authorized.to_vec(),
            authorized.to_vec(),
        ]
        .iter()
        .map(|headers| server.post(&call, headers).status().as_u16())
        .collect();
        std::thread::sleep(Duration::from_millis(300));
        (statuses, server.log())
    };
    let refused_records = |log: &str| -> Vec<Value> {
        log.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| {
                line["target"] == "mcp_serve::audit" && line["fields"]["outcome"] == "refused_http"
            })
            .map(|line| line["fields"].clone())
            .collect()
    };
    let (statuses, log) = refuse(&["--audit"]);
    assert_eq!(statuses, [401, 401, 403, 200, 429]);
    let records = refused_records(&log);
    let refusals = statuses.iter().filter(|status| **status >= 400).count();
    assert_eq!(records.len(), refusals, "{records:?}\n{log}");
    for (record, status) in records
        .iter()
        .zip(statuses.iter().filter(|status| **status >= 400))
    {
        assert_eq!(record["http_status"], json!(status), "{record}");
        assert_eq!(record["tool"], "search", "{record}");
        assert_eq!(record["method"], "tools/call", "{record}");
    }
    // A static token names no subject: the caller is the client's address, as for a rate.
    for record in &records {
        assert_eq!(record["caller"], "ip:127.0.0.1", "{record}");
    }
    assert!(!log.contains(token), "the token is in the log");
    // The control: the same refusals without `--audit` leave no record.
    let (statuses, log) = refuse(&[]);
    assert_eq!(*statuses.last().expect("a status"), 429, "{statuses:?}");
    assert!(refused_records(&log).is_empty(), "{log}");
}
