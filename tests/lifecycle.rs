//! The legacy lifecycle over stdio and JSON-RPC error handling.

use std::time::Duration;

use serde_json::json;

use crate::harness::{Server, Workspace, initialize_params, repo_root, text};

fn example_path() -> std::path::PathBuf {
    repo_root().join("tools.example.toml")
}

#[test]
fn initialize_echoes_every_legacy_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = Server::start(&example_path());
        let response = server.request("initialize", initialize_params(version));
        assert_eq!(response["result"]["protocolVersion"], json!(version));
    }
}

#[test]
fn initialize_counter_offers_the_latest_legacy_version_for_unknown_ones() {
    for version in ["1900-01-01", "2026-07-28", "garbage"] {
        let mut server = Server::start(&example_path());
        let response = server.request("initialize", initialize_params(version));
        assert_eq!(
            response["result"]["protocolVersion"],
            json!("2025-11-25"),
            "{version}"
        );
    }
}

#[test]
fn initialize_describes_the_server_from_the_manifest() {
    let mut server = Server::start(&example_path());
    let response = server.request("initialize", initialize_params("2025-11-25"));
    assert_eq!(
        response["result"],
        json!({
            "protocolVersion": "2025-11-25",
            // The skills extension to every client; MCP Apps only to one that declares it
            // (this one does not: `apps::`).
            "capabilities": {
                "completions": {}, "logging": {}, "prompts": {}, "resources": {}, "tools": {},
                "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}
            },
            "serverInfo": {
                "name": "catalog",
                "title": "Product catalog",
                "version": "1.0.0",
                "description": "Search and inspect a small product catalog, and look around the machine"
            },
            "instructions": "Use `search` to find product names, then `product-details` for prices."
        })
    );
}

#[test]
fn ping_works_before_initialize_and_notifications_before_it_do_no_harm() {
    let mut server = Server::start(&example_path());
    server.notify("notifications/initialized", None);
    server.notify("notifications/cancelled", Some(json!({"requestId": 99})));
    let pong = server.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let response = server.request("initialize", initialize_params("2025-06-18"));
    assert_eq!(response["result"]["protocolVersion"], json!("2025-06-18"));
    server.notify("notifications/initialized", None);
    server.expect_silence(Duration::from_millis(200));
    assert_eq!(
        text(&server.call("search", json!({"query": "cup"}))),
        "Espresso cup"
    );
}

#[test]
fn invalid_json_gets_a_parse_error_and_the_session_continues() {
    let mut server = Server::initialized(&example_path(), "2025-11-25");
    server.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let error = server.next_message(deadline).expect("a reply");
    assert_eq!(error["id"], json!(null));
    assert_eq!(error["error"]["code"], json!(-32700));
    server.send_raw("[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]");
    let error = server.next_message(deadline).expect("a reply");
    assert_eq!(error["error"]["code"], json!(-32600));
    server.send_raw("{\"jsonrpc\":\"2.0\",\"id\":8}");
    let error = server.next_message(deadline).expect("a reply");
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(8), json!(-32600))
    );
    assert_eq!(
        text(&server.call("search", json!({"query": "rack"}))),
        "Mug rack"
    );
}

#[test]
fn malformed_tools_call_params_are_invalid_params() {
    let mut server = Server::initialized(&example_path(), "2025-11-25");
    for params in [
        json!({"name": "search", "arguments": "oops"}),
        json!({"arguments": {}}),
        json!({"name": 3}),
    ] {
        let response = server.request("tools/call", params.clone());
        assert_eq!(
            response["error"]["code"],
            json!(-32602),
            "{params}: {response}"
        );
    }
    // Absent arguments are an empty object.
    let response = server.request("tools/call", json!({"name": "disk-free"}));
    assert_eq!(response["result"]["isError"], json!(false), "{response}");
}

#[test]
fn unknown_tools_and_methods_are_protocol_errors() {
    let mut server = Server::initialized(&example_path(), "2025-11-25");
    let response = server.request(
        "tools/call",
        json!({"name": "serch", "arguments": {"query": "x"}}),
    );
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "unknown tool `serch`; did you mean `search`?"})
    );
    let response = server.request("tools/call", json!({"name": "weather"}));
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "unknown tool `weather`"})
    );
    let response = server.request("prompts/get", json!({"name": "compare-product"}));
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "unknown prompt `compare-product`; did you mean `compare-products`?"})
    );
    let response = server.request("resources/read", json!({"uri": "catalog://nope"}));
    assert_eq!(response["error"]["code"], json!(-32002), "{response}");
    let response = server.request("no/such/method", json!({}));
    assert_eq!(
        response["error"],
        json!({"code": -32601, "message": "Method not found: no/such/method"})
    );
    let response = server.request("tools/list", json!({"cursor": "abc"}));
    assert_eq!(response["error"]["code"], json!(-32602));
}

