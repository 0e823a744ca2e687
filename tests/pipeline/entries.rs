//! The ways a call reaches the pipeline, each as a client of its own medium: it calls a tool
//! and answers the tool's question (`confirm`) the way that medium does.

use std::io::{BufRead as _, BufReader};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BINARY, Server, Workspace};
use crate::http_harness::{HttpServer, http_client, message, open_session_with, post_to};

/// Every entry path the pipeline has; add one here when the pipeline gains one.
pub(super) const ALL: [Kind; 16] = [
    Kind::Stdio2025,
    Kind::StdioDiscovery,
    Kind::Stdio2025Stray,
    Kind::Stdio2026,
    Kind::Stdio2026UpFront,
    Kind::Http2025,
    Kind::Http2025Stray,
    Kind::HttpSessions,
    Kind::Http2026,
    Kind::Http2026UpFront,
    Kind::Http2026Discovery,
    Kind::Task,
    Kind::TaskInside,
    Kind::Cli,
    Kind::CliTask,
    Kind::Test,
];

/// The flags every server of the matrix runs with.
const FLAGS: [&str; 8] = [
    "--audit",
    "--log-format",
    "json",
    "--max-calls",
    "1",
    "--queue",
    "0",
    "--metrics",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// stdio, 2025-11-25: questions as `elicitation/create` on the connection.
    Stdio2025,
    /// stdio, 2025, with the 2026 answer keys added (`inputResponses`, a stray
    /// `requestState`): a 2025 request carries them too.
    Stdio2025Stray,
    /// stdio, 2025, `--discovery`: the tool reached through `call_tool`.
    StdioDiscovery,
    /// stdio, 2026-07-28: `input_required`, then a retry with the answers and the state.
    Stdio2026,
    /// stdio, 2026: the answers sent up front, and a stray `requestState` on tools that ask
    /// nothing (the keys an attacker adds to skip a policy).
    Stdio2026UpFront,
    /// HTTP, 2025, stateless: nothing to ask on.
    Http2025,
    /// HTTP, 2025, stateless, with the 2026 answer keys added.
    Http2025Stray,
    /// HTTP, 2025 with `--sessions`: questions on the session's stream.
    HttpSessions,
    /// HTTP, 2026: `input_required` rounds.
    Http2026,
    /// HTTP, 2026: answers up front and a stray `requestState`.
    Http2026UpFront,
    /// HTTP, 2026 rounds, `--discovery`: the tool reached through `call_tool`.
    Http2026Discovery,
    /// HTTP, 2026, the tasks extension declared: the call becomes a task (questions first).
    Task,
    /// As `Task`, for `ask-in-task` tools: questions inside the task, answered with
    /// `tasks/update`.
    TaskInside,
    /// `mcp-serve call` (`--yes` answers).
    Cli,
    /// `mcp-serve call --task`.
    CliTask,
    /// `mcp-serve test`: the calls as the tool's examples.
    Test,
}

/// How a question is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Accept,
    Decline,
}

impl Answer {
    fn action(self) -> &'static str {
        match self {
            Answer::Accept => "accept",
            Answer::Decline => "decline",
        }
    }
}

/// One call: the tool, its arguments, and how its question is answered.
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub(super) tool: String,
    pub(super) arguments: Value,
    pub(super) answer: Answer,
    /// `mcp-serve test` shows what the tool returned (an example passes silently, so this
    /// one expects a text it cannot have, and its report quotes the text it got).
    pub(super) show: bool,
}

impl Call {
    pub(super) fn new(tool: &str, answer: Answer) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments: json!({}),
            answer,
            show: false,
        }
    }
}

