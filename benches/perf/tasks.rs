//! What tasks cost: a plain `tools/call` of a static tool (the baseline, same run), starting
//! it as a task, `tasks/get`, and start-then-poll until completed, with the embedded store
//! (`SQLite` in a temporary `--data-dir`) and with Redis (a `redis-server` this starts, when
//! one is installed). A binary without tasks (an older build) is skipped.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::measure::Figures;
use crate::serve::HttpServer;
use crate::stats::Latency;

const MANIFEST: &str = r#"
[server]
name = "bench-tasks"
task-poll-interval = "100ms"

[[tools]]
name = "noop"
description = "A static result, as a task when the client supports tasks"
task = "optional"
[tools.static]
content = [{ type = "text", text = "ok" }]
"#;

/// A redis-server on a free port, stopped when dropped.
struct Redis(Child, u16);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn redis() -> Option<Redis> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .ok()?
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let redis = Redis(child, port);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(redis)
}

struct Client {
    http: reqwest::blocking::Client,
    url: String,
    id: u64,
}

impl Client {
    fn request(&mut self, method: &str, mut params: Value, tasks: bool) -> anyhow::Result<Value> {
        let capabilities = if tasks {
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        } else {
            json!({})
        };
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}
        });
        let name = params["name"]
            .as_str()
            .or_else(|| params["taskId"].as_str())
            .unwrap_or_default()
            .to_owned();
        self.id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        let text = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .header("Mcp-Name", name)
            .body(body.to_string())
            .send()?
            .text()?;
        let response: Value = serde_json::from_str(&text)?;
        response
            .get("result")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("{method}: {response}"))
    }

    fn start(&mut self) -> anyhow::Result<String> {
        let result = self.request("tools/call", json!({"name": "noop", "arguments": {}}), true)?;
        result["taskId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow::anyhow!("no task: {result}"))
    }
}

fn timed(samples: usize, mut once: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Latency> {
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        once()?;
        times.push(started.elapsed());
    }
    Ok(Latency::of(&times))
}

/// Measures one store; `store` names it in the figures.
fn one_store(
    binary: &Path,
    manifest: &Path,
    flags: &[&str],
    store: &str,
    samples: usize,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let server = HttpServer::start_with(binary, manifest, flags)?;
    let mut client = Client {
        http: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()?,
        url: server.url.clone(),
        id: 0,
    };
    // Warm up, and make sure this binary has tasks at all.
    for _ in 0..20 {
        client.start()?;
    }
    let sync = timed(samples, || {
        client
            .request(
                "tools/call",
                json!({"name": "noop", "arguments": {}}),
                false,
            )
            .map(drop)
    })?;
    figures.insert(format!("tasks.{store}.sync_call.p50_us"), sync.p50);
    let start = timed(samples, || client.start().map(drop))?;
    figures.insert(format!("tasks.{store}.start.p50_us"), start.p50);
    figures.insert(format!("tasks.{store}.start.p99_us"), start.p99);
    let done = client.start()?;
    let get = timed(samples, || {
        client
            .request("tasks/get", json!({"taskId": done}), true)
            .map(drop)
    })?;
    figures.insert(format!("tasks.{store}.get.p50_us"), get.p50);
    let roundtrip = timed(samples, || {
        let id = client.start()?;
        while client.request("tasks/get", json!({"taskId": id}), true)?["status"] != "completed" {}
        Ok(())
    })?;
    figures.insert(
        format!("tasks.{store}.start_to_completed.p50_us"),
        roundtrip.p50,
    );
    figures.insert(format!("tasks.{store}.start.x_sync"), start.p50 / sync.p50);
    Ok(())
}

/// The task figures of one binary, for each store that can run here.
pub(crate) fn measure(binary: &Path, samples: usize, figures: &mut Figures) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let manifest = dir.path().join("tasks.toml");
    std::fs::write(&manifest, MANIFEST)?;
    let data = dir.path().join("data");
    let data = data.to_str().unwrap_or_default();
    let samples = samples.min(300);
    if let Err(error) = one_store(
        binary,
        &manifest,
        &["--data-dir", data],
        "embedded",
        samples,
        figures,
    ) {
        eprintln!("  tasks: skipped for {} ({error:#})", binary.display());
        return Ok(());
    }
    match redis() {
        Some(redis) => {
            let url = format!("redis://127.0.0.1:{}/0", redis.1);
            one_store(
                binary,
                &manifest,
                &["--task-store", &url],
                "redis",
                samples,
                figures,
            )?;
        }
        None => eprintln!("  tasks: no redis-server here; the Redis rows are left out"),
    }
    Ok(())
}
