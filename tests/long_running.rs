//! Bounded concurrency per tool, and hot reload with `--watch`: valid, invalid and breaking
//! edits, in-flight calls on the old definitions, and clients told in both eras.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BINARY, Server, Workspace, modern_meta, text};
use crate::interop::interop_dir;

const ONE_TOOL: &str = r#"
[[tools]]
name = "greet"
description = "Says hello"
[tools.arguments.name]
type = "string"
[tools.command]
script = 'sleep "${DELAY:-0}"; echo "hello $1"'
args = ["{name}"]
"#;

const TWO_TOOLS: &str = r#"
[[tools]]
name = "greet"
description = "Says hi"
[tools.arguments.name]
type = "string"
[tools.command]
script = 'echo "hi $1"'
args = ["{name}"]

[[tools]]
name = "shout"
description = "Says it loudly"
[tools.static]
content = [{ type = "text", text = "HEY" }]
"#;

/// Waits for a message matching `accept`, skipping others.
fn wait_for(server: &mut Server, accept: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    while let Some(message) = server.next_message(deadline) {
        if accept(&message) {
            return message;
        }
    }
    panic!("the expected message never came");
}

fn rewrite(workspace: &Workspace, manifest: &str) {
    // A new size as well as a new time, so the change is seen even within one clock tick.
    std::fs::write(
        workspace.manifest(),
        format!("{manifest}\n# {}\n", "x".repeat(manifest.len() % 7 + 1)),
    )
    .expect("rewrite manifest");
}

#[test]
fn a_tool_can_bound_its_own_calls_with_a_queue() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "single"
max-concurrent = 1
queue = 1
[tools.command]
script = 'echo $$ >> started; sleep 1; echo done'
"#,
    );
    let mut server = workspace.serve_legacy();
    let first = server.start_request("tools/call", json!({"name": "single", "arguments": {}}));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !workspace.path("started").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = server.start_request("tools/call", json!({"name": "single", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(100));
    let third = server.request("tools/call", json!({"name": "single", "arguments": {}}));
    assert_eq!(third["result"]["isError"], json!(true));
    assert_eq!(
        text(&third["result"]),
        "`single` is busy: 1 calls of it are already running and 1 are waiting; try again shortly"
    );
    assert_eq!(text(&server.response(first)["result"]), "done");
    assert_eq!(
        text(&server.response(second)["result"]),
        "done",
        "the queued call ran after the first"
    );
}

#[test]
fn watching_reloads_valid_edits_and_keeps_serving_through_broken_ones() {
    let workspace = Workspace::new(ONE_TOOL);
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    let init = server.request(
        "initialize",
        crate::harness::initialize_params("2025-11-25"),
    );
    assert_eq!(
        init["result"]["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    server.notify("notifications/initialized", None);

    rewrite(&workspace, TWO_TOOLS);
    wait_for(&mut server, |message| {
        message["method"] == json!("notifications/tools/list_changed")
    });
    let listed = server.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["greet", "shout"]);
    assert_eq!(
        text(&server.call("greet", json!({"name": "Ada"}))),
        "hi Ada"
    );

    rewrite(
        &workspace,
        "[[tools]]\nname = \"broken\"\n[tools.comand]\nargv = [\"true\"]\n",
    );
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(
        text(&server.call("shout", json!({}))),
        "HEY",
        "the previous tools are still served"
    );
    let log = server.stderr();
    assert!(
        log.contains("error: unknown key `comand` in tool `broken`"),
        "{log}"
    );
    assert!(log.contains("still serving the previous one"), "{log}");

    rewrite(
        &workspace,
        &TWO_TOOLS.replace(
            "[tools.arguments.name]\ntype = \"string\"",
            "[tools.arguments.name]\ntype = \"integer\"",
        ),
    );
    wait_for(&mut server, |message| {
        message["method"] == json!("notifications/tools/list_changed")
    });
    // The log line is written before the notification, but stderr is read by another thread.
    let expected =
        "changed `greet` incompatibly: `name` changed type from \"string\" to \"integer\"";
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut log = server.stderr();
    while !log.contains(expected) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        log = server.stderr();
    }
    assert!(log.contains(expected), "{log}");
}

#[test]
fn a_reload_that_adds_server_auth_is_refused_and_the_old_manifest_stays() {
    let workspace = Workspace::new(ONE_TOOL);
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    server.handshake("2025-11-25");
    // Scopes with [server.auth] would be served unchecked: the token layers are built at start.
    rewrite(
        &workspace,
        &format!(
            "[server.auth]\nissuer = \"https://id.example.com\"\naudience = \"https://mcp.example.com/mcp\"\n{}",
            TWO_TOOLS.replace(
                "name = \"shout\"\n",
                "name = \"shout\"\nscopes = [\"admin\"]\n"
            )
        ),
    );
    let expected = "[server.auth] changed; it is read at start-up";
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut log = server.stderr();
    while !log.contains(expected) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        log = server.stderr();
    }
    assert!(log.contains(expected), "{log}");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
}