/// The end of one call as the entry saw it: a result, or a protocol error.
pub(super) type Ended = Result<Value, Value>;

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Stdio2025 => "stdio 2025",
            Kind::Stdio2025Stray => "stdio 2025 stray answer keys",
            Kind::StdioDiscovery => "stdio 2025 through call_tool",
            Kind::Stdio2026 => "stdio 2026 rounds",
            Kind::Stdio2026UpFront => "stdio 2026 answers up front",
            Kind::Http2025 => "http 2025 stateless",
            Kind::Http2025Stray => "http 2025 stray answer keys",
            Kind::HttpSessions => "http 2025 --sessions",
            Kind::Http2026 => "http 2026 rounds",
            Kind::Http2026UpFront => "http 2026 answers up front",
            Kind::Http2026Discovery => "http 2026 through call_tool",
            Kind::Task => "task",
            Kind::TaskInside => "task, asked inside",
            Kind::Cli => "mcp-serve call",
            Kind::CliTask => "mcp-serve call --task",
            Kind::Test => "mcp-serve test",
        }
    }

    /// Whether the medium can carry a question at all.
    pub(super) fn can_ask(self) -> bool {
        !matches!(self, Kind::Http2025 | Kind::Http2025Stray)
    }

    /// Whether the entry adds the answer keys to every request before anything asks.
    fn up_front(self) -> bool {
        matches!(
            self,
            Kind::Stdio2025Stray
                | Kind::Stdio2026UpFront
                | Kind::Http2025Stray
                | Kind::Http2026UpFront
        )
    }

    /// Whether it speaks 2025 over stdio (an `initialize` first).
    fn legacy_stdio(self) -> bool {
        matches!(
            self,
            Kind::Stdio2025 | Kind::Stdio2025Stray | Kind::StdioDiscovery
        )
    }

    /// Whether its server runs `--discovery` and it calls each tool through `call_tool`.
    fn discovery(self) -> bool {
        matches!(self, Kind::StdioDiscovery | Kind::Http2026Discovery)
    }

    /// `call` as this entry sends it: through `call_tool` in discovery mode.
    fn sent(self, call: &Call) -> Call {
        if !self.discovery() {
            return call.clone();
        }
        Call {
            tool: "call_tool".to_owned(),
            arguments: json!({"name": call.tool, "arguments": call.arguments}),
            ..call.clone()
        }
    }

    /// Whether one process serves several calls (a terminal command runs one).
    pub(super) fn one_call_per_process(self) -> bool {
        matches!(self, Kind::Cli | Kind::CliTask)
    }

    /// The asking variant of a tool for this entry: `-inside` asks inside its task.
    pub(super) fn asking(self, base: &str) -> String {
        if self == Kind::TaskInside {
            format!("{base}-inside")
        } else {
            format!("{base}-asks")
        }
    }
}

/// A running entry: a server (or, for terminal commands, the workspace they run in).
pub(super) struct Entry<'a> {
    pub(super) kind: Kind,
    workspace: &'a Workspace,
    stdio: Option<Server>,
    http: Option<HttpServer>,
    session: Option<String>,
    /// What terminal commands wrote to stderr.
    terminal_log: String,
    /// The environment every process of this entry starts with, beside the harness's.
    env: Vec<(&'static str, &'static str)>,
}

impl<'a> Entry<'a> {
    pub(super) fn start(kind: Kind, workspace: &'a Workspace) -> Self {
        Self::start_with_env(kind, workspace, &[])
    }

