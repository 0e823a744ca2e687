//! Streamable HTTP against the real binary on 127.0.0.1: both eras, answers as JSON and
//! SSE, the security defaults, cancellation and graceful shutdown.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{
    Workspace, initialize_params, read_pid, repo_root, run, slow_tools, text, wait_gone,
};
use crate::http_harness::{HttpServer, call_in_background, message};

fn example(extra: &[&str]) -> HttpServer {
    HttpServer::start(&repo_root().join("tools.example.toml"), extra)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")})
}

#[test]
fn the_legacy_era_works_statelessly_over_sse() {
    let server = example(&["--sse"]);
    let response = server.post(&initialize(), &[]);
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    assert!(
        response.headers().get("mcp-session-id").is_none(),
        "stateless mode issues no session"
    );
    let reply = message(response, 1);
    assert_eq!(reply["result"]["protocolVersion"], json!("2025-11-25"));
    assert_eq!(reply["result"]["serverInfo"]["name"], json!("catalog"));

    let notified = server.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &[],
    );
    assert_eq!(notified.status(), 202);
    assert_eq!(notified.text().expect("body"), "");

    let result = server.legacy(
        2,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "mug"}}),
    );
    assert_eq!(
        result["result"],
        json!({"content": [{"type": "text", "text": "Travel mug\nMug rack"}], "isError": false})
    );
    let result = server.legacy(
        3,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "mug", "limit": 999}}),
    );
    assert_eq!(result["result"]["isError"], json!(true));
    assert_eq!(
        text(&result["result"]),
        "invalid arguments for tool `search`:\nlimit: 999 is greater than the maximum of 50"
    );
    let result = server.legacy(4, "tools/call", json!({"name": "serch"}));
    assert_eq!(result["error"]["code"], json!(-32602));
    let listed = server.legacy(5, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(8));
    assert!(listed["result"].get("resultType").is_none());
}

#[test]
fn answers_are_plain_json_by_default() {
    let server = example(&[]);
    let response = server.post(&initialize(), &[]);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        message(response, 1)["result"]["protocolVersion"],
        json!("2025-11-25")
    );
    let result = server.legacy(
        2,
        "tools/call",
        json!({"name": "product-details", "arguments": {"name": "Mug rack"}}),
    );
    assert_eq!(
        result["result"]["structuredContent"],
        json!({"name": "Mug rack", "price": 36})
    );
}

#[test]
fn the_2026_era_is_served_with_header_checks() {
    let server = example(&[]);
    let (status, reply) = server.modern(
        1,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "cup"}}),
    );
    assert_eq!(status, 200);
    assert_eq!(reply["result"]["resultType"], json!("complete"));
    assert_eq!(text(&reply["result"]), "Espresso cup");
    let (status, reply) = server.modern(2, "tools/list", json!({}));
    assert_eq!(status, 200);
    // The example has an MCP App: its list depends on what each request declares.
    assert_eq!(reply["result"]["cacheScope"], json!("private"));

    // Mcp-Name must match the body.
    let mut params = json!({"name": "search", "arguments": {"query": "cup"}});
    params["_meta"] = crate::harness::modern_meta();
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
    let response = server.post(
        &body,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "clear-catalog"),
        ],
    );
    assert_eq!(response.status(), 400);
    assert_eq!(message(response, 3)["error"]["code"], json!(-32020));

    // Unknown methods are 404 on the modern path.
    let (status, reply) = server.modern(4, "no/such/method", json!({}));
    assert_eq!(
        (status, reply["error"]["code"].clone()),
        (404, json!(-32601))
    );

    // An unsupported version is 400 with -32022.
    let mut params = json!({});
    params["_meta"] = crate::harness::modern_meta();
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": params}),
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
    );
    assert_eq!(response.status(), 400);
}

#[test]
fn get_and_delete_are_not_allowed_without_sessions() {
    let server = example(&[]);
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = server
            .client
            .request(method.clone(), &server.url)
            .header("Accept", "text/event-stream")
            .send()
            .expect("request");
        assert_eq!(response.status(), 405, "{method}");
    }
}

#[test]
fn origin_and_host_are_checked() {
    let server = example(&[]);
    let response = server.post(&initialize(), &[("Origin", "http://evil.example")]);
    assert_eq!(response.status(), 403);
    let response = server.post(&initialize(), &[("Origin", "http://localhost:5173")]);
    assert_eq!(response.status(), 200);
    let response = server.post(&initialize(), &[("Host", "evil.example")]);
    assert_eq!(response.status(), 403);
}

