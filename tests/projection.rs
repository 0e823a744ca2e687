//! Output projection (`project`, `max-items`): a tool's JSON narrowed by a jq program in a
//! worker process, its lists capped, then checked against the output schema, over stdio in
//! both protocol eras; and the attacks on it: a program that never ends, one that
//! allocates without end, one that reads the environment, a secret changed past
//! recognition, workers left behind.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, alive, github, modern_meta, run, text, wait_gone};
use crate::upstream::{Recorded, Reply, Upstream};

/// The secret the HTTP tools send; upper and lower case, so that a lower-cased copy is not
/// the secret to a redactor.
const SECRET: &str = "SeCrEt-Token-QX7";

/// GitHub's own example of an issue list (its vendored description's `issue-items`), as a
/// page of 30 issues, the API's default page.
fn issue_page() -> Value {
    let description: Value = serde_json::from_slice(&github()).expect("GitHub's description");
    let issue = &description["components"]["examples"]["issue-items"]["value"][0];
    assert!(issue["user"]["login"].is_string(), "{issue}");
    (1..=30)
        .map(|number| {
            let mut issue = issue.clone();
            issue["number"] = json!(number);
            issue
        })
        .collect()
}

/// What a model needs of an issue.
const PROJECT: &str = "map({number, title, state, user: .user.login, labels: [.labels[].name]})";

/// An output schema only the projected page satisfies.
const PROJECTED_SCHEMA: &str = r#"{"type": "array", "items": {"type": "object",
    "required": ["number", "title", "state", "user", "labels"], "additionalProperties": false,
    "properties": {"number": {"type": "integer"}, "title": {"type": "string"},
    "state": {"type": "string"}, "user": {"type": "string"},
    "labels": {"type": "array", "items": {"type": "string"}}}}}"#;

fn upstream(page: Value) -> Upstream {
    let page = json!({"total_count": 30, "items": page}).to_string();
    Upstream::start(move |request: &Recorded, _port| match request.path() {
        "/issues" => Reply::new(200, "application/json", page.clone()),
        "/lower" => Reply::new(
            200,
            "application/json",
            json!({"token": SECRET.to_lowercase()}).to_string(),
        ),
        _ => Reply::new(404, "text/plain", "no"),
    })
}

fn manifest(upstream: &Upstream) -> Workspace {
    let base = upstream.base();
    Workspace::new(&format!(
        r#"
[[tools]]
name = "issues"
description = "A page of issues, as a model needs them"
project = "{PROJECT}"
max-items = 5
output-schema = '''{PROJECTED_SCHEMA}'''
[tools.http]
url = "{base}/issues"
response-pointer = "/items"

[[tools]]
name = "issues-whole"
description = "The same page as the API sends it"
output-schema = '''{PROJECTED_SCHEMA}'''
[tools.http]
url = "{base}/issues"
response-pointer = "/items"

[[tools]]
name = "countdown"
description = "Counts down from n, one step of jq recursion each"
project = "def f: if . > 0 then . - 1 | f else . end; f"
[tools.arguments.n]
type = "string"
[tools.command]
argv = ["echo", "{{n}}"]
output = "json"

[[tools]]
name = "repeat"
description = "A string of n characters, measured"
project = '("x" * .) | length'
[tools.arguments.n]
type = "string"
[tools.command]
argv = ["echo", "{{n}}"]
output = "json"

[[tools]]
name = "bounded"
description = "A string of n characters, from a tool that may return 1 KiB"
project = '"x" * .'
[tools.arguments.n]
type = "string"
[tools.command]
argv = ["echo", "{{n}}"]
output = "json"
max-output = "1KiB"

[[tools]]
name = "environment"
description = "What jq's env sees"
project = "env"
[tools.command]
argv = ["echo", "{{{{}}}}"]
output = "json"

[[tools]]
name = "config-lowered"
description = "A config file that holds the API token, its token lower-cased"
project = ".token | ascii_downcase"
[tools.command]
argv = ["cat", "config.json"]
output = "json"

[[tools]]
name = "lowered-upstream"
description = "An upstream that sends the secret lower-cased, unprojected"
[tools.http]
url = "{base}/lower"
headers = {{ Authorization = "Bearer ${{env:PJ_TOKEN}}" }}
"#
    ))
}

fn serve(workspace: &Workspace) -> Server {
    Server::start_with(&workspace.manifest(), &[], &[("PJ_TOKEN", SECRET)])
}

