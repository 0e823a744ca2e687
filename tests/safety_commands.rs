//! Regression tests for the safety claims about command tools, each written to break one of
//! them: arrays that would add argv elements, kept outputs that leak disk or point at
//! another call's output, an event line that floods memory, a last message without its
//! newline, processes that leave their group, output past every limit, and a server whose
//! environment a same-user command could read.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, read_pid, sleepers, text, wait_gone};

/// Prints the argv it got (after the program) as a JSON array.
const DUMP_ARGV: &str = "import json, sys; print(json.dumps(sys.argv[1:]))";

fn argv_of(result: &Value) -> Vec<String> {
    serde_json::from_str(text(result)).unwrap_or_else(|_| panic!("not an argv dump: {result}"))
}

#[test]
fn arrays_in_arguments_not_pinned_to_array_never_add_or_remove_elements() {
    let schemas = [
        r#"{"type":"object","properties":{"x":{}},"required":["x"]}"#,
        r#"{"type":"object","properties":{"x":{"type":["string","array"]}},"required":["x"]}"#,
        r#"{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"array"}]}},"required":["x"]}"#,
        r##"{"type":"object","$defs":{"list":{"type":"array"}},"properties":{"x":{"$ref":"#/$defs/list"}},"required":["x"]}"##,
    ];
    let mut manifest = String::new();
    for (index, schema) in schemas.iter().enumerate() {
        manifest.push_str(&format!(
            "[[tools]]\nname = \"argv{index}\"\ninput-schema = '{schema}'\n[tools.command]\nargv = [\"python3\", \"-c\", \"{DUMP_ARGV}\", \"pre-{{x}}\", \"{{x}}\", [\"--x\", \"{{x}}\"]]\n\n\
             [[tools]]\nname = \"script{index}\"\ninput-schema = '{schema}'\n[tools.command]\nscript = 'printf \"%s\\n\" \"$#\"'\nargs = [\"{{x}}\"]\n\n"
        ));
    }
    let workspace = Workspace::new(&manifest);
    let mut server = workspace.serve_legacy();
    let mut tried = 0;
    for index in 0..schemas.len() {
        for value in [
            json!(["--evil", "a"]),
            json!([]),
            json!([["nested"], {"k": 1}]),
        ] {
            let result = server.call(&format!("argv{index}"), json!({"x": value}));
            let argv = argv_of(&result);
            let json_text = value.to_string();
            assert_eq!(
                argv,
                vec![
                    format!("pre-{json_text}"),
                    json_text.clone(),
                    "--x".into(),
                    json_text
                ],
                "schema {index}"
            );
            let result = server.call(&format!("script{index}"), json!({"x": value}));
            assert_eq!(text(&result), "1", "script args of schema {index}");
            tried += 2;
        }
    }
    eprintln!("unpinned arrays: {tried} calls, 0 elements added or removed");

    // `check` says what happens to such values.
    let (code, stderr) = workspace.check();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("`{x}` is not pinned to one type in the input schema"),
        "{stderr}"
    );
}

#[test]
fn an_argument_pinned_to_array_repeats_its_element_per_item() {
    let workspace = Workspace::new(&format!(
        "[[tools]]\nname = \"tags\"\ninput-schema = '{{\"type\":\"object\",\"properties\":{{\"t\":{{\"type\":\"array\",\"items\":{{\"type\":\"string\"}}}}}},\"required\":[\"t\"]}}'\n[tools.command]\nargv = [\"python3\", \"-c\", \"{DUMP_ARGV}\", [\"--tag\", \"{{t}}\"]]\n"
    ));
    let mut server = workspace.serve_legacy();
    let argv = argv_of(&server.call("tags", json!({"t": ["a b", "--c"]})));
    assert_eq!(argv, ["--tag", "a b", "--tag", "--c"]);
    assert!(argv_of(&server.call("tags", json!({"t": []}))).is_empty());
}

