//! Toolsets: what `--toolsets` chooses is all a client sees and can call, over stdio and
//! HTTP, in `list` and `check`, and after a reload; mistakes in the sets are load errors.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, run, text};
use crate::http_harness::HttpServer;

const SETS: &str = r#"
[[toolsets]]
name = "issues"
title = "Issues"
tools = ["*_issue*"]

[[toolsets]]
name = "pulls"
tools = ["list_pulls"]

[[tools]]
name = "list_issues"
[tools.static]
content = [{ type = "text", text = "issues" }]

[[tools]]
name = "get_issue"
[tools.static]
content = [{ type = "text", text = "one issue" }]

[[tools]]
name = "list_pulls"
toolsets = ["issues"]
[tools.static]
content = [{ type = "text", text = "pulls" }]

[[tools]]
name = "whoami"
[tools.static]
content = [{ type = "text", text = "me" }]
"#;

/// `mcp-serve check` of the workspace's manifest with `flags`: exit code, stdout, stderr.
fn check(workspace: &Workspace, flags: &[&str]) -> (i32, String, String) {
    let manifest = workspace.manifest();
    let mut args = vec!["check", "--config", manifest.to_str().expect("utf-8 path")];
    args.extend_from_slice(flags);
    run(&args, workspace.dir.path())
}

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_stdio_client_sees_and_calls_only_the_chosen_toolsets() {
    let workspace = Workspace::new(SETS);
    let mut everything = Server::initialized(&workspace.manifest(), "2025-11-25");
    let listed = everything.request("tools/list", json!({}));
    assert_eq!(
        names(&listed["result"]),
        ["list_issues", "get_issue", "list_pulls", "whoami"],
        "without --toolsets every tool is served, in a set or not"
    );

    let mut pulls = Server::start_with(&workspace.manifest(), &["--toolsets", "pulls"], &[]);
    pulls.handshake("2025-11-25");
    let listed = pulls.request("tools/list", json!({}));
    assert_eq!(names(&listed["result"]), ["list_pulls"]);
    assert_eq!(text(&pulls.call("list_pulls", json!({}))), "pulls");
    let outside = pulls.request("tools/call", json!({"name": "whoami", "arguments": {}}));
    assert_eq!(
        outside["error"]["message"],
        json!("unknown tool `whoami`"),
        "a tool outside the chosen sets is unknown: {outside}"
    );

    // Two sets, from the environment: their union, in manifest order.
    let mut both = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("MCP_SERVE_TOOLSETS", "pulls,issues")],
    );
    both.handshake("2025-11-25");
    let listed = both.request("tools/list", json!({}));
    assert_eq!(
        names(&listed["result"]),
        ["list_issues", "get_issue", "list_pulls"]
    );
}

