//! The HTTP clients that ask the issuer (its keys, token introspection) are made when the
//! server starts, with a timeout and no redirects; one that cannot be made stops the start
//! with a message, never falls back to a client without those rules.

use std::io::Read as _;
use std::process::{Command, Stdio};

use crate::harness::{BINARY, TIMEOUT, Workspace, keep_tasks_here, wait_with_timeout};
use crate::http_harness::HttpServer;

const AUTH: &str = r#"
[server.auth]
issuer = "https://id.example.com"
audience = "https://mcp.example.com/mcp"
introspection-url = "https://id.example.com/introspect"
client-id = "mcp"
client-secret = "${env:CLIENT_SECRET}"

[[tools]]
name = "t"
[tools.static]
content = [{ type = "text", text = "ok" }]
"#;

#[test]
fn a_server_whose_issuer_client_cannot_be_made_stops_with_a_clear_error() {
    let workspace = Workspace::new(AUTH);
    // A machine with no CA certificates: the TLS setup of every client fails. The variables
    // name paths that do not exist, so nothing of the system's store is read.
    let missing = workspace.path("no-certificates");
    let missing = missing.display().to_string();
    let mut command = Command::new(BINARY);
    keep_tasks_here(&mut command);
    let mut child = command
        .arg("--config")
        .arg(workspace.manifest())
        .args(["--http", "127.0.0.1:0"])
        .env("CLIENT_SECRET", "s3cret")
        .env("SSL_CERT_FILE", &missing)
        .env("SSL_CERT_DIR", &missing)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp-serve");
    let status = wait_with_timeout(&mut child, TIMEOUT);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = status.unwrap_or_else(|| panic!("the server started anyway:\n{stderr}"));
    assert_eq!(status.code(), Some(1), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: could not make the HTTP client that fetches the issuer's keys: ")
            && first.ends_with("No CA certificates were loaded from the system"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");

    // Unguarded control: the same manifest with the system's certificates starts (`start`
    // waits for the line announcing the listener) and stops cleanly.
    let mut server =
        HttpServer::start_with_env(&workspace.manifest(), &[], &[("CLIENT_SECRET", "s3cret")]);
    assert!(server.terminate().success(), "{}", server.log());
}