#[test]
fn a_last_message_without_a_newline_is_answered() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"hi\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"hello\" }]\n",
    );
    let init = crate::harness::initialize_request();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hi", "arguments": {}}});
    let input = format!(
        "{init}\n{}\n{call}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let output = std::process::Command::new(crate::harness::BINARY)
        .args(["--config", workspace.manifest().to_str().expect("path")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run");
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[1]["result"]["content"][0]["text"], json!("hello"));
}

/// A process that starts `setsid` children (a new session, holding stdout) and exits.
const ESCAPING: &str = r#"
[[tools]]
name = "escape"
[tools.command]
script = 'setsid sh -c "echo \$\$ > escaped.pid; exec sleep 311" & sleep 0.2; (setsid sleep 312 &) ; echo started'
timeout = "20s"

[[tools]]
name = "detach"
[tools.command]
script = 'setsid sh -c "sleep 313 & echo \$! > grandchild.pid; wait" > /dev/null 2>&1 < /dev/null & sleep 0.2; echo detached'
"#;

#[test]
fn processes_that_leave_their_group_are_found_and_ended_with_the_call() {
    let workspace = Workspace::new(ESCAPING);
    let mut server = Server::start_with(&workspace.manifest(), &[], &[]);
    server.handshake("2025-11-25");
    std::fs::create_dir_all(workspace.dir.path()).expect("dir");
    let started = Instant::now();
    // The command runs in the manifest's folder: its pid files land there.
    let result = server.call("escape", json!({}));
    assert_eq!(text(&result), "started");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call waited {:?} for a process that held its stdout",
        started.elapsed()
    );
    let escaped = read_pid(&workspace.path("escaped.pid"));
    assert!(wait_gone(escaped), "the setsid process outlived its call");
    let result = server.call("detach", json!({}));
    assert_eq!(text(&result), "detached");
    let grandchild = read_pid(&workspace.path("grandchild.pid"));
    assert!(
        wait_gone(grandchild),
        "a detached grandchild outlived its call"
    );
    let left: Vec<i32> = ["311", "312", "313"]
        .iter()
        .flat_map(|seconds| sleepers(seconds))
        .collect();
    eprintln!("escaping processes: 3 started, {} left", left.len());
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn output_past_the_drain_limit_is_cut_short_not_a_signal() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"flood\"\n[tools.command]\nscript = 'head -c 300000000 /dev/zero | tr \"\\0\" x'\ntimeout = \"60s\"\n",
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("flood", json!({}));
    assert_eq!(result["isError"], json!(false), "{result}");
    let text = text(&result);
    assert!(
        text.contains("was stopped there"),
        "{}",
        &text[..text.len().min(300)]
    );
    assert!(!text.contains("SIGKILL"));
}

#[test]
fn failed_and_timed_out_calls_leave_no_spooled_output() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"fail\"\n[tools.command]\nscript = 'head -c 3000000 /dev/zero | tr \"\\0\" y; exit 3'\nmax-output = \"1KiB\"\nkeep-output = true\n\n\
         [[tools]]\nname = \"hang\"\n[tools.command]\nscript = 'head -c 3000000 /dev/zero | tr \"\\0\" y; sleep 30'\nmax-output = \"1KiB\"\nkeep-output = true\ntimeout = \"1s\"\n\n\
         [[tools]]\nname = \"keep\"\n[tools.command]\nscript = 'head -c 3000000 /dev/zero | tr \"\\0\" z'\nmax-output = \"1KiB\"\nkeep-output = true\n",
    );
    let tmp = workspace.path("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("TMPDIR", tmp.to_str().expect("path"))],
    );
    server.handshake("2025-11-25");
    for _ in 0..3 {
        assert_eq!(server.call("fail", json!({}))["isError"], json!(true));
    }
    assert_eq!(server.call("hang", json!({}))["isError"], json!(true));
    let kept = server.call("keep", json!({}));
    assert_eq!(kept["content"][1]["type"], json!("resource_link"), "{kept}");
    // Give the timed-out call's supervision its grace period to end.
    std::thread::sleep(Duration::from_millis(2500));
    let files = store_files(&tmp);
    let spools = files
        .iter()
        .filter(|name| name.starts_with("spool-"))
        .count();
    eprintln!("kept-output calls: 5, spool files left: {spools}, stored: {files:?}");
    assert_eq!(spools, 0, "{files:?}");
    assert_eq!(files.len(), 1, "only the kept output stays: {files:?}");
}