#[test]
fn an_http_client_sees_only_the_chosen_toolsets_in_both_eras() {
    let workspace = Workspace::new(SETS);
    let server = HttpServer::start(&workspace.manifest(), &["--toolsets", "issues"]);
    let legacy = server.legacy(1, "tools/list", json!({}));
    assert_eq!(
        names(&legacy["result"]),
        ["list_issues", "get_issue", "list_pulls"]
    );
    let (status, modern) = server.modern(2, "tools/list", json!({}));
    assert_eq!(status, 200, "{modern}");
    assert_eq!(
        names(&modern["result"]),
        ["list_issues", "get_issue", "list_pulls"]
    );
    let (_, call) = server.modern(3, "tools/call", json!({"name": "whoami", "arguments": {}}));
    assert!(
        call["error"]["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("unknown tool `whoami`")),
        "{call}"
    );
}

#[test]
fn list_and_check_show_the_choice_and_refuse_an_unknown_toolset() {
    let workspace = Workspace::new(SETS);
    let manifest = workspace.manifest();
    let manifest = manifest.to_str().expect("utf-8 path");
    let (code, out, _) = run(
        &["list", "--config", manifest, "--toolsets", "pulls"],
        workspace.dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.contains("list_pulls"), "{out}");
    assert!(
        !out.contains("whoami") && !out.contains("list_issues"),
        "{out}"
    );
    assert!(
        out.contains("tools/list (2025-11-25): 1 tool, "),
        "list says what the chosen tools take: {out}"
    );
    let (code, out, _) = run(&["list", "--config", manifest], workspace.dir.path());
    assert_eq!(code, 0);
    assert!(
        out.lines().any(|line| line.starts_with("issues ")
            && line.contains("3 tools")
            && line.ends_with("Issues")),
        "{out}"
    );

    let (code, out, _) = run(
        &[
            "check",
            "--config",
            manifest,
            "--toolsets",
            "issues",
            "--format",
            "json",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    let sizes = &report["sizes"]["2025-11-25"];
    assert_eq!(sizes["tools"], json!(3));
    assert_eq!(
        sizes["toolsets"]
            .as_object()
            .map(|sets| sets.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["issues".to_owned()])
    );

    let (code, _, err) = run(
        &["check", "--config", manifest, "--toolsets", "isues"],
        workspace.dir.path(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("no toolset `isues` (did you mean `issues`?); it has issues, pulls"),
        "{err}"
    );
    let (code, _, err) = run(
        &[
            "call",
            "--config",
            manifest,
            "--toolsets",
            "pulls",
            "whoami",
        ],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("unknown tool `whoami`"), "{err}");
}

#[test]
fn mistakes_in_toolsets_are_load_errors_that_point_at_them() {
    let cases = [
        (
            SETS.replace("toolsets = [\"issues\"]", "toolsets = [\"isues\"]"),
            "tool `list_pulls` names toolset `isues`, which `[[toolsets]]` does not declare",
            Some("did you mean `issues`?"),
        ),
        (
            SETS.replace("tools = [\"list_pulls\"]", "tools = [\"list_pull\"]"),
            "toolset member `list_pull` is not a tool",
            Some("did you mean `list_pulls`?"),
        ),
        (
            SETS.replace("\"*_issue*\"", "\"*_ticket*\""),
            "toolset member `*_ticket*` matches no tool",
            None,
        ),
        (
            SETS.replace("name = \"pulls\"", "name = \"issues\""),
            "duplicate toolset name `issues`",
            None,
        ),
        (
            SETS.replace("name = \"pulls\"", "name = \"pull requests\""),
            "toolset name `pull requests` is not 1 to 64 letters, digits, `_` or `-`",
            None,
        ),
        (
            SETS.replace("tools = [\"list_pulls\"]", "tools = []"),
            "toolset `pulls` has no tools",
            None,
        ),
    ];
    for (manifest, error, hint) in cases {
        let workspace = Workspace::new(&manifest);
        let (code, _, err) = check(&workspace, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("error: {error}\n")), "{error}: {err}");
        assert!(err.contains(" --> "), "points into the file: {err}");
        if let Some(hint) = hint {
            assert!(err.contains(hint), "{err}");
        }
        assert!(
            err.contains("due to 1 previous error"),
            "one mistake, one error: {err}"
        );
    }
    // A broken tool table is its own error; the sets it would join do not add more.
    let workspace = Workspace::new(&SETS.replace(
        "[tools.static]\ncontent = [{ type = \"text\", text = \"pulls\" }]",
        "[tools.statik]\ncontent = [{ type = \"text\", text = \"pulls\" }]",
    ));
    let (code, _, err) = check(&workspace, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("due to 1 previous error"), "{err}");
}

#[test]
fn check_warns_when_the_list_is_over_the_budget_and_names_the_sets_over_it() {
    let description = "d".repeat(400);
    let mut manifest = String::new();
    for index in 0..300 {
        let set = if index < 280 { "big" } else { "small" };
        manifest.push_str(&format!(
            "[[tools]]\nname = \"t{index}\"\ntitle = \"T\"\ndescription = \"{description}\"\ntoolsets = [\"{set}\"]\n[tools.static]\ncontent = [{{ type = \"text\", text = \"x\" }}]\n\n"
        ));
    }
    let workspace = Workspace::new(&manifest);
    let (code, _, err) = check(&workspace, &[]);
    assert_eq!(code, 0, "a warning: {err}");
    assert!(
        err.contains("over the 25,000 tokens hosts warn at")
            && err.contains("over it alone: big [list-size]"),
        "{err}"
    );
    let (_, _, err) = check(&workspace, &["--toolsets", "small"]);
    assert!(!err.contains("[list-size]"), "the chosen set fits: {err}");
}

#[test]
fn a_reload_keeps_the_chosen_toolsets() {
    let workspace = Workspace::new(SETS);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--watch", "--toolsets", "pulls"],
        &[],
    );
    server.handshake("2025-11-25");
    let edited = SETS.replace(
        "tools = [\"list_pulls\"]",
        "tools = [\"list_pulls\", \"review_pull\"]",
    ) + "\n[[tools]]\nname = \"review_pull\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"reviewed\" }]\n\n[[tools]]\nname = \"close_issue\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"closed\" }]\n";
    std::fs::write(workspace.manifest(), edited).expect("rewrite");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let message = server
            .next_message(deadline)
            .expect("a list_changed notification");
        if message["method"] == json!("notifications/tools/list_changed") {
            break;
        }
    }
    let listed = server.request("tools/list", json!({}));
    assert_eq!(names(&listed["result"]), ["list_pulls", "review_pull"]);

    // A reload that drops the chosen set keeps the previous tools.
    std::fs::write(
        workspace.manifest(),
        SETS.replace(
            "name = \"pulls\"\ntools = [\"list_pulls\"]",
            "name = \"prs\"\ntools = [\"list_pulls\"]",
        ),
    )
    .expect("rewrite");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stderr().contains("lacks a chosen toolset") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        server.stderr().contains("lacks a chosen toolset"),
        "{}",
        server.stderr()
    );
    assert_eq!(text(&server.call("review_pull", json!({}))), "reviewed");
}

