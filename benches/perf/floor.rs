//! The machine's floor: what spawning the same command, and a line through a pipe, cost
//! with no server in between.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// Spawns `/bin/echo hello bench` and collects its output, `count` times.
pub(crate) fn spawn(count: usize) -> anyhow::Result<Vec<Duration>> {
    (0..count)
        .map(|_| {
            let started = Instant::now();
            let output = Command::new("/bin/echo").arg("hello bench").output()?;
            let took = started.elapsed();
            if output.stdout != b"hello bench\n" {
                bail!("echo printed {:?}", output.stdout);
            }
            Ok(took)
        })
        .collect()
}

/// One `tools/call`-sized JSON-RPC line through `cat` and back, parsed as the client
/// parses a server's answer: the stdio transport with no server logic.
pub(crate) fn pipe(count: usize) -> anyhow::Result<Vec<Duration>> {
    let mut cat = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = cat.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(cat.stdout.take().context("no stdout")?);
    let mut line = String::new();
    let mut samples = Vec::with_capacity(count);
    for id in 0..count {
        let started = Instant::now();
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": "noop", "arguments": {}}});
        let mut bytes = serde_json::to_vec(&message)?;
        bytes.push(b'\n');
        stdin.write_all(&bytes)?;
        stdin.flush()?;
        line.clear();
        stdout.read_line(&mut line)?;
        let echoed: Value = serde_json::from_str(&line)?;
        samples.push(started.elapsed());
        if echoed["id"] != json!(id) {
            bail!("cat garbled the line");
        }
    }
    drop(stdin);
    cat.wait()?;
    Ok(samples)
}
