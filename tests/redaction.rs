//! Redaction against a hostile reader of everything mcp-serve shows: a secret base URL in
//! whatever form the URL parser rewrites it to, and every secret the manifest references
//! kept out of every tool's results, errors, dry runs and audit records, not only out of the
//! tool that uses it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BINARY, Server, Workspace, keep_tasks_here, text};
use crate::upstream::{Recorded, Reply, Upstream};

/// Runs `mcp-serve` with `args` in `cwd` and `env`, returning (exit code, stdout, stderr).
fn run_with(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(BINARY);
    keep_tasks_here(&mut command);
    let output = command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env_remove("MCP_SERVE_CONFIG")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("run mcp-serve");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A webhook token with characters the URL parser rewrites: a backslash becomes `/`, a tab
/// is dropped, `é`, `"`, `<`, `>` and a backtick are percent-encoded, `%41` is kept (and
/// decoded by the upstream).
/// Its markers are plain letters and digits, which survive every encoding: a marker seen
/// anywhere is a leak, whatever form the rest took.
const TOKEN: &str = "Hk7q\\\u{e9}\"<>`^|Mm3d%41\t~!$'()*+,;=:@[]Zx9w";
/// Every marker of [`TOKEN`], and of the password one spelling carries.
const MARKERS: [&str; 4] = ["Hk7q", "Mm3d", "Zx9w", "Pw5s"];

/// The server's log once `needle` appears `count` times in it (or after 10 seconds).
fn log_with(server: &Server, needle: &str, count: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.stderr();
        if log.matches(needle).count() >= count || Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_no_marker(place: &str, shown: &str) {
    for marker in MARKERS {
        assert!(
            !shown.contains(marker),
            "{place} shows the secret (`{marker}`):\n{shown}"
        );
    }
}

/// The base URL spellings: the same loopback upstream written as the URL parser will not
/// leave it, and whether a request there reaches it.
fn spellings(port: u16) -> Vec<(String, bool)> {
    vec![
        (format!("http://127.0.0.1:{port}/{TOKEN}"), true),
        (format!("http://LOCALHOST:{port}/{TOKEN}"), true),
        (format!("http://127.1:{port}/{TOKEN}"), true),
        (format!("http://0x7F.1:{port}/{TOKEN}"), true),
        (format!("http://2130706433:{port}/{TOKEN}"), true),
        (format!("http://127.000.000.001:0{port}/{TOKEN}"), true),
        (
            format!("http://hook:Pw5s\u{e9}@127.1:{port}/{TOKEN}/"),
            true,
        ),
        (format!("http://LocalHost:80/{TOKEN}"), false),
        (format!("http://[0:0::1]:{port}/{TOKEN}"), false),
    ]
}

const HOOK_TOOL: &str = r#"
[[tools]]
name = "hook"
[tools.arguments.id]
type = "string"
[tools.http]
url = "${env:HOOK}/items/{id}"

[[tools.examples]]
name = "asks for the wrong path"
arguments = { id = "1" }
[tools.examples.upstream]
path = "/wrong"
body = "ok"
"#;

/// Echoes the request line and the percent-decoded path: as text, as a 500's body, as JSON.
fn echo() -> Upstream {
    Upstream::start(|request: &Recorded, _| {
        let path = request.path().to_owned();
        let decoded = percent_encoding::percent_decode_str(&path)
            .decode_utf8_lossy()
            .into_owned();
        let echoed = format!("{}\n{decoded}", request.request_line);
        if path.ends_with("/fail") {
            Reply::new(500, "text/plain", echoed)
        } else if path.ends_with("/json") {
            Reply::new(
                200,
                "application/json",
                json!({"line": request.request_line, "path": decoded}).to_string(),
            )
        } else {
            Reply::new(200, "text/plain", echoed)
        }
    })
}

/// Calls the tool over stdio with the base at `base`: the upstream echoes the path (as text,
/// in a 500 and as JSON), or the connection fails; then reads the log. Returns the places
/// checked.
fn answers_and_log(
    workspace: &Workspace,
    upstream: &Upstream,
    base: &str,
    reachable: bool,
) -> usize {
    let mut checked = 0;
    let env = [("HOOK", base)];
    // Over stdio: the answer echoes the path, fails quoting it, or cannot connect.
    let mut server = Server::start_with(&workspace.manifest(), &["-vv"], &env);
    server.handshake("2025-11-25");
    let before = upstream.recorded().len();
    for id in ["ok", "fail", "json"] {
        let result = server.call("hook", json!({"id": id}));
        assert_no_marker(
            &format!("the result of {id} for {base:?}"),
            &result.to_string(),
        );
        assert!(
            text(&result).contains(&format!("[redacted]/items/{id}")),
            "{base:?}: {result}"
        );
        if reachable && id == "ok" {
            assert_eq!(
                text(&result),
                "GET [redacted]/items/ok HTTP/1.1\n[redacted]/items/ok",
                "{base:?}"
            );
        }
        checked += 1;
    }
    if reachable {
        let recorded = upstream.recorded();
        assert_eq!(recorded.len(), before + 3, "{base:?}");
        assert!(
            recorded[before]
                .path()
                .starts_with("/Hk7q/%C3%A9%22%3C%3E%60^|Mm3d%41~"),
            "the request did not carry the token: {}",
            recorded[before].request_line
        );
    }
    // Each failed call is logged once; the log never shows the token either.
    let failures = if reachable { 1 } else { 3 };
    let log = log_with(&server, "HTTP call failed", failures);
    server.close();
    assert_eq!(log.matches("HTTP call failed").count(), failures, "{log}");
    assert_no_marker(&format!("the log for {base:?}"), &log);
    checked += 1;
    checked
}

#[test]
fn a_secret_base_url_is_redacted_in_every_form_the_url_parser_gives_it() {
    let upstream = echo();
    let workspace = Workspace::new(HOOK_TOOL);
    let cwd = workspace.dir.path();
    let (mut cases, mut places) = (0, 0);
    for (base, reachable) in spellings(upstream.port) {
        let env = [("HOOK", base.as_str())];
        // The dry run shows the request it would send: the base as the parser wrote it.
        let (code, stdout, stderr) = run_with(
            &[
                "call",
                "hook",
                "id=1",
                "--dry-run",
                "--config",
                "tools.toml",
            ],
            cwd,
            &env,
        );
        assert_eq!(code, 0, "{base}: {stderr}");
        assert_no_marker(
            &format!("`--dry-run` of {base:?}"),
            &(stdout.clone() + &stderr),
        );
        assert_eq!(
            stdout.lines().next(),
            Some("GET [redacted]/items/1"),
            "{base:?}"
        );
        places += 1;

        places += answers_and_log(&workspace, &upstream, &base, reachable);

        // `mcp-serve test` reports the path its stand-in was asked for.
        let (code, stdout, stderr) = run_with(&["test", "--config", "tools.toml"], cwd, &env);
        assert_eq!(code, 1, "{base:?}: {stdout}{stderr}");
        assert_no_marker(
            &format!("`mcp-serve test` of {base:?}"),
            &(stdout.clone() + &stderr),
        );
        assert!(
            stdout.contains("the upstream was asked for [redacted]/items/1, expected /wrong"),
            "{base:?}: {stdout}"
        );
        places += 1;
        cases += 1;
    }
    eprintln!(
        "secret base URLs: {cases} spellings × {} places (dry run, 3 answers, log, stand-in report), 0 leaks",
        places / cases
    );

    // Unguarded control: the same URL written out in the manifest is no secret, and its
    // path is shown as the parser wrote it.
    let control = Workspace::new(
        "[[tools]]\nname = \"hook\"\n[tools.arguments.id]\ntype = \"string\"\n[tools.http]\nurl = \"http://LOCALHOST:80/Hk7qMm3dZx9w/items/{id}\"\n",
    );
    let (code, stdout, stderr) = run_with(
        &[
            "call",
            "hook",
            "id=1",
            "--dry-run",
            "--config",
            "tools.toml",
        ],
        control.dir.path(),
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("GET http://localhost/Hk7qMm3dZx9w/items/1")
    );
}

/// One HTTP tool holds two secrets (a `${file:}` and an `${env:}`), `[server.auth]` two
/// more; the command tools know none of them but can be made to return them.
const MANY_SECRETS: &str = r#"
[server.auth]
issuer = "https://id.example.com"
audience = "https://mcp.example.com/mcp"
hmac-secret = "${file:hmac.txt}"
introspection-url = "https://id.example.com/introspect"
client-id = "mcp"
client-secret = "${env:CLIENT_SECRET}"

[[tools]]
name = "hook"
[tools.http]
url = "http://127.0.0.1:9/"
headers = { X-Key = "${file:token.txt}", Authorization = "Bearer ${env:API_KEY}" }

[[tools]]
name = "cat"
[tools.arguments.name]
type = "string"
[tools.command]
argv = ["cat", "--", "{name}"]

[[tools]]
name = "echo"
[tools.arguments.text]
type = "string"
[tools.command]
argv = ["echo", "{text}"]

[[tools]]
name = "count"
[tools.arguments.n]
type = "integer"
[tools.static]
content = [{ type = "text", text = "counted" }]

[[tools]]
name = "cat-to-stderr"
[tools.arguments.name]
type = "string"
[tools.command]
script = 'cat -- "$1" >&2; exit 3'
args = ["{name}"]

[[tools]]
name = "cat-as-blob"
[tools.arguments.name]
type = "string"
[tools.command]
argv = ["cat", "--", "{name}"]
output = "resource"
mime-type = "application/octet-stream"

[[tools]]
name = "cat-everywhere"
[tools.arguments.name]
type = "string"
[tools.command]
script = '''
s=$(cat -- "$1")
printf '{"content":[{"type":"text","text":"%s"},{"type":"resource","resource":{"uri":"file:///r/%s","mimeType":"text/plain","text":"%s"}},{"type":"resource_link","uri":"file:///l/%s","name":"%s","title":"%s","description":"%s"}],"structuredContent":{"%s":"%s"}}' "$s" "$s" "$s" "$s" "$s" "$s" "$s" "$s" "$s"
'''
args = ["{name}"]
output = "content"
"#;

/// The `${file:token.txt}` secret (URL- and JSON-safe, so a script can put it anywhere).
const FILE_SECRET: &str = "file-s3cret-Qv8r.x_y";
const ENV_SECRET: &str = "env-s3cret-Jt4m/+=&";
const HMAC_SECRET: &str = "hmac-s3cret-Wd2k-0123456789abcdefghij";
const CLIENT_SECRET: &str = "client-s3cret-Lp6n";

fn secrets_workspace(manifest: &str) -> Workspace {
    let workspace = Workspace::new(manifest);
    std::fs::write(workspace.path("token.txt"), format!("{FILE_SECRET}\n")).expect("token");
    std::fs::write(workspace.path("hmac.txt"), format!("{HMAC_SECRET}\n")).expect("hmac");
    // The same bytes, under a name no reference uses.
    std::fs::write(workspace.path("copy.txt"), format!("{FILE_SECRET}\n")).expect("copy");
    workspace
}

const SECRET_ENV: [(&str, &str); 2] = [("API_KEY", ENV_SECRET), ("CLIENT_SECRET", CLIENT_SECRET)];

/// Everything a result shows, blobs decoded.
fn shown(result: &Value) -> String {
    use base64::Engine as _;
    let mut shown = result.to_string();
    for block in result["content"].as_array().into_iter().flatten() {
        if let Some(blob) = block["resource"]["blob"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            shown.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    shown
}

fn assert_no_secret(place: &str, shown: &str) {
    for secret in [FILE_SECRET, ENV_SECRET, HMAC_SECRET, CLIENT_SECRET] {
        assert!(
            !shown.contains(secret),
            "{place} shows {secret:?}:\n{shown}"
        );
    }
    for marker in ["Qv8r", "Jt4m", "Wd2k", "Lp6n"] {
        assert!(
            !shown.contains(marker),
            "{place} shows `{marker}`:\n{shown}"
        );
    }
}

#[test]
fn every_secret_the_manifest_references_is_redacted_from_every_tool() {
    let workspace = secrets_workspace(MANY_SECRETS);
    let token = workspace.path("token.txt").display().to_string();
    let hmac = workspace.path("hmac.txt").display().to_string();
    // At the default level (info): at `-vv` the MCP library logs each request as received,
    // and these requests carry the secrets (docs/security.md, guarantee 3).
    let mut server = Server::start_with(&workspace.manifest(), &[], &SECRET_ENV);
    server.handshake("2025-11-25");
    let mut places = 0;

    // A file another tool's `${file:}` names, read by a command that names no secret.
    let result = server.call("cat", json!({"name": token}));
    assert_eq!(text(&result), "[redacted]", "{result}");
    let result = server.call("cat", json!({"name": hmac}));
    assert_eq!(text(&result), "[redacted]", "{result}");
    // An `${env:}` secret's value, and the others, handed to a command as an argument.
    for secret in [ENV_SECRET, FILE_SECRET, HMAC_SECRET, CLIENT_SECRET] {
        let result = server.call("echo", json!({"text": format!("say {secret} twice")}));
        assert_eq!(text(&result), "say [redacted] twice", "{result}");
        places += 1;
    }
    // A refusal quotes the argument that does not fit the schema.
    let result = server.call("count", json!({"n": ENV_SECRET}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(&result).contains("[redacted]"), "{result}");
    assert_no_secret("a refusal", &result.to_string());
    places += 1;
    // In an error's quoted stderr, an embedded blob, and every string of a content document.
    let result = server.call("cat-to-stderr", json!({"name": token}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(&result).contains("[redacted]"), "{result}");
    let result = server.call("cat-as-blob", json!({"name": token}));
    assert!(shown(&result).contains("[redacted]"), "{result}");
    let result = server.call("cat-everywhere", json!({"name": token}));
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(result["content"][0]["text"], "[redacted]", "{result}");
    assert_eq!(
        result["content"][1]["resource"]["uri"],
        "file:///r/[redacted]"
    );
    assert_eq!(result["content"][1]["resource"]["text"], "[redacted]");
    assert_eq!(result["content"][2]["uri"], "file:///l/[redacted]");
    assert_eq!(result["content"][2]["name"], "[redacted]");
    assert_eq!(result["content"][2]["title"], "[redacted]");
    assert_eq!(
        result["structuredContent"],
        json!({"[redacted]": "[redacted]"})
    );
    for (tool, name) in [
        ("cat", &token),
        ("cat-to-stderr", &token),
        ("cat-as-blob", &token),
        ("cat-everywhere", &token),
    ] {
        let result = server.call(tool, json!({"name": name}));
        assert_no_secret(tool, &shown(&result));
        places += 1;
    }
    let log = log_with(&server, "command failed", 2);
    server.close();
    assert_eq!(log.matches("command failed").count(), 2, "{log}");
    assert_no_secret("the log", &log);

    // The dry run of a command shows its argv, secrets redacted.
    let (code, stdout, stderr) = run_with(
        &[
            "call",
            "echo",
            &format!("text={ENV_SECRET}"),
            "--dry-run",
            "--config",
            "tools.toml",
        ],
        workspace.dir.path(),
        &SECRET_ENV,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("[redacted]"), "{stdout}");
    assert_no_secret("`--dry-run`", &(stdout + &stderr));
    places += 2;
    eprintln!("manifest-wide redaction: 4 secrets, {places} places, 0 leaks");

    // What is redacted is the value, wherever it is read from: a copy of the file too.
    let copy = workspace.path("copy.txt").display().to_string();
    let mut server = Server::start_with(&workspace.manifest(), &[], &SECRET_ENV);
    server.handshake("2025-11-25");
    let result = server.call("cat", json!({"name": copy}));
    assert_eq!(
        text(&result),
        "[redacted]",
        "the bytes are the secret, wherever they are"
    );
    server.close();
    // Unguarded control: the same manifest, with the references that made them secrets
    // written out instead, gives the same bytes back verbatim.
    let unreferenced = secrets_workspace(
        &MANY_SECRETS
            .replace("${file:token.txt}", "fixed")
            .replace("${env:API_KEY}", "fixed"),
    );
    let token = unreferenced.path("token.txt").display().to_string();
    let mut server = Server::start_with(&unreferenced.manifest(), &[], &SECRET_ENV);
    server.handshake("2025-11-25");
    let result = server.call("cat", json!({"name": token}));
    assert_eq!(text(&result), FILE_SECRET, "{result}");
    let result = server.call("echo", json!({"text": ENV_SECRET}));
    assert_eq!(text(&result), ENV_SECRET, "{result}");
}

#[test]
fn audit_values_hide_every_secret_the_manifest_references() {
    let workspace = secrets_workspace(MANY_SECRETS);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--audit", "--audit-values", "--log-format", "json"],
        &SECRET_ENV,
    );
    server.handshake("2025-11-25");
    // A command tool, which references no secret, called with all four.
    let note = format!("{FILE_SECRET} {ENV_SECRET} {HMAC_SECRET} {CLIENT_SECRET}");
    server.call("echo", json!({"text": note}));
    let log = log_with(&server, "mcp_serve::audit", 1);
    server.close();
    let record = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["target"] == "mcp_serve::audit")
        .unwrap_or_else(|| panic!("no audit record:\n{log}"));
    assert_eq!(
        record["fields"]["values"], r#"{"text":"[redacted] [redacted] [redacted] [redacted]"}"#,
        "{record}"
    );
    assert_no_secret("the log", &log);
}

#[test]
fn a_commands_progress_and_log_notifications_are_redacted_too() {
    let secret = "evt-S3cret-7Qx";
    let workspace = crate::harness::Workspace::new(
        r#"
[[tools]]
name = "api"
description = "never called; makes token.txt a secret"
[tools.http]
url = "http://127.0.0.1:9/x"
headers = { X-Key = "${file:token.txt}" }

[[tools]]
name = "noisy"
description = "Tells what it read, in every channel"
[tools.command]
script = '''
s=$(cat token.txt)
printf '{"progress": 1, "total": 2, "message": "read %s visible"}\n' "$s" > "$MCP_SERVE_EVENTS"
printf '{"log": "warning", "message": "got %s visible", "data": {"key": "%s"}}\n' "$s" "$s" > "$MCP_SERVE_EVENTS"
echo "stderr says $s visible" >&2
echo done
'''
events = true
stderr-log = "notice"
"#,
    );
    std::fs::write(workspace.path("token.txt"), secret).expect("write the secret");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    server.request("logging/setLevel", json!({"level": "debug"}));
    let id = server.start_request(
        "tools/call",
        json!({"name": "noisy", "arguments": {}, "_meta": {"progressToken": "p1"}}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut notifications = Vec::new();
    let result = loop {
        let message = server.next_message(deadline).expect("an answer");
        if message["id"] == json!(id) {
            break message;
        }
        notifications.push(message);
    };
    assert_eq!(text(&result["result"]), "done", "{result}");
    let shown = serde_json::to_string(&notifications).expect("json");
    // The control: the word beside the secret arrives, in each of the three channels.
    assert_eq!(shown.matches("visible").count(), 3, "{shown}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.matches("[redacted]").count() >= 4, "{shown}");
}

/// Resources are a door too: a declared resource's file, a template's file and a kept output
/// (a tool's whole stdout, of which its result showed only the head and tail) are read with
/// every secret the manifest references redacted, as the same bytes are through a tool.
#[test]
fn resources_and_kept_outputs_are_read_with_every_secret_redacted() {
    let resources = r#"
[[resources]]
uri = "notes://token"
name = "token"
file = "token.txt"

[[resources]]
uri = "notes://blob"
name = "blob"
file = "token.bin"
mime-type = "application/octet-stream"

[[resource-templates]]
uri-template = "notes://files/{name}"
name = "files"
file = "notes/{name}"
mime-type = "text/plain"

[[tools]]
name = "long"
[tools.command]
script = 'i=0; while [ $i -lt 400 ]; do echo "line $i"; i=$((i+1)); done; echo "key $API"; i=0; while [ $i -lt 400 ]; do echo "more $i"; i=$((i+1)); done'
env = { API = "{text}" }
max-output = "1KiB"
keep-output = true
[tools.arguments.text]
type = "string"
"#;
    let read_all = |manifest: &str| -> Vec<String> {
        let workspace = secrets_workspace(manifest);
        std::fs::write(
            workspace.path("token.bin"),
            format!("\0\u{1}{ENV_SECRET}\0"),
        )
        .expect("bin");
        std::fs::create_dir(workspace.path("notes")).expect("notes/");
        std::fs::write(
            workspace.path("notes/page.txt"),
            format!("see {ENV_SECRET}\n"),
        )
        .expect("page");
        let mut server = Server::start_with(&workspace.manifest(), &[], &SECRET_ENV);
        server.handshake("2025-11-25");
        let mut shown = Vec::new();
        for uri in ["notes://token", "notes://blob", "notes://files/page.txt"] {
            let read = server.request("resources/read", json!({"uri": uri}));
            let contents = &read["result"]["contents"][0];
            assert!(contents.is_object(), "{uri}: {read}");
            shown.push(resource_shown(contents));
        }
        let result = server.call("long", json!({"text": ENV_SECRET}));
        let link = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|block| block["type"] == "resource_link")
            .and_then(|block| block["uri"].as_str())
            .unwrap_or_else(|| panic!("a kept output's link: {result}"))
            .to_owned();
        let read = server.request("resources/read", json!({"uri": link}));
        let contents = &read["result"]["contents"][0];
        assert!(contents.is_object(), "{link}: {read}");
        shown.push(resource_shown(contents));
        server.close();
        shown
    };
    let guarded = read_all(&format!("{MANY_SECRETS}{resources}"));
    for (place, shown) in [
        "a declared file",
        "a declared blob",
        "a template's file",
        "a kept output",
    ]
    .iter()
    .zip(&guarded)
    {
        assert!(shown.contains("[redacted]"), "{place}: {shown}");
        assert_no_secret(place, shown);
    }
    // Unguarded control: with the references that made them secrets written out, the same
    // reads give the bytes back verbatim.
    let unguarded = read_all(
        &format!("{MANY_SECRETS}{resources}")
            .replace("${file:token.txt}", "fixed")
            .replace("${env:API_KEY}", "fixed"),
    );
    assert!(unguarded[0].contains(FILE_SECRET), "{}", unguarded[0]);
    for shown in &unguarded[1..] {
        assert!(shown.contains(ENV_SECRET), "{shown}");
    }
}

/// What a `resources/read` content shows: its text, or its blob decoded.
fn resource_shown(contents: &Value) -> String {
    use base64::Engine as _;
    match contents["blob"].as_str() {
        Some(blob) => String::from_utf8_lossy(
            &base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64"),
        )
        .into_owned(),
        None => contents["text"].as_str().unwrap_or_default().to_owned(),
    }
}