/// A 2025 client's server on the test manifest, with the upstream and workspace it needs.
fn served() -> (Upstream, Workspace, Server) {
    let api = upstream(json!([]));
    let workspace = manifest(&api);
    let mut server = serve(&workspace);
    server.handshake("2025-11-25");
    (api, workspace, server)
}

/// What `tool` gives for `n`: the value of a 2025 client's wrapped structured content.
fn answer(server: &mut Server, tool: &str, n: &str) -> Value {
    let result = server.call(tool, json!({"n": n}));
    assert_ne!(result["isError"], json!(true), "{result}");
    result["structuredContent"]["result"].clone()
}

/// Calls `tool` in the 2026-07-28 era (no handshake; `_meta` on the request).
fn call_2026(server: &mut Server, tool: &str, arguments: Value) -> Value {
    let response = server.request(
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": modern_meta()}),
    );
    response["result"].clone()
}

/// The projection workers `server` has now, by process id.
fn workers(server: &Server) -> Vec<i32> {
    let parent = server.pid().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        // `pid (comm) state ppid …`: the fields after the last `)`.
        let parent_of = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1));
        if parent_of == Some(parent.as_str())
            && cmdline.split(|b| *b == 0).any(|arg| arg == b"__project")
        {
            found.push(pid);
        }
    }
    found
}

fn assert_projected_page(structured: &Value, result: &Value, raw: &Value) {
    let items = structured.as_array().expect("the projected page");
    assert_eq!(items.len(), 5, "{result}");
    let first = &raw[0];
    assert_eq!(
        items[0],
        json!({
            "number": 1,
            "title": first["title"],
            "state": first["state"],
            "user": first["user"]["login"],
            "labels": first["labels"].as_array().expect("labels").iter().map(|l| l["name"].clone()).collect::<Vec<_>>(),
        })
    );
    assert_eq!(
        serde_json::from_str::<Value>(text(result)).expect("the JSON text"),
        *structured,
        "the text block carries the same projected JSON"
    );
    let note = result["content"][1]["text"].as_str().expect("a note");
    assert!(note.contains("25 more items left out"), "{note}");
    assert!(note.contains("at most 5"), "{note}");
    // Per issue, the projection keeps less than a tenth of what the API sends.
    let (whole, projected) = (raw.to_string().len() / 30, structured.to_string().len() / 5);
    assert!(
        whole > 10 * projected,
        "{projected} bytes an issue, of {whole}"
    );
}

#[test]
fn an_http_tools_json_is_projected_capped_then_checked_in_both_eras() {
    let page = issue_page();
    let api = upstream(page.clone());
    let workspace = manifest(&api);

    let mut server = serve(&workspace);
    server.handshake("2025-11-25");
    let result = server.call("issues", json!({}));
    assert_ne!(result["isError"], json!(true), "{result}");
    // A 2025 client gets an array wrapped, as the advertised schema says.
    assert_projected_page(&result["structuredContent"]["result"], &result, &page);

    // The control: the page unprojected fails the same schema, so the projection did the
    // work, and did it before the schema was checked.
    let whole = server.call("issues-whole", json!({}));
    assert_eq!(whole["isError"], json!(true), "{whole}");
    assert!(
        text(&whole).contains("does not match its output schema"),
        "{whole}"
    );
    drop(server);

    let mut modern = serve(&workspace);
    let result = call_2026(&mut modern, "issues", json!({}));
    assert_ne!(result["isError"], json!(true), "{result}");
    assert_projected_page(&result["structuredContent"], &result, &page);
}

#[test]
fn a_program_that_never_ends_is_stopped_and_its_worker_killed() {
    let (_api, _workspace, mut server) = served();

    // The control: the same recursion, bounded by its input, runs to its end.
    assert_eq!(answer(&mut server, "countdown", "10000"), json!(0));
    let before = workers(&server);
    assert_eq!(before.len(), 1, "one worker, kept for the next call");

    let started = Instant::now();
    let result = server.call("countdown", json!({"n": "1e300"}));
    let took = started.elapsed();
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(&result).contains("took longer than 2s"), "{result}");
    assert!(
        took < Duration::from_secs(10),
        "stopped at its deadline: {took:?}"
    );
    assert!(
        wait_gone(before[0]),
        "the worker that ran it is killed, not left to loop"
    );

    // The server and the next projection are not held up by it.
    assert_eq!(answer(&mut server, "countdown", "3"), json!(0));
}