#[test]
fn a_bearer_token_is_required_when_configured_and_never_leaks() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "env"
[tools.command]
argv = ["env"]
"#,
    );
    let token = "tok-7f3a9c-secret";
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &["--auth-token-env", "TEST_TOKEN", "-vv"],
        &[("TEST_TOKEN", token)],
    );
    let response = server.post(&initialize(), &[]);
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        r#"Bearer realm="mcp-serve""#
    );
    let response = server.post(&initialize(), &[("Authorization", "Bearer wrong")]);
    assert_eq!(response.status(), 401);
    let bearer = format!("Bearer {token}");
    let response = server.post(&initialize(), &[("Authorization", &bearer)]);
    assert_eq!(response.status(), 200);
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "env", "arguments": {}}}),
        &[("Authorization", &bearer), ("MCP-Protocol-Version", "2025-11-25")],
    );
    let result = message(response, 2);
    assert!(
        !text(&result["result"]).contains(token),
        "the token reached the command"
    );
    let health = server
        .client
        .get(format!("{}/healthz", server.base))
        .send()
        .expect("healthz");
    assert_eq!(health.status(), 200, "health checks need no token");
    assert!(!server.log().contains(token), "the token was logged");
}

#[test]
fn the_endpoint_is_exactly_its_path() {
    let server = example(&["--path", "/tools/rpc"]);
    assert!(server.url.ends_with("/tools/rpc"), "{}", server.url);
    let origin = server.url.trim_end_matches("/tools/rpc");
    let post = |url: String| {
        server
            .client
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(initialize().to_string())
            .send()
            .expect("POST")
            .status()
    };
    assert_eq!(post(server.url.clone()), 200);
    assert_eq!(
        post(format!("{origin}/mcp")),
        404,
        "the default path is not served"
    );
    assert_eq!(
        post(format!("{}/more", server.url)),
        404,
        "nor paths below the endpoint"
    );
    assert_eq!(post(format!("{origin}/tools")), 404);
}

#[test]
fn tokens_come_from_files_too_and_never_from_argv() {
    let workspace = Workspace::new("[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"true\"]\n");
    std::fs::write(workspace.path("token"), "from-a-file\n").expect("token file");
    let token_file = workspace.path("token");
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--auth-token-file", token_file.to_str().expect("path")],
    );
    let response = server.post(&initialize(), &[("Authorization", "Bearer from-a-file")]);
    assert_eq!(response.status(), 200);
    let (code, _, stderr) = run(
        &[
            "--http",
            "127.0.0.1:0",
            "--auth-token-env",
            "MCP_SERVE_TEST_UNSET",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: --auth-token-env names `MCP_SERVE_TEST_UNSET`, but that environment variable is not set\n"
    );
}

/// The server's own bearer token is a secret like the manifest's: a tool that reads its file
/// (an unconfined command can) shows `[redacted]`, and so does a reloaded manifest's. The
/// control: served without the token, the same tool shows the file's text.
#[test]
fn the_servers_own_token_is_redacted_from_every_result() {
    let token = "srv-token-83b1e0c2";
    let workspace = Workspace::new("");
    let token_file = workspace.path("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("token file");
    let manifest = |name: &str| {
        format!(
            "[[tools]]\nname = \"{name}\"\ninput-schema = '{{\"type\": \"object\"}}'\n[tools.command]\nargv = [\"cat\", \"{}\"]\n",
            token_file.display()
        )
    };
    std::fs::write(workspace.manifest(), manifest("read")).expect("manifest");
    let path = token_file.to_str().expect("path");
    let call = |server: &HttpServer, name: &str| {
        let reply = server.legacy(3, "tools/call", json!({"name": name, "arguments": {}}));
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--auth-token-file", path, "--watch"],
    );
    let bearer = format!("Bearer {token}");
    let authorized = |id: i64, name: &str| {
        let response = server.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}}),
            &[("Authorization", bearer.as_str()), ("MCP-Protocol-Version", "2025-11-25")],
        );
        message(response, id)["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(authorized(3, "read"), "[redacted]");
    std::fs::write(workspace.manifest(), manifest("again")).expect("reload");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.log().contains("reloaded the manifest") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(authorized(4, "again"), "[redacted]", "after a reload too");
    drop(server);
    let control = HttpServer::start(&workspace.manifest(), &[]);
    assert_eq!(call(&control, "again"), token);
}

