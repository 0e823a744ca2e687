//! Regression tests for the safety claims about HTTP, each written to break one of them:
//! secrets in every encoding and every place, headers an argument must never set, the
//! session cap and stateless clients, oversized and stalled requests, clients that hang up
//! on a session, shutdown past its grace period, the bearer scheme, and whose kept outputs a
//! caller sees.

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::harness::{Server, Workspace, read_pid, run, slow_tools, text, wait_gone};
use crate::http_harness::{HttpServer, call_in_background, message, open_session};
use crate::upstream::{Recorded, Reply, Upstream};

/// A secret with every character that encodes differently in a URL, a form and JSON.
const SECRET: &str = "ab+cd/ef== x\"y&z%";

/// Every form [`SECRET`] can take on its way into a request and back.
fn forms() -> Vec<String> {
    let percent = percent_encoding::utf8_percent_encode(SECRET, percent_encoding::NON_ALPHANUMERIC)
        .to_string();
    let form: String = form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
    let json = serde_json::to_string(SECRET).expect("json");
    let json = json.trim_matches('"').to_owned();
    vec![
        SECRET.to_owned(),
        percent.to_lowercase(),
        percent,
        form,
        json.replace('/', "\\/"),
        json,
        base64::engine::general_purpose::STANDARD.encode(SECRET),
    ]
}

fn assert_no_secret(place: &str, text: &str) {
    for form in forms() {
        assert!(
            !text.contains(&form),
            "{place} holds the secret as {form:?}:\n{text}"
        );
    }
}

/// Echoes each request back, in the status, content type and encoding the path asks for.
fn echo() -> Upstream {
    Upstream::start(|request: &Recorded, port| {
        let echoed = format!(
            "{}\n{}\n{}",
            request.request_line,
            request
                .headers
                .iter()
                .map(|(name, value)| format!("{name}: {value}"))
                .collect::<Vec<_>>()
                .join("\n"),
            String::from_utf8_lossy(&request.body)
        );
        match request.path().split('?').next().unwrap_or_default() {
            "/fail" => Reply::new(500, "text/plain", echoed),
            "/json" => Reply::new(
                200,
                "application/json",
                json!({ "echo": echoed }).to_string(),
            ),
            "/blob" => Reply::new(200, "application/octet-stream", echoed.into_bytes()),
            "/away" => Reply {
                headers: vec![("Location".into(), format!("http://localhost:{port}/json"))],
                ..Reply::new(302, "text/plain", "")
            },
            _ => Reply::new(200, "text/plain", echoed),
        }
    })
}

/// HTTP tools that put the secret in every part of a request, and a command that looks for
/// its variable.
const SECRET_TOOLS: &str = r#"
[[tools]]
name = "fail"
[tools.http]
url = "UPSTREAM/fail?fixed=${env:KEY}"
query = { api_key = "${env:KEY}" }
headers = { X-Key = "${env:KEY}" }

[[tools]]
name = "json"
[tools.http]
method = "POST"
url = "UPSTREAM/json"
query = { api_key = "${env:KEY}" }
form = { token = "${env:KEY}" }

[[tools]]
name = "blob"
[tools.http]
url = "UPSTREAM/blob"
headers = { X-Key = "${env:KEY}" }

[[tools]]
name = "path"
[tools.http]
url = "UPSTREAM/p/${env:KEY}/x"

[[tools]]
name = "away"
[tools.http]
url = "UPSTREAM/away"
headers = { X-Key = "${env:KEY}" }
allow-other-hosts = true

[[tools]]
name = "away-query"
[tools.http]
method = "POST"
url = "UPSTREAM/away"
query = { api_key = "${env:KEY}" }
allow-other-hosts = true

[[tools]]
name = "env"
[tools.command]
script = 'echo "key=${KEY:-unset}"'
"#;