    /// Starts the entry's server, or readies its commands, with `env` set for each.
    pub(super) fn start_with_env(
        kind: Kind,
        workspace: &'a Workspace,
        env: &[(&'static str, &'static str)],
    ) -> Self {
        let manifest = workspace.manifest();
        let mut entry = Self {
            kind,
            workspace,
            stdio: None,
            http: None,
            session: None,
            terminal_log: String::new(),
            env: env.to_vec(),
        };
        match kind {
            Kind::Stdio2025
            | Kind::Stdio2025Stray
            | Kind::StdioDiscovery
            | Kind::Stdio2026
            | Kind::Stdio2026UpFront => {
                let mut flags: Vec<&str> = FLAGS[..7].to_vec();
                flags.extend(["--metrics-addr", "127.0.0.1:0"]);
                if kind.discovery() {
                    flags.push("--discovery");
                }
                let mut server = Server::start_with(&manifest, &flags, env);
                if kind.legacy_stdio() {
                    let response = server.request(
                        "initialize",
                        json!({"protocolVersion": "2025-11-25",
                               "capabilities": {"elicitation": {}},
                               "clientInfo": {"name": "matrix", "version": "1"}}),
                    );
                    assert!(response.get("result").is_some(), "{response}");
                    server.notify("notifications/initialized", None);
                }
                entry.stdio = Some(server);
            }
            Kind::Http2025
            | Kind::Http2025Stray
            | Kind::HttpSessions
            | Kind::Http2026
            | Kind::Http2026UpFront
            | Kind::Http2026Discovery
            | Kind::Task
            | Kind::TaskInside => {
                let mut flags = FLAGS.to_vec();
                if kind == Kind::HttpSessions {
                    flags.push("--sessions");
                }
                if kind.discovery() {
                    flags.push("--discovery");
                }
                let server = HttpServer::start_with_env(&manifest, &flags, env);
                if kind == Kind::HttpSessions {
                    entry.session = Some(open_session_with(&server, &json!({"elicitation": {}})));
                }
                entry.http = Some(server);
            }
            Kind::Cli | Kind::CliTask | Kind::Test => {}
        }
        entry
    }

    /// Runs the calls one after another.
    pub(super) fn run(&mut self, calls: &[Call]) -> Vec<Ended> {
        if self.kind == Kind::Test {
            return self.run_examples(calls);
        }
        calls.iter().map(|call| self.call(call)).collect()
    }

    fn call(&mut self, call: &Call) -> Ended {
        let call = &self.kind.sent(call);
        match self.kind {
            Kind::Stdio2025
            | Kind::Stdio2025Stray
            | Kind::StdioDiscovery
            | Kind::Stdio2026
            | Kind::Stdio2026UpFront => {
                let modern = !self.kind.legacy_stdio();
                let up_front = self.kind.up_front();
                let server = self.stdio.as_mut().expect("stdio");
                let mut flows = [Flow::start(server, call.clone(), modern, up_front)];
                drive(server, &mut flows, None);
                let [flow] = flows;
                flow.done.expect("the call ended")
            }
            Kind::Cli | Kind::CliTask => Ok(self.terminal_call(call)),
            Kind::Test => unreachable!("examples run together"),
            _ => self.http().call(self.kind, self.session.as_deref(), call),
        }
    }

    fn http(&self) -> Http {
        Http {
            url: self.http.as_ref().expect("http").url.clone(),
        }
    }

    /// Two calls at once, `slow` first (given time to reach its backend, its questions
    /// answered): how each ended. `None` where one process serves one call.
    pub(super) fn overlapping(&mut self, slow: &Call, second: &Call) -> Option<(Ended, Ended)> {
        let head_start =
            Duration::from_millis(if matches!(self.kind, Kind::Task | Kind::TaskInside) {
                1200
            } else {
                600
            });
        let (slow, second) = (&self.kind.sent(slow), &self.kind.sent(second));
        match self.kind {
            Kind::Cli | Kind::CliTask | Kind::Test => None,
            Kind::Stdio2025
            | Kind::Stdio2025Stray
            | Kind::StdioDiscovery
            | Kind::Stdio2026
            | Kind::Stdio2026UpFront => {
                let modern = !self.kind.legacy_stdio();
                let up_front = self.kind.up_front();
                let server = self.stdio.as_mut().expect("stdio");
                let mut flows = vec![Flow::start(server, slow.clone(), modern, up_front)];
                drive(server, &mut flows, Some(Instant::now() + head_start));
                flows.push(Flow::start(server, second.clone(), modern, up_front));
                drive(server, &mut flows, None);
                let mut ended = flows.into_iter().map(|flow| flow.done.expect("ended"));
                Some((ended.next()?, ended.next()?))
            }
            _ => {
                let (kind, http, session) = (self.kind, self.http(), self.session.clone());
                let slow = slow.clone();
                let background =
                    std::thread::spawn(move || http.call(kind, session.as_deref(), &slow));
                std::thread::sleep(head_start);
                let second = self.http().call(self.kind, self.session.as_deref(), second);
                let first = background.join().expect("the slow call");
                Some((first, second))
            }
        }
    }

