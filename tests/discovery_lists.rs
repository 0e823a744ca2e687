//! Discovery's `add_tools`: a connection that lasts (stdio, a 2025 session) adds found tools
//! or whole toolsets to its own `tools/list` and hears `list_changed`; nothing else's list
//! changes; a connection whose requests are each their own is not offered it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, text};
use crate::http_harness::{HttpServer, message, open_session, post_to};

const MANIFEST: &str = r#"
[server]
discovery = true

[[toolsets]]
name = "reports"
tools = ["report-*"]

[[tools]]
name = "echo"
title = "Echo a message"
[tools.arguments.message]
type = "string"
[tools.command]
argv = ["echo", "{message}"]

[[tools]]
name = "report-north"
title = "North sales"
[tools.static]
content = [{ type = "text", text = "north" }]

[[tools]]
name = "report-south"
title = "South sales"
[tools.static]
content = [{ type = "text", text = "south" }]
"#;

fn names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

/// Calls `tool` and returns its result and whether a `list_changed` came before it.
fn call_watching(server: &mut Server, tool: &str, arguments: Value) -> (Value, bool) {
    let id = server.start_request("tools/call", json!({"name": tool, "arguments": arguments}));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut changed = false;
    loop {
        let message = server.next_message(deadline).expect("an answer");
        if message["method"] == "notifications/tools/list_changed" {
            changed = true;
        }
        if message["id"] == json!(id) {
            return (message["result"].clone(), changed);
        }
    }
}