#[test]
fn endpoint_paths_that_cannot_be_served_literally_are_refused() {
    let workspace = Workspace::new("[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"true\"]\n");
    for (path, problem) in [
        ("/a{", "may not contain `{`, `}`, `?`, `#` or spaces"),
        (
            "/items/{id}",
            "may not contain `{`, `}`, `?`, `#` or spaces",
        ),
        ("/mcp?x=1", "may not contain `{`, `}`, `?`, `#` or spaces"),
        (
            "/healthz",
            "is taken by the health checks; choose another, e.g. `/mcp`",
        ),
        ("mcp", "must start with `/` and name something, e.g. `/mcp`"),
        (
            "//",
            "must be `/` and names, none empty, `.`, `..` or `.well-known` first, e.g. `/mcp` or `/api/mcp`",
        ),
        (
            "/x/../",
            "must be `/` and names, none empty, `.`, `..` or `.well-known` first, e.g. `/mcp` or `/api/mcp`",
        ),
        (
            "/a//b",
            "must be `/` and names, none empty, `.`, `..` or `.well-known` first, e.g. `/mcp` or `/api/mcp`",
        ),
        (
            "/.well-known/oauth-protected-resource",
            "must be `/` and names, none empty, `.`, `..` or `.well-known` first, e.g. `/mcp` or `/api/mcp`",
        ),
    ] {
        let (code, stdout, stderr) = run(
            &["--http", "127.0.0.1:0", "--path", path],
            workspace.dir.path(),
        );
        assert_eq!((code, stdout.as_str()), (2, ""), "{path}: {stderr}");
        assert_eq!(
            stderr,
            format!("error: the endpoint path `{path}` {problem}\n"),
            "{path}"
        );
    }
}

#[test]
fn a_public_address_without_auth_is_refused() {
    let workspace = Workspace::new("[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"true\"]\n");
    let (code, stdout, stderr) = run(&["--http", "0.0.0.0:0"], workspace.dir.path());
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        "error: refusing to serve `0.0.0.0:0` without authentication: anyone who can reach it could run the tools\n\n\
         hint: require a token with `--auth-token-env NAME` or `--auth-token-file PATH`, or pass \
         `--allow-unauthenticated` if something in front of mcp-serve authenticates\n"
    );
}

