//! One HTTP endpoint per toolset (`/mcp/{set}`): a client there sees and calls only that
//! set, in both eras and in discovery mode, while the set's tools keep one rate count, the
//! server one session cap, and a `--toolsets` choice cannot be widened by a path.

use std::time::{Duration, Instant};

use reqwest::blocking::Response;
use serde_json::{Value, json};

use crate::harness::{Workspace, initialize_request, modern_meta, text};
use crate::http_harness::{HttpServer, message, post_to};

const SETS: &str = r#"
[[toolsets]]
name = "issues"
tools = ["*_issue*"]

[[toolsets]]
name = "pulls"
tools = ["list_pulls"]

[[tools]]
name = "list_issues"
rate = "2/m"
[tools.static]
content = [{ type = "text", text = "issues" }]

[[tools]]
name = "get_issue"
[tools.static]
content = [{ type = "text", text = "one issue" }]

[[tools]]
name = "list_pulls"
[tools.static]
content = [{ type = "text", text = "pulls" }]

[[tools]]
name = "whoami"
[tools.static]
content = [{ type = "text", text = "me" }]
"#;

fn post(server: &HttpServer, path: &str, body: &Value, headers: &[(&str, &str)]) -> Response {
    post_to(
        &server.client,
        &format!("{}{path}", server.url),
        body,
        headers,
    )
}

/// A 2025-11-25 request to the endpoint at `path` below the server's.
fn legacy(server: &HttpServer, path: &str, method: &str, params: Value) -> Value {
    let response = post(
        server,
        path,
        &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    assert_eq!(response.status(), 200, "{path} {method}");
    message(response, 1)
}

/// A 2026-07-28 request to the endpoint at `path` below the server's.
fn modern(server: &HttpServer, path: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let response = post(
        server,
        path,
        &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", &name),
        ],
    );
    assert_eq!(response.status(), 200, "{path} {method}");
    message(response, 1)
}

fn names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

fn unknown(answer: &Value, tool: &str) -> bool {
    answer["error"]["message"]
        .as_str()
        .is_some_and(|message| message.starts_with(&format!("unknown tool `{tool}`")))
}

#[test]
fn each_toolset_is_served_alone_at_its_own_endpoint_in_both_eras() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    // The server's own endpoint serves every tool: the control.
    assert_eq!(
        names(&legacy(&server, "", "tools/list", json!({}))),
        ["list_issues", "get_issue", "list_pulls", "whoami"]
    );
    for list in [
        legacy(&server, "/issues", "tools/list", json!({})),
        modern(&server, "/issues", "tools/list", json!({})),
    ] {
        assert_eq!(names(&list), ["list_issues", "get_issue"], "{list}");
    }
    assert_eq!(
        names(&modern(&server, "/pulls", "tools/list", json!({}))),
        ["list_pulls"]
    );
    let call = json!({"name": "list_pulls", "arguments": {}});
    assert_eq!(
        text(&modern(&server, "/pulls", "tools/call", call.clone())["result"]),
        "pulls"
    );
    // Another set's tool, and a tool in no set, are unknown there in both eras.
    for tool in ["get_issue", "whoami"] {
        let call = json!({"name": tool, "arguments": {}});
        let answer = legacy(&server, "/pulls", "tools/call", call.clone());
        assert!(unknown(&answer, tool), "{answer}");
        let answer = modern(&server, "/pulls", "tools/call", call);
        assert!(unknown(&answer, tool), "{answer}");
    }
    assert_eq!(
        text(
            &legacy(
                &server,
                "",
                "tools/call",
                json!({"name": "whoami", "arguments": {}})
            )["result"]
        ),
        "me"
    );
    // No endpoint for a set the manifest lacks, nor below a set's.
    for path in ["/nope", "/pulls/issues", "/all"] {
        let response = post(&server, path, &initialize_request(), &[]);
        assert_eq!(response.status(), 404, "{path}");
    }
}

#[test]
fn a_tools_rate_counts_calls_through_every_endpoint_once() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let call = json!({"name": "list_issues", "arguments": {}});
    for path in ["/issues", ""] {
        let answer = legacy(&server, path, "tools/call", call.clone());
        assert_eq!(text(&answer["result"]), "issues", "{answer}");
    }
    // The third call in the minute, through either endpoint, is over the rate.
    for path in ["/issues", ""] {
        let answer = legacy(&server, path, "tools/call", call.clone());
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
        assert!(
            text(&answer["result"]).starts_with("rate limit"),
            "{answer}"
        );
    }
}

