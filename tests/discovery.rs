//! Finding tools by what they do (`discovery`, `mcp-serve search`), measured on real APIs:
//! every operation of six vendored descriptions, imported, its summary as the query. How
//! often its tool comes first and among the first five, and what a client reads to reach
//! it: five found tools' definitions, against the whole `tools/list`.

use std::fmt::Write as _;
use std::process::Command;

use serde_json::Value;

use crate::harness::{openapi_fixtures, run};
use mcp_serve::discovery::Index;
use mcp_serve::revision::Revision;

/// A description's text, unpacked when it is stored gzipped.
fn description(file: &str) -> String {
    if std::path::Path::new(file)
        .extension()
        .is_some_and(|extension| extension == "gz")
    {
        let output = Command::new("gzip")
            .args(["-dc", file])
            .current_dir(openapi_fixtures())
            .output()
            .expect("gzip runs");
        assert!(output.status.success(), "gzip -dc {file}");
        return String::from_utf8(output.stdout).expect("UTF-8");
    }
    std::fs::read_to_string(openapi_fixtures().join(file)).expect("the description")
}

/// Ranks of each tool found by its own title, and the bytes a client reads each way.
struct Measured {
    tools: usize,
    asked: usize,
    first: usize,
    top_five: usize,
    list_bytes: usize,
    found_bytes: usize,
}

#[cfg(feature = "openapi")]
fn measure(file: &str) -> Measured {
    let options = mcp_serve::openapi::Options {
        filters: mcp_serve::openapi::Filters::default(),
        base_url: Some("https://api.example.com".to_owned()),
        env_prefix: "X_".to_owned(),
        no_output_schema: false,
        max_output_schema: 16 * 1024,
        project: false,
        max_items: None,
        server_name: None,
        command_line: String::new(),
    };
    let imported = mcp_serve::openapi::import(&description(file), &options).expect("imports");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tools.toml");
    std::fs::write(&path, &imported.manifest).expect("write");
    let (registry, _) = mcp_serve::manifest::load_without_secrets(&path).expect("loads");
    let index = Index::new(&registry);
    let listing = registry.listing(Revision::V2025_06);
    let list_bytes = serde_json::to_vec(&listing).expect("JSON").len();
    let mut measured = Measured {
        tools: listing.len(),
        asked: 0,
        first: 0,
        top_five: 0,
        list_bytes,
        found_bytes: 0,
    };
    for tool in registry.tools() {
        let Some(title) = tool.definition.get("title").and_then(Value::as_str) else {
            continue;
        };
        measured.asked += 1;
        let found = index.search(title, 5, |_| true);
        let rank = found.iter().position(|found| found.name == tool.name);
        measured.first += usize::from(rank == Some(0));
        measured.top_five += usize::from(rank.is_some());
        let definitions: Vec<&serde_json::Map<String, Value>> = found
            .iter()
            .filter_map(|found| registry.get(&found.name).ok())
            .map(|tool| &tool.definition)
            .collect();
        measured.found_bytes += serde_json::to_vec(&definitions).expect("JSON").len();
    }
    measured
}

#[cfg(feature = "openapi")]
#[test]
fn a_tools_summary_finds_it_among_the_first_five_in_real_apis() {
    let mut report = String::from(
        "| description | tools | asked | first | first five | tools/list tokens | five found, tokens |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let (mut asked, mut first, mut top_five) = (0, 0, 0);
    for file in [
        "github.json.gz",
        "blockfrost.yaml.gz",
        "rclone.yaml.gz",
        "readme.json",
        "galaxy.yaml",
        "petstore.yaml",
    ] {
        let measured = measure(file);
        #[expect(clippy::cast_precision_loss, reason = "a report")]
        let percent = |part: usize| 100.0 * part as f64 / measured.asked.max(1) as f64;
        let _ = writeln!(
            report,
            "| {file} | {} | {} | {:.1} % | {:.1} % | {} | {} |",
            measured.tools,
            measured.asked,
            percent(measured.first),
            percent(measured.top_five),
            measured.list_bytes / 4,
            measured.found_bytes / 4 / measured.asked.max(1),
        );
        asked += measured.asked;
        first += measured.first;
        top_five += measured.top_five;
    }
    eprintln!("{report}");
    eprintln!("in all: {asked} asked, {first} first, {top_five} among the first five");
    assert!(asked > 1_400, "{asked}");
    assert!(
        top_five * 100 >= asked * 90,
        "{top_five} of {asked} among the first five"
    );
}

#[test]
fn search_finds_a_tool_by_what_it_does_not_by_its_name() {
    let workspace = crate::harness::Workspace::new(
        r#"
[[tools]]
name = "pr-ls"
toolsets = ["code"]
title = "List pull requests"
description = "The open pull requests of a repository, newest first"
[tools.static]
content = [{type = "text", text = "x"}]

[[tools]]
name = "mk-issue"
toolsets = ["issues"]
title = "Open an issue"
description = "Creates an issue with a title and a body"
[tools.static]
content = [{type = "text", text = "x"}]

[[tools]]
name = "weather"
title = "Current weather"
description = "The weather now in a city"
[tools.static]
content = [{type = "text", text = "x"}]
"#,
    );
    let manifest = workspace.manifest();
    let manifest = manifest.to_str().expect("path");
    let (code, out, err) = run(
        &[
            "search", "--config", manifest, "creating", "issues", "--json",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let answer: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(answer["tools"][0]["name"], "mk-issue", "{out}");
    assert_eq!(answer["tools"].as_array().map(Vec::len), Some(1), "{out}");
    let (code, out, _) = run(
        &[
            "search", "--config", manifest, "which", "pull", "requests", "are", "open?",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.starts_with(" 1. pr-ls"), "{out}");
    // A tool the chosen toolsets leave out is not found; the control, with its set, is.
    let (code, out, _) = run(
        &[
            "search",
            "--config",
            manifest,
            "--toolsets",
            "code",
            "creating",
            "issues",
        ],
        workspace.dir.path(),
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "no tool matches `creating issues`\n")
    );
    let (code, out, _) = run(
        &[
            "search",
            "--config",
            manifest,
            "--toolsets",
            "issues",
            "creating",
            "issues",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.starts_with(" 1. mk-issue"), "{out}");
    let (code, out, _) = run(
        &["search", "--config", manifest, "sourdough"],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert_eq!(out, "no tool matches `sourdough`\n");
    let (code, _, err) = run(
        &["search", "--config", manifest, "--limit", "0", "x"],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{err}");
}