#[test]
fn secrets_never_leave_in_any_encoding_or_place() {
    let upstream = echo();
    let manifest = SECRET_TOOLS.replace("UPSTREAM", &upstream.base());
    let workspace = Workspace::new(&manifest);
    let mut server = Server::start_with(&workspace.manifest(), &["-vv"], &[("KEY", SECRET)]);
    server.handshake("2025-11-25");
    let mut places = 0;
    for tool in ["fail", "json", "blob"] {
        let result = server.call(tool, json!({}));
        let mut shown = result.to_string();
        if let Some(blob) = result["content"][0]["resource"]["blob"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            shown.push_str(&String::from_utf8_lossy(&bytes));
        }
        assert!(shown.contains("[redacted]"), "{tool}: {shown}");
        assert_no_secret(tool, &shown);
        places += 1;
    }
    assert!(
        upstream
            .recorded()
            .iter()
            .all(|request| request.header("x-key").is_none_or(|key| key == SECRET))
    );

    // In a path, the secret is one segment, however many `/` it holds.
    server.call("path", json!({}));
    let expected = format!(
        "/p/{}/x",
        percent_encoding::utf8_percent_encode(SECRET, percent_encoding::NON_ALPHANUMERIC)
    );
    assert_eq!(upstream.last().path(), expected);

    // Another host never gets the secret header, even when redirects there are allowed.
    let before = upstream.recorded().len();
    let result = server.call("away", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result).contains("the request carries secrets"),
        "{result}"
    );
    assert_eq!(
        upstream.recorded().len(),
        before + 1,
        "the redirect to another host was followed"
    );
    // Nor when the secret is in the query (a `Referer` would carry it) or the body.
    let result = server.call("away-query", json!({}));
    assert!(
        text(&result).contains("the request carries secrets"),
        "{result}"
    );
    assert_eq!(upstream.recorded().len(), before + 2);
    assert!(upstream.last().header("referer").is_none());

    // Commands never see the variables secrets come from.
    assert_eq!(text(&server.call("env", json!({}))), "key=unset");

    let log = server.stderr();
    assert_no_secret("the log", &log);
    places += 1;
    let output = std::process::Command::new(crate::harness::BINARY)
        .args(["call", "fail", "--dry-run", "--config"])
        .arg(workspace.manifest())
        .env("KEY", SECRET)
        .output()
        .expect("run");
    let dry_run = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(dry_run.contains("[redacted]"), "{dry_run}");
    assert_no_secret("--dry-run", &dry_run);
    places += 1;
    eprintln!(
        "secret forms: {} forms × {places} places, 0 leaks",
        forms().len()
    );
}

#[test]
fn arguments_can_never_set_framing_the_host_or_credentials() {
    let cases = [
        (
            "Host = \"{t}.example.com\"",
            "arguments can never choose the `Host` header",
        ),
        (
            "Content-Length = \"{t}\"",
            "`Content-Length` cannot be set by a manifest",
        ),
        (
            "Transfer-Encoding = \"chunked\"",
            "`Transfer-Encoding` cannot be set by a manifest",
        ),
        (
            "Connection = \"{t}\"",
            "`Connection` cannot be set by a manifest",
        ),
        ("Upgrade = \"h2c\"", "`Upgrade` cannot be set by a manifest"),
        (
            "Authorization = \"Bearer {t}\"",
            "arguments cannot fill the `Authorization` header",
        ),
        (
            "Cookie = \"s={t}\"",
            "arguments cannot fill the `Cookie` header",
        ),
    ];
    for (header, message) in cases {
        let workspace = Workspace::new(&format!(
            "[[tools]]\nname = \"h\"\n[tools.arguments.t]\ntype = \"string\"\n[tools.http]\nurl = \"http://127.0.0.1:9/\"\nheaders = {{ {header} }}\n"
        ));
        let (code, _, stderr) = run(&["check"], workspace.dir.path());
        assert_eq!(code, 2, "{header} loads:\n{stderr}");
        assert!(stderr.contains(message), "{header}:\n{stderr}");
    }
    let workspace = Workspace::new(
        "[[tools]]\nname = \"h\"\n[tools.arguments.t]\ntype = \"string\"\n[tools.http]\nurl = \"http://127.0.0.1:9/\"\nheaders = { Authorization = \"Bearer {t}\", Host = \"api.internal\" }\nargument-credentials = true\n",
    );
    let (code, _, stderr) = run(&["check"], workspace.dir.path());
    assert_eq!(
        code, 0,
        "an explicit opt-in and a literal Host load:\n{stderr}"
    );
}

#[test]
fn the_session_cap_never_turns_stateless_clients_away() {
    let workspace = slow_tools();
    let server = HttpServer::start(
        &workspace.manifest(),
        &["--sessions", "--max-sessions", "1"],
    );
    let init = crate::harness::initialize_request();
    assert_eq!(server.post(&init, &[]).status(), 200);
    assert_eq!(server.post(&init, &[]).status(), 503, "the cap holds");
    let (status, listed) = server.modern(2, "tools/list", json!({}));
    assert_eq!(status, 200, "{listed}");
    assert!(listed["result"]["tools"].is_array(), "{listed}");
}

