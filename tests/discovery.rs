//! Finding tools by what they do (`discovery`, `mcp-serve search`), measured on real APIs:
//! every operation of six vendored descriptions, imported, its summary as the query. How
//! often its tool comes first and among the first five, and what a client reads to reach
//! it: five found tools' definitions, against the whole `tools/list`.

use std::fmt::Write as _;
use std::process::Command;

use serde_json::Value;

use crate::harness::{openapi_fixtures, run};
use mcp_serve::discovery::Index;
use mcp_serve::revision::Revision;

/// A description's text, unpacked when it is stored gzipped.
fn description(file: &str) -> String {
    if std::path::Path::new(file)
        .extension()
        .is_some_and(|extension| extension == "gz")
    {
        let output = Command::new("gzip")
            .args(["-dc", file])
            .current_dir(openapi_fixtures())
            .output()
            .expect("gzip runs");
        assert!(output.status.success(), "gzip -dc {file}");
        return String::from_utf8(output.stdout).expect("UTF-8");
    }
    std::fs::read_to_string(openapi_fixtures().join(file)).expect("the description")
}

/// Ranks of each tool found by its own title, and the bytes a client reads each way.
struct Measured {
    tools: usize,
    asked: usize,
    first: usize,
    top_five: usize,
    list_bytes: usize,
    found_bytes: usize,
}

#[cfg(feature = "openapi")]
fn measure(file: &str) -> Measured {
    let options = mcp_serve::openapi::Options {
        filters: mcp_serve::openapi::Filters::default(),
        base_url: Some("https://api.example.com".to_owned()),
        env_prefix: "X_".to_owned(),
        no_output_schema: false,
        max_output_schema: 16 * 1024,
        project: false,
        max_items: None,
        server_name: None,
        command_line: String::new(),
    };
    let imported = mcp_serve::openapi::import(&description(file), &options).expect("imports");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tools.toml");
    std::fs::write(&path, &imported.manifest).expect("write");
    let (registry, _) = mcp_serve::manifest::load_without_secrets(&path).expect("loads");
    let index = Index::new(&registry);
    let listing = registry.listing(Revision::V2025_06, false);
    let list_bytes = serde_json::to_vec(&listing).expect("JSON").len();
    let mut measured = Measured {
        tools: listing.len(),
        asked: 0,
        first: 0,
        top_five: 0,
        list_bytes,
        found_bytes: 0,
    };
    for tool in registry.tools() {
        let Some(title) = tool.definition.get("title").and_then(Value::as_str) else {
            continue;
        };
        measured.asked += 1;
        let found = index.search(title, 5, |_| true);
        let rank = found.iter().position(|found| found.name == tool.name);
        measured.first += usize::from(rank == Some(0));
        measured.top_five += usize::from(rank.is_some());
        let definitions: Vec<&serde_json::Map<String, Value>> = found
            .iter()
            .filter_map(|found| registry.get(&found.name).ok())
            .map(|tool| &tool.definition)
            .collect();
        measured.found_bytes += serde_json::to_vec(&definitions).expect("JSON").len();
    }
    measured
}

