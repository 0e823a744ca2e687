//! Redaction at the edges a result or a log line has: at `-vv` rmcp writes each request with
//! the client's arguments (a model that has seen a secret can send it back as one), and a
//! command's output cut at `max-output` could split a secret in two.

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

/// A command's text cut at `max-output` keeps its head and tail: a secret the cut splits
/// would leave each half where no redactor finds it. The head's end that could begin a
/// secret and the tail's start that could end one are left out with what was cut. Every
/// offset that puts the secret across either cut is tried; the control is the naive cut of
/// the same bytes, which shows a half at each.
#[test]
fn a_secret_split_by_the_output_limit_shows_no_half() {
    const FILE_SECRET: &str = "zq7xkw3mvp9tjr5yhc2nde8u";
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "api"
input-schema = '{"type": "object"}'
[tools.http]
url = "http://127.0.0.1:9/x"
headers = { Authorization = "Bearer ${file:token.txt}" }

[[tools]]
name = "print"
input-schema = '{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}'
[tools.command]
argv = ["python3", "-c", "import sys; n = int(sys.argv[1]); s = open('token.txt').read().strip(); sys.stdout.write('A' * n + s + 'B' * (3000 - n - len(s)))", "{n}"]
max-output = "1KiB"
"#,
    );
    std::fs::write(workspace.path("token.txt"), format!("{FILE_SECRET}\n")).expect("token");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let length = FILE_SECRET.len();
    // Any three bytes of the secret in a row (no A or B is in it).
    let halves =
        |shown: &str| (0..=length - 3).any(|start| shown.contains(&FILE_SECRET[start..start + 3]));
    let (head, tail_start) = (512, 3000 - 512);
    let (mut tried, mut naive_shows) = (0, 0);
    for n in (head - length..=head).chain(tail_start - length..=tail_start) {
        let naive = format!(
            "{}{FILE_SECRET}{}",
            "A".repeat(n),
            "B".repeat(3000 - n - length)
        );
        let (cut_head, cut_tail) = (&naive[..head], &naive[tail_start..]);
        let splits = (n < head && n + length > head) || (n < tail_start && n + length > tail_start);
        if !splits {
            continue;
        }
        if halves(cut_head) || halves(cut_tail) {
            naive_shows += 1;
        }
        let result = server.call("print", json!({ "n": n }));
        let shown = text(&result);
        assert!(shown.contains("bytes left out"), "{shown}");
        assert!(
            !halves(shown),
            "offset {n} shows part of the secret:\n{shown}"
        );
        tried += 1;
    }
    eprintln!(
        "max-output cut: {tried} offsets across either cut, none shows part of the secret; the naive cut shows part at {naive_shows}"
    );
    assert!(tried >= 2 * (length - 1));
    assert!(naive_shows >= 2 * (length - 5), "the control");
}
