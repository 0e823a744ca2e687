//! Tasks (SEP-2663) against the real binary with the embedded store: results survive a
//! SIGKILL and a restart, a running task whose server died reads as failed after its lease,
//! a cancel through another process kills the process group, a task is kept for its ttl and
//! then forgotten, another session cannot see it, bad ids get clear errors, progress and logs
//! are kept with the task, and operators read the store with `mcp-serve tasks`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Workspace, alive, read_pid, run, wait_gone};
use crate::http_harness::HttpServer;

const MANIFEST: &str = r#"
[server]
name = "tasks-test"
task = "optional"
task-ttl = "3s"
task-poll-interval = "200ms"

[[tools]]
name = "work"
description = "Reports progress and a log line, sleeps, answers"
arguments.seconds = { type = "number", minimum = 0 }
arguments.tag = { type = "string", default = "t" }
[tools.command]
script = '''
echo $$ > "work-$2.pid"
printf '{"progress": 1, "total": 2, "message": "half way"}\n' > "$MCP_SERVE_EVENTS"
printf '{"log": "warning", "message": "disk almost full"}\n' > "$MCP_SERVE_EVENTS"
sleep "$1"
echo "worked $1"
'''
args = ["{seconds}", "{tag}"]
events = true
timeout = "5m"

[[tools]]
name = "quick"
description = "Answers at once; only as a task"
task = "required"
[tools.static]
content = [{ type = "text", text = "quick" }]

[[tools]]
name = "asks"
description = "Asks inside the task; nobody answers"
ask-in-task = true
confirm = "Go on?"
[tools.static]
content = [{ type = "text", text = "went on" }]

[[tools]]
name = "plain"
description = "Never a task"
task = "never"
[tools.static]
content = [{ type = "text", text = "plain" }]
"#;

fn tasks_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-serve-tests", "version": "1.0.0"}
    })
}

/// A 2026 request from a client that declares the tasks extension, with the routing headers.
pub(crate) fn request(server: &HttpServer, method: &str, mut params: Value) -> (u16, Value) {
    params["_meta"] = tasks_meta();
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
        &headers,
    );
    let status = response.status().as_u16();
    (status, crate::http_harness::message(response, 7))
}