#[cfg(feature = "openapi")]
#[test]
fn a_tools_summary_finds_it_among_the_first_five_in_real_apis() {
    let mut report = String::from(
        "| description | tools | asked | first | first five | tools/list tokens | five found, tokens |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let (mut asked, mut first, mut top_five) = (0, 0, 0);
    for file in [
        "github.json.gz",
        "blockfrost.yaml.gz",
        "rclone.yaml.gz",
        "readme.json",
        "galaxy.yaml",
        "petstore.yaml",
    ] {
        let measured = measure(file);
        #[expect(clippy::cast_precision_loss, reason = "a report")]
        let percent = |part: usize| 100.0 * part as f64 / measured.asked.max(1) as f64;
        let _ = writeln!(
            report,
            "| {file} | {} | {} | {:.1} % | {:.1} % | {} | {} |",
            measured.tools,
            measured.asked,
            percent(measured.first),
            percent(measured.top_five),
            measured.list_bytes / 4,
            measured.found_bytes / 4 / measured.asked.max(1),
        );
        asked += measured.asked;
        first += measured.first;
        top_five += measured.top_five;
    }
    eprintln!("{report}");
    eprintln!("in all: {asked} asked, {first} first, {top_five} among the first five");
    assert!(asked > 1_400, "{asked}");
    assert!(
        top_five * 100 >= asked * 90,
        "{top_five} of {asked} among the first five"
    );
}

#[test]
fn search_finds_a_tool_by_what_it_does_not_by_its_name() {
    let workspace = crate::harness::Workspace::new(
        r#"
[[tools]]
name = "pr-ls"
toolsets = ["code"]
title = "List pull requests"
description = "The open pull requests of a repository, newest first"
[tools.static]
content = [{type = "text", text = "x"}]

[[tools]]
name = "mk-issue"
toolsets = ["issues"]
title = "Open an issue"
description = "Creates an issue with a title and a body"
[tools.static]
content = [{type = "text", text = "x"}]

[[tools]]
name = "weather"
title = "Current weather"
description = "The weather now in a city"
[tools.static]
content = [{type = "text", text = "x"}]
"#,
    );
    let manifest = workspace.manifest();
    let manifest = manifest.to_str().expect("path");
    let (code, out, err) = run(
        &[
            "search", "--config", manifest, "creating", "issues", "--json",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let answer: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(answer["tools"][0]["name"], "mk-issue", "{out}");
    assert_eq!(answer["tools"].as_array().map(Vec::len), Some(1), "{out}");
    let (code, out, _) = run(
        &[
            "search", "--config", manifest, "which", "pull", "requests", "are", "open?",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.starts_with(" 1. pr-ls"), "{out}");
    // A tool the chosen toolsets leave out is not found; the control, with its set, is.
    let (code, out, _) = run(
        &[
            "search",
            "--config",
            manifest,
            "--toolsets",
            "code",
            "creating",
            "issues",
        ],
        workspace.dir.path(),
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "no tool matches `creating issues`\n")
    );
    let (code, out, _) = run(
        &[
            "search",
            "--config",
            manifest,
            "--toolsets",
            "issues",
            "creating",
            "issues",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.starts_with(" 1. mk-issue"), "{out}");
    let (code, out, _) = run(
        &["search", "--config", manifest, "sourdough"],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert_eq!(out, "no tool matches `sourdough`\n");
    let (code, _, err) = run(
        &["search", "--config", manifest, "--limit", "0", "x"],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{err}");
}

/// A manifest in discovery mode: a command tool, a rate-limited one, and twenty more.
fn discovering(discovery: bool) -> crate::harness::Workspace {
    let mut manifest = format!(
        r#"
[server]
name = "many"
discovery = {discovery}

[[tools]]
name = "echo"
title = "Echo a message"
description = "Prints the message it is given back"
annotations = {{ read-only = true }}
[tools.arguments.message]
type = "string"
[tools.command]
argv = ["echo", "{{message}}"]

[[tools]]
name = "limited"
title = "Count sheep"
description = "Counts sheep, once a minute"
rate = "1/m"
[tools.static]
content = [{{type = "text", text = "one sheep"}}]
"#
    );
    for number in 0..20 {
        let _ = write!(
            manifest,
            "\n[[tools]]\nname = \"report-{number}\"\ntitle = \"Sales report {number}\"\n\
             description = \"The sales figures of region {number}, by month and product\"\n\
             [tools.static]\ncontent = [{{type = \"text\", text = \"{number}\"}}]\n"
        );
    }
    crate::harness::Workspace::new(&manifest)
}

fn structured_names(result: &Value) -> Vec<String> {
    result["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("found tools: {result}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn in_discovery_mode_a_client_lists_two_tools_finds_one_and_calls_it_as_itself() {
    let workspace = discovering(true);
    let mut server = crate::harness::Server::start_with(
        &workspace.manifest(),
        &["--audit", "--log-format", "json"],
        &[],
    );
    server.handshake("2025-11-25");
    let listed = server.request("tools/list", serde_json::json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["find_tools", "call_tool", "add_tools"], "{listed}");
    let size = listed["result"].to_string().len();
    assert!(size < 4096, "{size} bytes");

    let found = server.call(
        "find_tools",
        serde_json::json!({"query": "echo back what I say", "limit": 3}),
    );
    assert_eq!(structured_names(&found)[0], "echo", "{found}");
    assert_eq!(
        found["structuredContent"]["tools"][0]["inputSchema"]["properties"]["message"]["type"],
        "string",
        "{found}"
    );
    let result = server.call(
        "call_tool",
        serde_json::json!({"name": "echo", "arguments": {"message": "hello there"}}),
    );
    assert_eq!(crate::harness::text(&result), "hello there", "{result}");
    // The found tool's own call: the audit names it, not `call_tool`.
    let records = crate::audit::records(&server, 1);
    assert_eq!(records.len(), 1, "find_tools runs nothing: {records:?}");
    assert_eq!(records[0]["fields"]["tool"], "echo", "{records:?}");

    // Its rate counts it whichever way it is called.
    let first = server.call("call_tool", serde_json::json!({"name": "limited"}));
    assert_eq!(crate::harness::text(&first), "one sheep", "{first}");
    let again = server.call("call_tool", serde_json::json!({"name": "limited"}));
    assert_eq!(again["isError"], true, "{again}");
    assert!(
        crate::harness::text(&again).contains("rate limit"),
        "{again}"
    );
    let direct = server.call("limited", serde_json::json!({}));
    assert!(
        crate::harness::text(&direct).contains("rate limit"),
        "{direct}"
    );

    // Arguments that do not fit are the model's to correct.
    let wrong = server.call("find_tools", serde_json::json!({"query": 3}));
    assert_eq!(wrong["isError"], true, "{wrong}");
    let unknown = server.request(
        "tools/call",
        serde_json::json!({"name": "call_tool", "arguments": {"name": "no-such-tool"}}),
    );
    assert!(unknown.to_string().contains("no-such-tool"), "{unknown}");
    let nested = server.call(
        "call_tool",
        serde_json::json!({"name": "call_tool", "arguments": {"name": "echo"}}),
    );
    assert_eq!(nested["isError"], true, "{nested}");

    // The control: without discovery, every tool is listed, and no `find_tools`.
    let plain = discovering(false);
    let mut server = crate::harness::Server::start(&plain.manifest());
    server.handshake("2025-11-25");
    let listed = server.request("tools/list", serde_json::json!({}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(22));
    let missing = server.request(
        "tools/call",
        serde_json::json!({"name": "find_tools", "arguments": {"query": "echo"}}),
    );
    assert!(missing.to_string().contains("find_tools"), "{missing}");
}

#[test]
fn discovery_finds_and_calls_in_the_2026_era_over_stdio_and_http() {
    let workspace = discovering(true);
    let mut server = crate::harness::Server::start(&workspace.manifest());
    let meta = crate::harness::modern_meta();
    let found = server.request(
        "tools/call",
        serde_json::json!({"name": "find_tools", "arguments": {"query": "sales figures of region 7"}, "_meta": meta}),
    );
    assert_eq!(structured_names(&found["result"])[0], "report-7", "{found}");
    let called = server.request(
        "tools/call",
        serde_json::json!({"name": "call_tool", "arguments": {"name": "report-7"}, "_meta": meta}),
    );
    assert_eq!(crate::harness::text(&called["result"]), "7", "{called}");

    let http = crate::http_harness::HttpServer::start(&workspace.manifest(), &[]);
    let (status, listed) = http.modern(2, "tools/list", serde_json::json!({}));
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(2));
    let (status, found) = http.modern(
        3,
        "tools/call",
        serde_json::json!({"name": "find_tools", "arguments": {"query": "echo a message"}}),
    );
    assert_eq!(status, 200, "{found}");
    assert_eq!(structured_names(&found["result"])[0], "echo", "{found}");
    let (status, called) = http.modern(
        4,
        "tools/call",
        serde_json::json!({"name": "call_tool", "arguments": {"name": "echo", "arguments": {"message": "over http"}}}),
    );
    assert_eq!(status, 200, "{called}");
    assert_eq!(
        crate::harness::text(&called["result"]),
        "over http",
        "{called}"
    );
}

#[test]
fn discovery_takes_its_two_names_for_itself() {
    let workspace = crate::harness::Workspace::new(
        "[server]\ndiscovery = true\n\n[[tools]]\nname = \"find_tools\"\ndescription = \"d\"\n[tools.static]\ncontent = [{type = \"text\", text = \"x\"}]\n",
    );
    let manifest = workspace.manifest();
    let (code, _, err) = run(
        &["check", "--config", manifest.to_str().expect("path")],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`find_tools` is a name discovery gives its own tool"),
        "{err}"
    );
    // Without it in the manifest, `check` passes; `check --discovery` says why serving so
    // would not start.
    let plain = crate::harness::Workspace::new(
        "[[tools]]\nname = \"call_tool\"\ndescription = \"d\"\ntitle = \"t\"\n[tools.static]\ncontent = [{type = \"text\", text = \"x\"}]\n",
    );
    let manifest = plain.manifest();
    let manifest = manifest.to_str().expect("path");
    let (code, _, err) = run(&["check", "--config", manifest], plain.dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(
        &["--discovery", "check", "--config", manifest],
        plain.dir.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("discovery-name"),
        "{out}{err}"
    );
}

#[test]
fn list_shows_what_a_client_of_discovery_mode_lists() {
    let workspace = discovering(false);
    let manifest = workspace.manifest();
    let manifest = manifest.to_str().expect("path");
    let (code, out, err) = run(
        &["--discovery", "list", "--json", "--config", manifest],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&out).expect("JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["find_tools", "call_tool", "add_tools"]);
    // The control: without the flag, the manifest's 22 tools.
    let (_, out, _) = run(
        &["list", "--json", "--config", manifest],
        workspace.dir.path(),
    );
    let listed: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(listed["tools"].as_array().map(Vec::len), Some(22));
    let (_, out, _) = run(
        &["--discovery", "list", "--config", manifest],
        workspace.dir.path(),
    );
    assert!(
        out.contains("discovery mode: a client lists `find_tools` and `call_tool`, which find and call these, and `add_tools`"),
        "{out}"
    );
}

#[test]
fn discovery_finds_and_calls_only_what_the_callers_token_grants() {
    use crate::oauth::{AUDIENCE, Issuer, call, make_key, sign};
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", jsonwebtoken::Algorithm::ES256);
    let issuer = Issuer::start(vec![key.jwk.clone()]);
    let workspace = crate::harness::Workspace::new(&format!(
        r#"[server]
discovery = true

[server.auth]
issuer = "{}"
audience = "{AUDIENCE}"

[[tools]]
name = "weekly-report"
title = "Weekly sales report"
[tools.static]
content = [{{ type = "text", text = "open to all" }}]

[[tools]]
name = "payroll-report"
title = "Payroll report"
scopes = ["payroll:read"]
[tools.static]
content = [{{ type = "text", text = "salaries" }}]
"#,
        issuer.url()
    ));
    let server = crate::http_harness::HttpServer::start(&workspace.manifest(), &[]);
    let without = sign(&key, issuer.claims("ada", ""));
    let with = sign(&key, issuer.claims("grace", "payroll:read"));
    let answer = |token: &str, params: Value| {
        let response = call(&server, Some(token), "tools/call", params);
        crate::http_harness::message(response, 1)
    };
    let find = serde_json::json!({"name": "find_tools", "arguments": {"query": "report"}});
    // The control: a token with the scope finds both.
    let mut both = structured_names(&answer(&with, find.clone())["result"]);
    both.sort();
    assert_eq!(both, ["payroll-report", "weekly-report"]);
    // Without it, the scoped tool is neither found nor run through `call_tool`.
    assert_eq!(
        structured_names(&answer(&without, find)["result"]),
        ["weekly-report"]
    );
    let refused = answer(
        &without,
        serde_json::json!({"name": "call_tool", "arguments": {"name": "payroll-report"}}),
    );
    assert!(!refused.to_string().contains("salaries"), "{refused}");
    assert!(refused.to_string().contains("payroll:read"), "{refused}");
    let granted = answer(
        &with,
        serde_json::json!({"name": "call_tool", "arguments": {"name": "payroll-report"}}),
    );
    assert_eq!(
        crate::harness::text(&granted["result"]),
        "salaries",
        "{granted}"
    );
    // A misspelt name is answered with a tool the caller may call, never another, through
    // `call_tool` or directly; the control, the token with the scope, is told the name.
    for params in [
        serde_json::json!({"name": "call_tool", "arguments": {"name": "payroll-repor"}}),
        serde_json::json!({"name": "payroll-repor", "arguments": {}}),
    ] {
        let hidden = answer(&without, params.clone());
        assert!(hidden.to_string().contains("unknown tool"), "{hidden}");
        assert!(!hidden.to_string().contains("payroll-report`"), "{hidden}");
        let told = answer(&with, params);
        assert!(
            told.to_string().contains("did you mean `payroll-report`"),
            "{told}"
        );
    }
    // A name of megabytes is neither worked on at length nor sent back.
    let long = format!("payroll-report{}", "x".repeat(1 << 20));
    let refused = answer(
        &with,
        serde_json::json!({"name": "call_tool", "arguments": {"name": long}}),
    );
    let shown = refused.to_string();
    assert!(
        shown.contains("unknown tool"),
        "{}",
        &shown[..200.min(shown.len())]
    );
    assert!(shown.len() < 2_000, "{} bytes", shown.len());
}
