//! Scale-out, proved on the real parts: a real `redis-server`, three stateless mcp-serve
//! replicas sharing it (`--task-store`, `--state-key-file`), and a real nginx running
//! `deploy/nginx.conf` round-robin in front. `scripts/test` installs nginx and redis-server
//! when they are missing.

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Workspace, alive, read_pid, repo_root, wait_gone};
use crate::http_harness::{HttpServer, http_client, sse_messages};

const MANIFEST: &str = r#"
[server]
name = "scale-out"
task = "optional"
task-poll-interval = "100ms"

[[tools]]
name = "echo"
description = "Says the nonce back"
task = "never"
arguments.nonce = { type = "string" }
[tools.command]
argv = ["echo", "{nonce}"]

[[tools]]
name = "steps"
description = "A progress message per step, one step every 300 ms"
arguments.steps = { type = "integer", minimum = 1 }
arguments.tag = { type = "string", default = "t" }
[tools.command]
script = '''
echo $$ > "steps-$2.pid"
i=1
while [ "$i" -le "$1" ]; do
  printf '{"progress": %s, "total": %s, "message": "step %s of %s"}\n' "$i" "$1" "$i" "$1" > "$MCP_SERVE_EVENTS"
  sleep 0.3
  i=$((i + 1))
done
echo "did $1 steps"
'''
args = ["{steps}", "{tag}"]
events = true
timeout = "10m"

[[tools]]
name = "delete"
description = "Asks first (a 2026 client gets input_required with a sealed state)"
task = "never"
arguments.name = { type = "string" }
confirm = "Delete {name}?"
[tools.static]
content = [{ type = "text", text = "deleted {name}" }]
"#;

