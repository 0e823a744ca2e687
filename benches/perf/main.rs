//! The performance benchmark: `cargo bench --bench perf`.
//!
//! Builds mcp-serve in release mode (cargo does, for the bench), then measures, in one run
//! and beside the machine's floor: cold start, sequential `tools/call` latency over stdio
//! for a static, a command and an HTTP-backed tool (against an upstream started here), HTTP
//! throughput with 1 and 16 clients, peak RSS, and `tools/list` on manifests of 1,000 and
//! 10,000 tools. Every measurement is repeated `--runs` times and the medians are reported,
//! as a markdown table with ratios to the floor, and as JSON.
//!
//! ```text
//! cargo bench --bench perf -- [--runs N] [--quick] [--calls N] [--duration SECS]
//!                             [--json PATH] [--compare LABEL=PATH]...
//! cargo bench --bench perf -- --write-manifests DIR   # the big manifests, for other tools
//! ```
//!
//! `--compare` measures another build in the same run (an older commit, say), so that
//! before and after share the machine's weather.
#![expect(clippy::print_stdout, reason = "the report goes to stdout")]

mod floor;
mod http;
mod issuer;
mod manifest;
mod measure;
mod projection;
mod report;
mod serve;
mod stats;
mod stdio;
mod tasks;
mod upstream;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use indexmap::IndexMap;
use serde_json::json;

use measure::{Figures, Manifests};

const USAGE: &str = "usage: cargo bench --bench perf -- [--runs N] [--quick] [--calls N] \
                     [--duration SECS] [--json PATH] [--compare LABEL=PATH]... \
                     | --write-manifests DIR";

/// How much to measure.
#[derive(Debug)]
pub(crate) struct Options {
    runs: usize,
    /// Timed calls per stdio case (and samples per floor).
    calls: usize,
    warmup: usize,
    /// Length of each HTTP case.
    duration: Duration,
    /// Cold starts per run.
    starts: usize,
    /// Starts per big manifest, and `tools/list` calls per start.
    big_starts: usize,
    list_calls: usize,
    binaries: IndexMap<String, PathBuf>,
    json: PathBuf,
}

fn options() -> anyhow::Result<Options> {
    let mut options = Options {
        runs: 3,
        calls: 2000,
        warmup: 100,
        duration: measure::DURATION,
        starts: 20,
        big_starts: 3,
        list_calls: 10,
        binaries: IndexMap::from([(
            "mcp-serve".to_owned(),
            PathBuf::from(env!("CARGO_BIN_EXE_mcp-serve")),
        )]),
        json: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perf.json"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--bench" => {} // cargo's
            "--runs" => options.runs = value()?.parse()?,
            "--calls" => options.calls = value()?.parse()?,
            "--duration" => options.duration = Duration::from_secs_f64(value()?.parse()?),
            "--json" => options.json = value()?.into(),
            "--write-manifests" => {
                let dir = PathBuf::from(value()?);
                std::fs::create_dir_all(&dir)?;
                for count in [1_000, 10_000] {
                    let name = format!("tools-{count}.toml");
                    manifest::write(&dir, &name, &manifest::many_tools(count))?;
                }
                eprintln!(
                    "wrote tools-1000.toml and tools-10000.toml in {}",
                    dir.display()
                );
                std::process::exit(0);
            }
            "--quick" => {
                options.runs = 1;
                options.calls = 300;
                options.duration = Duration::from_secs(1);
                options.starts = 5;
                options.big_starts = 1;
                options.list_calls = 3;
            }
            "--compare" => {
                let pair = value()?;
                let (label, path) = pair.split_once('=').context("--compare takes LABEL=PATH")?;
                options.binaries.insert(label.to_owned(), path.into());
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let dir = tempfile::tempdir()?;
    let issuer = issuer::Issuer::new(dir.path())?;
    let upstream = upstream::start(issuer.jwks.clone(), projection::issue_page()?)?;
    let manifests = Manifests {
        tools: manifest::write(dir.path(), "tools.toml", &manifest::tools(&upstream))?,
        big: [1_000, 10_000]
            .into_iter()
            .map(|count| {
                let name = format!("tools-{count}.toml");
                Ok((
                    count,
                    manifest::write(dir.path(), &name, &manifest::many_tools(count))?,
                ))
            })
            .collect::<anyhow::Result<_>>()?,
        token: issuer.token(&upstream)?,
        tools_with_auth: manifest::write(
            dir.path(),
            "tools-auth.toml",
            &manifest::tools_with_auth(&upstream),
        )?,
        projection: manifest::write(
            dir.path(),
            "projection.toml",
            &projection::manifest(&upstream),
        )?,
        upstream,
    };
    let mut runs = Vec::new();
    for run in 1..=options.runs {
        eprintln!("run {run} of {}: the floor", options.runs);
        let floor = measure::floor(&options, &manifests.upstream)?;
        let mut binaries = IndexMap::new();
        for (label, path) in &options.binaries {
            eprintln!("run {run} of {}: {label}", options.runs);
            let figures = measure::binary(&options, path, &manifests)
                .with_context(|| format!("measuring {label} ({})", path.display()))?;
            binaries.insert(label.clone(), figures);
        }
        runs.push((floor, binaries));
    }
    let floor = medians(runs.iter().map(|(floor, _)| floor));
    let binaries: IndexMap<String, Figures> = options
        .binaries
        .keys()
        .map(|label| (label.clone(), medians(runs.iter().map(|(_, b)| &b[label]))))
        .collect();
    println!(
        "mcp-serve benchmark: medians of {} runs; {} calls per stdio case, {:?} per HTTP case, {} cores\n",
        options.runs,
        options.calls,
        options.duration,
        std::thread::available_parallelism().map_or(1, usize::from),
    );
    println!(
        "`mcp-serve` is the binary cargo built for this benchmark, the same one \
         `cargo build --release` makes (the test dependencies add no feature to it).\n"
    );
    println!("{}", report::table(&floor, &binaries));
    for (label, figures) in &binaries {
        println!("targets ({label}):");
        for (target, met) in report::targets(&floor, figures) {
            println!("  [{}] {target}", if met { "met" } else { "MISSED" });
        }
    }
    let meta = json!({
        "runs": options.runs, "calls": options.calls, "warmup": options.warmup,
        "http_seconds": options.duration.as_secs_f64(),
        "cores": std::thread::available_parallelism().map_or(1, usize::from),
        "binaries": options.binaries,
    });
    let document = report::json(&meta, &runs, &floor, &binaries);
    std::fs::write(&options.json, serde_json::to_string_pretty(&document)?)?;
    println!("\nJSON: {}", options.json.display());
    Ok(())
}

/// The median of each figure over the runs.
fn medians<'a>(runs: impl Iterator<Item = &'a Figures>) -> Figures {
    let runs: Vec<&Figures> = runs.collect();
    let Some(first) = runs.first() else {
        return Figures::new();
    };
    first
        .keys()
        .map(|key| {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.get(key).copied())
                .collect();
            (key.clone(), stats::median(&values))
        })
        .collect()
}