#[test]
fn a_chosen_toolset_is_not_widened_by_a_path() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &["--toolsets", "pulls"]);
    assert_eq!(
        names(&legacy(&server, "/pulls", "tools/list", json!({}))),
        ["list_pulls"]
    );
    let response = post(&server, "/issues", &initialize_request(), &[]);
    assert_eq!(response.status(), 404, "a set not chosen has no endpoint");
}

#[test]
fn discovery_at_a_toolsets_endpoint_finds_only_that_set() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &["--discovery"]);
    let find = json!({"name": "find_tools", "arguments": {"query": "issue", "limit": 20}});
    let found = |answer: &Value| -> Vec<String> {
        answer["result"]["structuredContent"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect()
    };
    // The control: the server's endpoint finds the issue tools.
    let everywhere = found(&modern(&server, "", "tools/call", find.clone()));
    assert!(
        everywhere.contains(&"get_issue".to_owned()),
        "{everywhere:?}"
    );
    let answer = modern(&server, "/pulls", "tools/call", find);
    let at_pulls = found(&answer);
    assert!(
        !at_pulls.iter().any(|name| name.contains("issue")),
        "{answer}"
    );
    let through = json!({"name": "call_tool", "arguments": {"name": "get_issue", "arguments": {}}});
    let answer = modern(&server, "/pulls", "tools/call", through);
    assert!(unknown(&answer, "get_issue"), "{answer}");
}

#[test]
fn endpoints_share_one_session_cap() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--sessions", "--max-sessions", "1"],
    );
    let response = post(&server, "/pulls", &initialize_request(), &[]);
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("session id")
        .to_owned();
    message(response, 1);
    for path in ["", "/issues", "/pulls"] {
        let response = post(&server, path, &initialize_request(), &[]);
        assert_eq!(response.status(), 503, "{path}: past the cap");
    }
    // The session sees its endpoint's set.
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&server, "/pulls", &initialized, &headers).status(),
        202
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let listed = message(post(&server, "/pulls", &list, &headers), 2);
    assert_eq!(names(&listed), ["list_pulls"]);
}

#[test]
fn a_reload_keeps_each_endpoint_on_its_set() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &["--watch"]);
    assert_eq!(
        names(&legacy(&server, "/pulls", "tools/list", json!({}))),
        ["list_pulls"]
    );
    let edited = SETS.replace("tools = [\"list_pulls\"]", "tools = [\"*_pull*\"]")
        + "\n[[tools]]\nname = \"review_pull\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"reviewed\" }]\n";
    std::fs::write(workspace.manifest(), edited).expect("rewrite");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut listed = Vec::new();
    while Instant::now() < deadline {
        listed = names(&legacy(&server, "/pulls", "tools/list", json!({})));
        if listed.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(listed, ["list_pulls", "review_pull"], "{}", server.log());
    assert_eq!(
        names(&legacy(&server, "/issues", "tools/list", json!({}))),
        ["list_issues", "get_issue"]
    );
    // A reload without the set leaves its endpoint with no tool, saying so: not its
    // previous tools, which the reload may have removed or given other policies.
    std::fs::write(
        workspace.manifest(),
        SETS.replace("name = \"pulls\"", "name = \"prs\""),
    )
    .expect("rewrite");
    let said = "does not serve this toolset";
    let deadline = Instant::now() + Duration::from_secs(15);
    while !server.log().contains(said) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(server.log().contains(said), "{}", server.log());
    assert!(names(&legacy(&server, "/pulls", "tools/list", json!({}))).is_empty());
    let call = json!({"name": "list_pulls", "arguments": {}});
    let answer = legacy(&server, "/pulls", "tools/call", call.clone());
    assert!(unknown(&answer, "list_pulls"), "{answer}");
    // The control: the server's endpoint still serves it, and a reload that brings the set
    // back brings its endpoint back, with the tools' new policies: one call an hour now.
    assert_eq!(
        text(&legacy(&server, "", "tools/call", call)["result"]),
        "pulls"
    );
    std::fs::write(
        workspace.manifest(),
        SETS.replace("rate = \"2/m\"", "rate = \"1/h\""),
    )
    .expect("rewrite");
    let deadline = Instant::now() + Duration::from_secs(15);
    while names(&legacy(&server, "/pulls", "tools/list", json!({}))).is_empty()
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        names(&legacy(&server, "/pulls", "tools/list", json!({}))),
        ["list_pulls"]
    );
    let issues = json!({"name": "list_issues", "arguments": {}});
    let first = legacy(&server, "/issues", "tools/call", issues.clone());
    assert_eq!(text(&first["result"]), "issues", "{first}");
    let second = legacy(&server, "/issues", "tools/call", issues);
    assert!(
        text(&second["result"]).starts_with("rate limit"),
        "{second}"
    );
}
