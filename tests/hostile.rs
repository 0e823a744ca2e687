//! The hostile corpus and the fault suite: every metacharacter payload into every sink a
//! value can reach, backends that misbehave in every way we know, clients that vanish.
//! Each case asserts its outcome, that the canary file a successful injection would create
//! never appears, and that no process is left behind (counted by a mark in their
//! environment). The counts are printed.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, text};
use crate::http_harness::HttpServer;
use crate::upstream::{Recorded, Reply, Upstream};

/// Payloads that would run, split, redirect or escape if a value ever reached a shell, a
/// URL or a header as code. `CANARY` becomes the canary's absolute path.
fn corpus() -> Vec<String> {
    let payloads = [
        "; touch CANARY",
        "$(touch CANARY)",
        "`touch CANARY`",
        "| touch CANARY",
        "&& touch CANARY",
        "|| touch CANARY #",
        "\ntouch CANARY",
        "\r\ntouch CANARY",
        "'; touch CANARY; '",
        "\"; touch CANARY; \"",
        "$(IFS=_;cmd=touch_CANARY;$cmd)",
        "${IFS}touch${IFS}CANARY",
        "> CANARY",
        ">> CANARY",
        "< /etc/passwd > CANARY",
        "-o CANARY",
        "--output=CANARY",
        "-rf",
        "--",
        "-",
        "../../../../CANARY",
        "/../CANARY",
        "..",
        ".",
        "*",
        "?",
        "~",
        "~root",
        "$HOME",
        "%s%s%s%n",
        "{0}",
        "{x}",
        "{{x}}",
        "$((1+1))",
        "\\",
        "\\\\'\"",
        "a b\tc",
        "\u{202e}gnp.exe",
        "日本語 ✓ é",
        "%0d%0aX-Injected: 1",
        "%2e%2e%2f%2e%2eCANARY",
        "..%2f..%2fCANARY",
        "a/b/c",
        "?q=1#frag",
        "@evil.example:80/",
        "http://evil.example/",
        "//evil.example/CANARY",
        "Host: evil.example",
        "X-Injected: 1",
        "0x41414141",
        "-1",
        "NaN",
        "null",
        "true",
        "[]",
        "{}",
        "<script>touch CANARY</script>",
        "%00touch CANARY",
        "'\"`$;|&<>(){}[]*?!~#",
    ];
    let mut corpus: Vec<String> = payloads
        .iter()
        .map(|payload| (*payload).to_owned())
        .collect();
    corpus.push("A".repeat(100_000));
    corpus.push(format!("{}; touch CANARY", "x".repeat(5000)));
    corpus
}

/// A value as an assertion message shows it: long ones cut short.
fn short(value: &str) -> String {
    if value.len() <= 80 {
        format!("{value:?}")
    } else {
        let cut: String = value.chars().take(60).collect();
        format!("{cut:?}… ({} bytes)", value.len())
    }
}

fn with_canary(corpus: &[String], canary: &Path) -> Vec<String> {
    let canary = canary.to_str().expect("path");
    corpus
        .iter()
        .map(|payload| payload.replace("CANARY", canary))
        .collect()
}

/// Processes (other than `except`) whose environment holds `MARK=<mark>`.
fn marked(mark: &str, except: &[i32]) -> Vec<i32> {
    let entry = format!("MARK={mark}");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| !except.contains(pid) && crate::harness::alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|item| item == entry.as_bytes())
            })
        })
        .collect()
}

/// Waits (up to 5 s) until no marked process but `except` is left; returns those left.
fn left_behind(mark: &str, except: &[i32]) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = marked(mark, except);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unique_mark() -> String {
    format!("{}-{:?}", std::process::id(), Instant::now())
}

const DUMP: &str = "import json, os, sys; print(json.dumps(dict(argv=sys.argv[1:], env=os.environ.get('V'), stdin=sys.stdin.read() if os.environ.get('READ') else None)))";

const COMMAND_SINKS: &str = r#"
[[tools]]
name = "argv"
[tools.arguments.v]
type = "string"
[tools.command]
argv = ["python3", "-c", "DUMP", "--", "{v}", "pre={v}", ["--opt", "{v}"]]

[[tools]]
name = "env"
[tools.arguments.v]
type = "string"
[tools.command]
argv = ["python3", "-c", "DUMP"]
env = { V = "{v}" }

[[tools]]
name = "stdin"
[tools.arguments.v]
type = "string"
[tools.command]
argv = ["python3", "-c", "DUMP"]
env = { READ = "1" }
stdin = "json"

[[tools]]
name = "script"
[tools.arguments.v]
type = "string"
[tools.command]
script = 'printf "%s" "$1"'
args = ["{v}"]
"#;

