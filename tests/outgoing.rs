//! The last door: every message the server sends is read for the manifest's secrets as it
//! leaves, over stdio and HTTP (a JSON body and an event stream), whatever built it. A
//! prompt serves what its manifest declares and what its caller fills in, with no redaction
//! of its own: a file holding a secret's bytes, and a secret a client sends back as an
//! argument, leave as `[redacted]`. The control: the same prompt, when the manifest holds no
//! such secret, shows both as they are.

use serde_json::{Value, json};

use crate::harness::{Server, Workspace};
use crate::http_harness::HttpServer;

const SECRET: &str = "door-secret-c41f7b09";

fn manifest(header: &str) -> String {
    crate::harness::holding_secret(
        header,
        r#"
[[prompts]]
name = "leak"
[prompts.arguments.code]
description = "anything"

[[prompts.messages]]
role = "user"
text = "code: {code}"

[[prompts.messages]]
role = "assistant"
content = { type = "resource", uri = "guide://copy", mime-type = "text/plain", file = "copy.txt" }
"#,
    )
}

fn workspace(header: &str) -> Workspace {
    let workspace = Workspace::new(&manifest(header));
    std::fs::write(workspace.path("token.txt"), format!("{SECRET}\n")).expect("token");
    // The secret's bytes under a name no reference uses.
    std::fs::write(workspace.path("copy.txt"), format!("{SECRET}\n")).expect("copy");
    workspace
}

fn params() -> Value {
    json!({"name": "leak", "arguments": {"code": format!("x {SECRET} y")}})
}

#[test]
fn every_message_is_redacted_as_it_leaves_whatever_built_it() {
    let secret = workspace("${file:token.txt}");
    let mut stdio = Server::start(&secret.manifest());
    stdio.handshake("2025-11-25");
    let answer = stdio.request("prompts/get", params()).to_string();
    assert!(
        !answer.contains(SECRET) && answer.contains("[redacted]"),
        "stdio: {answer}"
    );

    for mode in [&[][..], &["--sse"][..]] {
        let server = HttpServer::start(&secret.manifest(), mode);
        let response = server.post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": params()}),
            &[("MCP-Protocol-Version", "2025-11-25")],
        );
        let body = response.text().expect("body");
        assert!(
            !body.contains(SECRET) && body.contains("[redacted]"),
            "HTTP {mode:?}: {body}"
        );
        // What a client decodes is still valid JSON-RPC.
        let decoded: Value = body
            .lines()
            .find_map(|line| serde_json::from_str(line.trim_start_matches("data:").trim()).ok())
            .unwrap_or_else(|| panic!("no JSON message in {body}"));
        assert_eq!(decoded["id"], 2, "{decoded}");
    }

    // The control: no secret in the manifest, and the same prompt shows both.
    let plain = workspace("plain");
    let mut stdio = Server::start(&plain.manifest());
    stdio.handshake("2025-11-25");
    let answer = stdio.request("prompts/get", params()).to_string();
    assert_eq!(answer.matches(SECRET).count(), 2, "{answer}");
}

/// The last door reads for secrets of 8 bytes or more only: a short one (here `2.0`, which
/// every JSON-RPC message says) would garble the protocol itself. Results still redact it.
#[test]
fn a_short_secret_never_garbles_the_protocol() {
    let workspace = Workspace::new(&crate::harness::holding_secret(
        "${env:SHORT}",
        r#"
[[tools]]
name = "say"
input-schema = '{"type": "object"}'
[tools.command]
argv = ["echo", "version 2.0"]
"#,
    ));
    let mut server = Server::start_with(&workspace.manifest(), &[], &[("SHORT", "2.0")]);
    server.handshake("2025-11-25");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(listed["jsonrpc"], "2.0", "{listed}");
    assert_eq!(listed["result"]["tools"][1]["name"], "say", "{listed}");
    let result = server.call("say", json!({}));
    assert_eq!(crate::harness::text(&result).trim(), "version [redacted]");
}

/// A manifest of thousands of tools keeps its `tools/list` answer in pieces, never joined;
/// it still leaves through the door with what each request adds: a request id that is a
/// secret comes back redacted, in an answer that still lists every tool. The control: an id
/// that is not a secret comes back as sent, in the same answer.
#[test]
fn a_list_kept_in_pieces_is_read_by_the_door_with_what_the_request_adds() {
    let tools = crate::harness::many_tools(1_500);
    let workspace = Workspace::new(&crate::harness::holding_secret("${file:token.txt}", &tools));
    std::fs::write(workspace.path("token.txt"), format!("{SECRET}\n")).expect("token");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    for (id, shown) in [(SECRET, "[redacted]"), ("list-1", "list-1")] {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}}));
        let answer = server
            .next_message(std::time::Instant::now() + std::time::Duration::from_secs(30))
            .expect("an answer");
        assert_eq!(answer["id"], shown, "{id}");
        let tools = answer["result"]["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), 1_501, "{id}");
        assert_eq!(tools[1_500]["name"], "t1499", "{id}");
        assert!(!answer.to_string().contains(SECRET), "{id}");
    }
}
