//! Redaction at the edges a result or a log line has: at `-vv` rmcp writes each request with
//! the client's arguments (a model that has seen a secret can send it back as one), and a
//! command's output cut at `max-output` could split a secret in two.

use serde_json::json;

use crate::harness::{Server, Workspace, text};

const SECRET: &str = "log-secret-5d2e91aa";

/// A tool that echoes its argument, beside one that holds `secret`.
fn manifest(secret: &str) -> String {
    crate::harness::holding_secret(
        secret,
        r#"
[[tools]]
name = "echo"
input-schema = '{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}'
[tools.command]
argv = ["echo", "{text}"]
"#,
    )
}

#[test]
fn a_secret_a_client_sends_back_never_reaches_the_log_at_any_level() {
    for json_lines in [false, true] {
        let workspace = Workspace::new(&manifest("${env:LOG_TEST_KEY}"));
        let mut extra = vec!["-vv"];
        if json_lines {
            extra.extend(["--log-format", "json"]);
        }
        let mut server =
            Server::start_with(&workspace.manifest(), &extra, &[("LOG_TEST_KEY", SECRET)]);
        server.handshake("2025-11-25");
        let result = server.call("echo", json!({"text": format!("the key is {SECRET}")}));
        assert_eq!(text(&result).trim(), "the key is [redacted]");
        let log = logged(&server, "the key is [redacted]");
        assert!(
            log.contains("the key is [redacted]"),
            "-vv logs the request's arguments: {log}"
        );
        assert!(!log.contains(SECRET), "the log shows the secret:\n{log}");
    }
    // The control: the same value, when the manifest holds no such secret, is logged as sent.
    let workspace = Workspace::new(&manifest("plain"));
    let mut server = Server::start_with(&workspace.manifest(), &["-vv"], &[]);
    server.handshake("2025-11-25");
    server.call("echo", json!({"text": format!("the key is {SECRET}")}));
    let log = logged(&server, SECRET);
    assert!(log.contains(SECRET), "{log}");
}

/// The server's log once it holds `expected`, or after 5 s: stderr is read apart from the
/// answers, so a line written before an answer may be read after it.
fn logged(server: &Server, expected: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let log = server.stderr();
        if log.contains(expected) || std::time::Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A command's text cut at `max-output` keeps its head and tail: a secret the cut splits
/// would leave each half where no redactor finds it. The head's end that could begin a
/// secret and the tail's start that could end one are left out with what was cut. Every
/// offset that puts the secret across either cut is tried; the control is the naive cut of
/// the same bytes, which shows a half at each.
#[test]
fn a_secret_split_by_the_output_limit_shows_no_half() {
    const FILE_SECRET: &str = "zq7xkw3mvp9tjr5yhc2nde8u";
    let workspace = Workspace::new(&crate::harness::holding_secret(
        "${file:token.txt}",
        r#"
[[tools]]
name = "print"
input-schema = '{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}'
[tools.command]
argv = ["python3", "-c", "import sys; n = int(sys.argv[1]); s = open('token.txt').read().strip(); sys.stdout.write('A' * n + s + 'B' * (3000 - n - len(s)))", "{n}"]
max-output = "1KiB"
"#,
    ));
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

/// An encoder may write any character of a secret escaped (.NET's default JSON encoder writes
/// `+` as `\u002B`), and a command may print it in base64 (as `kubectl get secret -o json`
/// does): an upstream's 500 excerpt and `text/plain` 200, and a command's JSON, each carrying
/// the secret so, show `[redacted]`. The controls: what the upstream and the command sent did
/// hold the encoded secret, which no fixed list of its forms would have found.
#[test]
fn a_secret_escaped_or_in_base64_is_redacted_from_upstreams_and_commands() {
    use base64::Engine as _;
    const TOKEN: &str = "tok+en/Ab9+zz";
    let dotnet = TOKEN.replace('+', "\\u002B").replace('/', "\\u002F");
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("user:{TOKEN}"));
    let (error_body, plain_body) = (
        format!("{{\"error\": \"bad key {dotnet}\"}}"),
        format!("you sent {dotnet}"),
    );
    let upstream = {
        let (error_body, plain_body) = (error_body.clone(), plain_body.clone());
        crate::upstream::Upstream::start(move |request, _| {
            if request.path().starts_with("/fail") {
                crate::upstream::Reply::new(500, "application/json", error_body.clone())
            } else {
                crate::upstream::Reply::new(200, "text/plain", plain_body.clone())
            }
        })
    };
    let base = upstream.base();
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "fail"
input-schema = '{{"type": "object"}}'
[tools.http]
url = "{base}/fail"
headers = {{ Authorization = "Bearer ${{file:token.txt}}" }}

[[tools]]
name = "plain"
input-schema = '{{"type": "object"}}'
[tools.http]
url = "{base}/plain"
headers = {{ Authorization = "Bearer ${{file:token.txt}}" }}

[[tools]]
name = "kubectl"
input-schema = '{{"type": "object"}}'
[tools.command]
argv = ["printf", '{{{{"data":{{{{"token":"{encoded}"}}}}}}}}']
"#
    ));
    std::fs::write(workspace.path("token.txt"), format!("{TOKEN}\n")).expect("token");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    for (tool, sent) in [("fail", &error_body), ("plain", &plain_body)] {
        assert!(
            sent.contains("\\u002B") && !sent.contains(TOKEN),
            "the control: {sent}"
        );
        let result = server.call(tool, json!({}));
        let shown = result.to_string();
        assert!(shown.contains("[redacted]"), "{tool}: {shown}");
        assert!(
            !shown.contains("u002B") && !shown.contains("Ab9"),
            "{tool}: {shown}"
        );
    }
    let result = server.call("kubectl", json!({}));
    let shown = result.to_string();
    let middle = &encoded[4..encoded.len() - 4];
    assert!(
        shown.contains("[redacted]") && !shown.contains(middle),
        "kubectl: {shown}"
    );
}