    /// Everything logged so far: the server's stderr, or the terminal commands'.
    pub(super) fn log(&self) -> String {
        if let Some(server) = &self.stdio {
            return server.stderr();
        }
        if let Some(server) = &self.http {
            return server.log();
        }
        self.terminal_log.clone()
    }

    /// The server's metrics, where it serves them.
    pub(super) fn metrics(&self) -> Option<String> {
        let url = if let Some(server) = &self.http {
            format!("{}/metrics", server.base)
        } else {
            let server = self.stdio.as_ref()?;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(url) = server.stderr().lines().find_map(|line| {
                    line.strip_prefix("mcp-serve: metrics on ")
                        .map(ToOwned::to_owned)
                }) {
                    break url;
                }
                assert!(Instant::now() < deadline, "no metrics line");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        Some(
            http_client(Duration::from_secs(10))
                .get(url)
                .send()
                .expect("GET /metrics")
                .text()
                .expect("metrics"),
        )
    }

    fn terminal_call(&mut self, call: &Call) -> Value {
        let mut command = std::process::Command::new(BINARY);
        crate::harness::keep_tasks_here(&mut command);
        command
            .arg("--config")
            .arg(self.workspace.manifest())
            .args([
                "--audit",
                "--log-format",
                "json",
                "call",
                &call.tool,
                "--json-out",
            ])
            .arg("--json")
            .arg(call.arguments.to_string())
            .envs(self.env.iter().copied())
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null());
        if self.kind == Kind::CliTask {
            command.arg("--task");
        }
        if call.answer == Answer::Accept {
            command.arg("--yes");
        }
        let output = command.output().expect("mcp-serve call");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        self.terminal_log.push_str(&stderr);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let is_error = !output.status.success();
        // The text the command printed (the result, or the error it stopped with).
        let text = if stdout.trim().is_empty() {
            stderr
        } else {
            stdout
        };
        json!({"isError": is_error, "content": [{"type": "text", "text": text}]})
    }

    /// `mcp-serve test` over a manifest whose examples are these calls, in order.
    fn run_examples(&mut self, calls: &[Call]) -> Vec<Ended> {
        let manifest = std::fs::read_to_string(self.workspace.manifest()).expect("manifest");
        let with_examples = examples(&manifest, calls);
        let path = self.workspace.path("examples.toml");
        std::fs::write(&path, with_examples).expect("write examples");
        let output = std::process::Command::new(BINARY)
            .arg("--config")
            .arg(&path)
            .args(["--audit", "--log-format", "json", "test"])
            .envs(self.env.iter().copied())
            .env("NO_COLOR", "1")
            .env("MCP_SERVE_DATA_DIR", self.workspace.path("."))
            .output()
            .expect("mcp-serve test");
        let report = String::from_utf8_lossy(&output.stdout).into_owned();
        self.terminal_log
            .push_str(&String::from_utf8_lossy(&output.stderr));
        // Each example's lines: `PASS tool :: name` or `FAIL tool :: name` and the problems.
        let mut ended = Vec::new();
        let mut lines = report.lines().peekable();
        while let Some(line) = lines.next() {
            let passed = line.starts_with("PASS ");
            if !passed && !line.starts_with("FAIL ") {
                continue;
            }
            let mut text = String::new();
            while let Some(next) = lines.peek().filter(|next| next.starts_with("     ")) {
                text.push_str(next.trim());
                text.push('\n');
                lines.next();
            }
            ended.push(Ok(
                json!({"isError": !passed, "content": [{"type": "text", "text": text}]}),
            ));
        }
        assert_eq!(ended.len(), calls.len(), "{report}");
        ended
    }
}