#[test]
fn test_runs_only_the_examples_of_the_chosen_tools() {
    let workspace = Workspace::new(&format!(
        "{SETS}\n[[tools]]\nname = \"close_pull\"\ntoolsets = [\"pulls\"]\n\
         [tools.command]\nscript = 'echo ran >> runs-close'\n\
         [[tools.examples]]\nname = \"closes\"\n"
    ));
    let manifest = workspace.manifest();
    let manifest = manifest.to_str().expect("utf-8 path");
    let (_, out, err) = run(
        &["test", "--config", manifest, "--toolsets", "issues"],
        workspace.dir.path(),
    );
    assert!(!out.contains("close_pull"), "{out}{err}");
    assert!(
        !workspace.path("runs-close").exists(),
        "an example outside the chosen sets ran"
    );
    // Naming it is an unknown tool, not a green run of nothing.
    let (code, _, err) = run(
        &[
            "test",
            "--config",
            manifest,
            "--toolsets",
            "issues",
            "close_pull",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown tool `close_pull`"), "{err}");
    assert!(!workspace.path("runs-close").exists());
    // The control: chosen, the same example runs.
    let (code_chosen, out, err) = run(
        &["test", "--config", manifest, "--toolsets", "pulls"],
        workspace.dir.path(),
    );
    assert_eq!(code_chosen, 0, "{out}{err}");
    assert!(out.contains("PASS close_pull :: closes"), "{out}");
    assert!(workspace.path("runs-close").exists());
}

#[test]
fn the_manifest_names_the_default_sets_and_all_serves_every_tool() {
    let manifest = SETS.replacen(
        "\n[[toolsets]]",
        "\n[server]\ntoolsets = [\"pulls\"]\n\n[[toolsets]]",
        1,
    );
    let workspace = Workspace::new(&manifest);
    let listed = |extra: &[&str], env: &[(&str, &str)]| {
        let mut server = Server::start_with(&workspace.manifest(), extra, env);
        server.handshake("2025-11-25");
        names(&server.request("tools/list", json!({}))["result"])
    };
    assert_eq!(
        listed(&[], &[]),
        ["list_pulls"],
        "no choice: the manifest's default"
    );
    assert_eq!(
        listed(&[], &[("MCP_SERVE_TOOLSETS", "")]),
        ["list_pulls"],
        "an empty variable is no choice"
    );
    assert_eq!(
        listed(&["--toolsets", "issues"], &[]),
        ["list_issues", "get_issue", "list_pulls"]
    );
    assert_eq!(
        listed(&["--toolsets", "all"], &[]),
        ["list_issues", "get_issue", "list_pulls", "whoami"]
    );

    for (manifest, error, hint) in [
        (
            SETS.replacen(
                "\n[[toolsets]]",
                "\n[server]\ntoolsets = [\"pull\"]\n\n[[toolsets]]",
                1,
            ),
            "`[server] toolsets` names `pull`, which is no toolset",
            "did you mean `pulls`?",
        ),
        (
            SETS.replace("name = \"pulls\"", "name = \"all\""),
            "a toolset cannot be called `all`",
            "`--toolsets all` serves every tool",
        ),
    ] {
        let workspace = Workspace::new(&manifest);
        let (code, _, err) = check(&workspace, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("error: {error}\n")), "{err}");
        assert!(err.contains(hint), "{err}");
    }
}

#[test]
fn install_writes_the_chosen_toolsets_into_the_hosts_entry() {
    let workspace = Workspace::new(SETS);
    let home = tempfile::tempdir().expect("home");
    let output = std::process::Command::new(crate::harness::BINARY)
        .arg("--config")
        .arg(workspace.manifest())
        .args([
            "install",
            "claude-desktop",
            "--dry-run",
            "--toolsets",
            "pulls",
        ])
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("run install");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let snippet: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let entry = snippet["mcpServers"]
        .as_object()
        .and_then(|servers| servers.values().next())
        .cloned()
        .expect("one entry");
    let args: Vec<String> = entry["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|arg| arg.as_str().map(str::to_owned))
        .collect();
    assert_eq!(args[2..], ["--toolsets", "pulls"], "{entry}");
    // Started as the host would, the entry serves the chosen set only.
    let mut server = Server::start_command(
        std::process::Command::new(entry["command"].as_str().expect("a command")).args(&args),
    );
    server.handshake("2025-11-25");
    assert_eq!(
        names(&server.request("tools/list", json!({}))["result"]),
        ["list_pulls"]
    );
}

#[test]
fn serving_a_set_needs_only_its_own_tools_secrets_and_still_redacts_the_others() {
    let manifest = r#"
[[tools]]
name = "echo_b"
toolsets = ["a"]
arguments.text = { type = "string" }
[tools.command]
argv = ["echo", "{text}"]

[[tools]]
name = "env_a"
toolsets = ["a"]
[tools.command]
argv = ["env"]

[[tools]]
name = "call_b"
toolsets = ["b"]
[tools.http]
url = "http://127.0.0.1:9/x"
headers = { Authorization = "Bearer ${env:TOOLSETS_TEST_B}" }
"#;
    let workspace = Workspace::new(manifest);
    let path = workspace.manifest();
    let start = |extra: &[&str], env: &[(&str, &str)]| {
        let mut command = std::process::Command::new(crate::harness::BINARY);
        command
            .arg("--config")
            .arg(&path)
            .args(extra)
            .env_remove("TOOLSETS_TEST_B")
            .envs(env.iter().copied());
        command
    };
    // The control: serving every tool, the unset secret stops the start.
    let output = start(&[], &[])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("TOOLSETS_TEST_B"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Serving `a` only, it is not needed.
    let mut server = Server::start_command(&mut start(&["--toolsets", "a"], &[]));
    server.handshake("2025-11-25");
    assert_eq!(
        names(&server.request("tools/list", json!({}))["result"]),
        ["echo_b", "env_a"]
    );
    let unknown = server.request("tools/call", json!({"name": "call_b", "arguments": {}}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool")),
        "{unknown}"
    );
    // Set, the other set's secret is still redacted from what the served tool returns.
    let secret = "b-secret-7f3Qx9-never-shown";
    let mut server = Server::start_command(&mut start(
        &["--toolsets", "a"],
        &[("TOOLSETS_TEST_B", secret)],
    ));
    server.handshake("2025-11-25");
    let said = text(&server.call("echo_b", json!({"text": secret}))).to_owned();
    assert!(!said.contains(secret), "{said}");
    // Nor does a served command find it in its environment: the unbuilt tool's variable is
    // withheld as a built one's is (its control: a variable no tool references reaches it).
    let mut server = Server::start_command(
        start(&["--toolsets", "a"], &[("TOOLSETS_TEST_B", secret)])
            .env("TOOLSETS_TEST_OTHER", "seen"),
    );
    server.handshake("2025-11-25");
    let environment = text(&server.call("env_a", json!({}))).to_owned();
    assert!(
        environment.contains("TOOLSETS_TEST_OTHER=seen"),
        "{environment}"
    );
    assert!(!environment.contains("TOOLSETS_TEST_B"), "{environment}");
}
