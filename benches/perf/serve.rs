//! An mcp-serve started over HTTP on an ephemeral port.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

/// A running HTTP server; stopped with SIGTERM when dropped.
#[derive(Debug)]
pub(crate) struct HttpServer {
    child: Child,
    /// The MCP endpoint.
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn start(binary: &Path, manifest: &Path) -> anyhow::Result<Self> {
        Self::start_with(binary, manifest, &[])
    }

    /// Starts with extra arguments.
    pub(crate) fn start_with(
        binary: &Path,
        manifest: &Path,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let started = Instant::now();
        let mut child = Command::new(binary)
            .arg("--config")
            .arg(manifest)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("could not start {}", binary.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().context("no stderr")?);
        let mut line = String::new();
        let url = loop {
            line.clear();
            if stderr.read_line(&mut line)? == 0 {
                bail!("the server exited before listening");
            }
            if let Some(url) = line.trim().strip_prefix("mcp-serve: listening on ") {
                break url.to_owned();
            }
            if started.elapsed().as_secs() > 10 {
                bail!("the server did not listen within 10 s");
            }
        };
        // Keep reading so that the server never blocks on a full stderr pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Ok(Self { child, url })
    }

    pub(crate) fn peak_rss_kib(&self) -> anyhow::Result<u64> {
        crate::stdio::peak_rss_kib(self.child.id())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = self.child.wait();
    }
}
