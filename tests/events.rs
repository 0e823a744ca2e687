//! Progress and log messages from scripts, in both eras, over stdio and HTTP.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta, text};
use crate::http_harness::{HttpServer, sse_messages};

fn workspace() -> Workspace {
    Workspace::new(
        r#"
[[tools]]
name = "steps"
[tools.command]
script = '''
for step in 1 2 3; do
  printf '{"progress": %s, "total": 3, "message": "step %s"}\n' "$step" "$step" > "$MCP_SERVE_EVENTS"
  sleep 0.15
done
echo 'not json' > "$MCP_SERVE_EVENTS"
echo '{"progress": 2}' > "$MCP_SERVE_EVENTS"
echo '{"log": "debug", "message": "details"}' > "$MCP_SERVE_EVENTS"
echo '{"log": "warning", "message": "careful", "data": {"left": 1}}' > "$MCP_SERVE_EVENTS"
echo done
'''
events = true

[[tools]]
name = "quiet"
[tools.command]
script = 'sleep 1; echo finished'

[[tools]]
name = "chatty-stderr"
[tools.command]
script = 'echo "compiling" >&2; echo "linking" >&2; echo built'
stderr-log = "notice"
"#,
    )
}

/// Sends a call and collects every message up to its response.
fn call_collecting(server: &mut Server, params: Value) -> (Vec<Value>, Value) {
    let id = server.start_request("tools/call", params);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut notifications = Vec::new();
    while let Some(message) = server.next_message(deadline) {
        if message.get("id") == Some(&json!(id)) {
            return (notifications, message);
        }
        notifications.push(message);
    }
    panic!("no response");
}

fn of_method<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|message| message["method"] == json!(method))
        .collect()
}

#[test]
fn scripts_report_progress_and_logs_to_legacy_clients() {
    let workspace = workspace();
    let mut server = workspace.serve_legacy();
    let (messages, response) = call_collecting(
        &mut server,
        json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p1"}}),
    );
    assert_eq!(text(&response["result"]), "done");
    let progress: Vec<(f64, String)> = of_method(&messages, "notifications/progress")
        .iter()
        .map(|message| {
            assert_eq!(message["params"]["progressToken"], json!("p1"));
            assert_eq!(message["params"]["total"], json!(3.0));
            (
                message["params"]["progress"].as_f64().unwrap_or_default(),
                message["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        vec![
            (1.0, "step 1".into()),
            (2.0, "step 2".into()),
            (3.0, "step 3".into())
        ],
        "increasing only: the late `2` was dropped"
    );
    let logs = of_method(&messages, "notifications/message");
    assert_eq!(logs.len(), 1, "debug is below the default level: {logs:?}");
    assert_eq!(
        logs[0]["params"],
        json!({"level": "warning", "logger": "steps", "data": {"message": "careful", "data": {"left": 1}}})
    );

    // logging/setLevel lowers the threshold.
    let set = server.request("logging/setLevel", json!({"level": "debug"}));
    assert_eq!(set["result"], json!({}));
    let (messages, _) = call_collecting(&mut server, json!({"name": "steps", "arguments": {}}));
    assert!(
        of_method(&messages, "notifications/progress").is_empty(),
        "no token, no progress"
    );
    assert_eq!(of_method(&messages, "notifications/message").len(), 2);
    // Nothing follows the result.
    server.expect_silence(Duration::from_millis(300));
}

#[test]
fn modern_clients_get_logs_only_when_they_ask() {
    let workspace = workspace();
    let mut server = workspace.serve();
    let mut params = json!({"name": "steps", "arguments": {}});
    params["_meta"] = modern_meta();
    let (messages, _) = call_collecting(&mut server, params.clone());
    assert!(messages.is_empty(), "{messages:?}");
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    params["_meta"]["progressToken"] = json!(7);
    let (messages, response) = call_collecting(&mut server, params);
    assert_eq!(response["result"]["resultType"], json!("complete"));
    assert_eq!(of_method(&messages, "notifications/message").len(), 2);
    assert_eq!(of_method(&messages, "notifications/progress").len(), 3);
}

#[test]
fn quiet_calls_get_heartbeats() {
    let workspace = workspace();
    let mut server = Server::start_with(&workspace.manifest(), &["--heartbeat", "200ms"], &[]);
    server.handshake("2025-11-25");
    let (messages, response) = call_collecting(
        &mut server,
        json!({"name": "quiet", "arguments": {}, "_meta": {"progressToken": "hb"}}),
    );
    assert_eq!(text(&response["result"]), "finished");
    let beats: Vec<f64> = of_method(&messages, "notifications/progress")
        .iter()
        .map(|message| message["params"]["progress"].as_f64().unwrap_or_default())
        .collect();
    assert!(beats.len() >= 3, "{beats:?}");
    assert!(beats.windows(2).all(|pair| pair[1] > pair[0]), "{beats:?}");
    assert!(
        of_method(&messages, "notifications/progress")[0]["params"]["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("still running after")),
        "{messages:?}"
    );
}

#[test]
fn stderr_lines_can_become_log_messages() {
    let workspace = workspace();
    let mut server = workspace.serve_legacy();
    let (messages, response) = call_collecting(
        &mut server,
        json!({"name": "chatty-stderr", "arguments": {}}),
    );
    assert_eq!(text(&response["result"]), "built");
    let logs: Vec<&Value> = of_method(&messages, "notifications/message")
        .into_iter()
        .map(|message| &message["params"])
        .collect();
    assert_eq!(
        logs,
        vec![
            &json!({"level": "notice", "logger": "chatty-stderr", "data": "compiling"}),
            &json!({"level": "notice", "logger": "chatty-stderr", "data": "linking"})
        ]
    );
}

#[test]
fn events_arrive_on_the_requests_sse_stream_over_http() {
    let workspace = workspace();
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "h"}}}),
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "notifications turn JSON into SSE"
    );
    let messages = sse_messages(&response.text().expect("body"));
    let methods: Vec<&str> = messages
        .iter()
        .filter_map(|message| message["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "notifications/message"
        ]
    );
    assert_eq!(
        messages.last().map(|message| message["id"].clone()),
        Some(json!(3)),
        "the result comes last"
    );
}
