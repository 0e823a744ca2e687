//! Rate limits per tool and caller: a burst past its size is refused with the time to wait,
//! then allowed once that time has passed; over HTTP the caller is the client's address, so
//! a new connection does not reset the count and another address has its own.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::json;

use crate::harness::{Server, Workspace, text};
use crate::http_harness::{HttpServer, message};

const TOOLS: &str = r#"
[server]
rate = "100/s"

[[tools]]
name = "limited"
rate = "2/s"
burst = 3
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "hourly"
rate = "1/h"
burst = 3
[tools.static]
content = [{ type = "text", text = "ok" }]

[[tools]]
name = "default-rate"
[tools.static]
content = [{ type = "text", text = "ok" }]
"#;

/// The seconds a refusal says to wait.
fn retry_after(message: &str) -> f64 {
    message
        .split("try again in ")
        .nth(1)
        .and_then(|rest| rest.trim_end_matches('s').parse().ok())
        .unwrap_or_else(|| panic!("no wait in {message:?}"))
}

#[test]
fn a_burst_past_its_size_is_refused_then_allowed_after_the_wait() {
    let workspace = Workspace::new(TOOLS);
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    for _ in 0..3 {
        let result = server.call("limited", json!({}));
        assert_eq!(result["isError"], json!(false), "{result}");
    }
    let refused = server.call("limited", json!({}));
    assert_eq!(refused["isError"], json!(true));
    let message = text(&refused).to_owned();
    assert!(
        message.starts_with("rate limit: at most 2 calls a second (bursts of 3); try again in "),
        "{message}"
    );
    let wait = retry_after(&message);
    assert!(wait > 0.0 && wait <= 0.5, "{wait}");
    // Another tool has its own limit (the server's default).
    assert_eq!(
        server.call("default-rate", json!({}))["isError"],
        json!(false)
    );
    std::thread::sleep(Duration::from_secs_f64(wait + 0.05));
    assert_eq!(server.call("limited", json!({}))["isError"], json!(false));
    assert_eq!(
        server.call("limited", json!({}))["isError"],
        json!(true),
        "one call came back, not a burst"
    );
}

#[test]
fn over_http_the_caller_is_its_address_and_reconnecting_does_not_reset_it() {
    let workspace = Workspace::new(TOOLS);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    // A new client (so a new connection) for every call, from 127.0.0.1 or 127.0.0.2.
    let call = |from: &str, id: i64| {
        let client = reqwest::blocking::Client::builder()
            .local_address(from.parse::<IpAddr>().expect("ip"))
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        let response = client
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hourly", "arguments": {}}}).to_string())
            .send()
            .expect("POST");
        message(response, id)["result"]["isError"] == json!(true)
    };
    // One call an hour, bursts of three: the fourth is refused however slow the machine.
    let refused: Vec<bool> = (0..4).map(|id| call("127.0.0.1", id)).collect();
    assert_eq!(refused, [false, false, false, true]);
    assert!(
        !call("127.0.0.2", 10),
        "another address has its own allowance"
    );
    assert!(call("127.0.0.1", 11), "and the first is still over its own");
}

#[test]
fn a_rate_that_does_not_parse_is_a_load_error_pointing_at_it() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"t\"\nrate = \"10/day\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n\n[[tools]]\nname = \"u\"\nburst = 3\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
    );
    let (code, _, stderr) = crate::harness::run(
        &[
            "check",
            "--config",
            workspace.manifest().to_str().expect("utf-8"),
        ],
        std::path::Path::new("/"),
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("invalid `rate`: `day` is not a unit: use s, m or h"),
        "{stderr}"
    );
    assert!(stderr.contains("`burst` needs a `rate`"), "{stderr}");
}

#[test]
fn over_the_request_rate_any_request_gets_429_with_retry_after_until_the_window_passes() {
    let workspace = Workspace::new(TOOLS);
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--request-rate", "1/s", "--request-burst", "3"],
    );
    let post = |from: &str, id: i64, method: &str| {
        reqwest::blocking::Client::builder()
            .local_address(from.parse::<IpAddr>().expect("ip"))
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client")
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string())
            .send()
            .expect("POST")
    };
    // Whatever the requests ask for, they count: three at once, then the fourth is refused.
    let statuses: Vec<u16> = ["tools/list", "prompts/list", "ping", "tools/list"]
        .iter()
        .zip(1..)
        .map(|(method, id)| post("127.0.0.1", id, method).status().as_u16())
        .collect();
    assert_eq!(statuses, [200, 200, 200, 429]);
    let refused = post("127.0.0.1", 5, "tools/list");
    assert_eq!(refused.status(), 429);
    let wait: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
        .expect("a Retry-After in whole seconds");
    assert!((1..=2).contains(&wait), "Retry-After: {wait}");
    let body: serde_json::Value =
        serde_json::from_str(&refused.text().expect("a body")).expect("a JSON-RPC error");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("rate limit: at most 1 request a second (bursts of 3)"),
        "{message}"
    );
    // The health checks are never limited; another address has its own allowance.
    let health = reqwest::blocking::get(format!("{}/healthz", server.base)).expect("GET");
    assert_eq!(health.status(), 200);
    assert_eq!(post("127.0.0.2", 6, "tools/list").status(), 200);
    // Once the wait has passed, one more request gets in.
    std::thread::sleep(Duration::from_secs(wait));
    assert_eq!(post("127.0.0.1", 7, "tools/list").status(), 200);
}

#[test]
fn requests_refused_for_their_token_do_not_count_and_metrics_are_never_limited() {
    let workspace = Workspace::new(TOOLS);
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &[
            "--request-rate",
            "1/h",
            "--request-burst",
            "2",
            "--auth-token-env",
            "RATE_TEST_TOKEN",
            "--metrics",
        ],
        &[("RATE_TEST_TOKEN", "rate-t0ken")],
    );
    let post = |token: Option<&str>| {
        let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
        let authorization = token.map(|token| format!("Bearer {token}"));
        if let Some(value) = &authorization {
            headers.push(("Authorization", value));
        }
        server
            .post(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
                &headers,
            )
            .status()
            .as_u16()
    };
    let refused: Vec<u16> = (0..5)
        .map(|_| post(Some("wrong")))
        .chain([post(None)])
        .collect();
    assert_eq!(refused, [401; 6]);
    let allowed: Vec<u16> = (0..3).map(|_| post(Some("rate-t0ken"))).collect();
    assert_eq!(
        allowed,
        [200, 200, 429],
        "the 401s took nothing from the allowance"
    );
    for _ in 0..3 {
        let metrics = server
            .client
            .get(format!("{}/metrics", server.base))
            .header("Authorization", "Bearer rate-t0ken")
            .send()
            .expect("GET /metrics");
        assert_eq!(metrics.status(), 200, "scrapes are never limited");
    }
}