fn program(name: &str) -> PathBuf {
    for directory in [
        "/usr/sbin",
        "/usr/bin",
        "/usr/local/sbin",
        "/usr/local/bin",
        "/sbin",
    ] {
        let path = Path::new(directory).join(name);
        if path.exists() {
            return path;
        }
    }
    panic!(
        "`{name}` is needed for the scale-out tests (scripts/test installs it as root: apt-get install nginx-light redis-server)"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A child process stopped when dropped: SIGTERM (nginx's master then stops its workers;
/// SIGKILL would orphan them), SIGKILL only if it has not exited within 5 s.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).unwrap_or(i32::MAX));
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if crate::harness::wait_with_timeout(&mut self.0, Duration::from_secs(5)).is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A real redis-server on a free port, without persistence.
fn redis() -> (Killed, u16) {
    let port = free_port();
    let child = Killed(
        Command::new(program("redis-server"))
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::Write as _;
            let mut reply = [0u8; 7];
            if stream.write_all(b"PING\r\n").is_ok()
                && stream.read_exact(&mut reply).is_ok()
                && &reply == b"+PONG\r\n"
            {
                return (child, port);
            }
        }
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Real nginx running `deploy/nginx.conf`, with its ports and paths swapped for ours.
fn nginx(scratch: &Path, replicas: &[&HttpServer]) -> (Killed, String) {
    let port = free_port();
    let mut config =
        std::fs::read_to_string(repo_root().join("deploy/nginx.conf")).expect("deploy/nginx.conf");
    let mut swap = |from: &str, to: &str| {
        assert!(
            config.contains(from),
            "deploy/nginx.conf no longer has `{from}`"
        );
        config = config.replace(from, to);
    };
    swap(
        "pid /run/mcp-serve-nginx.pid;",
        &format!("pid {}/nginx.pid;", scratch.display()),
    );
    swap("/var/lib/nginx/", &format!("{}/", scratch.display()));
    swap(
        "listen 127.0.0.1:8080;",
        &format!("listen 127.0.0.1:{port};"),
    );
    for (index, replica) in replicas.iter().enumerate() {
        let address = replica.base.trim_start_matches("http://");
        swap(
            &format!("server 127.0.0.1:808{};", index + 1),
            &format!("server {address};"),
        );
    }
    // As root, nginx's workers run as nobody: they must reach the scratch directory.
    set_mode(scratch, 0o777);
    let path = scratch.join("nginx.conf");
    std::fs::write(&path, config).expect("write nginx.conf");
    let child = Command::new(program("nginx"))
        .arg("-p")
        .arg(scratch)
        .arg("-c")
        .arg(&path)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx");
    let child = Killed(child);
    let base = format!("http://127.0.0.1:{port}");
    let client = http_client(Duration::from_secs(2));
    let deadline = Instant::now() + Duration::from_secs(10);
    while client
        .get(format!("{base}/readyz"))
        .send()
        .map_or(true, |response| !response.status().is_success())
    {
        assert!(Instant::now() < deadline, "nginx did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, format!("{base}/mcp"))
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Redis, three replicas and nginx, for one manifest.
struct Cluster {
    replicas: Vec<HttpServer>,
    url: String,
    _nginx: Killed,
    _redis: Killed,
    _scratch: tempfile::TempDir,
}

fn cluster(manifest: &Path, extra: &[&str]) -> Cluster {
    let scratch = tempfile::tempdir().expect("scratch");
    let (redis, port) = redis();
    let key = scratch.path().join("state-key");
    std::fs::write(
        &key,
        "a shared key of more than thirty-two bytes, for every replica",
    )
    .expect("key");
    let store = format!("redis://127.0.0.1:{port}/0");
    let key = key.to_str().expect("utf-8").to_owned();
    let mut flags = vec![
        "--task-store",
        store.as_str(),
        "--state-key-file",
        key.as_str(),
    ];
    flags.extend_from_slice(extra);
    let replicas: Vec<HttpServer> = (0..3)
        .map(|_| HttpServer::start(manifest, &flags))
        .collect();
    let nginx_dir = scratch.path().join("nginx");
    std::fs::create_dir(&nginx_dir).expect("nginx dir");
    let (nginx, url) = nginx(&nginx_dir, &replicas.iter().collect::<Vec<_>>());
    Cluster {
        replicas,
        url,
        _nginx: nginx,
        _redis: redis,
        _scratch: scratch,
    }
}

fn tasks_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "scale-out", "version": "1.0.0"}
    })
}

/// A 2026 request to `url`; (HTTP status, the reply) or the transport error.
fn modern(
    client: &reqwest::blocking::Client,
    url: &str,
    id: u64,
    method: &str,
    mut params: Value,
) -> Result<(u16, Value), String> {
    params["_meta"] = tasks_meta();
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let mut request = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    if let Some(name) = &name {
        request = request.header("Mcp-Name", name);
    }
    reply(request, id)
}

/// A 2025-11-25 request (stateless: no session needed).
fn legacy(
    client: &reqwest::blocking::Client,
    url: &str,
    id: u64,
    method: &str,
    params: Value,
) -> Result<(u16, Value), String> {
    let request = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    reply(request, id)
}

fn reply(request: reqwest::blocking::RequestBuilder, id: u64) -> Result<(u16, Value), String> {
    let described = |error: reqwest::Error| {
        if error.is_timeout() {
            format!("LOST (no answer in time): {error}")
        } else {
            error.to_string()
        }
    };
    let response = request.send().map_err(described)?;
    let status = response.status().as_u16();
    let body = response.text().map_err(described)?;
    if status != 200 {
        return Ok((status, Value::Null));
    }
    let found = serde_json::from_str::<Value>(&body)
        .ok()
        .into_iter()
        .chain(sse_messages(&body))
        .find(|message| message.get("id").is_some());
    match found {
        Some(message) if message["id"] == json!(id) => Ok((status, message)),
        Some(message) => Err(format!("MISROUTED: asked {id}, got {message}")),
        None => Err(format!("no reply in {body}")),
    }
}

fn call(url: &str, id: u64, tool: &str, arguments: Value) -> Value {
    let client = http_client(Duration::from_secs(30));
    let (status, answer) = modern(
        &client,
        url,
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .expect("a reply");
    assert_eq!(status, 200, "{answer}");
    answer
}

fn get(url: &str, id: &str) -> Value {
    let client = http_client(Duration::from_secs(10));
    modern(&client, url, 1, "tasks/get", json!({"taskId": id}))
        .expect("a reply")
        .1
}

fn wait_for(url: &str, id: &str, status: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let answer = get(url, id);
        if answer["result"]["status"] == status || Instant::now() > deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn both_eras_and_tasks_work_through_nginx_on_any_replica() {
    let workspace = Workspace::new(MANIFEST);
    let cluster = cluster(&workspace.manifest(), &["--task-lease", "3s"]);
    let client = http_client(Duration::from_secs(10));

    // Both eras, round-robin, no sticky routing: every reply is right.
    for id in 0..12u64 {
        let nonce = format!("n{id}");
        let arguments = json!({"name": "echo", "arguments": {"nonce": nonce}});
        let (status, answer) = if id.is_multiple_of(2) {
            modern(&client, &cluster.url, id, "tools/call", arguments)
        } else {
            legacy(&client, &cluster.url, id, "tools/call", arguments)
        }
        .expect("a reply");
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            nonce.as_str(),
            "{answer}"
        );
    }
    let (_, list) = legacy(&client, &cluster.url, 99, "tools/list", json!({})).expect("list");
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(3));

    // A 2026 question round trip: the second round lands on another replica, which opens
    // the state the first sealed (the key every replica shares).
    for round in 0..3 {
        let first = call(&cluster.url, 10, "delete", json!({"name": "report"}));
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let state = first["result"]["requestState"].clone();
        let (status, second) = modern(
            &client,
            &cluster.url,
            11,
            "tools/call",
            json!({"name": "delete", "arguments": {"name": "report"}, "requestState": state,
                   "inputResponses": {"confirm": {"action": "accept", "content": {}}}}),
        )
        .expect("a reply");
        assert_eq!(status, 200);
        assert_eq!(
            second["result"]["content"][0]["text"], "deleted report",
            "round {round}: {second}"
        );
    }
}

#[test]
fn a_task_started_on_one_replica_is_read_and_cancelled_through_the_others() {
    let workspace = Workspace::new(MANIFEST);
    let cluster = cluster(&workspace.manifest(), &["--task-lease", "3s"]);
    let client = http_client(Duration::from_secs(10));
    // A task started on replica 1 is read on 2 and 3 and through nginx, and cancelled
    // through replica 3: Redis pub/sub reaches replica 1, which kills the process.
    let [one, two, three] = [
        &cluster.replicas[0],
        &cluster.replicas[1],
        &cluster.replicas[2],
    ];
    let started = call(&one.url, 20, "steps", json!({"steps": 200, "tag": "cross"}));
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let pid = read_pid(&workspace.path("steps-cross.pid"));
    for url in [&two.url, &three.url, &cluster.url] {
        let seen = wait_for(url, &id, "working", Duration::from_secs(5));
        assert_eq!(seen["result"]["taskId"], id.as_str(), "{seen}");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = get(&two.url, &id);
    while !seen["result"]["statusMessage"]
        .as_str()
        .unwrap_or_default()
        .starts_with("step")
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
        seen = get(&two.url, &id);
    }
    assert!(
        seen["result"]["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .starts_with("step"),
        "progress is kept with the task in Redis: {seen}"
    );
    let cancelled_at = Instant::now();
    let (_, ack) = modern(
        &client,
        &three.url,
        21,
        "tasks/cancel",
        json!({"taskId": id}),
    )
    .expect("cancel");
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert!(
        wait_gone(pid),
        "the process on replica 1 survived a cancel through replica 3"
    );
    let took = cancelled_at.elapsed();
    eprintln!(
        "cancel through another replica: process gone after {} ms",
        took.as_millis()
    );
    assert_eq!(get(&cluster.url, &id)["result"]["status"], "cancelled");

    // A task started through nginx completes, and its result is read on every replica.
    let started = call(
        &cluster.url,
        30,
        "steps",
        json!({"steps": 2, "tag": "done"}),
    );
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let done = wait_for(&cluster.url, &id, "completed", Duration::from_secs(10));
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "did 2 steps",
        "{done}"
    );
    for replica in &cluster.replicas {
        assert_eq!(get(&replica.url, &id)["result"]["status"], "completed");
    }
}

#[test]
fn sse_progress_streams_through_nginx_as_it_happens() {
    let workspace = Workspace::new(MANIFEST);
    let cluster = cluster(&workspace.manifest(), &[]);
    let client = http_client(Duration::from_secs(30));
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "steps", "arguments": {"steps": 4},
        "_meta": {"progressToken": "p", "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "sse", "version": "1"}}
    }});
    let mut response = client
        .post(&cluster.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "steps")
        .body(body.to_string())
        .send()
        .expect("POST");
    let started = Instant::now();
    let mut first_progress = None;
    let mut text = String::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = response.read(&mut buffer).expect("read the stream");
        if read == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buffer[..read]));
        if first_progress.is_none() && text.contains("notifications/progress") {
            first_progress = Some(started.elapsed());
        }
    }
    let ended = started.elapsed();
    let messages = sse_messages(&text);
    let progress = messages
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .count();
    let result = messages
        .iter()
        .find(|message| message["id"] == json!(5))
        .expect("the result");
    assert_eq!(result["result"]["content"][0]["text"], "did 4 steps");
    let first = first_progress.expect("progress came through");
    eprintln!(
        "through nginx: {progress} progress events, the first after {} ms, the result after {} ms",
        first.as_millis(),
        ended.as_millis()
    );
    assert!(progress >= 2, "{text}");
    // Four steps of 300 ms: buffered, everything would arrive at the end together.
    assert!(
        ended.saturating_sub(first) >= Duration::from_millis(600),
        "progress was held back: first {first:?}, end {ended:?}"
    );
}

