//! One run of every measurement: the floor, then each binary. Figures are named
//! `area.case.figure` and kept in the order they were taken.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use indexmap::IndexMap;
use serde_json::json;

use crate::http::{self, Target};
use crate::serve::HttpServer;
use crate::stats::{Latency, median};
use crate::stdio::StdioServer;
use crate::{Options, floor};

pub(crate) type Figures = IndexMap<String, f64>;

/// The manifests every binary serves.
#[derive(Debug)]
pub(crate) struct Manifests {
    pub(crate) tools: PathBuf,
    /// `(tool count, path)`, smallest first.
    pub(crate) big: Vec<(usize, PathBuf)>,
    pub(crate) upstream: String,
    /// The tools behind `[server.auth]`, and a token the upstream's key signed.
    pub(crate) tools_with_auth: PathBuf,
    /// An issue page whole and projected (`crate::projection`).
    pub(crate) projection: PathBuf,
    pub(crate) token: String,
}

pub(crate) fn latency(figures: &mut Figures, name: &str, latency: &Latency) {
    figures.insert(format!("{name}.p50_us"), latency.p50);
    figures.insert(format!("{name}.p90_us"), latency.p90);
    figures.insert(format!("{name}.p99_us"), latency.p99);
}

#[expect(clippy::cast_precision_loss, reason = "figures for people")]
fn load(figures: &mut Figures, name: &str, load: &http::Load) {
    figures.insert(format!("{name}.per_s"), load.per_second);
    figures.insert(format!("{name}.errors"), load.errors as f64);
    figures.insert(format!("{name}.p50_us"), load.latency.p50);
    if let Some(error) = &load.first_error {
        eprintln!("  {name}: {} errors, the first: {error}", load.errors);
    }
}

/// The machine's floor: spawn, pipe, loopback HTTP.
pub(crate) fn floor(options: &Options, upstream: &str) -> anyhow::Result<Figures> {
    let mut figures = Figures::new();
    latency(
        &mut figures,
        "floor.spawn",
        &Latency::of(&floor::spawn(options.calls)?),
    );
    latency(
        &mut figures,
        "floor.pipe",
        &Latency::of(&floor::pipe(options.calls)?),
    );
    let get = Target::Get {
        url: format!("{upstream}/items/7").parse()?,
    };
    for clients in [1, 16] {
        let result = http::run(&get, clients, options.duration)?;
        load(&mut figures, &format!("floor.http_c{clients}"), &result);
    }
    // A call over stdio pays a pipe round trip on top of what its backend needs.
    let both = figures["floor.pipe.p50_us"] + figures["floor.http_c1.p50_us"];
    figures.insert("floor.pipe+http.p50_us".into(), both);
    for figure in ["p50_us", "p90_us", "p99_us"] {
        let both =
            figures[&format!("floor.spawn.{figure}")] + figures[&format!("floor.pipe.{figure}")];
        figures.insert(format!("floor.spawn+pipe.{figure}"), both);
    }
    Ok(figures)
}

/// Every measurement of one binary.
pub(crate) fn binary(
    options: &Options,
    binary: &Path,
    manifests: &Manifests,
) -> anyhow::Result<Figures> {
    let mut figures = Figures::new();
    let size = std::fs::metadata(binary)?.len();
    #[expect(clippy::cast_precision_loss, reason = "figures for people")]
    figures.insert("binary.size_mib".into(), size as f64 / 1_048_576.0);
    cold_start(options, binary, &manifests.tools, &mut figures)?;
    stdio_calls(options, binary, &manifests.tools, &mut figures)?;
    crate::projection::measure(
        options.calls,
        options.warmup,
        binary,
        &manifests.projection,
        &mut figures,
    )
    .context("projection")?;
    http_load(options, binary, &manifests.tools, &mut figures)?;
    auth_load(options, binary, manifests, &mut figures)?;
    traced_load(options, binary, manifests, &mut figures)?;
    for (count, path) in &manifests.big {
        big_list(options, binary, *count, path, &mut figures)?;
    }
    let (small, large) = (&manifests.big[0], &manifests.big[manifests.big.len() - 1]);
    #[expect(clippy::cast_precision_loss, reason = "tool counts are small")]
    let slope = (figures[&format!("list.{}.p50_us", large.0)]
        - figures[&format!("list.{}.p50_us", small.0)])
        / (large.0 - small.0) as f64;
    figures.insert("list.slope_us_per_tool".into(), slope);
    crate::tasks::measure(binary, options.calls, &mut figures)?;
    Ok(figures)
}