#[test]
fn oversized_bodies_are_refused() {
    let server = example(&["--max-body", "1KiB"]);
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x".repeat(4096)}}});
    let response = server.post(&big, &[("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(response.status(), 413);
}

#[test]
fn closing_a_2026_response_stream_kills_the_command() {
    let workspace = slow_tools();
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let url = server.url.clone();
    let body = {
        let mut params = json!({"name": "slow", "arguments": {}});
        params["_meta"] = crate::harness::modern_meta();
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string()
    };
    let client = crate::http_harness::http_client(Duration::from_secs(3));
    let caller = std::thread::spawn(move || {
        // The response never completes; the client gives up after 3 s and closes the stream.
        let _ = client
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "slow")
            .body(body)
            .send()
            .and_then(reqwest::blocking::Response::text);
    });
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    caller.join().expect("caller");
    assert!(wait_gone(main), "the command survived the closed stream");
    assert!(
        wait_gone(child),
        "the command's child survived the closed stream"
    );
}

#[test]
fn sigterm_lets_in_flight_calls_finish_then_exits_cleanly() {
    let workspace = slow_tools();
    let mut server = HttpServer::start(&workspace.manifest(), &[]);
    let caller = call_in_background(
        &server.url,
        "brief",
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    read_pid(&workspace.path("brief.pid"));
    let ready = format!("{}/readyz", server.base);
    assert_eq!(
        server.client.get(&ready).send().expect("readyz").status(),
        200
    );
    server.signal_terminate();
    // While the call finishes, the server reports itself unready and turns new work away.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut status = 200;
    while status == 200 && Instant::now() < deadline {
        status = server
            .client
            .get(&ready)
            .send()
            .map_or(0, |response| response.status().as_u16());
    }
    assert_eq!(status, 503, "readiness while draining");
    let refused = server.post(&initialize(), &[]);
    assert_eq!(refused.status(), 503);
    let reply = caller.join().expect("caller").expect("a reply");
    assert_eq!(text(&reply["result"]), "finished");
    let exit = server.wait_exit();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn sigterm_stops_calls_that_outlast_the_grace_period() {
    let workspace = slow_tools();
    let mut server = HttpServer::start(&workspace.manifest(), &["--shutdown-grace", "300ms"]);
    call_in_background(
        &server.url,
        "slow",
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    let started = Instant::now();
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        wait_gone(main) && wait_gone(child),
        "a command outlived the server"
    );
}

#[test]
fn calls_beyond_the_limit_fail_fast() {
    let workspace = slow_tools();
    let server = HttpServer::start(&workspace.manifest(), &["--max-calls", "1"]);
    call_in_background(
        &server.url,
        "slow",
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    read_pid(&workspace.path("child.pid"));
    let reply = server.legacy(2, "tools/call", json!({"name": "brief", "arguments": {}}));
    assert_eq!(reply["result"]["isError"], json!(true));
    assert_eq!(
        text(&reply["result"]),
        "the server is busy: 1 tool calls are already running; try again shortly"
    );
}

#[test]
fn sessions_are_offered_capped_and_cancellable() {
    let workspace = slow_tools();
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--sessions", "--max-sessions", "1"],
    );
    let response = server.post(&initialize(), &[]);
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("session id")
        .to_owned();
    message(response, 1);
    let response = server.post(&initialize(), &[]);
    assert_eq!(response.status(), 503, "a second session exceeds the cap");
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let accepted = server.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &headers,
    );
    assert_eq!(accepted.status(), 202);

    // A call on the session, cancelled with notifications/cancelled on another POST.
    call_in_background(
        &server.url,
        "slow",
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
        ],
    );
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert_eq!(server.post(&cancel, &headers).status(), 202);
    assert!(
        wait_gone(main) && wait_gone(child),
        "cancellation did not kill the command"
    );
}

/// Closing a session (`DELETE`) ends its calls as hanging up does: the command and its child
/// are killed, not left to run for a client that can no longer hear the answer.
#[test]
fn deleting_a_session_cancels_its_calls() {
    let workspace = slow_tools();
    let server = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let session = crate::http_harness::open_session(&server);
    call_in_background(
        &server.url,
        "slow",
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
        ],
    );
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    // The control: the call runs while its session is open.
    std::thread::sleep(Duration::from_millis(800));
    assert!(crate::harness::alive(main), "the call ended by itself");
    let deleted = crate::http_harness::http_client(Duration::from_secs(10))
        .delete(&server.url)
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .send()
        .expect("DELETE");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    // rmcp alone cancels a closed session's handlers only after a 5-second drain: the call
    // must be gone well before that.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while (crate::harness::alive(main) || crate::harness::alive(child))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !crate::harness::alive(main) && !crate::harness::alive(child),
        "the session's call outlived the session"
    );
    assert!(
        server.log().contains("the session was closed"),
        "{}",
        server.log()
    );
}

/// Bodies rmcp cannot read, each with the JSON-RPC error stdio answers the same bytes with:
/// (what it is, the bytes, the code, the id).
fn unreadable_corpus() -> Vec<(&'static str, Vec<u8>, i64, Value)> {
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    vec![
        (
            "truncated",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#.to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "truncated in a string",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/li"#.to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "invalid UTF-8 outside strings",
            b"\xc3\x28".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "a UTF-16 byte order mark",
            b"\xfe\xff{}".to_vec(),
            -32700,
            Value::Null,
        ),
        ("empty", Vec::new(), -32700, Value::Null),
        ("only whitespace", b" \r\n\t".to_vec(), -32700, Value::Null),
        (
            "two messages back to back",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#
                .to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "deep nesting",
            deep(10_000).into_bytes(),
            -32700,
            Value::Null,
        ),
        (
            "deep nesting in params",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}}}}}"#,
                deep(200)
            )
            .into_bytes(),
            -32700,
            Value::Null,
        ),
        (
            "a batch of numbers",
            b"[1,2,3]".to_vec(),
            -32600,
            Value::Null,
        ),
        ("an empty batch", b"[]".to_vec(), -32600, Value::Null),
        (
            "a batch of requests",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            -32600,
            Value::Null,
        ),
        ("a number", b"42".to_vec(), -32600, Value::Null),
        ("a string", br#""tools/list""#.to_vec(), -32600, Value::Null),
        ("null", b"null".to_vec(), -32600, Value::Null),
        ("true", b"true".to_vec(), -32600, Value::Null),
        ("an empty object", b"{}".to_vec(), -32600, Value::Null),
        (
            "an id and nothing else",
            br#"{"jsonrpc":"2.0","id":6}"#.to_vec(),
            -32600,
            json!(6),
        ),
        (
            "an id that is an object",
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            "a method that is a number",
            br#"{"jsonrpc":"2.0","id":"m","method":7}"#.to_vec(),
            -32600,
            json!("m"),
        ),
    ]
}