/// 16 clients' counts.
#[derive(Clone)]
struct Load {
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicU64>,
    retryable: Arc<AtomicU64>,
    next_id: Arc<AtomicU64>,
}

impl Default for Load {
    fn default() -> Self {
        Self {
            stop: Arc::default(),
            ok: Arc::default(),
            retryable: Arc::default(),
            next_id: Arc::new(AtomicU64::new(1000)),
        }
    }
}

impl Load {
    /// One client: calls `echo` with a nonce until stopped, both eras in turn; returns the
    /// answers that were lost or wrong.
    fn client(&self, index: usize, url: &str) -> Vec<String> {
        let client = http_client(Duration::from_secs(20));
        let mut wrong = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let nonce = format!("c{index}-{id}");
            let arguments = json!({"name": "echo", "arguments": {"nonce": nonce}});
            let sent = if id.is_multiple_of(2) {
                modern(&client, url, id, "tools/call", arguments)
            } else {
                legacy(&client, url, id, "tools/call", arguments)
            };
            match sent {
                Ok((200, answer)) if answer["result"]["content"][0]["text"] == nonce.as_str() => {
                    self.ok.fetch_add(1, Ordering::Relaxed);
                }
                // nginx's 502 for the request in flight on the killed replica, or a
                // connection error: the client may retry.
                Ok((502..=504, _)) => {
                    self.retryable.fetch_add(1, Ordering::Relaxed);
                }
                Err(error) if !error.contains("MISROUTED") && !error.contains("LOST") => {
                    self.retryable.fetch_add(1, Ordering::Relaxed);
                }
                other => wrong.push(format!("{nonce}: {other:?}")),
            }
        }
        wrong
    }
}