#[expect(clippy::cast_precision_loss, reason = "figures for people")]
fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn cold_start(
    options: &Options,
    binary: &Path,
    manifest: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let (mut initialize, mut list, mut idle) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..options.starts {
        let (server, cold) = StdioServer::start(binary, manifest)?;
        initialize.push(cold.initialize.as_secs_f64() * 1e3);
        list.push(cold.tools_list.as_secs_f64() * 1e3);
        idle.push(kib_to_mib(server.peak_rss_kib()?));
        server.stop()?;
    }
    figures.insert("cold.initialize_ms".into(), median(&initialize));
    figures.insert("cold.tools_list_ms".into(), median(&list));
    figures.insert("rss.stdio_idle_mib".into(), median(&idle));
    Ok(())
}

fn stdio_calls(
    options: &Options,
    binary: &Path,
    manifest: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let (mut server, _) = StdioServer::start(binary, manifest)?;
    let cases = [
        ("static", "noop", json!({})),
        ("http", "fetch_json", json!({"id": 7})),
    ];
    for (case, tool, arguments) in cases {
        let samples = server
            .calls(tool, &arguments, options.warmup, options.calls)
            .with_context(|| format!("stdio {case}"))?;
        latency(figures, &format!("stdio.{case}"), &Latency::of(&samples));
    }
    // More servers with the same tool sandboxed (no network, a host list); a binary without
    // sandboxes or host lists refuses the manifest, and the comparison then has no such
    // figures.
    let mut sandboxed = Vec::new();
    for (figure, file, text) in [
        (
            "stdio.command_sandboxed",
            "sandboxed.toml",
            crate::manifest::sandboxed_echo(),
        ),
        (
            "stdio.command_sandboxed_hosts",
            "sandboxed-hosts.toml",
            crate::manifest::sandboxed_hosts_echo(),
        ),
    ] {
        let started = manifest
            .parent()
            .map(|dir| crate::manifest::write(dir, file, &text))
            .transpose()?
            .and_then(|path| StdioServer::start(binary, &path).ok());
        if let Some((server, _)) = started {
            sandboxed.push((figure, server, Vec::with_capacity(options.calls)));
        }
    }
    command_calls(options, &mut server, sandboxed, figures).context("stdio command")?;
    figures.insert(
        "rss.stdio_peak_mib".into(),
        kib_to_mib(server.peak_rss_kib()?),
    );
    server.stop()
}

/// Spawns, then calls, per block of the paired command measurement.
const SPAWN_BLOCK: usize = 50;

/// The command case, with the spawn floor sampled in blocks between blocks of its calls: on
/// this machine the cost of a spawn drifts by a third within a run, so a floor taken minutes
/// earlier makes a noisy ratio. Blocks rather than single spawns, so that the server's own
/// work after an answer (reaping the process group) does not slow the floor's spawns. The
/// target compares the command calls with this paired floor.
/// The sandboxed calls are taken in blocks between the same blocks, for the same reason.
fn command_calls(
    options: &Options,
    server: &mut StdioServer,
    mut sandboxed: Vec<(&'static str, StdioServer, Vec<Duration>)>,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let arguments = json!({"message": "hello bench"});
    server.calls("echo", &arguments, options.warmup, 0)?;
    for (_, sandboxed, _) in &mut sandboxed {
        sandboxed.calls("echo", &arguments, options.warmup, 0)?;
    }
    let mut calls = Vec::with_capacity(options.calls);
    let mut spawns = Vec::with_capacity(options.calls);
    while calls.len() < options.calls {
        let block = SPAWN_BLOCK.min(options.calls - calls.len());
        spawns.extend(floor::spawn(block)?);
        calls.extend(server.calls("echo", &arguments, 0, block)?);
        for (_, sandboxed, confined) in &mut sandboxed {
            confined.extend(sandboxed.calls("echo", &arguments, 0, block)?);
        }
    }
    latency(figures, "stdio.command", &Latency::of(&calls));
    latency(figures, "stdio.command_spawn_floor", &Latency::of(&spawns));
    for (figure, sandboxed, confined) in sandboxed {
        latency(figures, figure, &Latency::of(&confined));
        sandboxed.stop()?;
    }
    Ok(())
}

fn http_load(
    options: &Options,
    binary: &Path,
    manifest: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let server = HttpServer::start(binary, manifest)?;
    let url: hyper::Uri = server.url.parse()?;
    let call = |tool: &str, arguments: serde_json::Value| Target::Mcp {
        url: url.clone(),
        body: Bytes::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        ),
        authorization: None,
    };
    let cases = [
        ("http.static_c1", call("noop", json!({})), 1),
        ("http.static_c16", call("noop", json!({})), 16),
        ("http.http_c16", call("fetch_json", json!({"id": 7})), 16),
    ];
    for (name, target, clients) in cases {
        let result = http::run(&target, clients, options.duration)?;
        load(figures, name, &result);
    }
    figures.insert(
        "rss.http_c16_peak_mib".into(),
        kib_to_mib(server.peak_rss_kib()?),
    );
    Ok(())
}

