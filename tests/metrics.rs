//! `/metrics`: read by the official Prometheus client's OpenMetrics parser (Python,
//! `tests/interop/.venv`), counters moving as calls are made, behind the listener's token
//! with `--metrics`, on a listener of its own with `--metrics-addr` (stdio too).

use std::collections::HashMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Server, Workspace, repo_root};
use crate::http_harness::{HttpServer, message};

const TOOLS: &str = r#"
[[tools]]
name = "fine"
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "typed"
[tools.arguments.n]
type = "integer"
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "broken"
[tools.command]
argv = ["sh", "-c", "echo no >&2; exit 3"]
"#;

/// User and system CPU seconds of process `pid`, from `/proc` (ticks of 1/100 s).
fn cpu_seconds(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's stat");
    let after = &stat[stat.rfind(')').expect("a name") + 2..];
    let fields: Vec<&str> = after.split_ascii_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    #[expect(clippy::cast_precision_loss, reason = "a few hours of ticks")]
    let seconds = ticks as f64 / 100.0;
    seconds
}

/// Every sample, as `name{label="value",…}` → value, parsed by `prometheus_client`.
fn parse(text: &str) -> HashMap<String, serde_json::Value> {
    let python = repo_root().join("tests/interop/.venv/bin/python");
    assert!(
        python.exists(),
        "the Python client is not installed; run scripts/test (it creates tests/interop/.venv)"
    );
    let script = "import sys, json\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families\n\
        samples = {}\n\
        for family in text_string_to_metric_families(sys.stdin.read()):\n\
        \x20   for s in family.samples:\n\
        \x20       labels = ','.join(f'{k}=\"{v}\"' for k, v in sorted(s.labels.items()))\n\
        \x20       value = int(s.value) if float(s.value).is_integer() else s.value\n\
        \x20       samples[s.name + '{' + labels + '}'] = value\n\
        print(json.dumps(samples))\n";
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("parser ends");
    assert!(
        output.status.success(),
        "the OpenMetrics parser refused the text: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice::<HashMap<String, serde_json::Value>>(&output.stdout).expect("samples")
}

/// A sample that is a whole number (a count, bytes, descriptors).
fn sample(samples: &HashMap<String, serde_json::Value>, key: &str) -> u64 {
    samples
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("no whole-number sample {key}: {:?}", samples.get(key)))
}

/// Arguments that did not fit are counted apart; CPU time is a counter (`_total`), as
/// Prometheus' `rate()` expects.
fn assert_invalid_arguments_and_cpu(
    samples: &HashMap<String, serde_json::Value>,
    (before, after): (f64, f64),
) {
    assert_eq!(
        sample(
            samples,
            r#"mcp_serve_tool_calls_total{outcome="invalid_arguments",tool="typed"}"#
        ),
        1
    );
    assert_eq!(
        sample(
            samples,
            r#"mcp_serve_tool_calls_total{outcome="ok",tool="typed"}"#
        ),
        0
    );
    // What the kernel says the process used, read by the test just before and after the
    // scrape.
    let cpu = samples
        .get("mcp_serve_process_cpu_seconds_total{}")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                samples
                    .keys()
                    .filter(|key| key.contains("cpu"))
                    .collect::<Vec<_>>()
            )
        });
    assert!(
        before - 1e-9 <= cpu && cpu <= after + 1e-9,
        "CPU seconds {cpu}, the kernel said {before} then {after}"
    );
}

