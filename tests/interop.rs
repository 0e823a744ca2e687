//! The official TypeScript client (`@modelcontextprotocol/client`) drives mcp-serve over
//! stdio, in both protocol eras. Its packages are installed by `scripts/test` (npm ci in
//! `tests/interop`).

use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{BINARY, repo_root};

fn drive(mode: &str) -> Value {
    let interop = repo_root().join("tests/interop");
    assert!(
        interop
            .join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "the TypeScript client is not installed; run `npm ci --prefix tests/interop` (scripts/test does)"
    );
    let output = Command::new("node")
        .arg(interop.join("stdio_client.mjs"))
        .arg(BINARY)
        .arg(repo_root().join("tools.example.toml"))
        .arg(mode)
        .current_dir("/")
        .output()
        .expect("run node");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    report
}

fn assert_tool_behaviour(report: &Value) {
    assert_eq!(report["serverName"], json!("catalog"));
    assert_eq!(
        report["tools"],
        json!([
            "search",
            "product-details",
            "clear-catalog",
            "disk-free",
            "find-in-files",
            "list-files"
        ])
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
}

#[test]
fn the_typescript_client_works_in_the_legacy_era() {
    let report = drive("legacy");
    assert_eq!(report["protocolVersion"], json!("2025-11-25"));
    assert_eq!(report["era"], json!("legacy"));
    assert_tool_behaviour(&report);
}

#[test]
fn the_typescript_client_negotiates_the_2026_era() {
    let report = drive("auto");
    assert_eq!(report["protocolVersion"], json!("2026-07-28"));
    assert_eq!(report["era"], json!("modern"));
    assert_eq!(
        report["instructions"],
        json!("Use `search` to find product names, then `product-details` for prices.")
    );
    assert_tool_behaviour(&report);
}