/// The cost of the operator's features: `noop` with 16 clients behind OAuth (a JWT on every
/// request) with metrics on, beside `http.static_c16` of the same run.
fn auth_load(
    options: &Options,
    binary: &Path,
    manifests: &Manifests,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    // A binary from before `[server.auth]` (a `--compare` baseline) cannot serve it.
    let server = match HttpServer::start_with(binary, &manifests.tools_with_auth, &["--metrics"]) {
        Ok(server) => server,
        Err(error) => {
            eprintln!(
                "  http.static_c16_auth_metrics: skipped, the binary cannot serve it ({error})"
            );
            return Ok(());
        }
    };
    let target = Target::Mcp {
        url: server.url.parse()?,
        body: Bytes::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "noop", "arguments": {}}})
            .to_string(),
        ),
        authorization: Some(manifests.token.clone()),
    };
    let result = http::run(&target, 16, options.duration)?;
    load(figures, "http.static_c16_auth_metrics", &result);
    Ok(())
}

/// The cost of traces: `noop` and `fetch_json` with 16 clients, every request in a span
/// (and `fetch_json`'s request in a client span, with `traceparent`), exported over OTLP/HTTP
/// to the local upstream; beside `http.static_c16` and `http.http_c16` of the same run.
fn traced_load(
    options: &Options,
    binary: &Path,
    manifests: &Manifests,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let endpoint = manifests.upstream.clone();
    // A binary from before traces (a `--compare` baseline) cannot serve it.
    let server =
        match HttpServer::start_with(binary, &manifests.tools, &["--otlp-endpoint", &endpoint]) {
            Ok(server) => server,
            Err(error) => {
                eprintln!("  http.*_c16_traced: skipped, the binary cannot serve it ({error})");
                return Ok(());
            }
        };
    let url: hyper::Uri = server.url.parse()?;
    for (name, tool, arguments) in [
        ("http.static_c16_traced", "noop", json!({})),
        ("http.http_c16_traced", "fetch_json", json!({"id": 7})),
    ] {
        let target = Target::Mcp {
            url: url.clone(),
            body: Bytes::from(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})
                .to_string(),
            ),
            authorization: None,
        };
        let result = http::run(&target, 16, options.duration)?;
        load(figures, name, &result);
    }
    Ok(())
}

fn big_list(
    options: &Options,
    binary: &Path,
    count: usize,
    manifest: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    let mut cold = Vec::new();
    let mut steady = Vec::new();
    let mut bytes = 0;
    let mut rss = Vec::new();
    for _ in 0..options.big_starts {
        let (mut server, start) = StdioServer::start(binary, manifest)?;
        cold.push(start.tools_list.as_secs_f64() * 1e3);
        bytes = start.list_bytes;
        steady.extend(server.lists(options.list_calls)?);
        rss.push(kib_to_mib(server.peak_rss_kib()?));
        server.stop()?;
    }
    figures.insert(format!("list.{count}.load_and_list_ms"), median(&cold));
    figures.insert(format!("list.{count}.p50_us"), Latency::of(&steady).p50);
    figures.insert(format!("list.{count}.rss_mib"), median(&rss));
    #[expect(clippy::cast_precision_loss, reason = "figures for people")]
    figures.insert(format!("list.{count}.kib"), bytes as f64 / 1024.0);
    Ok(())
}

/// The default length of an HTTP case.
pub(crate) const DURATION: Duration = Duration::from_secs(5);