pub(crate) fn start_task(server: &HttpServer, tool: &str, arguments: Value) -> String {
    let (status, answer) = request(
        server,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

pub(crate) fn get(server: &HttpServer, id: &str) -> Value {
    let (_, answer) = request(server, "tasks/get", json!({"taskId": id}));
    answer
}

/// Polls until the task is in one of `statuses`; the last answer.
pub(crate) fn wait_for(
    server: &HttpServer,
    id: &str,
    statuses: &[&str],
    within: Duration,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let answer = get(server, id);
        let status = answer["result"]["status"].as_str().unwrap_or_default();
        if statuses.contains(&status) || Instant::now() > deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn serve(workspace: &Workspace, data: &Path, extra: &[&str]) -> HttpServer {
    let data = data.to_str().expect("utf-8");
    let mut flags = vec!["--data-dir", data];
    flags.extend_from_slice(extra);
    HttpServer::start(&workspace.manifest(), &flags)
}

#[test]
fn results_survive_a_sigkill_and_a_task_whose_server_died_reads_as_failed_after_its_lease() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let first = serve(&workspace, data.path(), &["--task-lease", "1s"]);
    let finished = start_task(&first, "work", json!({"seconds": 0, "tag": "done"}));
    let running = start_task(&first, "work", json!({"seconds": 60, "tag": "running"}));
    let done = wait_for(&first, &finished, &["completed"], Duration::from_secs(10));
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "worked 0");
    let pid = read_pid(&workspace.path("work-running.pid"));

    // The server dies without a chance to write anything.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first.pid()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
    drop(first);
    let second = serve(&workspace, data.path(), &[]);
    let kept = get(&second, &finished);
    assert_eq!(kept["result"]["status"], "completed", "{kept}");
    assert_eq!(kept["result"]["result"]["content"][0]["text"], "worked 0");

    let lapsed = wait_for(&second, &running, &["failed"], Duration::from_secs(10));
    let task = &lapsed["result"];
    assert_eq!(task["status"], "failed", "{lapsed}");
    assert_eq!(task["error"]["code"], -32603);
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("stopped before it finished"), "{message}");
    assert!(task.get("result").is_none());
    eprintln!("a SIGKILLed server's task: {message}");
    // What the dead server started is not ours to stop; clean it up.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[test]
fn a_cancel_through_another_server_kills_the_process_group_where_it_runs() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let runner = serve(&workspace, data.path(), &["--task-lease", "3s"]);
    let other = serve(&workspace, data.path(), &[]);
    let id = start_task(&runner, "work", json!({"seconds": 60, "tag": "cancel"}));
    let pid = read_pid(&workspace.path("work-cancel.pid"));
    assert!(alive(pid));
    // Progress and the log line are kept with the task, readable anywhere.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = get(&other, &id);
    while seen["result"]["statusMessage"] != "half way" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        seen = get(&other, &id);
    }
    assert_eq!(seen["result"]["status"], "working", "{seen}");
    assert_eq!(seen["result"]["statusMessage"], "half way", "{seen}");

    let cancelled_at = Instant::now();
    let (status, ack) = request(&other, "tasks/cancel", json!({"taskId": id}));
    assert_eq!(status, 200, "{ack}");
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert_eq!(get(&runner, &id)["result"]["status"], "cancelled");
    assert!(
        wait_gone(pid),
        "the cancelled task's process is still running"
    );
    eprintln!(
        "cancel through another process: process gone after {} ms",
        cancelled_at.elapsed().as_millis()
    );
    // It stays cancelled: the killed process never turns it into a result.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(get(&other, &id)["result"]["status"], "cancelled");
    // Cancelling again is acknowledged the same way.
    let (_, again) = request(&runner, "tasks/cancel", json!({"taskId": id}));
    assert_eq!(again["result"], json!({"resultType": "complete"}));

    // The operator's view, from the same store.
    let data_dir = data.path().to_str().expect("utf-8");
    let (code, out, err) = run(
        &["tasks", "--data-dir", data_dir, "get", &id],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(shown["status"], "cancelled");
    assert_eq!(shown["tool"], "work");
    assert_eq!(shown["progress"]["message"], "half way");
    assert_eq!(shown["logs"][0]["level"], "warning");
    assert_eq!(shown["logs"][0]["message"], "disk almost full");
    let (code, out, _) = run(
        &["tasks", "--data-dir", data_dir, "list"],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.contains(&id) && out.contains("cancelled"), "{out}");
}

#[test]
fn an_operator_cancels_from_the_command_line() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let server = serve(&workspace, data.path(), &["--task-lease", "3s"]);
    let id = start_task(&server, "work", json!({"seconds": 60, "tag": "operator"}));
    let pid = read_pid(&workspace.path("work-operator.pid"));
    let data_dir = data.path().to_str().expect("utf-8");
    let (code, _, err) = run(
        &["tasks", "--data-dir", data_dir, "cancel", &id],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("cancelled"), "{err}");
    assert!(wait_gone(pid));
    let task = get(&server, &id);
    assert_eq!(task["result"]["statusMessage"], "cancelled by an operator");
    let (code, _, err) = run(
        &["tasks", "--data-dir", data_dir, "get", "not-an-id"],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("not a task id"), "{err}");
}