#[test]
fn calls_in_flight_finish_on_the_old_definitions() {
    let workspace = Workspace::new(ONE_TOOL);
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[("DELAY", "1.5")]);
    server.handshake("2025-11-25");
    let id = server.start_request(
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "old"}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    rewrite(&workspace, TWO_TOOLS);
    // The reload (and its notification) happens while the old call is still running.
    let changed = wait_for(&mut server, |message| {
        message["method"] == json!("notifications/tools/list_changed") || message["id"] == json!(id)
    });
    assert_eq!(
        changed["method"],
        json!("notifications/tools/list_changed"),
        "{changed}"
    );
    assert_eq!(text(&server.response(id)["result"]), "hello old");
    assert_eq!(
        text(&server.call("greet", json!({"name": "new"}))),
        "hi new"
    );
}

fn listen(server: &mut Server, tools: bool) -> Value {
    let mut params = json!({"notifications": {"toolsListChanged": tools}});
    params["_meta"] = modern_meta();
    let id = server.start_request("subscriptions/listen", params);
    let ack = wait_for(server, |message| {
        message["method"] == json!("notifications/subscriptions/acknowledged")
    });
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(id),
        "{ack}"
    );
    ack
}

#[test]
fn modern_clients_hear_of_changes_through_subscriptions() {
    let workspace = Workspace::new(ONE_TOOL);
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    let ack = listen(&mut server, true);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    rewrite(&workspace, TWO_TOOLS);
    let change = wait_for(&mut server, |message| {
        message["method"] == json!("notifications/tools/list_changed")
    });
    assert!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number(),
        "{change}"
    );
}

#[test]
fn without_watching_subscriptions_are_acknowledged_empty() {
    let workspace = Workspace::new(ONE_TOOL);
    let mut server = workspace.serve();
    let ack = listen(&mut server, true);
    assert_eq!(ack["params"]["notifications"], json!({}));
}

#[test]
fn the_typescript_client_sees_the_tool_list_change() {
    for mode in ["legacy", "auto"] {
        let workspace = Workspace::new(ONE_TOOL);
        let mut client = Command::new("node")
            .arg(interop_dir().join("watch_client.mjs"))
            .args([mode, BINARY])
            .arg(workspace.manifest())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node");
        let mut lines = BufReader::new(client.stdout.take().expect("stdout")).lines();
        let first: Value =
            serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("JSON");
        assert_eq!(first["tools"], json!(["greet"]), "{mode}: {first}");
        rewrite(&workspace, TWO_TOOLS);
        let second: Value =
            serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("JSON");
        let _ = client.wait();
        assert_eq!(
            second,
            json!({"error": null, "tools": ["greet", "shout"]}),
            "{mode}"
        );
    }
}

/// A manifest with prompts, reloaded twice: a 2026 listener that asked for tool changes
/// only hears both tool changes (the prompt change it did not ask for never closes its
/// stream), and one that asked for prompt changes hears those too.
#[test]
fn modern_listeners_survive_reloads_of_a_manifest_with_prompts() {
    const PROMPT: &str = "\n[[prompts]]\nname = \"p\"\ndescription = \"A prompt\"\n[[prompts.messages]]\nrole = \"user\"\ntext = \"hi\"\n";
    let workspace = Workspace::new(&format!("{ONE_TOOL}{PROMPT}"));
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    listen(&mut server, true);
    let mut params = json!({"notifications": {"promptsListChanged": true}});
    params["_meta"] = modern_meta();
    server.start_request("subscriptions/listen", params);
    let ack = wait_for(&mut server, |message| {
        message["method"] == json!("notifications/subscriptions/acknowledged")
            && message["params"]["notifications"]
                .get("promptsListChanged")
                .is_some()
    });
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    for (round, manifest) in [TWO_TOOLS, ONE_TOOL].iter().enumerate() {
        rewrite(&workspace, &format!("{manifest}{PROMPT}"));
        wait_for(&mut server, |message| {
            message["method"] == json!("notifications/tools/list_changed")
        });
        wait_for(&mut server, |message| {
            message["method"] == json!("notifications/prompts/list_changed")
        });
        eprintln!("reload {}: tools and prompts changes heard", round + 1);
    }
}