#[test]
fn piped_requests_are_all_answered_before_the_exit() {
    use std::io::Write as _;
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "greet"
[tools.command]
argv = ["echo", "hello"]
"#,
    );
    let mut child = std::process::Command::new(crate::harness::BINARY)
        .arg("--config")
        .arg(workspace.manifest())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}),
    ]
    .map(|message| format!("{message}\n"))
    .concat();
    // Written and closed at once, as `printf … | mcp-serve` does.
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write");
    drop(stdin);
    let output = child.wait_with_output().expect("exit");
    assert!(output.status.success(), "{:?}", output.status);
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    let ids: Vec<_> = answers.iter().map(|answer| answer["id"].clone()).collect();
    assert_eq!(ids.len(), 3, "{answers:?}");
    let call = answers
        .iter()
        .find(|answer| answer["id"] == json!(3))
        .expect("call answered");
    assert_eq!(text(&call["result"]), "hello");
}

/// A client that closes stdin right after asking, and reads stdout only later, still gets
/// every answer whole: here a `tools/list` far bigger than the pipe holds, through our own
/// writer (a manifest of 1,500 tools), and through rmcp's (traces on send every request
/// there), in both eras.
#[test]
fn an_answer_being_written_when_stdin_closes_is_written_whole() {
    use std::io::{Read as _, Write as _};
    let manifest = crate::harness::many_tools(1_500);
    let workspace = Workspace::new(&manifest);
    for (traces, version) in [
        (false, "2025-11-25"),
        (true, "2025-11-25"),
        (false, "2024-11-05"),
    ] {
        let mut command = std::process::Command::new(crate::harness::BINARY);
        command
            .arg("--config")
            .arg(workspace.manifest())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if traces {
            // Nothing listens there: spans are dropped, requests still go through rmcp.
            command.env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
        }
        let mut child = command.spawn().expect("spawn");
        let input = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(version)}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ]
        .map(|message| format!("{message}\n"))
        .concat();
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input.as_bytes()).expect("write");
        drop(stdin);
        // Longer than the grace calls get after stdin closes.
        std::thread::sleep(Duration::from_secs(1));
        let mut out = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        assert!(child.wait().expect("exit").success());
        assert!(
            out.ends_with('\n'),
            "traces {traces}: cut at {} bytes",
            out.len()
        );
        let list: serde_json::Value = serde_json::from_str(out.lines().last().expect("a line"))
            .unwrap_or_else(|error| panic!("traces {traces}: {error}"));
        assert_eq!(list["id"], 2);
        assert_eq!(
            list["result"]["tools"].as_array().map(Vec::len),
            Some(1_500)
        );
    }
}

#[test]
fn closing_stdin_exits_promptly() {
    let server = Server::initialized(&example_path(), "2025-11-25");
    let (status, took) = server.close();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn structured_output_is_shaped_per_era() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "names"
output-schema = { type = "array", items = { type = "string" } }
[tools.command]
argv = ["printf", '["a","b"]']

[[tools]]
name = "point"
[tools.output.x]
type = "integer"
[tools.command]
argv = ["printf", '{{"x":1}}']
"#,
    );
    // 2025-11-25: the array schema and value are wrapped as {"result": …}, and agree.
    let mut server = Server::initialized(&workspace.manifest(), "2025-11-25");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][0]["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "string"}}}, "required": ["result"]})
    );
    let result = server.call("names", json!({}));
    assert_eq!(result["structuredContent"], json!({"result": ["a", "b"]}));
    assert_eq!(text(&result), "[\"a\",\"b\"]");
    assert_eq!(
        server.call("point", json!({}))["structuredContent"],
        json!({"x": 1})
    );

    // 2025-03-26 predates structured output: text only, no output schemas.
    let mut server = Server::initialized(&workspace.manifest(), "2025-03-26");
    let listed = server.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"][0].get("outputSchema").is_none(),
        "{listed}"
    );
    let result = server.call("names", json!({}));
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "[\"a\",\"b\"]"}], "isError": false})
    );
}

#[test]
fn structured_output_that_breaks_the_schema_is_a_tool_error() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "price"
[tools.output.price]
type = "number"
[tools.command]
argv = ["printf", '{{"price":"cheap"}}']

[[tools]]
name = "not-json"
output-schema = { type = "string" }
[tools.command]
argv = ["printf", 'hello']
"#,
    );
    let mut server = Server::initialized(&workspace.manifest(), "2025-11-25");
    let result = server.call("price", json!({}));
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "the tool's output does not match its output schema:\nprice: \"cheap\" is not of type \"number\""}],
            "isError": true
        })
    );
    let result = server.call("not-json", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result).starts_with("the tool's output is not valid JSON:"),
        "{result}"
    );
}