/// The manifest with each call as an example of its tool (every example expects success,
/// so a refused call is a FAIL that says why).
fn examples(manifest: &str, calls: &[Call]) -> String {
    let mut out = String::new();
    let mut sections: Vec<&str> = manifest.split("\n[[tools]]\n").collect();
    let head = sections.remove(0);
    out.push_str(head);
    for section in sections {
        out.push_str("\n[[tools]]\n");
        out.push_str(section);
        let name = section
            .lines()
            .find_map(|line| line.strip_prefix("name = "))
            .map(|name| name.trim_matches('"'))
            .unwrap_or_default();
        for (index, call) in calls.iter().enumerate() {
            if call.tool == name {
                out.push_str(&format!(
                    "\n[[tools.examples]]\nname = \"call {index}\"\narguments = {}\n",
                    toml_inline(&call.arguments)
                ));
                if call.show {
                    out.push_str("text = \"(shown)\"\n");
                }
            }
        }
    }
    out
}

fn toml_inline(arguments: &Value) -> String {
    let pairs: Vec<String> = arguments
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(key, value)| format!("{key} = {value}"))
                .collect()
        })
        .unwrap_or_default();
    format!("{{ {} }}", pairs.join(", "))
}

/// A 2026 request's `_meta`: elicitation, and the tasks extension for task entries.
fn meta(tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "matrix", "version": "1"}
    })
}

/// A response's result, or its error.
fn ended(response: &Value) -> Ended {
    match response.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(response["error"].clone()),
    }
}

/// One stdio call in progress: its request id, and how it ended.
struct Flow {
    call: Call,
    id: i64,
    modern: bool,
    params: Value,
    done: Option<Ended>,
}

impl Flow {
    fn start(server: &mut Server, call: Call, modern: bool, up_front: bool) -> Self {
        let mut params = json!({"name": call.tool, "arguments": call.arguments});
        if modern {
            params["_meta"] = meta(false);
        }
        if up_front {
            up_front_answers(&call, &mut params);
        }
        let id = server.start_request("tools/call", params.clone());
        Self {
            call,
            id,
            modern,
            params,
            done: None,
        }
    }
}

/// Reads the server's messages until every flow has ended (or `until`): answers each
/// `elicitation/create` (2025) and retries each `input_required` with its answers (2026).
fn drive(server: &mut Server, flows: &mut [Flow], until: Option<Instant>) {
    let deadline = until.unwrap_or_else(|| Instant::now() + Duration::from_secs(20));
    while flows.iter().any(|flow| flow.done.is_none()) {
        let Some(message) = server.next_message(deadline) else {
            assert!(until.is_some(), "no answer within 20 s");
            return;
        };
        if message["method"] == "elicitation/create" {
            // Only one flow at a time is asked here; the first unfinished one's answer.
            let answer = flows
                .iter()
                .find(|flow| flow.done.is_none())
                .map_or(Answer::Accept, |flow| flow.call.answer);
            server.send(&json!({"jsonrpc": "2.0", "id": message["id"],
                                "result": {"action": answer.action(), "content": {}}}));
            continue;
        }
        let Some(flow) = flows
            .iter_mut()
            .find(|flow| message["id"] == json!(flow.id))
        else {
            continue;
        };
        let answered = ended(&message);
        match &answered {
            Ok(result) if flow.modern && result["resultType"] == "input_required" => {
                flow.params["inputResponses"] = answers(result, flow.call.answer);
                flow.params["requestState"] = result["requestState"].clone();
                flow.id = server.start_request("tools/call", flow.params.clone());
            }
            _ => flow.done = Some(answered),
        }
    }
}

/// The answers the client sends before it is asked, and a stray state for a tool that asks
/// nothing: what an attacker adds to a request to look like a later round.
fn up_front_answers(call: &Call, params: &mut Value) {
    params["inputResponses"] = json!({"confirm": {"action": call.answer.action()}});
    if !call.tool.ends_with("-asks") {
        params["requestState"] = json!("x");
    }
}