/// The files in the server's resource stores under `tmp`.
fn store_files(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .expect("tmp")
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("mcp-serve-resources-")
        })
        .flat_map(|store| std::fs::read_dir(store.path()).expect("store"))
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_newline_free_event_flood_does_not_grow_memory() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"flood\"\n[tools.command]\nscript = 'head -c 50000000 /dev/zero | tr \"\\0\" x > \"$MCP_SERVE_EVENTS\"; echo done'\nevents = true\ntimeout = \"60s\"\n",
    );
    let mut server = workspace.serve_legacy();
    let before_kib = peak_rss_kib(server.pid());
    let params = json!({"name": "flood", "arguments": {}, "_meta": {"progressToken": "p"}});
    let response = server.request("tools/call", params);
    assert_eq!(text(&response["result"]), "done");
    let after_kib = peak_rss_kib(server.pid());
    let growth_kib = after_kib.saturating_sub(before_kib);
    eprintln!(
        "events flood: 50 MB line, server peak RSS {before_kib} KiB before the call, {after_kib} KiB after (+{growth_kib} KiB)"
    );
    // Holding the line would add 50 MB; reading it in bounded chunks adds a few.
    assert!(growth_kib < 12 * 1024, "peak RSS grew by {growth_kib} KiB");
}

/// The process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmHWM")
}

#[test]
fn kept_outputs_survive_a_reload_and_links_never_point_elsewhere() {
    let tools = "[[tools]]\nname = \"chatty\"\n[tools.command]\nscript = 'i=0; while [ $i -lt 2000 ]; do echo \"first $i\"; i=$((i+1)); done'\nmax-output = \"1KiB\"\nkeep-output = true\n";
    let workspace = Workspace::new(tools);
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    server.handshake("2025-11-25");
    let first = server.call("chatty", json!({}));
    let uri = first["content"][1]["uri"]
        .as_str()
        .expect("a link")
        .to_owned();
    std::fs::write(
        workspace.manifest(),
        tools.replace("first", "second") + "\n# changed\n",
    )
    .expect("rewrite");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stderr().contains("reloaded the manifest") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let read = server.request("resources/read", json!({"uri": uri}));
    let contents = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(contents.starts_with("first 0\n"), "{read}");
    let second = server.call("chatty", json!({}));
    let new_uri = second["content"][1]["uri"].as_str().expect("a link");
    assert_ne!(new_uri, uri);
    let read = server.request("resources/read", json!({"uri": new_uri}));
    let contents = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(contents.starts_with("second 0\n"), "{read}");
}

#[test]
fn commands_cannot_read_the_servers_environment_or_the_manifests_secrets() {
    // As an unprivileged user, so that the kernel's same-user rules apply.
    let workspace = Workspace::new(
        "[[tools]]\nname = \"peek\"\n[tools.command]\nscript = 'cat /proc/$PPID/environ >/dev/null 2>&1 && echo readable || echo denied; echo \"key=${API_KEY:-unset}\"'\n\n\
         [[tools]]\nname = \"api\"\n[tools.http]\nurl = \"http://127.0.0.1:9/x\"\nheaders = { X-Key = \"${env:API_KEY}\" }\n",
    );
    let mut command = crate::harness::unprivileged(&workspace);
    let mut server = Server::start_command(
        command
            .args(["--config", workspace.manifest().to_str().expect("path")])
            .env("API_KEY", "s3cret-key"),
    );
    server.handshake("2025-11-25");
    let result = server.call("peek", json!({}));
    assert_eq!(text(&result), "denied\nkey=unset", "{result}");
}