#[test]
fn oversized_headers_and_stalled_bodies_are_refused() {
    let workspace = slow_tools();
    let server = HttpServer::start(&workspace.manifest(), &["--body-timeout", "500ms"]);
    let big = "x".repeat(200_000);
    let response = server.post(&json!({}), &[("X-Big", big.as_str())]);
    assert_eq!(response.status(), 431);

    let address = server.base.trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let started = Instant::now();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    )
    .expect("write");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_session_client_that_hangs_up_has_its_call_cancelled() {
    let workspace = slow_tools();
    let server = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let session = open_session(&server);
    let client = crate::http_harness::http_client(Duration::from_secs(2));
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
    let url = server.url.clone();
    let session_header = session.clone();
    let caller = std::thread::spawn(move || {
        // Gives up after 2 s and closes the connection.
        let _ = client
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", session_header)
            .body(body.to_string())
            .send()
            .and_then(reqwest::blocking::Response::text);
    });
    let main = read_pid(&workspace.path("main.pid"));
    let child = read_pid(&workspace.path("child.pid"));
    caller.join().expect("caller");
    assert!(
        wait_gone(main) && wait_gone(child),
        "the call outlived its client"
    );
}

#[test]
fn calls_stopped_at_shutdown_get_a_json_rpc_error() {
    let workspace = slow_tools();
    let mut server = HttpServer::start(&workspace.manifest(), &["--shutdown-grace", "300ms"]);
    let caller = call_in_background(
        &server.url,
        "slow",
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    read_pid(&workspace.path("child.pid"));
    assert!(server.terminate().success());
    let reply = caller
        .join()
        .expect("caller")
        .expect("an answer, not a dropped connection");
    assert_eq!(reply["id"], json!(7), "{reply}");
    assert_eq!(reply["error"]["code"], json!(-32603), "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("shutting down")),
        "{reply}"
    );
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let workspace = slow_tools();
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &["--auth-token-env", "T"],
        &[("T", "tok-123")],
    );
    let init = crate::harness::initialize_request();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let header = format!("{scheme} tok-123");
        let response = server.post(&init, &[("Authorization", header.as_str())]);
        assert_eq!(response.status(), 200, "{scheme}");
    }
    assert_eq!(
        server
            .post(&init, &[("Authorization", "Basic tok-123")])
            .status(),
        401
    );
}

fn in_session(server: &HttpServer, session: &str, id: i64, method: &str, params: Value) -> Value {
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    message(response, id)
}

#[test]
fn kept_outputs_are_listed_only_to_the_session_that_made_them() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"chatty\"\n[tools.command]\nscript = 'i=0; while [ $i -lt 2000 ]; do echo \"line $i\"; i=$((i+1)); done'\nmax-output = \"1KiB\"\nkeep-output = true\n",
    );
    let server = HttpServer::start(&workspace.manifest(), &["--sessions"]);
    let alice = open_session(&server);
    let bob = open_session(&server);
    let made = in_session(
        &server,
        &alice,
        2,
        "tools/call",
        json!({"name": "chatty", "arguments": {}}),
    );
    let uri = made["result"]["content"][1]["uri"]
        .as_str()
        .expect("a link")
        .to_owned();
    let listed = |session: &str| {
        in_session(&server, session, 3, "resources/list", json!({}))["result"]["resources"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(listed(&alice), 1);
    assert_eq!(listed(&bob), 0, "another session's output is listed");
    let read = in_session(&server, &bob, 4, "resources/read", json!({"uri": uri}));
    assert!(
        read.get("error").is_some(),
        "another session read it: {read}"
    );
    let read = in_session(&server, &alice, 5, "resources/read", json!({"uri": uri}));
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    // Stateless callers are nobody in particular: they are listed nothing, even when they
    // send a session's id (only a 2025 request's id is checked, by the session layer).
    let (status, stateless) = server.modern(6, "resources/list", json!({}));
    assert_eq!(status, 200);
    assert_eq!(stateless["result"]["resources"], json!([]), "{stateless}");
    let mut params = json!({"_meta": crate::harness::modern_meta()});
    params["_meta"]["x"] = json!(1);
    let claimed = server.post(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "resources/list", "params": params}),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/list"),
            ("Mcp-Session-Id", alice.as_str()),
        ],
    );
    let claimed = message(claimed, 7);
    assert_eq!(claimed["result"]["resources"], json!([]), "{claimed}");
}
