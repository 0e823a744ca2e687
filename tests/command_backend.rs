//! The command backend: structurally safe argument passing, limits, and process cleanup.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Workspace, alive, read_pid, slow_tools, text, wait_gone};

const DUMP_ARGV: &str = "import json, sys; print(json.dumps(sys.argv[1:]))";

fn dump(result: &Value) -> Value {
    serde_json::from_str(text(result)).unwrap_or_else(|_| panic!("not JSON: {result}"))
}

#[test]
fn hostile_values_arrive_verbatim_as_single_argv_elements() {
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "dump"
[tools.arguments.value]
type = "string"
[tools.command]
argv = ["python3", "-c", "{DUMP_ARGV}", "--value", "{{value}}", "tail={{value}}"]
"#
    ));
    let mut server = workspace.serve_legacy();
    for value in [
        "; rm -rf /",
        "$(touch pwned)",
        "`touch pwned`",
        "a\nb\r\nc",
        "-rf",
        "--help",
        "'\"quoted\"'",
        "日本語 ✓",
        "",
        "{value}",
        " spaced  out ",
        "*",
        "a b c",
    ] {
        let result = server.call("dump", json!({ "value": value }));
        assert_eq!(
            dump(&result),
            json!(["--value", value, format!("tail={value}")]),
            "{value:?}"
        );
    }
    assert!(!workspace.path("pwned").exists());
    let result = server.call("dump", json!({"value": "nul\u{0}byte"}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "the value of `value` contains a NUL byte, which cannot be passed to a command"
    );
}

#[test]
fn groups_flags_and_lists_shape_the_command_line() {
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "dump"
[tools.arguments.verbose]
type = "boolean"
default = false
[tools.arguments.limit]
type = "integer"
optional = true
[tools.arguments.tags]
type = "array"
items = {{ type = "string" }}
default = []
[tools.arguments.filter]
type = "object"
optional = true
[tools.command]
argv = ["python3", "-c", "{DUMP_ARGV}", {{ flag = "-v", if = "verbose" }}, ["--limit", "{{limit}}"], ["--tag={{tags}}"], ["{{filter}}"], "--"]
"#
    ));
    let mut server = workspace.serve_legacy();
    assert_eq!(dump(&server.call("dump", json!({}))), json!(["--"]));
    assert_eq!(
        dump(&server.call(
            "dump",
            json!({"verbose": true, "limit": 5, "tags": ["a b", "-c"], "filter": {"k": [1, "x"]}})
        )),
        json!([
            "-v",
            "--limit",
            "5",
            "--tag=a b",
            "--tag=-c",
            "{\"k\":[1,\"x\"]}",
            "--"
        ])
    );
}

#[test]
fn scripts_get_values_only_as_positional_parameters() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "greet"
[tools.arguments.name]
type = "string"
[tools.command]
script = 'printf "hello, %s (%s args)" "$1" "$#"'
args = ["{name}"]
"#,
    );
    let mut server = workspace.serve_legacy();
    let result = server.call(
        "greet",
        json!({"name": "$(touch pwned); `touch pwned` \"x\""}),
    );
    assert_eq!(
        text(&result),
        "hello, $(touch pwned); `touch pwned` \"x\" (1 args)"
    );
    assert!(!workspace.path("pwned").exists());
}

#[test]
fn environment_values_and_stdin_carry_arguments() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "env"
[tools.arguments.query]
type = "string"
[tools.arguments.unused]
type = "string"
optional = true
[tools.command]
argv = ["env"]
env = { QUERY = "q={query}", UNUSED = "{unused}" }
inherit-env = ["PATH"]

[[tools]]
name = "stdin"
[tools.arguments.query]
type = "string"
[tools.arguments.limit]
type = "integer"
default = 10
[tools.command]
argv = ["python3", "-c", "import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))"]
stdin = "json"
"#,
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("env", json!({"query": "$HOME; `id`"}));
    let mut variables: Vec<&str> = text(&result).lines().collect();
    variables.sort_unstable();
    // Besides what it inherits and declares, a command sees only its call's tag, by which
    // the server finds what it leaves behind, and the server's instance name.
    assert_eq!(variables.len(), 4, "{variables:?}");
    assert!(variables[0].starts_with("MCP_SERVE_CALL="), "{variables:?}");
    assert!(
        variables[1].starts_with("MCP_SERVE_INSTANCE="),
        "{variables:?}"
    );
    assert!(variables[2].starts_with("PATH="), "{variables:?}");
    assert_eq!(variables[3], "QUERY=q=$HOME; `id`");
    let result = server.call("stdin", json!({"query": "x\"y"}));
    assert_eq!(dump(&result), json!({"limit": 10, "query": "x\"y"}));
}

