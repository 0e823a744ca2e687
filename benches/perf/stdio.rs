//! A stdio MCP client: spawns a server, times the handshake and sequential calls.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// The protocol version the benchmark speaks.
pub(crate) const VERSION: &str = "2025-11-25";

/// A server on the other end of a pipe.
#[derive(Debug)]
pub(crate) struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

/// Spawn to `initialize` answer, and to the first `tools/list` answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColdStart {
    pub(crate) initialize: Duration,
    pub(crate) tools_list: Duration,
    /// Bytes of the `tools/list` answer.
    pub(crate) list_bytes: usize,
}

impl StdioServer {
    /// Spawns `binary --config manifest`, initializes and lists the tools.
    pub(crate) fn start(binary: &Path, manifest: &Path) -> anyhow::Result<(Self, ColdStart)> {
        let started = Instant::now();
        let mut child = Command::new(binary)
            .arg("--config")
            .arg(manifest)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("could not start {}", binary.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut server = Self {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        let spawned = started.elapsed();
        let (_, _, answered) = server.request(
            "initialize",
            &json!({"protocolVersion": VERSION, "capabilities": {},
                    "clientInfo": {"name": "mcp-serve-bench", "version": "1"}}),
        )?;
        let initialize = spawned + answered;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let listing = started.elapsed();
        let (_, list_bytes, answered) = server.request("tools/list", &json!({}))?;
        let tools_list = listing + answered;
        Ok((
            server,
            ColdStart {
                initialize,
                tools_list,
                list_bytes,
            },
        ))
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.stdin.write_all(&bytes)?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request; returns its result, the answer's size in bytes and the time until
    /// the whole answer had arrived (before the client parses it: a 3 MiB `tools/list`
    /// takes the client longer to parse than the server to write).
    fn request(
        &mut self,
        method: &str,
        params: &Value,
    ) -> anyhow::Result<(Value, usize, Duration)> {
        let sent = Instant::now();
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("the server closed stdout");
            }
            let arrived = sent.elapsed();
            let mut message: Value = serde_json::from_str(&self.line)
                .with_context(|| format!("not JSON on stdout: {}", self.line))?;
            if message["id"] != json!(id) {
                continue; // a notification
            }
            if let Some(error) = message.get("error") {
                bail!("{method} failed: {error}");
            }
            return Ok((message["result"].take(), self.line.len(), arrived));
        }
    }

    /// Times `count` sequential calls after `warmup` untimed ones; any error result fails.
    pub(crate) fn calls(
        &mut self,
        tool: &str,
        arguments: &Value,
        warmup: usize,
        count: usize,
    ) -> anyhow::Result<Vec<Duration>> {
        let params = json!({"name": tool, "arguments": arguments});
        let mut samples = Vec::with_capacity(count);
        for index in 0..warmup + count {
            let (result, _, latency) = self.request("tools/call", &params)?;
            if result["isError"] == json!(true) || !result["content"].is_array() {
                bail!("{tool} failed: {result}");
            }
            if index >= warmup {
                samples.push(latency);
            }
        }
        Ok(samples)
    }

    /// The size in bytes of one `tools/call` answer, as it came on the pipe.
    pub(crate) fn answer_bytes(&mut self, tool: &str, arguments: &Value) -> anyhow::Result<usize> {
        let (result, bytes, _) =
            self.request("tools/call", &json!({"name": tool, "arguments": arguments}))?;
        if result["isError"] == json!(true) {
            bail!("{tool} failed: {result}");
        }
        Ok(bytes)
    }

    /// Times `count` `tools/list` requests.
    pub(crate) fn lists(&mut self, count: usize) -> anyhow::Result<Vec<Duration>> {
        (0..count)
            .map(|_| Ok(self.request("tools/list", &json!({}))?.2))
            .collect()
    }

    /// Peak resident memory so far, in KiB.
    pub(crate) fn peak_rss_kib(&self) -> anyhow::Result<u64> {
        peak_rss_kib(self.child.id())
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the exit.
    pub(crate) fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin);
        let status = self.child.wait()?;
        if !status.success() {
            bail!("the server exited with {status}");
        }
        Ok(())
    }
}

/// `VmHWM` of a live process, in KiB.
pub(crate) fn peak_rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/PID/status")
}