#[test]
fn the_corpus_reaches_every_command_sink_verbatim_and_runs_nothing() {
    corpus_through_command_sinks("", "command sinks");
}

/// The same corpus, each tool confined by a strict sandbox: the values still arrive
/// verbatim (confinement changes where a program may reach, never what it is given).
#[test]
fn the_corpus_reaches_sandboxed_command_sinks_verbatim_and_runs_nothing() {
    let (_, prefix) = crate::harness::python();
    corpus_through_command_sinks(
        &format!(
            "[server.sandbox]\nexecute = [\"{prefix}\"]\nwrite = [\"{{temp-dir}}\"]\nnetwork = false\nmemory = \"512MiB\"\ncpu = \"10s\"\nopen-files = 64\nfile-size = \"1MiB\"\n"
        ),
        "sandboxed command sinks",
    );
}

fn corpus_through_command_sinks(server_table: &str, label: &str) {
    let (python, _) = crate::harness::python();
    let workspace = Workspace::new(&format!(
        "{server_table}{}",
        COMMAND_SINKS
            .replace("DUMP", DUMP)
            .replace("\"python3\"", &format!("\"{python}\""))
    ));
    if !server_table.is_empty() {
        let (_, report, _) = crate::harness::run(
            &["check", "--format", "json", "--config", "tools.toml"],
            workspace.dir.path(),
        );
        let report: Value = serde_json::from_str(&report).expect("check JSON");
        assert_eq!(
            report["sandbox"]["tools"]
                .as_object()
                .map(serde_json::Map::len),
            Some(4),
            "every tool is sandboxed: {report}"
        );
    }
    let canary = workspace.path("canary");
    let mark = unique_mark();
    let mut server = Server::start_with(&workspace.manifest(), &[], &[("MARK", &mark)]);
    server.handshake("2025-11-25");
    let corpus = with_canary(&corpus(), &canary);
    let mut calls = 0;
    for value in &corpus {
        if value.contains('\0') {
            continue;
        }
        let dump = |result: &Value| -> Value {
            serde_json::from_str(text(result)).unwrap_or_else(|_| panic!("{result}"))
        };
        let argv = dump(&server.call("argv", json!({"v": value})));
        assert_eq!(
            argv["argv"],
            json!(["--", value, format!("pre={value}"), "--opt", value]),
            "argv for {}",
            short(value)
        );
        let env = dump(&server.call("env", json!({"v": value})));
        assert_eq!(env["env"], json!(value), "env for {}", short(value));
        let stdin = dump(&server.call("stdin", json!({"v": value})));
        let document: Value =
            serde_json::from_str(stdin["stdin"].as_str().expect("stdin")).expect("stdin JSON");
        assert_eq!(document, json!({"v": value}), "stdin for {}", short(value));
        let script = server.call("script", json!({"v": value}));
        assert_eq!(
            text(&script).trim_end_matches('\n'),
            value.trim_end_matches('\n'),
            "script arg"
        );
        calls += 4;
        assert!(!canary.exists(), "{} created the canary", short(value));
    }
    let left = left_behind(&mark, &[i32::try_from(server.pid()).expect("pid")]);
    eprintln!(
        "{label}: {} values × 4 sinks = {calls} calls, 0 escapes, canary absent, {} processes left",
        corpus.len(),
        left.len()
    );
    assert!(left.is_empty(), "{left:?}");
}

/// Records every request and answers 200.
fn recorder() -> Upstream {
    Upstream::start(|_: &Recorded, _| Reply::new(200, "text/plain", "ok"))
}

const HTTP_SINKS: &str = r#"
[[tools]]
name = "path"
[tools.arguments.v]
type = "string"
[tools.http]
url = "UPSTREAM/items/{v}/details"

[[tools]]
name = "query"
[tools.arguments.v]
type = "string"
[tools.http]
url = "UPSTREAM/search"
query = { q = "{v}", fixed = "1" }

[[tools]]
name = "header"
[tools.arguments.v]
type = "string"
[tools.http]
url = "UPSTREAM/h"
headers = { X-Value = "v={v}" }

[[tools]]
name = "json"
[tools.arguments.v]
type = "string"
[tools.http]
method = "POST"
url = "UPSTREAM/j"
json = { value = "{v}", text = "said {v}" }

[[tools]]
name = "form"
[tools.arguments.v]
type = "string"
[tools.http]
method = "POST"
url = "UPSTREAM/f"
form = { value = "{v}" }
"#;