#[test]
fn invalid_arguments_never_start_the_command() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "touch"
[tools.arguments.count]
type = "integer"
maximum = 1
[tools.command]
argv = ["touch", "ran"]
"#,
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("touch", json!({"count": 5}));
    assert_eq!(result["isError"], json!(true));
    assert!(!workspace.path("ran").exists());
    let result = server.call("touch", json!({"count": 1}));
    assert_eq!(result["isError"], json!(false));
    assert!(workspace.path("ran").exists());
}

#[test]
fn failures_are_tool_errors_with_a_reason_and_the_end_of_stderr() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "exit"
[tools.command]
script = 'echo out; echo "first line" >&2; echo "last line" >&2; exit 3'

[[tools]]
name = "signal"
[tools.command]
script = 'kill -9 $$'

[[tools]]
name = "missing"
[tools.command]
argv = ["mcp-serve-no-such-program"]

[[tools]]
name = "flood-json"
[tools.command]
argv = ["head", "-c", "100000", "/dev/zero"]
max-output = "1KiB"
output = "json"

[[tools]]
name = "grep-like"
[tools.command]
script = 'exit 1'
success-codes = [0, 1]
"#,
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("exit", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "`sh` exited with status 3\n\nfirst line\nlast line"
    );
    let result = server.call("signal", json!({}));
    assert_eq!(text(&result), "`sh` was killed by signal SIGKILL");
    let result = server.call("missing", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result)
            .starts_with("could not start `mcp-serve-no-such-program`: No such file or directory"),
        "{result}"
    );
    let result = server.call("flood-json", json!({}));
    assert_eq!(
        text(&result),
        "`head` wrote more than 1024 bytes of output, the tool's limit; it was stopped"
    );
    let result = server.call("grep-like", json!({}));
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": ""}], "isError": false})
    );
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "hang"
[tools.command]
script = 'sleep 60 & echo $! > child.pid; wait'
timeout = "500ms"
"#,
    );
    let mut server = workspace.serve_legacy();
    let started = Instant::now();
    let result = server.call("hang", json!({}));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result["isError"], json!(true));
    assert_eq!(text(&result), "`sh` timed out after 500ms");
    let child = read_pid(&workspace.path("child.pid"));
    assert!(wait_gone(child), "grandchild {child} survived the timeout");
}

#[test]
fn background_processes_do_not_hold_a_finished_call() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "daemonish"
[tools.command]
script = 'sleep 60 & echo $! > child.pid; echo done'
"#,
    );
    let mut server = workspace.serve_legacy();
    let started = Instant::now();
    let result = server.call("daemonish", json!({}));
    assert_eq!(text(&result), "done");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(wait_gone(read_pid(&workspace.path("child.pid"))));
}

#[test]
fn cancellation_kills_the_process_group_and_sends_no_response() {
    let workspace = slow_tools();
    let mut server = workspace.serve_legacy();
    let id = server.start_request("tools/call", json!({"name": "slow", "arguments": {}}));
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    assert!(alive(main) && alive(child));
    server.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id, "reason": "user pressed stop"})),
    );
    assert!(wait_gone(main), "the command survived cancellation");
    assert!(
        wait_gone(child),
        "the command's child survived cancellation"
    );
    server.expect_silence(Duration::from_millis(300));
    // Unknown ids are ignored, and the server keeps serving.
    server.notify("notifications/cancelled", Some(json!({"requestId": 4242})));
    assert_eq!(text(&server.call("fast", json!({}))), "quick");
}

#[test]
fn a_slow_call_never_blocks_another() {
    let workspace = slow_tools();
    let mut server = workspace.serve_legacy();
    let slow = server.start_request("tools/call", json!({"name": "slow", "arguments": {}}));
    read_pid(&workspace.path("child.pid"));
    let started = Instant::now();
    assert_eq!(text(&server.call("fast", json!({}))), "quick");
    assert!(started.elapsed() < Duration::from_secs(3));
    server.notify("notifications/cancelled", Some(json!({"requestId": slow})));
}

#[test]
fn closing_stdin_kills_in_flight_commands_and_exits() {
    let workspace = slow_tools();
    let mut server = workspace.serve_legacy();
    server.start_request("tools/call", json!({"name": "slow", "arguments": {}}));
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    let (status, took) = server.close();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(
        wait_gone(main) && wait_gone(child),
        "a command outlived the server"
    );
}

#[test]
fn a_cancelled_command_gets_sigterm_first() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "graceful"
[tools.command]
script = 'trap "echo stopped > stopped.txt; exit 0" TERM; echo $$ > main.pid; while true; do sleep 0.1; done'
"#,
    );
    let mut server = workspace.serve_legacy();
    let id = server.start_request("tools/call", json!({"name": "graceful", "arguments": {}}));
    let main = read_pid(&workspace.path("main.pid"));
    server.notify("notifications/cancelled", Some(json!({"requestId": id})));
    assert!(wait_gone(main), "the command survived cancellation");
    assert_eq!(
        std::fs::read_to_string(workspace.path("stopped.txt"))
            .ok()
            .as_deref(),
        Some("stopped\n"),
        "the command had the chance to clean up"
    );
}