#[test]
fn metrics_behind_the_token_count_calls_responses_and_refusals() {
    let workspace = Workspace::new(TOOLS);
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &["--metrics", "--auth-token-env", "METRICS_TEST_TOKEN"],
        &[("METRICS_TEST_TOKEN", "t0ken-for-metrics")],
    );
    let auth = [
        ("Authorization", "Bearer t0ken-for-metrics"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let call = |id: i64, tool: &str| {
        let response = server.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}), &auth);
        assert_eq!(response.status(), 200);
        message(response, id)
    };
    for id in 1..=3 {
        assert_eq!(call(id, "fine")["result"]["isError"], json!(false));
    }
    assert_eq!(call(4, "broken")["result"]["isError"], json!(true));
    // Arguments that do not fit: refused before the backend, counted as such.
    let invalid = server.post(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "typed", "arguments": {"n": "x"}}}), &auth);
    assert_eq!(message(invalid, 7)["result"]["isError"], json!(true));
    // An unknown tool is a protocol error and no series: a client cannot add labels.
    assert!(call(5, "no-such-tool").get("error").is_some());
    let refused = server.post(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    assert_eq!(refused.status(), 401);

    let scrape = |token: Option<&str>| {
        let mut request = server.client.get(format!("{}/metrics", server.base));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        request.send().expect("GET /metrics")
    };
    assert_eq!(scrape(None).status(), 401, "the same token guards /metrics");
    // An unknown path is counted too (outside the endpoint's gate).
    let missing = server
        .client
        .get(format!("{}/no-such-path", server.base))
        .send()
        .expect("GET");
    assert_eq!(missing.status(), 404);
    let cpu_before = cpu_seconds(server.pid());
    let response = scrape(Some("t0ken-for-metrics"));
    let cpu_after = cpu_seconds(server.pid());
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let samples = parse(&response.text().expect("body"));
    eprintln!("metrics: {} samples parsed", samples.len());
    assert_eq!(
        sample(
            &samples,
            r#"mcp_serve_tool_calls_total{outcome="ok",tool="fine"}"#
        ),
        3
    );
    assert_eq!(
        sample(
            &samples,
            r#"mcp_serve_tool_calls_total{outcome="error",tool="broken"}"#
        ),
        1
    );
    assert_eq!(
        sample(
            &samples,
            r#"mcp_serve_tool_call_duration_seconds_count{tool="fine"}"#
        ),
        3
    );
    assert_invalid_arguments_and_cpu(&samples, (cpu_before, cpu_after));
    assert!(!samples.keys().any(|key| key.contains("no-such-tool")));
    assert_eq!(sample(&samples, "mcp_serve_calls_in_flight{}"), 0);
    assert!(sample(&samples, "mcp_serve_queue_wait_seconds_count{}") >= 4);
    assert!(sample(&samples, r#"mcp_serve_http_responses_total{status="200"}"#) >= 5);
    assert_eq!(
        sample(&samples, r#"mcp_serve_http_responses_total{status="404"}"#),
        1
    );
    // Two 401s: the tools/list without a token, and the scrape without one.
    assert_eq!(
        sample(&samples, r#"mcp_serve_http_responses_total{status="401"}"#),
        2
    );
    assert_eq!(
        sample(&samples, r#"mcp_serve_auth_failures_total{reason="token"}"#),
        2
    );
    assert!(sample(&samples, "mcp_serve_process_resident_memory_bytes{}") > 1_000_000);
    assert!(sample(&samples, "mcp_serve_process_open_fds{}") > 3);
    let text = scrape(Some("t0ken-for-metrics")).text().expect("body");
    assert!(!text.contains("t0ken-for-metrics"));
}

#[test]
fn a_stdio_server_serves_metrics_on_a_listener_of_its_own() {
    let workspace = Workspace::new(TOOLS);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--metrics-addr", "127.0.0.1:0"],
        &[],
    );
    server.handshake("2025-11-25");
    assert_eq!(server.call("fine", json!({}))["isError"], json!(false));
    let deadline = Instant::now() + Duration::from_secs(10);
    let url = loop {
        if let Some(url) = server.stderr().lines().find_map(|line| {
            line.strip_prefix("mcp-serve: metrics on ")
                .map(ToOwned::to_owned)
        }) {
            break url;
        }
        assert!(
            Instant::now() < deadline,
            "no metrics line: {}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = crate::http_harness::http_client(Duration::from_secs(10))
        .get(&url)
        .send()
        .expect("GET")
        .text()
        .expect("body");
    let samples = parse(&text);
    assert_eq!(
        sample(
            &samples,
            r#"mcp_serve_tool_calls_total{outcome="ok",tool="fine"}"#
        ),
        1
    );
}

#[test]
fn metrics_on_the_http_listener_need_http() {
    let workspace = Workspace::new(TOOLS);
    let (code, _, stderr) = crate::harness::run(
        &[
            "--config",
            workspace.manifest().to_str().expect("utf-8"),
            "--metrics",
        ],
        std::path::Path::new("/"),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("with stdio, use --metrics-addr"),
        "{stderr}"
    );
}