#[test]
fn tasks_are_kept_for_their_ttl_then_forgotten_and_bad_ids_get_clear_errors() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let server = serve(&workspace, data.path(), &[]);
    let id = start_task(&server, "quick", json!({}));
    let done = wait_for(&server, &id, &["completed"], Duration::from_secs(5));
    assert_eq!(done["result"]["pollIntervalMs"], 200);
    // Kept 3 s after it ended (not forgotten early), then gone.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(get(&server, &id)["result"]["status"], "completed");
    std::thread::sleep(Duration::from_millis(1_500));
    let gone = get(&server, &id);
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no task"),
        "{gone}"
    );

    for (bad, says) in [
        ("", "not a task id"),
        ("../../../etc/passwd", "not a task id"),
        ("mcp-serve:task:*", "not a task id"),
        (&"f".repeat(32), "no task"),
        (&"A".repeat(32), "not a task id"),
    ] {
        for method in ["tasks/get", "tasks/cancel"] {
            let (_, answer) = request(&server, method, json!({"taskId": bad}));
            assert_eq!(answer["error"]["code"], -32602, "{method} {bad}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{method} {bad}: {message}");
        }
    }
    let (_, answer) = request(
        &server,
        "tasks/update",
        json!({"taskId": "f".repeat(32), "inputResponses": {}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // A `never` tool is answered in the request even when the client declares tasks; a
    // `required` one refuses a client that does not.
    let (_, plain) = request(
        &server,
        "tools/call",
        json!({"name": "plain", "arguments": {}}),
    );
    assert_eq!(plain["result"]["content"][0]["text"], "plain", "{plain}");
    let (status, refused) =
        server.modern(3, "tools/call", json!({"name": "quick", "arguments": {}}));
    assert_eq!(refused["error"]["code"], -32021, "{status} {refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{refused}"
    );
    // Arguments are checked before a task is made.
    let (_, invalid) = request(
        &server,
        "tools/call",
        json!({"name": "work", "arguments": {"seconds": "soon"}}),
    );
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert!(invalid["result"].get("taskId").is_none());
}

#[test]
fn another_session_cannot_see_or_cancel_a_task() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let server = serve(&workspace, data.path(), &["--sessions"]);
    let legacy = |session: &str, method: &str, params: Value| -> Value {
        let response = server.post(
            &json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Session-Id", session),
            ],
        );
        crate::http_harness::message(response, 9)
    };
    let initialize =
        |capabilities: Value| crate::http_harness::open_session_with(&server, &capabilities);
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let owner = initialize(tasks.clone());
    let stranger = initialize(tasks);
    let started = legacy(
        &owner,
        "tools/call",
        json!({"name": "work", "arguments": {"seconds": 30, "tag": "mine"}}),
    );
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a 2025 session gets a task")
        .to_owned();
    let pid = read_pid(&workspace.path("work-mine.pid"));
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = legacy(&stranger, method, json!({"taskId": id}));
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    assert!(alive(pid), "a stranger's cancel must not stop it");
    let mine = legacy(&owner, "tasks/get", json!({"taskId": id}));
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    let ack = legacy(&owner, "tasks/cancel", json!({"taskId": id}));
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(wait_gone(pid));
}