#[test]
fn a_stdio_client_adds_found_tools_and_sets_to_its_own_list() {
    let workspace = Workspace::new(MANIFEST);
    let mut server = Server::start(&workspace.manifest());
    let response = server.request(
        "initialize",
        crate::harness::initialize_params("2025-11-25"),
    );
    assert_eq!(
        response["result"]["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{response}"
    );
    server.notify("notifications/initialized", None);
    assert_eq!(
        names(&server.request("tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools"]
    );
    let (added, changed) = call_watching(&mut server, "add_tools", json!({"tools": ["echo"]}));
    assert!(changed, "a list_changed before the answer: {added}");
    assert_eq!(
        added["structuredContent"]["added"],
        json!(["echo"]),
        "{added}"
    );
    assert_eq!(
        names(&server.request("tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools", "echo"]
    );
    // A listed tool carries its own schema, and is called as itself.
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][3]["inputSchema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(text(&server.call("echo", json!({"message": "hi"}))), "hi");

    // A set adds each of its tools once; adding again changes nothing and says so.
    let (added, changed) = call_watching(
        &mut server,
        "add_tools",
        json!({"toolsets": ["reports"], "tools": ["echo"]}),
    );
    assert!(changed, "{added}");
    assert_eq!(
        added["structuredContent"]["added"],
        json!(["report-north", "report-south"]),
        "{added}"
    );
    let (again, changed) =
        call_watching(&mut server, "add_tools", json!({"toolsets": ["reports"]}));
    assert!(!changed, "nothing new: no list_changed: {again}");
    assert_eq!(again["isError"], json!(false), "{again}");

    // A name that is no tool, a discovery tool, or a set the manifest lacks adds nothing.
    for arguments in [
        json!({"tools": ["echo", "no-such-tool"]}),
        json!({"tools": ["find_tools"]}),
        json!({"toolsets": ["nope"]}),
        json!({}),
        json!({"tools": "echo"}),
    ] {
        let (refused, changed) = call_watching(&mut server, "add_tools", arguments.clone());
        assert_eq!(refused["isError"], json!(true), "{arguments}: {refused}");
        assert!(!changed, "{arguments}");
    }
    assert_eq!(names(&server.request("tools/list", json!({}))).len(), 6);

    // A 2026 request on the same pipe is its own: no `add_tools`, and none of the added.
    let modern = server.request(
        "tools/list",
        json!({"_meta": crate::harness::modern_meta()}),
    );
    assert_eq!(names(&modern), ["find_tools", "call_tool"], "{modern}");
}

#[test]
fn add_tools_holds_at_most_its_bound() {
    let mut manifest = String::from("[server]\ndiscovery = true\n");
    for number in 0..130 {
        manifest.push_str(&format!(
            "\n[[tools]]\nname = \"t{number}\"\ntoolsets = [\"many\"]\n[tools.static]\ncontent = [{{ type = \"text\", text = \"x\" }}]\n"
        ));
    }
    let workspace = Workspace::new(&manifest);
    let mut server = Server::initialized(&workspace.manifest(), "2025-11-25");
    let (refused, changed) = call_watching(&mut server, "add_tools", json!({"toolsets": ["many"]}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(text(&refused).contains("at most 128"), "{refused}");
    assert!(!changed);
    // The control: 64 fit, and 64 more, but not the last two.
    let first: Vec<String> = (0..64).map(|number| format!("t{number}")).collect();
    let second: Vec<String> = (64..128).map(|number| format!("t{number}")).collect();
    for names in [first, second] {
        let (added, changed) = call_watching(&mut server, "add_tools", json!({"tools": names}));
        assert!(changed, "{added}");
    }
    let (refused, _) = call_watching(&mut server, "add_tools", json!({"tools": ["t128"]}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert_eq!(
        names(&server.request("tools/list", json!({}))).len(),
        3 + 128
    );
}

#[test]
fn each_http_session_has_its_own_list_and_stateless_requests_none() {
    let workspace = Workspace::new(MANIFEST);
    let server = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let first = open_session(&server);
    let second = open_session(&server);
    let on = |session: &str, id: i64, method: &str, params: Value| -> Value {
        let headers = [
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        message(post_to(&server.client, &server.url, &body, &headers), id)
    };
    let added = on(
        &first,
        2,
        "tools/call",
        json!({"name": "add_tools", "arguments": {"tools": ["report-north"]}}),
    );
    assert_eq!(added["result"]["isError"], json!(false), "{added}");
    assert_eq!(
        names(&on(&first, 3, "tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools", "report-north"]
    );
    // The other session's list is its own.
    assert_eq!(
        names(&on(&second, 4, "tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools"]
    );

    // Without sessions every request is its own: no `add_tools` to list or call.
    let stateless = HttpServer::start(&workspace.manifest(), &[]);
    let listed = stateless.legacy(5, "tools/list", json!({}));
    assert_eq!(names(&listed), ["find_tools", "call_tool"], "{listed}");
    let refused = stateless.legacy(
        6,
        "tools/call",
        json!({"name": "add_tools", "arguments": {"tools": ["echo"]}}),
    );
    assert_eq!(refused["result"]["isError"], json!(true), "{refused}");
    assert!(
        text(&refused["result"]).contains("needs a connection that lasts"),
        "{refused}"
    );
}

#[test]
fn add_tools_adds_only_what_the_callers_token_grants() {
    use crate::oauth::{AUDIENCE, Issuer, make_key, sign};
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", jsonwebtoken::Algorithm::ES256);
    let issuer = Issuer::start(vec![key.jwk.clone()]);
    let workspace = Workspace::new(&format!(
        r#"[server]
discovery = true

[server.auth]
issuer = "{}"
audience = "{AUDIENCE}"

[[tools]]
name = "weekly-report"
[tools.static]
content = [{{ type = "text", text = "open to all" }}]

[[tools]]
name = "payroll-report"
scopes = ["payroll:read"]
[tools.static]
content = [{{ type = "text", text = "salaries" }}]
"#,
        issuer.url()
    ));
    let server = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let session = |token: &str| -> String {
        let bearer = format!("Bearer {token}");
        let mut initialize = crate::harness::initialize_request();
        initialize["params"]["protocolVersion"] = json!("2025-11-25");
        let response = server.post(&initialize, &[("Authorization", &bearer)]);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .expect("session id")
            .to_owned();
        message(response, 1);
        id
    };
    let on = |token: &str, session: &str, method: &str, params: Value| -> Value {
        let bearer = format!("Bearer {token}");
        let headers = [
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", bearer.as_str()),
        ];
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params});
        message(post_to(&server.client, &server.url, &body, &headers), 2)
    };
    let add = json!({"name": "add_tools", "arguments": {"tools": ["payroll-report"]}});
    let without = sign(&key, issuer.claims("ada", ""));
    let ada = session(&without);
    let refused = on(&without, &ada, "tools/call", add.clone());
    assert_eq!(refused["result"]["isError"], json!(true), "{refused}");
    assert_eq!(
        names(&on(&without, &ada, "tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools"]
    );
    // The control: a token with the scope adds it.
    let with = sign(&key, issuer.claims("grace", "payroll:read"));
    let grace = session(&with);
    let added = on(&with, &grace, "tools/call", add);
    assert_eq!(added["result"]["isError"], json!(false), "{added}");
    assert_eq!(
        names(&on(&with, &grace, "tools/list", json!({}))),
        ["find_tools", "call_tool", "add_tools", "payroll-report"]
    );
}