#[test]
fn a_replica_killed_under_load_loses_no_answer_and_its_tasks_fail_after_the_lease() {
    let workspace = Workspace::new(MANIFEST);
    let cluster = cluster(&workspace.manifest(), &["--task-lease", "1s"]);
    let victim = &cluster.replicas[1];
    let mut tasks = Vec::new();
    for index in 0..3 {
        let started = call(
            &victim.url,
            40,
            "steps",
            json!({"steps": 500, "tag": format!("victim{index}")}),
        );
        tasks.push(
            started["result"]["taskId"]
                .as_str()
                .expect("a task")
                .to_owned(),
        );
    }
    let pids: Vec<i32> = (0..3)
        .map(|index| read_pid(&workspace.path(&format!("steps-victim{index}.pid"))))
        .collect();

    let load = Load::default();
    let clients: Vec<_> = (0..16)
        .map(|client| {
            let (load, url) = (load.clone(), cluster.url.clone());
            std::thread::spawn(move || load.client(client, &url))
        })
        .collect();

    std::thread::sleep(Duration::from_millis(1500));
    let before = load.ok.load(Ordering::Relaxed);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(victim.pid()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL a replica");
    std::thread::sleep(Duration::from_millis(2500));
    load.stop.store(true, Ordering::Relaxed);
    let wrong: Vec<String> = clients
        .into_iter()
        .flat_map(|client| client.join().expect("client thread"))
        .collect();
    let (ok, retryable) = (
        load.ok.load(Ordering::Relaxed),
        load.retryable.load(Ordering::Relaxed),
    );
    let sent = load.next_id.load(Ordering::Relaxed) - 1000;
    eprintln!(
        "16 clients through nginx, one of three replicas SIGKILLed: {sent} requests, {ok} answered right ({before} before the kill), {retryable} retryable errors, {} lost or wrong",
        wrong.len()
    );
    assert!(wrong.is_empty(), "lost or wrong answers: {wrong:#?}");
    assert_eq!(ok + retryable, sent, "every request was accounted for");
    assert!(ok > before, "the other replicas kept answering");

    // The killed replica's tasks read as failed once their lease has run out.
    for id in &tasks {
        let failed = wait_for(&cluster.url, id, "failed", Duration::from_secs(10));
        assert_eq!(failed["result"]["status"], "failed", "{failed}");
        assert!(
            failed["result"]["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("lease"),
            "{failed}"
        );
    }
    for pid in pids {
        // Orphans of the killed replica (nothing is left to stop them): clean up.
        if alive(pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The official Python SDK client drives a task through nginx on Redis (2026: stateless).
#[test]
fn the_python_client_drives_a_task_through_nginx_on_redis() {
    let workspace = Workspace::new(crate::interop::TASK_TOOL);
    let cluster = cluster(&workspace.manifest(), &[]);
    let steps = crate::interop::drive_python_task(&cluster.url, "2026-07-28");
    eprintln!(
        "python task client through nginx on Redis: {} steps",
        steps.len()
    );
}

/// The tasks scenarios of the official suite, through nginx, on three replicas sharing Redis.
#[test]
fn the_tasks_conformance_scenarios_pass_through_nginx_on_redis() {
    let cluster = cluster(&repo_root().join("tests/fixtures/conformance.toml"), &[]);
    let mut checks = 0;
    for scenario in [
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    ] {
        let output = crate::conformance::next_scenario(&cluster.url, scenario, &[]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        checks += stdout.matches("SUCCESS").count();
        assert!(
            output.status.success() && !stdout.contains("FAILURE"),
            "{scenario} through nginx on Redis:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    eprintln!("tasks extension through nginx on Redis: {checks} checks pass");
}

/// A redis-server and the `--task-store` URL that reaches it.
fn task_store() -> (Killed, u16, String) {
    let (redis, port) = redis();
    (redis, port, format!("redis://127.0.0.1:{port}/0"))
}

#[test]
fn replicas_sharing_redis_never_pass_a_task_bound_together() {
    let workspace = Workspace::new(crate::tasks::BOUNDED);
    let (_redis, _, store) = task_store();
    let replicas: Vec<HttpServer> = (0..3)
        .map(|_| HttpServer::start(&workspace.manifest(), &["--task-store", &store]))
        .collect();
    let urls: Vec<String> = replicas.iter().map(|replica| replica.url.clone()).collect();
    let (accepted, refused) = crate::tasks::race(&urls, 130);
    eprintln!(
        "130 tasks raced through three replicas on one Redis: {accepted} accepted, {refused} refused"
    );
    assert_eq!((accepted, refused), (100, 30));
    let kept = crate::tasks::listed(&["--task-store", &store], workspace.dir.path());
    assert_eq!(kept.lines().count(), 100);
}

#[test]
fn redis_bounds_task_bytes_per_caller_and_in_total() {
    let workspace = Workspace::new(crate::tasks::BOUNDED);
    let (_redis, _, store) = task_store();
    let mut server = HttpServer::start(
        &workspace.manifest(),
        &[
            "--task-store",
            &store,
            "--sessions",
            "--max-tasks-per-caller",
            "5",
            "--max-task-bytes-per-caller",
            "3MiB",
            "--max-tasks",
            "10",
        ],
    );
    crate::tasks::bounds_scenario(&mut server);
}

/// Every key in Redis with its value, as text.
fn everything_in(port: u16) -> String {
    let cli = |args: &[&str]| -> String {
        let output = Command::new(program("redis-cli"))
            .args(["-p", &port.to_string(), "--raw"])
            .args(args)
            .output()
            .expect("redis-cli");
        assert!(output.status.success(), "redis-cli {args:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let mut everything = String::new();
    for key in cli(&["--scan"]).lines() {
        everything.push_str(key);
        everything.push('\n');
        let value = match cli(&["TYPE", key]).trim() {
            "string" => cli(&["GET", key]),
            "hash" => cli(&["HGETALL", key]),
            "zset" => cli(&["ZRANGE", key, "0", "-1", "WITHSCORES"]),
            "set" => cli(&["SMEMBERS", key]),
            "list" => cli(&["LRANGE", key, "0", "-1"]),
            other => panic!("a Redis key of type {other}: {key}"),
        };
        everything.push_str(&value);
    }
    everything
}

#[test]
fn redis_holds_keyed_hashes_of_owners_and_every_replica_agrees_on_them() {
    let workspace = Workspace::new(crate::tasks::BOUNDED);
    let (_redis, port, store) = task_store();
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--task-store", &store, "--sessions"],
    );
    let owner = crate::tasks::open_task_session(&server);
    let stranger = crate::tasks::open_task_session(&server);
    let started = crate::tasks::in_session(
        &server,
        &owner,
        "tools/call",
        json!({"name": "quick", "arguments": {}}),
    );
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let mine = crate::tasks::in_session(&server, &owner, "tasks/get", json!({"taskId": id}));
    assert!(
        mine.get("result").is_some(),
        "the owner sees its task: {mine}"
    );
    let theirs = crate::tasks::in_session(&server, &stranger, "tasks/get", json!({"taskId": id}));
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");

    let everything = everything_in(port);
    assert!(
        everything.contains(&id),
        "the dump holds the task: {everything}"
    );
    assert!(
        !everything.contains(&owner),
        "Redis holds the session id:\n{everything}"
    );
    let kept = crate::tasks::listed(&["--task-store", &store], workspace.dir.path());
    assert!(
        !kept.contains(&owner),
        "the listing shows the session id: {kept}"
    );
    eprintln!(
        "Redis holds {} bytes of keys and values, none of them the session id",
        everything.len()
    );

    subjects_are_the_same_owner_on_every_replica(&store, port);
}

/// A subject's task started on one replica is read through another (every replica hashes
/// owners with the same key), another subject's is not, and Redis holds no subject.
fn subjects_are_the_same_owner_on_every_replica(store: &str, port: u16) {
    let keys = tempfile::tempdir().expect("keys");
    let key = crate::oauth::make_key(keys.path(), "k1", jsonwebtoken::Algorithm::ES256);
    let issuer = crate::oauth::Issuer::start(vec![key.jwk.clone()]);
    let subjects = Workspace::new(&format!(
        r#"
[server]
task = "optional"

[server.auth]
issuer = "{}"
audience = "{}"

[[tools]]
name = "quick"
description = "Answers at once; only as a task"
task = "required"
[tools.static]
content = [{{ type = "text", text = "quick" }}]
"#,
        issuer.url(),
        crate::oauth::AUDIENCE
    ));
    let replicas: Vec<HttpServer> = (0..2)
        .map(|_| HttpServer::start(&subjects.manifest(), &["--task-store", store]))
        .collect();
    let alice = format!(
        "Bearer {}",
        crate::oauth::sign(&key, issuer.claims("alice", ""))
    );
    let bob = format!(
        "Bearer {}",
        crate::oauth::sign(&key, issuer.claims("bob", ""))
    );
    let started = ask(
        &replicas[0],
        &alice,
        "tools/call",
        json!({"name": "quick", "arguments": {}}),
    );
    let id = started["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let elsewhere = ask(&replicas[1], &alice, "tasks/get", json!({"taskId": id}));
    assert!(
        elsewhere.get("result").is_some(),
        "alice reads her task through the other replica: {elsewhere}"
    );
    let refused = ask(&replicas[1], &bob, "tasks/get", json!({"taskId": id}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        !everything_in(port).contains("alice"),
        "Redis holds a subject"
    );
    the_owner_key_outlives_redis_losing_it(&replicas, &alice, port);
}

/// A 2026 request with a bearer token; the reply.
fn ask(replica: &HttpServer, token: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = tasks_meta();
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let response = replica.post(
        &json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params}),
        &[
            ("Authorization", token),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", &name),
        ],
    );
    crate::http_harness::message(response, 3)
}

/// Redis loses everything (a restart without persistence): the next task started writes its
/// replica's key back. Another key appears (made by a process that started meanwhile): a
/// replica that starts a task adopts it, and one that reads a task tagged with it reads the
/// key again. Either way both replicas still find the caller's tasks.
fn the_owner_key_outlives_redis_losing_it(replicas: &[HttpServer], token: &str, port: u16) {
    let redis = |args: &[&str]| -> String {
        let output = Command::new(program("redis-cli"))
            .args(["-p", &port.to_string(), "--raw"])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    let start = |replica: &HttpServer| -> String {
        let started = ask(
            replica,
            token,
            "tools/call",
            json!({"name": "quick", "arguments": {}}),
        );
        started["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {started}"))
            .to_owned()
    };
    let found = |replica: &HttpServer, id: &str| -> bool {
        ask(replica, token, "tasks/get", json!({"taskId": id}))
            .get("result")
            .is_some()
    };
    let key = redis(&["GET", "mcp-serve:owner-key"]);
    assert_eq!(key.len(), 64, "{key}");
    redis(&["FLUSHALL"]);
    let id = start(&replicas[1]);
    assert_eq!(redis(&["GET", "mcp-serve:owner-key"]), key, "written back");
    assert!(found(&replicas[0], &id));

    let made_anew = "f".repeat(64);
    redis(&["SET", "mcp-serve:owner-key", &made_anew]);
    let id = start(&replicas[0]);
    assert_eq!(redis(&["GET", "mcp-serve:owner-key"]), made_anew, "adopted");
    assert!(found(&replicas[0], &id));
    assert!(found(&replicas[1], &id), "read again by the other replica");
}