#[test]
fn call_task_runs_in_the_store_follows_it_and_ctrl_c_cancels_it() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let data_dir = data.path().to_str().expect("utf-8");
    let manifest = workspace.manifest();
    let config = manifest.to_str().expect("utf-8");
    let (code, out, err) = run(
        &[
            "call",
            "--config",
            config,
            "--data-dir",
            data_dir,
            "--task",
            "work",
            "seconds=0",
            "tag=cli",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "worked 0");
    assert!(
        err.contains("started in") && err.contains("tasks.sqlite3"),
        "{err}"
    );
    assert!(
        err.contains("disk almost full"),
        "the task's log line is shown: {err}"
    );
    let (_, listed, _) = run(
        &["tasks", "--data-dir", data_dir, "list", "--format", "json"],
        workspace.dir.path(),
    );
    let record: Value = serde_json::from_str(listed.lines().next().expect("a task")).expect("JSON");
    assert_eq!(record["status"], "completed");
    assert_eq!(record["tool"], "work");

    // Ctrl-C cancels the task, which kills its process.
    let mut command = std::process::Command::new(crate::harness::BINARY);
    command
        .args([
            "call",
            "--config",
            config,
            "--data-dir",
            data_dir,
            "--task",
            "work",
            "seconds=60",
            "tag=interrupted",
        ])
        .current_dir(workspace.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    let pid = read_pid(&workspace.path("work-interrupted.pid"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid")),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    let status =
        crate::harness::wait_with_timeout(&mut child, Duration::from_secs(10)).expect("exits");
    assert_eq!(status.code(), Some(130));
    assert!(wait_gone(pid));
    let (_, listed, _) = run(
        &["tasks", "--data-dir", data_dir, "list"],
        workspace.dir.path(),
    );
    assert!(
        listed.lines().any(|line| line.contains("cancelled")),
        "{listed}"
    );
}

#[test]
fn a_question_nobody_answers_ends_the_task_after_its_ttl_while_the_lease_holds() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    // A short lease: renewals must go on while the task waits for its answer.
    let server = serve(&workspace, data.path(), &["--task-lease", "1s"]);
    let id = start_task(&server, "asks", json!({}));
    let asking = wait_for(&server, &id, &["input_required"], Duration::from_secs(5));
    assert!(
        asking["result"]["inputRequests"]["confirm"].is_object(),
        "{asking}"
    );
    let ended = wait_for(
        &server,
        &id,
        &["completed", "failed"],
        Duration::from_secs(15),
    );
    assert_eq!(
        ended["result"]["status"], "completed",
        "not failed by a lapsed lease: {ended}"
    );
    assert_eq!(ended["result"]["result"]["isError"], true);
    let text = ended["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("no answer came within 3s"), "{text}");
}

#[test]
fn a_tls_redis_url_is_refused_plainly() {
    let workspace = Workspace::new(MANIFEST);
    let (code, _, err) = run(
        &[
            "tasks",
            "--task-store",
            "rediss://user:hunter2@redis.example:6380/0",
            "list",
        ],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("TLS to Redis"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let (code, _, err) = run(
        &["tasks", "--task-store", "memcached://h", "list"],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("expected redis://"), "{err}");
}

#[test]
fn broken_task_keys_are_reported_at_their_key() {
    let workspace = Workspace::new(
        r#"
[server]
task = "sometimes"
task-ttl = "1000h"
task-poll-interval = "1ms"

[[tools]]
name = "a"
description = "d"
task = "always"
[tools.static]
content = [{ type = "text", text = "a" }]

[[tools]]
name = "b"
description = "d"
ask-in-task = true
[tools.static]
content = [{ type = "text", text = "b" }]
"#,
    );
    let manifest = workspace.manifest();
    let (code, _, err) = run(
        &["check", "--config", manifest.to_str().expect("utf-8")],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    for expected in [
        "invalid `task` `sometimes`",
        "invalid `task` `always`",
        "invalid `task-ttl`: a duration must be more than zero and at most a week",
        "`task-poll-interval` must be between",
        "`ask-in-task` needs a tool that asks and may run as a task",
        "tools.toml:3:8",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
}

#[test]
fn a_server_that_stops_fails_its_running_tasks_at_once_and_stops_their_processes() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let mut server = serve(&workspace, data.path(), &["--shutdown-grace", "1s"]);
    let id = start_task(&server, "work", json!({"seconds": 60, "tag": "stopping"}));
    let pid = read_pid(&workspace.path("work-stopping.pid"));
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(wait_gone(pid), "the task's process outlived the server");
    let data_dir = data.path().to_str().expect("utf-8");
    let (code, out, err) = run(
        &["tasks", "--data-dir", data_dir, "get", &id],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(shown["status"], "failed", "{shown}");
    assert_eq!(
        shown["error"]["message"],
        "the server stopped before this task finished"
    );
}

pub(crate) const BOUNDED: &str = r#"
[server]
name = "bounded-tasks"
task = "optional"
task-ttl = "1h"

[[tools]]
name = "quick"
description = "Answers at once; only as a task"
task = "required"
[tools.static]
content = [{ type = "text", text = "quick" }]

[[tools]]
name = "echo"
description = "Says its text back"
arguments.text = { type = "string" }
[tools.static]
content = [{ type = "text", text = "{text}" }]

[[tools]]
name = "grow"
description = "Answers with 4 MB from no arguments at all"
[tools.command]
script = "head -c 4000000 /dev/zero | tr '\\000' x"
max-output = "8MiB"
"#;

/// A 2025-11-25 session whose client declares the tasks extension, on a `--sessions` server.
pub(crate) fn open_task_session(server: &HttpServer) -> String {
    crate::http_harness::open_session_with(
        server,
        &json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    )
}

/// A request in a 2025 session.
pub(crate) fn in_session(server: &HttpServer, session: &str, method: &str, params: Value) -> Value {
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session),
        ],
    );
    crate::http_harness::message(response, 9)
}

/// Starts `tool` as a task in a session; its id, or the JSON-RPC error's message.
fn try_task(
    server: &HttpServer,
    session: &str,
    tool: &str,
    arguments: Value,
) -> Result<String, String> {
    let answer = in_session(
        server,
        session,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    if let Some(id) = answer["result"]["taskId"].as_str() {
        return Ok(id.to_owned());
    }
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    Err(answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// Starts a stateless 2026 task; its id, or the JSON-RPC error's message.
pub(crate) fn try_stateless_task(
    client: &reqwest::blocking::Client,
    url: &str,
    tool: &str,
) -> Result<String, String> {
    try_stateless_task_with(client, url, tool, &[])
}

/// The same, with more headers.
fn try_stateless_task_with(
    client: &reqwest::blocking::Client,
    url: &str,
    tool: &str,
    headers: &[(&str, &str)],
) -> Result<String, String> {
    let name = tool.to_owned();
    let mut request = client.post(url);
    for (header, value) in headers {
        request = request.header(*header, *value);
    }
    let response = request
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", name)
        .body(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": tool, "arguments": {}, "_meta": tasks_meta()
            }})
            .to_string(),
        )
        .send()
        .expect("POST");
    let answer = crate::http_harness::message(response, 7);
    if let Some(id) = answer["result"]["taskId"].as_str() {
        return Ok(id.to_owned());
    }
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    Err(answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// `mcp-serve tasks list --format json` over `store` (`--data-dir DIR` or `--task-store URL`).
pub(crate) fn listed(store: &[&str], cwd: &Path) -> String {
    let mut args = vec!["tasks"];
    args.extend_from_slice(store);
    args.extend_from_slice(&["list", "--format", "json"]);
    let (code, out, err) = run(&args, cwd);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn the_store_keeps_at_most_100_tasks_per_caller_by_default() {
    let workspace = Workspace::new(BOUNDED);
    let data = tempfile::tempdir().expect("data");
    let server = serve(&workspace, data.path(), &[]);
    let client = crate::http_harness::http_client(Duration::from_secs(30));
    let mut accepted = 0;
    let mut refused = Vec::new();
    for _ in 0..103 {
        match try_stateless_task(&client, &server.url, "quick") {
            Ok(_) => accepted += 1,
            Err(message) => refused.push(message),
        }
    }
    eprintln!(
        "stateless callers (one anonymous caller): {accepted} tasks accepted, {} refused",
        refused.len()
    );
    assert_eq!(accepted, 100, "{refused:?}");
    assert_eq!(refused.len(), 3);
    assert!(
        refused[0].contains("at most 100 tasks per caller")
            && refused[0].contains("`--max-tasks-per-caller`"),
        "{}",
        refused[0]
    );
    let data_dir = data.path().to_str().expect("utf-8");
    let kept = listed(&["--data-dir", data_dir], workspace.dir.path());
    assert_eq!(kept.lines().count(), 100);
    // The refusal is about tasks: a plain call is still answered.
    let (_, plain) = request(
        &server,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(
        plain["error"]["code"], -32603,
        "echo is optional: a task: {plain}"
    );
    let (status, answer) = server.modern(
        5,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        answer["result"]["content"][0]["text"], "still here",
        "{answer}"
    );
}

#[test]
fn task_bounds_count_tasks_and_bytes_per_caller_and_in_total() {
    let workspace = Workspace::new(BOUNDED);
    let data = tempfile::tempdir().expect("data");
    let mut server = serve(
        &workspace,
        data.path(),
        &[
            "--sessions",
            "--max-tasks-per-caller",
            "5",
            "--max-task-bytes-per-caller",
            "3MiB",
            "--max-tasks",
            "10",
        ],
    );
    bounds_scenario(&mut server);
}

/// A client that opens sessions gets no more: `--max-tasks-per-caller 2` with three sessions
/// from one address keeps 2 tasks, not 6 (each session had its own bucket, so one client
/// held 5 of the 6 the store kept and the next caller was refused). The control: a client at
/// another address is its own caller, with its own 2, and the total still holds.
#[test]
fn sessions_of_one_client_share_its_task_bounds() {
    let workspace = Workspace::new(BOUNDED);
    let data = tempfile::tempdir().expect("data");
    let mut server = serve(
        &workspace,
        data.path(),
        &[
            "--sessions",
            "--max-tasks",
            "6",
            "--max-tasks-per-caller",
            "2",
        ],
    );
    let sessions: Vec<String> = (0..3).map(|_| open_task_session(&server)).collect();
    let mut kept = 0;
    let mut refused = Vec::new();
    for session in &sessions {
        for _ in 0..2 {
            match try_task(&server, session, "quick", json!({})) {
                Ok(_) => kept += 1,
                Err(message) => refused.push(message),
            }
        }
    }
    assert_eq!(kept, 2, "three sessions of one client: {refused:?}");
    assert!(
        refused
            .iter()
            .all(|message| message.contains("at most 2 tasks per caller")),
        "{refused:?}"
    );
    server.client = crate::http_harness::http_client_from("127.0.0.2", Duration::from_secs(30));
    let other = open_task_session(&server);
    for _ in 0..2 {
        try_task(&server, &other, "quick", json!({})).expect("another address has its own");
    }
    eprintln!(
        "three sessions of one client kept {kept} tasks; {} refused; another address kept 2",
        refused.len()
    );
}

/// Behind a reverse proxy every connection has the proxy's address: `--trusted-proxy` makes
/// its `X-Forwarded-For` name the client, so its clients are callers of their own, while a
/// client that is not a trusted proxy cannot claim an address by sending the header.
#[test]
fn a_trusted_proxys_clients_are_callers_of_their_own_and_no_one_else_can_claim_one() {
    let workspace = Workspace::new(BOUNDED);
    let data = tempfile::tempdir().expect("data");
    let server = serve(
        &workspace,
        data.path(),
        &[
            "--max-tasks-per-caller",
            "1",
            "--trusted-proxy",
            "127.0.0.1/32",
        ],
    );
    let proxy = crate::http_harness::http_client(Duration::from_secs(30));
    let from = |client: &str| [("X-Forwarded-For", client.to_owned())];
    let task = |client: &reqwest::blocking::Client, forwarded: &str| {
        let headers = from(forwarded);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(h, v)| (*h, v.as_str())).collect();
        try_stateless_task_with(client, &server.url, "quick", &headers)
    };
    task(&proxy, "198.51.100.1").expect("the proxy's first client");
    task(&proxy, "198.51.100.2").expect("its second client, a caller of its own");
    // A client's own header is kept by the proxy, which appends the real address.
    let refused = task(&proxy, "203.0.113.9, 198.51.100.1").expect_err("the first client again");
    assert!(refused.contains("at most 1 tasks per caller"), "{refused}");

    // The control: a peer that is not a trusted proxy is its own caller, whatever it sends.
    let direct = crate::http_harness::http_client_from("127.0.0.2", Duration::from_secs(30));
    task(&direct, "198.51.100.3").expect("127.0.0.2's first");
    let refused = task(&direct, "198.51.100.4").expect_err("a forged address changes nothing");
    assert!(refused.contains("at most 1 tasks per caller"), "{refused}");
}

/// Per caller 5 tasks and 3 MiB, 10 tasks in all: one caller's large tasks stop at the
/// bytes, another caller (another address) is still served, a result too large to keep
/// fails its task, and the total stops a third caller that is within its own bounds.
pub(crate) fn bounds_scenario(server: &mut HttpServer) {
    let large = json!({"text": "x".repeat(900 * 1024)});
    let first = open_task_session(server);
    let mut accepted = 0;
    let refusal = loop {
        match try_task(server, &first, "echo", large.clone()) {
            Ok(_) => accepted += 1,
            Err(message) => break message,
        }
        assert!(accepted < 5, "900 KiB tasks past 3 MiB were accepted");
    };
    eprintln!("900 KiB tasks within 3 MiB per caller: {accepted} accepted, then: {refusal}");
    assert_eq!(accepted, 3);
    assert!(
        refusal.contains("at most 3.0 MiB of tasks per caller")
            && refusal.contains("`--max-task-bytes-per-caller`"),
        "{refusal}"
    );

    // Another caller is not refused for the first one's bytes.
    server.client = crate::http_harness::http_client_from("127.0.0.2", Duration::from_secs(30));
    let second = open_task_session(server);
    let id = try_task(server, &second, "echo", large.clone()).expect("another caller's task");
    let done = in_session(server, &second, "tasks/get", json!({"taskId": id}));
    assert!(done.get("result").is_some(), "{done}");

    // A result that does not fit is not kept: its task fails, saying so, and the caller's
    // bytes stay within the bound.
    let grown = try_task(server, &second, "grow", json!({})).expect("a task");
    let deadline = Instant::now() + Duration::from_secs(20);
    let ended = loop {
        let answer = in_session(server, &second, "tasks/get", json!({"taskId": grown}));
        let status = answer["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if status != "working" || Instant::now() > deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ended["result"]["status"], "failed", "{ended}");
    assert_eq!(ended["result"]["error"]["code"], -32603);
    let message = ended["result"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("was not kept"), "{message}");
    eprintln!("a 4 MB result for a caller with 3 MiB: {message}");

    // Counted per caller: the second caller has 2; 3 more, then the sixth is refused.
    for _ in 0..3 {
        try_task(server, &second, "quick", json!({})).expect("within 5 tasks");
    }
    let refusal = try_task(server, &second, "quick", json!({})).expect_err("a sixth task");
    assert!(
        refusal.contains("at most 5 tasks per caller") && refusal.contains("this caller has 5"),
        "{refusal}"
    );

    // In total: 3 + 5 kept, so a third caller gets two and is then refused by the total.
    server.client = crate::http_harness::http_client_from("127.0.0.3", Duration::from_secs(30));
    let third = open_task_session(server);
    for _ in 0..2 {
        try_task(server, &third, "quick", json!({})).expect("within 10 in all");
    }
    let refusal = try_task(server, &third, "quick", json!({})).expect_err("an eleventh task");
    assert!(
        refusal.contains("at most 10 tasks in all") && refusal.contains("`--max-tasks`"),
        "{refusal}"
    );
    eprintln!("past the total: {refusal}");
}

#[test]
fn two_servers_sharing_one_file_never_pass_a_bound_together() {
    let workspace = Workspace::new(BOUNDED);
    let data = tempfile::tempdir().expect("data");
    let servers = [
        serve(&workspace, data.path(), &[]),
        serve(&workspace, data.path(), &[]),
    ];
    let urls: Vec<String> = servers.iter().map(|server| server.url.clone()).collect();
    let (accepted, refused) = race(&urls, 130);
    eprintln!(
        "130 tasks raced through two servers on one file: {accepted} accepted, {refused} refused"
    );
    assert_eq!((accepted, refused), (100, 30));
    let data_dir = data.path().to_str().expect("utf-8");
    let kept = listed(&["--data-dir", data_dir], workspace.dir.path());
    assert_eq!(kept.lines().count(), 100);
}

/// Starts `count` stateless tasks at once, spread over `urls` from 10 threads; (accepted,
/// refused by a bound).
pub(crate) fn race(urls: &[String], count: usize) -> (usize, usize) {
    let threads: Vec<_> = (0..10)
        .map(|thread| {
            let urls = urls.to_vec();
            std::thread::spawn(move || {
                let client = crate::http_harness::http_client(Duration::from_secs(60));
                let mut outcome = (0, 0);
                for index in (thread..count).step_by(10) {
                    match try_stateless_task(&client, &urls[index % urls.len()], "quick") {
                        Ok(_) => outcome.0 += 1,
                        Err(message) => {
                            assert!(message.contains("per caller"), "{message}");
                            outcome.1 += 1;
                        }
                    }
                }
                outcome
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|thread| thread.join().expect("a racing client"))
        .fold((0, 0), |(a, r), (accepted, refused)| {
            (a + accepted, r + refused)
        })
}

#[test]
fn the_embedded_store_never_holds_a_session_id() {
    let workspace = Workspace::new(MANIFEST);
    let data = tempfile::tempdir().expect("data");
    let server = serve(&workspace, data.path(), &["--sessions"]);
    let owner = open_task_session(&server);
    let stranger = open_task_session(&server);
    let started = in_session(
        &server,
        &owner,
        "tools/call",
        json!({"name": "quick", "arguments": {}}),
    );
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let mine = in_session(&server, &owner, "tasks/get", json!({"taskId": id}));
    assert!(
        mine.get("result").is_some(),
        "the owner sees its task: {mine}"
    );
    let theirs = in_session(&server, &stranger, "tasks/get", json!({"taskId": id}));
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");

    let data_dir = data.path().to_str().expect("utf-8");
    let kept = listed(&["--data-dir", data_dir], workspace.dir.path());
    assert!(
        !kept.contains(&owner),
        "the listing shows the session id: {kept}"
    );
    let record: Value = serde_json::from_str(kept.lines().next().expect("a task")).expect("JSON");
    let tag = record["owner"].as_str().expect("an owner");
    assert!(
        tag.len() == 64 && tag.bytes().all(|byte| byte.is_ascii_hexdigit()),
        "{tag}"
    );
    let mut files = 0;
    for entry in std::fs::read_dir(data.path()).expect("the data directory") {
        let path = entry.expect("an entry").path();
        let bytes = std::fs::read(&path).expect("a store file");
        files += 1;
        assert!(
            !bytes
                .windows(owner.len())
                .any(|window| window == owner.as_bytes()),
            "{} holds the session id",
            path.display()
        );
    }
    eprintln!("the session id is in none of the store's {files} files; its owner reads {tag}");
}