#[test]
fn a_program_that_allocates_without_end_is_stopped_at_its_memory_limit() {
    let (_api, _workspace, mut server) = served();

    // The control: the same program, on a size the limit allows.
    assert_eq!(
        answer(&mut server, "repeat", "100000000"),
        json!(100_000_000)
    );
    // 4 GiB: far below this machine's memory, far above a worker's limit.
    let result = server.call("repeat", json!({"n": "4294967296"}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        text(&result).contains("more than 1024 MiB of memory"),
        "{result}"
    );
    assert_eq!(answer(&mut server, "repeat", "3"), json!(3));
}

#[test]
fn a_projection_returns_no_more_than_its_tool_may() {
    let (_api, _workspace, mut server) = served();
    // The control: within the tool's 1 KiB.
    assert_eq!(
        answer(&mut server, "bounded", "500"),
        json!("x".repeat(500))
    );
    let result = server.call("bounded", json!({"n": "5000"}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        text(&result).contains("5002 bytes, more than the 1024 this tool may return"),
        "{result}"
    );
    assert_eq!(answer(&mut server, "bounded", "3"), json!("xxx"));
}

#[test]
fn a_burst_of_calls_runs_one_program_per_core_at_a_time() {
    let cores = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .max(2);
    let (_api, _workspace, mut server) = served();
    let calls = cores + 3;
    let ids: Vec<i64> = (0..calls)
        .map(|_| {
            server.start_request(
                "tools/call",
                json!({"name": "countdown", "arguments": {"n": "1e300"}}),
            )
        })
        .collect();
    let mut most = 0;
    let sampled = Instant::now();
    while sampled.elapsed() < Duration::from_secs(3) {
        most = most.max(workers(&server).len());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(most <= cores, "{most} workers at once, on {cores} cores");
    assert!(most >= 2, "the calls ran side by side: {most}");
    // Each is stopped at its own deadline, counted from when it ran.
    let mut pending: std::collections::HashSet<i64> = ids.into_iter().collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pending.is_empty() {
        let message = server
            .next_message(deadline)
            .expect("every call is answered");
        if let Some(id) = message["id"].as_i64()
            && pending.remove(&id)
        {
            assert!(
                message.to_string().contains("took longer than 2s"),
                "{message}"
            );
        }
    }
}

#[test]
fn a_program_reads_no_environment_and_never_sees_a_secret() {
    let (_api, workspace, mut server) = served();

    // The server's environment has PJ_TOKEN, PATH and HOME; the worker's has nothing.
    let result = server.call("environment", json!({}));
    assert_eq!(result["structuredContent"], json!({}), "{result}");

    // The control: a lower-cased secret is no secret to the redactor, so it would leave
    // in whatever the projection made of the response ...
    let control = server.call("lowered-upstream", json!({}));
    assert!(
        control.to_string().contains(&SECRET.to_lowercase()),
        "{control}"
    );
    // ... but a tool's JSON is redacted before its projection runs: a script that prints
    // a config holding the token gives it lower-cased here only as `[redacted]`.
    std::fs::write(
        workspace.path("config.json"),
        json!({"token": SECRET}).to_string(),
    )
    .expect("config");
    let result = server.call("config-lowered", json!({}));
    assert_eq!(
        result["structuredContent"],
        json!({"result": "[redacted]"}),
        "{result}"
    );
    assert!(
        !result
            .to_string()
            .to_lowercase()
            .contains(&SECRET.to_lowercase()),
        "{result}"
    );
}

#[test]
fn workers_end_with_the_server() {
    let (_api, _workspace, mut server) = served();
    let _ = server.call("countdown", json!({"n": "1"}));
    let found = workers(&server);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(alive(found[0]));
    let (status, _) = server.close();
    assert!(status.success(), "{status:?}");
    assert!(wait_gone(found[0]), "the worker outlived its server");
}

#[test]
fn a_worker_killed_while_idle_is_replaced_not_blamed_on_the_next_call() {
    let (_api, _workspace, mut server) = served();
    let _ = server.call("countdown", json!({"n": "1"}));
    let idle = workers(&server);
    assert_eq!(idle.len(), 1, "{idle:?}");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &idle[0].to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    assert!(wait_gone(idle[0]) || !alive(idle[0]));
    let result = server.call("countdown", json!({"n": "2"}));
    assert_eq!(
        result["structuredContent"],
        json!({"result": 0}),
        "{result} {}",
        server.stderr()
    );
    let now = workers(&server);
    assert_eq!(now.len(), 1, "a new worker, kept: {now:?}");
    assert_ne!(now[0], idle[0]);
}

#[test]
fn check_points_into_the_program_and_refuses_shaping_what_is_never_json() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "typo"
description = "d"
project = ".items | mapp({id})"
[tools.command]
argv = ["true"]
output = "json"

[[tools]]
name = "text"
description = "d"
project = ".a"
max-items = 0
[tools.command]
argv = ["true"]

[[tools]]
name = "declared"
description = "d"
max-items = 2
[tools.static]
content = [{type = "text", text = "x"}]

[[tools]]
name = "cap"
description = "d"
max-items = 0
[tools.http]
url = "http://127.0.0.1:9/x"

[[tools]]
name = "fewer"
description = "d"
max-items = 3
output-schema = '{"type": "object", "properties": {"items": {"type": "array", "minItems": 5}}}'
[tools.http]
url = "http://127.0.0.1:9/x"
"#,
    );
    let manifest = workspace.manifest();
    let (code, _, stderr) = run(
        &["check", "--config", manifest.to_str().expect("path")],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("in `project`: `mapp/1` is not a jq filter"),
        "{stderr}"
    );
    // Line 5, the column of `mapp` inside the string.
    assert!(stderr.contains("tools.toml:5:21"), "{stderr}");
    assert!(
        stderr.contains(
            "`project` shapes JSON output, and this command's output is not `output = \"json\"`"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("`max-items` shapes JSON output, and a static tool's result is declared"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`max-items` is a number of items from 1 to 100000"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "`max-items = 3` keeps fewer items than the output schema's `minItems` of 5 for `items`"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("due to 6 previous errors"), "{stderr}");
}

/// Imports GitHub's issue operations against `base`, with `flags`, into a workspace.
#[cfg(feature = "openapi")]
fn imported(base: &str, flags: &[&str]) -> Workspace {
    let mut args = vec!["-", "--base-url", base, "--tag", "issues"];
    args.extend_from_slice(flags);
    let (code, manifest, summary) = crate::import_openapi::import(&args, Some(&github()));
    assert_eq!(code, 0, "{summary}");
    Workspace::new(&manifest)
}

#[cfg(feature = "openapi")]
#[test]
fn an_api_imported_with_project_answers_the_fields_a_model_reads() {
    let page = issue_page();
    let body = page.to_string();
    let api = Upstream::start(move |_, _| Reply::new(200, "application/json", body.clone()));
    let base = format!("{}/base", api.base());
    let arguments = json!({"owner": "o", "repo": "r"});

    let workspace = imported(&base, &["--project", "--max-items", "5"]);
    let manifest = workspace.manifest();
    let (code, _, stderr) = run(
        &["check", "--config", manifest.to_str().expect("path")],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let mut server = Server::start(&manifest);
    server.handshake("2025-11-25");
    let result = server.call("issues_list-for-repo", arguments.clone());
    assert_ne!(
        result["isError"],
        json!(true),
        "checked against the narrowed schema: {result}"
    );
    let items = result["structuredContent"]["result"]
        .as_array()
        .expect("a list");
    assert_eq!(items.len(), 5, "{result}");
    for item in items {
        let fields = item.as_object().expect("an issue");
        assert!(
            fields.contains_key("number") && fields.contains_key("title"),
            "{item}"
        );
        assert!(
            fields
                .keys()
                .all(|name| name != "url" && !name.ends_with("_url")),
            "{item}"
        );
        assert!(fields.values().all(|value| !value.is_object()), "{item}");
    }
    assert!(
        text(&result).len() * 10 < page.to_string().len(),
        "{}",
        text(&result).len()
    );
    assert!(
        result["content"][1]["text"]
            .as_str()
            .is_some_and(|note| note.contains("25 more items left out")),
        "{result}"
    );

    // The control: imported without them, the same call answers every field of every issue.
    let whole = imported(&base, &[]);
    let mut server = Server::start(&whole.manifest());
    server.handshake("2025-11-25");
    let result = server.call("issues_list-for-repo", arguments);
    let items = result["structuredContent"]["result"]
        .as_array()
        .expect("a list");
    assert_eq!(items.len(), 30, "{result}");
    assert!(
        items[0]["user"].is_object() && items[0]["url"].is_string(),
        "{}",
        items[0]
    );
}
