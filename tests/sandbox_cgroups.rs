//! A cgroup v2 per sandboxed call, where the machine delegates one: `pids.max` caps a fork
//! bomb (root included, whom `RLIMIT_NPROC` exempts), `memory.max` kills an allocation that
//! `RLIMIT_DATA` does not see (shared memory), and the call's cgroup is gone after it. The
//! controls: the same calls with no limit, and with cgroups turned off
//! (`MCP_SERVE_CGROUPS=0`), succeed. Without delegation the machine says why, and the test
//! says it skipped.

use serde_json::{Value, json};

use crate::harness::Feature;
use crate::harness::{BINARY, Server, Workspace, python, text};

/// Touches 256 MiB of shared anonymous memory, which `RLIMIT_DATA` does not count.
const SHARED_HOG: &str = "import mmap\nm = mmap.mmap(-1, 256 << 20)\nfor i in range(0, 256 << 20, 4096):\n    m[i] = 1\nprint('touched', len(m))";

fn manifest() -> String {
    let (python, prefix) = python();
    let hog = serde_json::to_string(SHARED_HOG).expect("json");
    format!(
        r#"
[[tools]]
name = "bomb"
command.script = 'i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; echo "all $i started"'
command.timeout = "30s"
sandbox = {{ processes = 16 }}

[[tools]]
name = "few"
command.script = 'for i in 1 2 3 4; do sleep 0.1 & done; wait; echo fine'
sandbox = {{ processes = 16 }}

[[tools]]
name = "shared-hog"
command.argv = ["{python}", "-c", {hog}]
sandbox = {{ memory = "64MiB", execute = ["{prefix}"] }}

[[tools]]
name = "shared-hog-unlimited"
command.argv = ["{python}", "-c", {hog}]
sandbox = {{ execute = ["{prefix}"] }}
"#
    )
}

fn check(workspace: &Workspace, cgroups: Option<&str>) -> Value {
    let mut command = std::process::Command::new(BINARY);
    command
        .args(["check", "--format", "json", "--config"])
        .arg(workspace.manifest());
    if let Some(value) = cgroups {
        command.env("MCP_SERVE_CGROUPS", value);
    }
    let output = command.output().expect("check");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)))
}

/// The call cgroups the server left in its cgroup folder.
fn leftovers(base: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("call-") || name.starts_with("mcp-serve-") {
            let inner = leftovers(&entry.path().display().to_string());
            names.extend(inner);
            if name.starts_with("call-") {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn each_call_gets_a_cgroup_with_its_limits_where_one_is_delegated() {
    let workspace = Workspace::new(&manifest());
    // `check` always says whether calls get cgroups, and why not.
    let off = check(&workspace, Some("0"));
    assert_eq!(off["sandbox"]["cgroups"], json!(false), "{off}");
    assert_eq!(
        off["sandbox"]["cgroups_text"],
        json!("no (turned off by MCP_SERVE_CGROUPS)")
    );
    // The gap a cgroup closes: RLIMIT_DATA alone does not count shared memory, so without
    // cgroups a call with `memory = "64MiB"` touches 256 MiB of it.
    let mut server = Server::start_with(&workspace.manifest(), &[], &[("MCP_SERVE_CGROUPS", "0")]);
    server.handshake("2025-11-25");
    let control = server.call("shared-hog", json!({}));
    assert_eq!(text(&control), "touched 268435456", "{control}");
    drop(server);

    let report = check(&workspace, None);
    let said = report["sandbox"]["cgroups_text"]
        .as_str()
        .expect("cgroups_text");
    if report["sandbox"]["cgroups"] != json!(true) {
        assert!(said.starts_with("no ("), "{said}");
        crate::harness::skip(
            Feature::Cgroups,
            &format!("this machine delegates no cgroup v2 to the server: {said}"),
        );
        return;
    }
    let base = said
        .split('`')
        .nth(1)
        .expect("the delegated folder")
        .to_owned();
    let tool = &report["sandbox"]["tools"]["bomb"]["enforced"];
    assert!(
        tool.to_string()
            .contains("processes 16 (the call's cgroup pids.max)"),
        "{tool}"
    );

    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let result = server.call("bomb", json!({}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        text(&result).contains("exceeded its limit of 16 processes"),
        "{result}"
    );
    let result = server.call("few", json!({}));
    assert_eq!(text(&result), "fine", "{result}");
    let result = server.call("shared-hog", json!({}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        text(&result).contains("exceeded its memory limit of 64 MiB"),
        "{result}"
    );
    let control = server.call("shared-hog-unlimited", json!({}));
    assert_eq!(text(&control), "touched 268435456", "{control}");
    assert_eq!(
        leftovers(&base),
        Vec::<String>::new(),
        "every call's cgroup removed"
    );
    eprintln!(
        "cgroups: a fork bomb stopped at pids.max 16, 256 MiB of shared memory killed at memory.max 64 MiB, no call cgroup left; controls (no limit, cgroups off) ran"
    );
}
