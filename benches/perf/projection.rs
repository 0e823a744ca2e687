//! What `project` costs and saves: GitHub's own example of an issue list (its vendored
//! description's `issue-items`, as a page of 30 issues, the API's default page) served by the
//! local upstream, called through an HTTP tool as the API sends it and through the same tool
//! projected to what a model needs. Both over one stdio server, in alternating blocks, so
//! that the difference is the projection's round trip to its worker and jq's work.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::measure::{Figures, latency};
use crate::stats::Latency;
use crate::stdio::StdioServer;

/// The fields a model needs of an issue.
pub(crate) const PROJECT: &str = "map({number, title, state, user: .user.login, labels: [.labels[].name], comments, updated_at})";

/// Calls per block of each tool.
const BLOCK: usize = 50;

/// The page the upstream answers `GET /issues` with.
pub(crate) fn issue_page() -> anyhow::Result<String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi");
    let output = Command::new("gzip")
        .args(["-dc", "github.json.gz"])
        .current_dir(&fixtures)
        .output()
        .context("gzip -dc github.json.gz")?;
    if !output.status.success() {
        bail!("gzip -dc github.json.gz failed in {}", fixtures.display());
    }
    let description: Value = serde_json::from_slice(&output.stdout)?;
    let issue = &description["components"]["examples"]["issue-items"]["value"][0];
    if !issue.is_object() {
        bail!("GitHub's description has no `issue-items` example");
    }
    let page: Vec<Value> = (1..=30)
        .map(|number| {
            let mut issue = issue.clone();
            issue["number"] = json!(number);
            issue
        })
        .collect();
    Ok(Value::Array(page).to_string())
}

/// The manifest: the page whole, and projected.
pub(crate) fn manifest(upstream: &str) -> String {
    format!(
        r#"[server]
name = "mcp-serve-bench-projection"

[[tools]]
name = "issues"
description = "A page of issues, as the API sends it."
[tools.http]
url = "{upstream}/issues"

[[tools]]
name = "issues_projected"
description = "The same page, as a model needs it."
project = "{PROJECT}"
[tools.http]
url = "{upstream}/issues"
"#
    )
}

/// Latency of both tools and the size of their answers. A binary without `project` refuses
/// the manifest: then there are no such figures.
pub(crate) fn measure(
    calls: usize,
    warmup: usize,
    binary: &Path,
    manifest: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let Ok((mut server, _)) = StdioServer::start(binary, manifest) else {
        return Ok(());
    };
    let tools = ["issues", "issues_projected"];
    for tool in tools {
        server.calls(tool, &json!({}), warmup, 0)?;
        let bytes = server.answer_bytes(tool, &json!({}))?;
        #[expect(clippy::cast_precision_loss, reason = "figures for people")]
        figures.insert(format!("bytes.{tool}"), bytes as f64);
    }
    let mut samples = [Vec::with_capacity(calls), Vec::with_capacity(calls)];
    while samples[0].len() < calls {
        let block = BLOCK.min(calls - samples[0].len());
        for (tool, samples) in tools.iter().zip(&mut samples) {
            samples.extend(server.calls(tool, &json!({}), 0, block)?);
        }
    }
    for (tool, samples) in tools.iter().zip(&samples) {
        latency(figures, &format!("stdio.{tool}"), &Latency::of(samples));
    }
    let workers = workers(server.pid());
    #[expect(clippy::cast_precision_loss, reason = "figures for people")]
    {
        figures.insert("projection.workers".into(), workers.len() as f64);
        let kib: u64 = workers
            .iter()
            .filter_map(|pid| crate::stdio::peak_rss_kib(*pid).ok())
            .sum();
        figures.insert("rss.projection_workers_mib".into(), kib as f64 / 1024.0);
    }
    server.stop()
}

/// The server's projection workers: its children started with `__project`.
fn workers(server: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{server}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|pid| pid.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.split(|byte| *byte == 0).any(|arg| arg == b"__project"))
        })
        .collect()
}
