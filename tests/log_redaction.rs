//! Log lines are a door too: at `-vv`, rmcp writes each request with the client's arguments,
//! and a model that has seen a secret can send it back as one. Every line goes through the
//! manifest's redactor, whatever crate wrote it and at whatever level.

use serde_json::json;

use crate::harness::{Server, Workspace, text};

const SECRET: &str = "log-secret-5d2e91aa";

const MANIFEST: &str = r#"
[[tools]]
name = "echo"
input-schema = '{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}'
[tools.command]
argv = ["echo", "{text}"]

[[tools]]
name = "api"
input-schema = '{"type": "object"}'
[tools.http]
url = "http://127.0.0.1:9/x"
headers = { Authorization = "Bearer ${env:LOG_TEST_KEY}" }
"#;

#[test]
fn a_secret_a_client_sends_back_never_reaches_the_log_at_any_level() {
    for json_lines in [false, true] {
        let workspace = Workspace::new(MANIFEST);
        let mut extra = vec!["-vv"];
        if json_lines {
            extra.extend(["--log-format", "json"]);
        }
        let mut server =
            Server::start_with(&workspace.manifest(), &extra, &[("LOG_TEST_KEY", SECRET)]);
        server.handshake("2025-11-25");
        let result = server.call("echo", json!({"text": format!("the key is {SECRET}")}));
        assert_eq!(text(&result).trim(), "the key is [redacted]");
        let log = server.stderr();
        assert!(
            log.contains("the key is [redacted]"),
            "-vv logs the request's arguments: {log}"
        );
        assert!(!log.contains(SECRET), "the log shows the secret:\n{log}");
    }
    // The control: the same value, when the manifest holds no such secret, is logged as sent.
    let workspace = Workspace::new(&MANIFEST.replace("${env:LOG_TEST_KEY}", "plain"));
    let mut server = Server::start_with(&workspace.manifest(), &["-vv"], &[]);
    server.handshake("2025-11-25");
    server.call("echo", json!({"text": format!("the key is {SECRET}")}));
    assert!(server.stderr().contains(SECRET), "{}", server.stderr());
}
