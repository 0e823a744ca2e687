//! Spawns `mcp-serve --http 127.0.0.1:0` and talks to it with a real HTTP client.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};

use crate::harness::{BINARY, TIMEOUT, modern_meta, wait_with_timeout};

/// A blocking HTTP client (reqwest, on rustls with the ring provider as the binary uses).
pub(crate) fn http_client(timeout: std::time::Duration) -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder().timeout(timeout).build().expect("client")
}

/// The same client, with a connection of its own per request (none kept idle between).
pub(crate) fn http_client_unpooled(timeout: std::time::Duration) -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// The same client, connecting from another loopback address (`127.0.0.2`…): another
/// caller, for the bounds that tell anonymous callers apart by their address.
pub(crate) fn http_client_from(local: &str, timeout: std::time::Duration) -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .timeout(timeout)
        .local_address(local.parse::<std::net::IpAddr>().expect("an address"))
        .build()
        .expect("client")
}

/// A server on a free loopback port.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
    pub(crate) base: String,
    /// Everything the server wrote to stderr so far.
    pub(crate) stderr: Arc<Mutex<String>>,
    pub(crate) client: Client,
}

impl HttpServer {
    pub(crate) fn start(manifest: &Path, extra: &[&str]) -> Self {
        Self::start_with_env(manifest, extra, &[])
    }

    pub(crate) fn start_with_env(manifest: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_at("127.0.0.1:0", manifest, extra, env)
    }

    /// Starts under `ulimit -n` (soft and hard both), as a service or a desktop session may.
    pub(crate) fn start_with_nofile(manifest: &Path, extra: &[&str], nofile: u32) -> Self {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "ulimit -Sn {nofile} && ulimit -Hn {nofile} && exec \"$0\" \"$@\""
        ));
        command.arg(BINARY);
        Self::spawn(command, "127.0.0.1:0", manifest, extra, &[])
    }

    /// Starts on `address` (a port the test chose, when the manifest must name it).
    pub(crate) fn start_at(
        address: &str,
        manifest: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        Self::spawn(Command::new(BINARY), address, manifest, extra, env)
    }

    fn spawn(
        mut command: Command,
        address: &str,
        manifest: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        crate::harness::keep_tasks_here(&mut command);
        let mut child = command
            .arg("--config")
            .arg(manifest)
            .args(["--http", address])
            .args(extra)
            .envs(env.iter().copied())
            .env("NO_COLOR", "1")
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp-serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (sender, announced): (_, Receiver<String>) = channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("mcp-serve: listening on ") {
                    let _ = sender.send(url.to_owned());
                }
                if let Ok(mut log) = sink.lock() {
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let url = announced.recv_timeout(TIMEOUT).unwrap_or_else(|_| {
            panic!(
                "no startup line; stderr: {}",
                log.lock().map(|l| l.clone()).unwrap_or_default()
            )
        });
        let base = url.trim_end_matches("/mcp").to_owned();
        let client = http_client(TIMEOUT);
        Self {
            child,
            url,
            base,
            stderr: log,
            client,
        }
    }

    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid")
    }

    /// POSTs one JSON-RPC message with the usual headers plus `headers`.
    pub(crate) fn post(&self, body: &Value, headers: &[(&str, &str)]) -> Response {
        post_to(&self.client, &self.url, body, headers)
    }

    /// A legacy request (after an `initialize` elsewhere: stateless mode needs none).
    pub(crate) fn legacy(&self, id: i64, method: &str, params: Value) -> Value {
        let response = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &[("MCP-Protocol-Version", "2025-11-25")],
        );
        assert_eq!(response.status(), 200);
        message(response, id)
    }

    /// A 2026-07-28 request with its `_meta` and headers.
    pub(crate) fn modern(&self, id: i64, method: &str, mut params: Value) -> (u16, Value) {
        params["_meta"] = modern_meta();
        let name = params["name"].as_str().map(str::to_owned);
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        let response = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &headers,
        );
        let status = response.status().as_u16();
        (status, message(response, id))
    }

    /// Sends SIGTERM and waits for the exit.
    pub(crate) fn terminate(&mut self) -> ExitStatus {
        self.signal_terminate();
        self.wait_exit()
    }

    pub(crate) fn signal_terminate(&self) {
        let pid = nix::unistd::Pid::from_raw(self.pid());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    }

    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
        wait_with_timeout(&mut self.child, TIMEOUT).expect("the server exits")
    }

    pub(crate) fn log(&self) -> String {
        self.stderr
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// POSTs one JSON-RPC message to `url` with the usual headers plus `headers`.
pub(crate) fn post_to(
    client: &Client,
    url: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> Response {
    let mut request = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().expect("POST")
}

/// Opens a 2025-11-25 session (`initialize`, then `notifications/initialized`) on a server
/// started with `--sessions`; returns its id.
pub(crate) fn open_session(server: &HttpServer) -> String {
    open_session_with(server, &json!({}))
}

/// Opens a 2025-11-25 session whose client declares `capabilities`; returns its id.
pub(crate) fn open_session_with(server: &HttpServer, capabilities: &Value) -> String {
    let mut initialize = crate::harness::initialize_request();
    initialize["params"]["capabilities"] = capabilities.clone();
    let response = server.post(&initialize, &[]);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("session id")
        .to_owned();
    message(response, 1);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(server.post(&initialized, &headers).status(), 202);
    session
}

/// POSTs a `tools/call` on another thread, so the test can act while it runs; the thread
/// returns the reply, or `None` when the connection ended without one.
pub(crate) fn call_in_background(
    url: &str,
    tool: &str,
    headers: &[(&str, &str)],
) -> std::thread::JoinHandle<Option<Value>> {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
    let mut request = http_client(TIMEOUT)
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    std::thread::spawn(move || {
        let response = request.send().ok()?;
        let text = response.text().ok()?;
        // Plain JSON, or the reply among the events of a stream.
        serde_json::from_str::<Value>(&text)
            .ok()
            .into_iter()
            .chain(sse_messages(&text))
            .find(|message| message["id"] == json!(7))
    })
}

/// The JSON-RPC message with `id` in a JSON or SSE response body.
pub(crate) fn message(response: Response, id: i64) -> Value {
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let body = response.text().expect("body");
    if !sse {
        return serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"));
    }
    sse_messages(&body)
        .into_iter()
        .find(|message| message["id"] == json!(id))
        .unwrap_or_else(|| panic!("no message {id} in {body}"))
}

/// Every JSON message in an SSE body.
pub(crate) fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect()
}
