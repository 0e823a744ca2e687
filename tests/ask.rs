//! `confirm` and `[tools.ask]` over stdio: the server asks the client (`elicitation/create`)
//! before the backend runs; only an accepted answer that fits runs it. Every refusal is
//! checked against a marker file the command would create.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta, text};

const MANIFEST: &str = r#"
[[tools]]
name = "wipe"
description = "Deletes a folder's contents (here: creates a marker)"
annotations = { destructive = true }
arguments.folder = { type = "string" }
confirm = "Delete everything in {folder}?"
command.script = 'touch marker && echo "wiped $1"'
command.args = ["{folder}"]

[[tools]]
name = "sign"
description = "Signs a message with the name the user gives"
arguments.message = { type = "string" }
[tools.ask]
message = "Who signs \"{message}\"?"
[tools.ask.fields.signer]
type = "string"
min-length = 2
[tools.ask.fields.copies]
type = "integer"
minimum = 1
maximum = 3
default = 1
[tools.command]
argv = ["printf", "%s, signed %s (x%s)", "{message}", "{signer}", "{copies}"]
"#;

fn start(workspace: &Workspace, capabilities: Value) -> Server {
    let mut server = Server::start(&workspace.manifest());
    let response = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(response.get("result").is_some(), "{response}");
    server.notify("notifications/initialized", None);
    server
}

/// Calls `tool`, answers the server's `elicitation/create` with `answer` (after checking
/// the question), and returns the tool's result.
fn call_answering(
    server: &mut Server,
    tool: &str,
    arguments: Value,
    check: impl Fn(&Value),
    answer: Value,
) -> Value {
    let id = server.start_request("tools/call", json!({"name": tool, "arguments": arguments}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let message = server.next_message(deadline).expect("a message in time");
        if message["method"] == json!("elicitation/create") {
            check(&message["params"]);
            server.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}));
        } else if message["id"] == json!(id) {
            return message["result"].clone();
        }
    }
}

#[test]
fn a_confirmed_tool_runs_only_when_the_user_accepts() {
    let workspace = Workspace::new(MANIFEST);
    let marker = workspace.path("marker");
    let mut server = start(&workspace, json!({"elicitation": {}}));
    let question = |params: &Value| {
        assert_eq!(params["message"], json!("Delete everything in /srv/data?"));
        assert_eq!(params["requestedSchema"]["properties"], json!({}));
    };
    for refusal in [json!({"action": "decline"}), json!({"action": "cancel"})] {
        let result = call_answering(
            &mut server,
            "wipe",
            json!({"folder": "/srv/data"}),
            question,
            refusal.clone(),
        );
        assert_eq!(result["isError"], json!(true), "{result}");
        assert!(
            text(&result).contains("so the tool did not run"),
            "{result}"
        );
        assert!(!marker.exists(), "{refusal} ran the command");
    }
    let result = call_answering(
        &mut server,
        "wipe",
        json!({"folder": "/srv/data"}),
        question,
        json!({"action": "accept", "content": {}}),
    );
    assert_eq!(text(&result), "wiped /srv/data", "{result}");
    assert!(marker.exists());
}

#[test]
fn answers_are_checked_then_fill_placeholders() {
    let workspace = Workspace::new(MANIFEST);
    let mut server = start(&workspace, json!({"elicitation": {}}));
    let question = |params: &Value| {
        assert_eq!(params["message"], json!("Who signs \"hello\"?"));
        assert_eq!(
            params["requestedSchema"]["properties"]["copies"]["default"],
            json!(1)
        );
    };
    let result = call_answering(
        &mut server,
        "sign",
        json!({"message": "hello"}),
        question,
        json!({"action": "accept", "content": {"signer": "Ada; rm -rf /", "copies": 2}}),
    );
    assert_eq!(
        text(&result),
        "hello, signed Ada; rm -rf / (x2)",
        "{result}"
    );
    // An answer that breaks the fields' rules never reaches the backend.
    for bad in [
        json!({"signer": "A", "copies": 1}),
        json!({"signer": "Ada", "copies": 9}),
        json!({"signer": ["Ada"], "copies": 1}),
    ] {
        let result = call_answering(
            &mut server,
            "sign",
            json!({"message": "hello"}),
            |_| {},
            json!({"action": "accept", "content": bad}),
        );
        assert_eq!(result["isError"], json!(true), "{result}");
        assert!(
            text(&result).contains("does not fit what was asked"),
            "{result}"
        );
    }
}