#[test]
fn unreadable_bodies_get_a_json_rpc_error_in_both_eras() {
    let stateless = example(&[]);
    let sessions = example(&["--sessions"]);
    let eras: [(&str, &[(&str, &str)]); 3] = [
        ("2025 before initialize", &[]),
        ("2025", &[("MCP-Protocol-Version", "2025-11-25")]),
        (
            "2026",
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
        ),
    ];
    let corpus = unreadable_corpus();
    let mut tried = 0;
    let mut wrong = Vec::new();
    for (server_name, server) in [("stateless", &stateless), ("--sessions", &sessions)] {
        for (era, headers) in eras {
            for (what, bytes, code, id) in &corpus {
                tried += 1;
                let mut request = server
                    .client
                    .post(&server.url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .body(bytes.clone());
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                let response = request.send().expect("POST");
                let status = response.status().as_u16();
                let content_type = response
                    .headers()
                    .get("content-type")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let body = response.text().unwrap_or_default();
                let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let fits = status == 400
                    && content_type == "application/json"
                    && answer["jsonrpc"] == "2.0"
                    && answer["id"] == *id
                    && answer["error"]["code"] == *code
                    && answer["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty());
                if !fits {
                    wrong.push(format!(
                        "{server_name}, {era}, {what}: {status} {content_type} {}",
                        body.chars().take(160).collect::<String>()
                    ));
                }
            }
        }
    }
    eprintln!(
        "{} of {tried} unreadable bodies got 400 with the JSON-RPC error stdio gives ({} cases, 3 eras' headers, 2 servers)",
        tried - wrong.len(),
        corpus.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The same servers still read what is readable, and a body that is not JSON by its
    // Content-Type is still 415.
    let reply = stateless.legacy(1, "tools/list", json!({}));
    assert!(reply["result"]["tools"].is_array(), "{reply}");
    let (status, _) = stateless.modern(2, "tools/list", json!({}));
    assert_eq!(status, 200);
    let response = stateless
        .client
        .post(&stateless.url)
        .header("Content-Type", "text/plain")
        .header("Accept", "application/json, text/event-stream")
        .body("{}")
        .send()
        .expect("POST");
    assert_eq!(response.status(), 415);
}

#[test]
fn a_431_reaches_a_client_that_goes_on_writing_its_headers() {
    use std::io::{Read as _, Write as _};
    let server = example(&[]);
    let address = server.base.trim_start_matches("http://").to_owned();
    let tries = 20;
    let mut read = 0;
    let mut lost = Vec::new();
    for attempt in 0..tries {
        let outcome = (|| -> std::io::Result<String> {
            let mut stream = std::net::TcpStream::connect(&address)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            stream.set_write_timeout(Some(Duration::from_secs(10)))?;
            stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ")?;
            // Past the 64 KiB limit: the server answers 431 ...
            stream.write_all(&vec![b'a'; 70 * 1024])?;
            let mut first = [0u8; 1];
            stream.peek(&mut first)?;
            // ... while this client, like one that writes its whole request before it
            // reads, goes on writing the rest of its 200 KB header in chunks.
            for _ in 0..16 {
                stream.write_all(&[b'a'; 8 * 1024])?;
                std::thread::sleep(Duration::from_millis(2));
            }
            stream.write_all(b"\r\n\r\n")?;
            let mut status = [0u8; 12];
            stream.read_exact(&mut status)?;
            Ok(String::from_utf8_lossy(&status).into_owned())
        })();
        match outcome {
            Ok(status) if status == "HTTP/1.1 431" => read += 1,
            other => lost.push(format!("try {attempt}: {other:?}")),
        }
    }
    eprintln!("{read} of {tries} clients still writing read the 431");
    assert_eq!(read, tries, "{}", lost.join("\n"));
}