#[test]
fn the_corpus_reaches_every_http_sink_as_data_and_never_moves_the_request() {
    let upstream = recorder();
    let workspace = Workspace::new(&HTTP_SINKS.replace("UPSTREAM", &upstream.base()));
    let canary = workspace.path("canary");
    let mut server = workspace.serve_legacy();
    let corpus = with_canary(&corpus(), &canary);
    let origin_host = upstream.base().trim_start_matches("http://").to_owned();
    let (mut calls, mut refused) = (0, 0);
    for value in &corpus {
        for tool in ["path", "query", "header", "json", "form"] {
            let before = upstream.recorded().len();
            let result = server.call(tool, json!({"v": value}));
            calls += 1;
            if result["isError"] == json!(true) {
                // Only what a sink cannot carry is refused, and then nothing is sent.
                let reason = text(&result);
                assert!(
                    reason.contains("line break")
                        || reason.contains("move up the URL's path")
                        || reason.contains("longer than an HTTP request line"),
                    "{tool} refused {}: {}",
                    short(value),
                    short(reason)
                );
                assert_eq!(
                    upstream.recorded().len(),
                    before,
                    "a refused request was sent"
                );
                refused += 1;
                continue;
            }
            assert_eq!(
                upstream.recorded().len(),
                before + 1,
                "{tool} {}",
                short(value)
            );
            let request = upstream.last();
            assert_eq!(
                request.header("host"),
                Some(origin_host.as_str()),
                "{tool} {}",
                short(value)
            );
            assert!(
                request.header("x-injected").is_none(),
                "{tool} {}",
                short(value)
            );
            assert_arrived_as_data(tool, value, &request);
        }
        assert!(!canary.exists());
    }
    eprintln!(
        "HTTP sinks: {} values × 5 sinks = {calls} calls, {refused} refused before sending, 0 escapes",
        corpus.len()
    );
}

/// The value arrived in its sink, decoded, exactly.
fn assert_arrived_as_data(tool: &str, value: &str, request: &Recorded) {
    let url = reqwest::Url::parse(&format!("http://h{}", request.path())).expect("url");
    match tool {
        "path" => {
            let segments: Vec<String> = url
                .path_segments()
                .expect("segments")
                .map(|s| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8_lossy()
                        .into_owned()
                })
                .collect();
            assert_eq!(segments, ["items", value, "details"], "{}", short(value));
        }
        "query" => {
            let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
            assert_eq!(
                pairs,
                [
                    ("q".to_owned(), value.to_owned()),
                    ("fixed".to_owned(), "1".to_owned())
                ]
            );
        }
        "header" => assert_eq!(
            request.header("x-value"),
            Some(format!("v={value}").trim()),
            "{}",
            short(value)
        ),
        "json" => {
            let body: Value = serde_json::from_slice(&request.body).expect("JSON body");
            assert_eq!(
                body,
                json!({"value": value, "text": format!("said {value}")})
            );
        }
        _ => {
            let pairs: Vec<(String, String)> =
                form_urlencoded::parse(&request.body).into_owned().collect();
            assert_eq!(pairs, [("value".to_owned(), value.to_owned())]);
        }
    }
}

const FAULTS: &str = r#"
[[tools]]
name = "hang"
[tools.command]
argv = ["sleep", "300"]
timeout = "1s"

[[tools]]
name = "stubborn"
[tools.command]
script = 'trap "" TERM; sleep 300 & wait; sleep 300'
timeout = "1s"

[[tools]]
name = "segfault"
[tools.command]
script = 'kill -SEGV $$'

[[tools]]
name = "flood"
[tools.command]
argv = ["yes", "flood"]
max-output = "64KiB"

[[tools]]
name = "flood-json"
[tools.command]
argv = ["yes", "flood"]
max-output = "64KiB"
output = "json"

[[tools]]
name = "forks"
[tools.command]
script = 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 300 & done; echo forked'

[[tools]]
name = "setsid"
[tools.command]
script = '(setsid sleep 300 &); setsid sh -c "sleep 300" & echo escaped'

[[tools]]
name = "closes-stdout"
[tools.command]
script = 'exec >&-; sleep 0.2; echo "said on stderr" >&2'

[[tools]]
name = "fork-bomb-ish"
[tools.command]
script = 'i=0; while [ $i -lt 50 ]; do (sleep 300 &) ; i=$((i+1)); done; echo spawned'
"#;

#[test]
fn misbehaving_backends_get_a_defined_outcome_and_leave_nothing() {
    let workspace = Workspace::new(FAULTS);
    let mark = unique_mark();
    let mut server = Server::start_with(&workspace.manifest(), &[], &[("MARK", &mark)]);
    server.handshake("2025-11-25");
    let server_pid = i32::try_from(server.pid()).expect("pid");
    let expectations: [(&str, bool, &str); 9] = [
        ("hang", true, "timed out after 1s"),
        ("stubborn", true, "timed out after 1s"),
        ("segfault", true, "killed by signal SIGSEGV"),
        ("flood", false, "bytes left out"),
        ("flood-json", true, "more than 65536 bytes of output"),
        ("forks", false, "forked"),
        ("setsid", false, "escaped"),
        ("closes-stdout", false, ""),
        ("fork-bomb-ish", false, "spawned"),
    ];
    let mut total_left = 0;
    for (tool, is_error, says) in expectations {
        let started = Instant::now();
        let result = server.call(tool, json!({}));
        assert_eq!(result["isError"], json!(is_error), "{tool}: {result}");
        assert!(text(&result).contains(says), "{tool}: {result}");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{tool} took {:?}",
            started.elapsed()
        );
        let left = left_behind(&mark, &[server_pid]);
        total_left += left.len();
        assert!(left.is_empty(), "{tool} left {left:?}");
    }
    eprintln!(
        "faults: {} misbehaving backends, {total_left} processes left",
        expectations.len()
    );
}