#[test]
fn a_client_that_cannot_be_asked_gets_an_error_and_nothing_runs() {
    let workspace = Workspace::new(MANIFEST);
    let marker = workspace.path("marker");
    // No elicitation capability.
    let mut server = start(&workspace, json!({}));
    let result = server.call("wipe", json!({"folder": "/srv"}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        text(&result).contains("does not support elicitation"),
        "{result}"
    );
    // A 2026-07-28 request that declares no elicitation: the spec's -32021.
    let mut server = Server::start(&workspace.manifest());
    let response = server.request(
        "tools/call",
        json!({"name": "wipe", "arguments": {"folder": "/srv"}, "_meta": modern_meta()}),
    );
    assert_eq!(response["error"]["code"], json!(-32021), "{response}");
    assert!(!marker.exists());
}

#[test]
fn broken_ask_tables_are_reported() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "a"
arguments.x = { type = "string" }
confirm = "Sure about {y}?"
static.content = [{ type = "text", text = "ok" }]

[[tools]]
name = "b"
arguments.x = { type = "string" }
[tools.ask]
message = "?"
fields.x = { type = "string" }
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "c"
confirm = "?"
[tools.ask]
message = "?"
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "e"
[[tools.ask]]
message = "first?"
[[tools.ask]]
message = "second?"
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "f"
[[tools.ask]]
name = "same"
message = "first?"
fields.a = { type = "string" }
[[tools.ask]]
name = "same"
message = "second?"
fields.b = { type = "string" }
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "g"
[tools.ask]
message = "?"
fields.b = { type = "string", header = "B" }
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "d"
[tools.ask]
message = "?"
[tools.ask.schema]
type = "object"
properties.deep = { type = "object", properties = { x = { type = "string" } } }
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    let (code, _, stderr) = crate::harness::run(
        &[
            "check",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "template refers to undeclared argument `y`",
        "the field `x` has the name of an argument",
        "with several questions, each needs a `name`",
        "two inputs are named `same`",
        "a question's fields do not travel in headers",
        "a tool has `confirm` or `[tools.ask]`, not both",
        "an elicitation cannot ask for these fields",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}

#[test]
fn the_terminal_call_needs_yes_to_confirm_and_answer_flags_for_fields() {
    let workspace = Workspace::new(MANIFEST);
    let config = workspace.manifest();
    let config = config.to_str().expect("path");
    let (code, stdout, _) = crate::harness::run(
        &["call", "--config", config, "wipe", "folder=/srv"],
        workspace.dir.path(),
    );
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "`wipe` asks first: \"Delete everything in /srv?\"; run it again with --yes to answer yes\n"
    );
    assert!(!workspace.path("marker").exists());
    let (code, stdout, _) = crate::harness::run(
        &["call", "--config", config, "wipe", "folder=/srv", "--yes"],
        workspace.dir.path(),
    );
    assert_eq!((code, stdout.as_str()), (0, "wiped /srv\n"));
    // Without a terminal, a field with no default needs --answer; defaults fill the rest.
    let (code, stdout, _) = crate::harness::run(
        &["call", "--config", config, "sign", "message=hi"],
        workspace.dir.path(),
    );
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "`sign` asks for `signer` before it runs; give it with --answer signer=VALUE\n"
    );
    let (code, stdout, _) = crate::harness::run(
        &[
            "call",
            "--config",
            config,
            "sign",
            "message=hi",
            "--answer",
            "signer=Ann",
        ],
        workspace.dir.path(),
    );
    assert_eq!((code, stdout.as_str()), (0, "hi, signed Ann (x1)\n"));
    // Answers are checked like the client's: out of range, nothing runs.
    let (code, stdout, _) = crate::harness::run(
        &[
            "call",
            "--config",
            config,
            "sign",
            "message=hi",
            "--answer",
            "signer=Ann",
            "--answer",
            "copies=9",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("does not fit what was asked"), "{stdout}");
}

#[test]
fn a_sampling_tool_asks_the_clients_model_and_uses_its_text() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "title"
arguments.text = { type = "string" }
[tools.sample]
prompt = "Give this a title: {text}"
system = "Answer with a title only."
max-tokens = 20
name = "suggested"
[tools.command]
argv = ["printf", "%s", "{suggested}"]
"#,
    );
    let mut server = start(&workspace, json!({"sampling": {}}));
    let id = server.start_request(
        "tools/call",
        json!({"name": "title", "arguments": {"text": "a long essay"}}),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let result = loop {
        let message = server.next_message(deadline).expect("a message in time");
        if message["method"] == json!("sampling/createMessage") {
            let params = &message["params"];
            assert_eq!(
                params["messages"][0]["content"]["text"],
                json!("Give this a title: a long essay")
            );
            assert_eq!(params["systemPrompt"], json!("Answer with a title only."));
            assert_eq!(params["maxTokens"], json!(20));
            server.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "role": "assistant", "content": {"type": "text", "text": "An Essay; $(rm -rf /)"}, "model": "m"
            }}));
        } else if message["id"] == json!(id) {
            break message["result"].clone();
        }
    };
    assert_eq!(text(&result), "An Essay; $(rm -rf /)", "{result}");
    let mut server = start(&workspace, json!({}));
    let result = server.call("title", json!({"text": "x"}));
    assert!(
        text(&result).contains("does not support sampling"),
        "{result}"
    );
}