/// `answer` to every request of an `input_required` (or a task's questions).
fn answers(asked: &Value, answer: Answer) -> Value {
    let mut responses = serde_json::Map::new();
    for key in asked["inputRequests"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, _)| key)
    {
        responses.insert(key.clone(), json!({"action": answer.action()}));
    }
    Value::Object(responses)
}

/// Request ids, unique across threads (two calls of one session must not share one).
static NEXT_ID: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(100);

fn next_id() -> i64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// An HTTP entry's client, usable from any thread.
struct Http {
    url: String,
}

impl Http {
    fn post(&self, body: &Value, headers: &[(&str, &str)]) -> reqwest::blocking::Response {
        post_to(
            &http_client(Duration::from_secs(30)),
            &self.url,
            body,
            headers,
        )
    }

    /// A 2026 request and its answer.
    fn modern(&self, method: &str, name: &str, params: Value) -> Ended {
        let id = next_id();
        let response = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
                ("Mcp-Name", name),
            ],
        );
        ended(&message(response, id))
    }

    /// The whole call the way `kind` makes it.
    fn call(&self, kind: Kind, session: Option<&str>, call: &Call) -> Ended {
        match kind {
            Kind::HttpSessions => self.session_call(session.expect("a session"), call),
            Kind::Http2025 | Kind::Http2025Stray => {
                let id = next_id();
                let mut params = json!({"name": call.tool, "arguments": call.arguments});
                if kind.up_front() {
                    up_front_answers(call, &mut params);
                }
                let response = self.post(
                    &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
                    &[("MCP-Protocol-Version", "2025-11-25")],
                );
                ended(&message(response, id))
            }
            _ => {
                let tasks = matches!(kind, Kind::Task | Kind::TaskInside);
                let mut params =
                    json!({"name": call.tool, "arguments": call.arguments, "_meta": meta(tasks)});
                if kind.up_front() {
                    up_front_answers(call, &mut params);
                }
                for _ in 0..4 {
                    let result = self.modern("tools/call", &call.tool, params.clone())?;
                    if result["resultType"] == "task" {
                        return self.follow_task(&result, call);
                    }
                    if result["resultType"] != "input_required" {
                        return Ok(result);
                    }
                    params["inputResponses"] = answers(&result, call.answer);
                    params["requestState"] = result["requestState"].clone();
                }
                panic!("{}: the rounds never ended", call.tool)
            }
        }
    }

    /// Follows a task to its end, answering its questions with `tasks/update`.
    fn follow_task(&self, task: &Value, call: &Call) -> Ended {
        let id = task["taskId"].as_str().expect("a task id").to_owned();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut answered = false;
        loop {
            let got = self.modern("tasks/get", &id, json!({"taskId": id, "_meta": meta(true)}))?;
            match got["status"].as_str().unwrap_or_default() {
                "completed" => return Ok(got["result"].clone()),
                "failed" | "cancelled" => return Err(got),
                "input_required" if !answered => {
                    let update = json!({"taskId": id, "inputResponses": answers(&got, call.answer),
                                        "_meta": meta(true)});
                    self.modern("tasks/update", &id, update)?;
                    answered = true;
                }
                _ => {}
            }
            assert!(Instant::now() < deadline, "the task never ended: {got}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A session's call: its stream is read as it comes, and each `elicitation/create` on it
    /// is answered with a POST on the session.
    fn session_call(&self, session: &str, call: &Call) -> Ended {
        let headers = [
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let id = next_id();
        let response = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": call.tool, "arguments": call.arguments}}),
            &headers,
        );
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !streamed {
            return ended(&message(response, id));
        }
        for line in BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let Ok(event) = serde_json::from_str::<Value>(data.trim()) else {
                continue;
            };
            if event["method"] == "elicitation/create" {
                let answer = json!({"jsonrpc": "2.0", "id": event["id"],
                                    "result": {"action": call.answer.action(), "content": {}}});
                let _ = self.post(&answer, &headers).text();
            } else if event["id"] == json!(id) {
                return ended(&event);
            }
        }
        panic!(
            "the session's stream ended without an answer to {}",
            call.tool
        )
    }
}