/// A manifest whose `slow` tool runs until stopped, with its processes marked.
fn slow_workspace() -> Workspace {
    Workspace::new(
        "[[tools]]\nname = \"slow\"\n[tools.command]\nscript = 'sleep 300 & (setsid sleep 300 &); echo started > started; wait'\n",
    )
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(path.exists(), "{} never appeared", path.display());
}

#[test]
fn vanishing_stdio_clients_and_sigterm_leave_nothing() {
    let mut vanished = 0;
    for ending in ["close stdin", "SIGTERM"] {
        let workspace = slow_workspace();
        let mark = unique_mark();
        let mut server = Server::start_with(&workspace.manifest(), &[], &[("MARK", &mark)]);
        server.handshake("2025-11-25");
        let pid = i32::try_from(server.pid()).expect("pid");
        server.start_request("tools/call", json!({"name": "slow", "arguments": {}}));
        wait_for_file(&workspace.path("started"));
        if ending == "SIGTERM" {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            )
            .expect("SIGTERM");
        }
        let (status, _) = server.close();
        assert!(status.success(), "{ending}: {status:?}");
        let left = left_behind(&mark, &[]);
        assert!(left.is_empty(), "{ending} left {left:?}");
        vanished += 1;
    }
    // The host died: both pipes close at once, and answers have nowhere to go.
    let workspace = slow_workspace();
    let mark = unique_mark();
    let mut child = std::process::Command::new(crate::harness::BINARY)
        .args(["--config", workspace.manifest().to_str().expect("path")])
        .env("MARK", &mark)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    {
        use std::io::{BufRead as _, Write as _};
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let init = crate::harness::initialize_request();
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
        writeln!(
            stdin,
            "{init}\n{}\n{call}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .expect("write");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the initialize answer");
        wait_for_file(&workspace.path("started"));
    }
    let status = crate::harness::wait_with_timeout(&mut child, Duration::from_secs(10));
    assert!(status.is_some(), "the server outlived its client");
    let left = left_behind(&mark, &[]);
    assert!(left.is_empty(), "a dead host left {left:?}");
    vanished += 1;
    eprintln!(
        "stdio clients: {vanished} vanished mid-call (EOF, SIGTERM, both pipes), 0 processes left"
    );
}

#[test]
fn vanishing_http_clients_leave_nothing_in_either_era() {
    let mut vanished = 0;
    for (flags, era) in [
        (&[][..], "2025"),
        (&[][..], "2026"),
        (&["--sessions"][..], "2025 session"),
        (&["--sse"][..], "2025"),
    ] {
        let workspace = slow_workspace();
        let mark = unique_mark();
        let server = HttpServer::start_with_env(&workspace.manifest(), flags, &[("MARK", &mark)]);
        let mut headers = vec![("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned())];
        let mut params = json!({"name": "slow", "arguments": {}});
        if era == "2026" {
            params["_meta"] = crate::harness::modern_meta();
            headers = vec![
                ("MCP-Protocol-Version".into(), "2026-07-28".into()),
                ("Mcp-Method".into(), "tools/call".into()),
                ("Mcp-Name".into(), "slow".into()),
            ];
        }
        if era == "2025 session" {
            let session = crate::http_harness::open_session(&server);
            headers.push(("Mcp-Session-Id".into(), session));
        }
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
        let client = crate::http_harness::http_client(Duration::from_secs(2));
        let url = server.url.clone();
        let caller = std::thread::spawn(move || {
            let mut request = client
                .post(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(body.to_string());
            for (name, value) in &headers {
                request = request.header(name, value);
            }
            let _ = request.send().and_then(reqwest::blocking::Response::text);
        });
        wait_for_file(&workspace.path("started"));
        caller.join().expect("caller");
        let left = left_behind(&mark, &[server.pid()]);
        assert!(left.is_empty(), "{era} {flags:?} left {left:?}");
        vanished += 1;
    }
    eprintln!(
        "HTTP clients: {vanished} vanished mid-call (2025, 2026, session, SSE), 0 processes left"
    );
}
