//! Input from the client in the 2026 era (SEP-2322 `input_required`) over stdio, and the
//! 2025 era's roots and prompt questions: the call answers `input_required` with a sealed
//! `requestState`, and runs only when the retry carries accepted answers. Every attack
//! (tampered, foreign or replayed state, malformed or oversize answers, a client without
//! the capability) is checked against a marker file the command would create.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, text};

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
name = "greet"
description = "Asks twice, then prints both answers as whole argv elements"
[[tools.ask]]
name = "who"
message = "Your name?"
fields.name = { type = "string", max-length = 64 }
[[tools.ask]]
name = "colour"
message = "{name}, your colour?"
fields.colour = { type = "string" }
[tools.command]
argv = ["printf", "%s|%s", "{name}", "{colour}"]

[[tools]]
name = "where"
description = "Shows the client's roots"
roots = true
[tools.command]
argv = ["printf", "%s", "{roots}"]

[[prompts]]
name = "brief"
[prompts.ask]
name = "topic"
message = "Which topic?"
fields.topic = { type = "string" }
[[prompts.messages]]
role = "user"
text = "Write about {topic}"
"#;

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}
    })
}

fn all() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn call(server: &mut Server, params: Value) -> Value {
    server.request("tools/call", params)
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn a_confirmation_is_a_round_trip_and_only_acceptance_runs_the_command() {
    let workspace = Workspace::new(MANIFEST);
    let marker = workspace.path("marker");
    let mut server = Server::start(&workspace.manifest());
    let arguments = json!({"folder": "/srv/data"});
    let first = call(
        &mut server,
        json!({"name": "wipe", "arguments": arguments, "_meta": meta(all())}),
    );
    let pending = &first["result"];
    assert_eq!(pending["resultType"], json!("input_required"), "{first}");
    let request = &pending["inputRequests"]["confirm"];
    assert_eq!(request["method"], json!("elicitation/create"));
    assert_eq!(
        request["params"]["message"],
        json!("Delete everything in /srv/data?")
    );
    let state = pending["requestState"].as_str().expect("a sealed state");
    assert!(!marker.exists(), "asking ran the command");

    for refusal in [json!({"action": "decline"}), json!({"action": "cancel"})] {
        let result = call(
            &mut server,
            json!({"name": "wipe", "arguments": arguments, "_meta": meta(all()),
                   "inputResponses": {"confirm": refusal}, "requestState": state}),
        );
        assert_eq!(result["result"]["isError"], json!(true), "{result}");
        assert!(text(&result["result"]).contains("did not run"), "{result}");
        assert!(!marker.exists(), "{refusal} ran the command");
    }
    let done = call(
        &mut server,
        json!({"name": "wipe", "arguments": arguments, "_meta": meta(all()),
               "inputResponses": {"confirm": {"action": "accept"}}, "requestState": state}),
    );
    assert_eq!(done["result"]["resultType"], json!("complete"), "{done}");
    assert_eq!(text(&done["result"]), "wiped /srv/data");
    assert!(marker.exists());
}

#[test]
fn tampered_foreign_and_malformed_state_or_answers_are_refused_and_nothing_runs() {
    let workspace = Workspace::new(MANIFEST);
    let marker = workspace.path("marker");
    let mut server = Server::start(&workspace.manifest());
    let arguments = json!({"folder": "/srv/data"});
    let first = call(
        &mut server,
        json!({"name": "wipe", "arguments": arguments, "_meta": meta(all())}),
    );
    let state = first["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let greet = call(
        &mut server,
        json!({"name": "greet", "arguments": {}, "_meta": meta(all())}),
    );
    let greet_state = greet["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let mut flipped = state.clone().into_bytes();
    let middle = flipped.len() / 2;
    flipped[middle] = if flipped[middle] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ascii");
    let accept_confirm = json!({"confirm": {"action": "accept"}});
    let attacks = [
        (
            "appended",
            json!(format!("{state}-TAMPERED")),
            arguments.clone(),
        ),
        ("flipped", json!(flipped), arguments.clone()),
        ("garbage", json!("not a state at all"), arguments.clone()),
        ("empty", json!(""), arguments.clone()),
        ("another tool's", json!(greet_state), arguments.clone()),
        ("other arguments'", json!(state), json!({"folder": "/"})),
    ];
    let mut refused = 0;
    for (what, state, arguments) in attacks {
        let response = call(
            &mut server,
            json!({"name": "wipe", "arguments": arguments, "_meta": meta(all()),
                   "inputResponses": accept_confirm, "requestState": state}),
        );
        assert_eq!(
            response["error"]["code"],
            json!(-32602),
            "{what}: {response}"
        );
        assert!(
            response["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("requestState")),
            "{what}: {response}"
        );
        assert!(!marker.exists(), "{what} state ran the command");
        refused += 1;
    }
    // Answers that are not elicitation results are the client's protocol error.
    for malformed in [
        json!(12345),
        json!("yes"),
        json!({"action": "maybe"}),
        json!({"action": "accept", "content": [1]}),
    ] {
        let response = call(
            &mut server,
            json!({"name": "wipe", "arguments": {"folder": "/x"}, "_meta": meta(all()),
                   "inputResponses": {"confirm": malformed}}),
        );
        assert_eq!(response["error"]["code"], json!(-32602), "{response}");
        assert!(!marker.exists());
        refused += 1;
    }
    // An oversize answer does not fit the field: a tool error, nothing runs.
    let huge = "x".repeat(1 << 20);
    let response = call(
        &mut server,
        json!({"name": "greet", "arguments": {}, "_meta": meta(all()),
               "inputResponses": {"who": accept(json!({"name": huge}))}}),
    );
    assert_eq!(
        response["result"]["isError"],
        json!(true),
        "oversize answer"
    );
    assert!(text(&response["result"]).contains("does not fit"));
    refused += 1;
    // A client without the capability gets -32021 naming it.
    let response = call(
        &mut server,
        json!({"name": "wipe", "arguments": arguments, "_meta": meta(json!({"sampling": {}}))}),
    );
    assert_eq!(response["error"]["code"], json!(-32021), "{response}");
    assert_eq!(
        response["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    assert!(!marker.exists());
    refused += 1;
    eprintln!("{refused} hostile retries refused; the command never ran");
}

#[test]
fn dependent_questions_take_two_rounds_and_answers_reach_argv_whole() {
    let workspace = Workspace::new(MANIFEST);
    let mut server = Server::start(&workspace.manifest());
    let first = call(
        &mut server,
        json!({"name": "greet", "arguments": {}, "_meta": meta(all())}),
    );
    let requests = first["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["who"], "{first}");
    let hostile = "$(touch pwned); `id` \"quoted\"";
    let second = call(
        &mut server,
        json!({"name": "greet", "arguments": {}, "_meta": meta(all()),
               "inputResponses": {"who": accept(json!({"name": hostile}))},
               "requestState": first["result"]["requestState"]}),
    );
    assert_eq!(
        second["result"]["inputRequests"]["colour"]["params"]["message"],
        json!(format!("{hostile}, your colour?")),
        "{second}"
    );
    assert_ne!(
        second["result"]["requestState"],
        first["result"]["requestState"]
    );
    // The retry carries only the new answer; the first comes from the sealed state.
    let done = call(
        &mut server,
        json!({"name": "greet", "arguments": {}, "_meta": meta(all()),
               "inputResponses": {"colour": accept(json!({"colour": "blue"})), "stray": 1},
               "requestState": second["result"]["requestState"]}),
    );
    assert_eq!(text(&done["result"]), format!("{hostile}|blue"), "{done}");
    assert!(!workspace.path("pwned").exists());
}

#[test]
fn prompts_ask_in_both_eras_and_roots_reach_a_2025_tool() {
    let workspace = Workspace::new(MANIFEST);
    let mut server = Server::start(&workspace.manifest());
    let first = server.request(
        "prompts/get",
        json!({"name": "brief", "_meta": meta(all())}),
    );
    assert_eq!(
        first["result"]["resultType"],
        json!("input_required"),
        "{first}"
    );
    let done = server.request(
        "prompts/get",
        json!({"name": "brief", "_meta": meta(all()),
               "inputResponses": {"topic": accept(json!({"topic": "tides"}))},
               "requestState": first["result"]["requestState"]}),
    );
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        json!("Write about tides"),
        "{done}"
    );

    // 2025: the server asks on the connection.
    let mut server = Server::start(&workspace.manifest());
    let response = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}, "elicitation": {}},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(response.get("result").is_some(), "{response}");
    server.notify("notifications/initialized", None);
    let answer = |server: &mut Server, method: &str, params: Value, answer: Value| -> Value {
        let id = server.start_request(method, params);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut asked = 0;
        loop {
            let message = server.next_message(deadline).expect("a message in time");
            if message.get("method").is_some() && message.get("id").is_some() {
                asked += 1;
                server.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}));
            } else if message["id"] == json!(id) {
                assert_eq!(asked, 1, "asked once");
                return message;
            }
        }
    };
    let roots = json!({"roots": [{"uri": "file:///srv/a%20b", "name": "A"}, {"uri": "https://not.a/file"}, {"uri": "file:///home/x"}]});
    let result = answer(
        &mut server,
        "tools/call",
        json!({"name": "where", "arguments": {}}),
        roots,
    );
    assert_eq!(text(&result["result"]), "/srv/a b\n/home/x", "{result}");
    let prompt = answer(
        &mut server,
        "prompts/get",
        json!({"name": "brief"}),
        accept(json!({"topic": "moons"})),
    );
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        json!("Write about moons"),
        "{prompt}"
    );
}
