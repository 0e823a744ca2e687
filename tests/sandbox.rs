//! `[tools.sandbox]` attacked with real commands: a planted secret it must not read, places
//! it must not write, a port it must not reach, a fork bomb, a memory hog, a busy loop, a
//! file too large, system calls no tool needs, a signal to the server. Each attack also runs
//! unconfined (the control), so that a test that passes proves the sandbox did it.
//!
//! Landlock's network rules need ABI 4 and its signal scope ABI 6; a kernel without them
//! skips those parts, saying so (and `check` says what it cannot enforce).

use std::net::TcpListener;

use serde_json::{Value, json};

use crate::harness::Feature;
use crate::harness::{Server, Workspace, python, run, text, unprivileged};

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// The Landlock ABI this kernel gives a sandboxed tool, as `check --format json` reports it.
pub(crate) fn landlock_abi() -> i64 {
    let workspace =
        Workspace::new("[[tools]]\nname = \"t\"\ncommand.argv = [\"true\"]\nsandbox.read = []\n");
    let (_, stdout, stderr) = run(
        &[
            "check",
            "--format",
            "json",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ],
        workspace.dir.path(),
    );
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
    report["sandbox"]["landlock_abi"]
        .as_i64()
        .expect("landlock_abi")
}

/// A workspace with `data/` (readable), a secret beside it, and `out/` (writable).
fn planted(manifest: &str) -> Workspace {
    let workspace = Workspace::new(manifest);
    std::fs::create_dir(workspace.path("data")).expect("data");
    std::fs::write(workspace.path("data/notes.txt"), "public notes\n").expect("notes");
    std::fs::write(workspace.path("secret.txt"), "the secret\n").expect("secret");
    std::fs::create_dir(workspace.path("out")).expect("out");
    std::os::unix::fs::symlink(workspace.path("secret.txt"), workspace.path("data/link"))
        .expect("symlink");
    workspace
}

const FILES: &str = r#"
[[tools]]
name = "read"
arguments.path = { type = "string" }
command.argv = ["cat", "--", "{path}"]
sandbox.read = ["./data"]

[[tools]]
name = "read-unconfined"
arguments.path = { type = "string" }
command.argv = ["cat", "--", "{path}"]

[[tools]]
name = "write"
arguments.path = { type = "string" }
command.script = 'echo written > "$1" && echo ok'
command.args = ["{path}"]
sandbox.write = ["./out", "{temp-dir}"]

[[tools]]
name = "write-temp"
command.script = 'echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x"'
sandbox.write = ["{temp-dir}"]
"#;

#[test]
fn a_sandboxed_tool_reads_and_writes_only_beneath_its_paths() {
    if landlock_abi() < 1 {
        crate::harness::skip(Feature::Landlock(1), "this kernel has no Landlock");
        return;
    }
    let workspace = planted(FILES);
    let mut server = workspace.serve_legacy();
    let dir = workspace.dir.path().display().to_string();

    let allowed = server.call("read", json!({"path": format!("{dir}/data/notes.txt")}));
    assert_eq!(text(&allowed), "public notes", "{allowed}");
    let mut denied = 0;
    for path in [
        format!("{dir}/secret.txt"),
        format!("{dir}/data/../secret.txt"),
        format!("{dir}/data/link"),
        format!("{dir}/tools.toml"),
        "/etc/shadow".to_owned(),
        "/proc/self/environ".to_owned(),
        "/root/.bash_history".to_owned(),
    ] {
        let result = server.call("read", json!({"path": path}));
        assert!(is_error(&result), "read {path}: {result}");
        assert!(
            !text(&result).contains("the secret"),
            "read {path}: {result}"
        );
        denied += 1;
    }
    // The control: the same command, unconfined, reads the secret.
    let control = server.call(
        "read-unconfined",
        json!({"path": format!("{dir}/secret.txt")}),
    );
    assert_eq!(text(&control), "the secret", "{control}");

    let written = server.call("write", json!({"path": format!("{dir}/out/a.txt")}));
    assert_eq!(text(&written), "ok", "{written}");
    assert!(workspace.path("out/a.txt").exists());
    for path in [
        format!("{dir}/escaped.txt"),
        format!("{dir}/data/new.txt"),
        format!("{dir}/tools.toml"),
        format!("/tmp/mcp-serve-sandbox-escape-{}", std::process::id()),
    ] {
        let result = server.call("write", json!({"path": path}));
        assert!(is_error(&result), "write {path}: {result}");
        // Landlock refuses the write, or the read-only mount around the write paths first.
        assert!(
            text(&result).contains("Permission denied")
                || text(&result).contains("Read-only file system"),
            "write {path}: {result}"
        );
        denied += 1;
    }
    assert!(!workspace.path("escaped.txt").exists());
    assert!(!workspace.path("data/new.txt").exists());
    assert!(
        std::fs::read_to_string(workspace.manifest())
            .expect("manifest")
            .contains("[[tools]]"),
        "the manifest was overwritten"
    );
    let scratch = server.call("write-temp", json!({}));
    assert_eq!(text(&scratch), "scratch", "{scratch}");
    eprintln!("files: 2 allowed, {denied} denied, control read the secret");
}

#[test]
fn a_sandboxed_tool_connects_only_to_allowed_ports() {
    if landlock_abi() < 4 {
        crate::harness::skip(
            Feature::Landlock(4),
            "TCP rules need Landlock ABI 4 (Linux 6.7)",
        );
        return;
    }
    let allowed = TcpListener::bind("127.0.0.1:0").expect("listener");
    let other = TcpListener::bind("127.0.0.1:0").expect("listener");
    let allowed_port = allowed.local_addr().expect("addr").port();
    let other_port = other.local_addr().expect("addr").port();
    let (python, prefix) = python();
    let connect = r#"argv = ["PYTHON", "-c", "import socket, sys\ntry:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close(); print('connected')\nexcept OSError as e:\n    print('refused', e.errno); sys.exit(3)", "{port}"]"#;
    let udp = r#"argv = ["PYTHON", "-c", "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9)); print('sent')\nexcept OSError as e:\n    print('refused', e.errno)"]"#;
    // Ways around a port rule: a UNIX socket, a raw socket, Multipath TCP, TCP Fast Open.
    let others = r#"argv = ["PYTHON", "-c", "import socket\nfor name, make in [('unix', lambda: socket.socket(socket.AF_UNIX)), ('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)), ('mptcp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)), ('fastopen', lambda: socket.socket().sendto(b'x', 0x20000000, ('127.0.0.1', PORT)))]:\n    try:\n        make(); print(name, 'made')\n    except OSError as e:\n        print(name, e.errno)"]"#;
    let (connect, udp) = (
        connect.replace("PYTHON", &python),
        udp.replace("PYTHON", &python),
    );
    let others = others
        .replace("PYTHON", &python)
        .replace("PORT", &other_port.to_string());
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "listed"
arguments.port = {{ type = "integer" }}
[tools.command]
{connect}
[tools.sandbox]
execute = ["{prefix}"]
network = ["127.0.0.1:{allowed_port}"]

[[tools]]
name = "offline"
arguments.port = {{ type = "integer" }}
[tools.command]
{connect}
[tools.sandbox]
execute = ["{prefix}"]
network = false

[[tools]]
name = "listed-others"
[tools.command]
{others}
[tools.sandbox]
execute = ["{prefix}"]
network = ["127.0.0.1:{allowed_port}"]

[[tools]]
name = "offline-udp"
[tools.command]
{udp}
[tools.sandbox]
execute = ["{prefix}"]
network = false

[[tools]]
name = "unconfined"
arguments.port = {{ type = "integer" }}
[tools.command]
{connect}
"#
    ));
    let mut server = workspace.serve_legacy();
    let call =
        |server: &mut Server, tool: &str, port: u16| server.call(tool, json!({"port": port}));

    let result = call(&mut server, "listed", allowed_port);
    assert_eq!(text(&result), "connected", "{result}");
    let result = call(&mut server, "listed", other_port);
    assert!(is_error(&result), "{result}");
    assert!(
        text(&result).contains("refused 13"),
        "EACCES expected: {result}"
    );
    let result = call(&mut server, "offline", allowed_port);
    assert!(is_error(&result), "{result}");
    assert!(text(&result).contains("refused"), "{result}");
    let result = server.call("offline-udp", json!({}));
    assert_eq!(
        text(&result),
        "refused 1",
        "seccomp denies the socket (EPERM): {result}"
    );
    let result = server.call("listed-others", json!({}));
    assert_eq!(
        text(&result),
        "unix 1\nraw 1\nmptcp 1\nfastopen 1",
        "each denied by seccomp (EPERM): {result}"
    );
    let control = call(&mut server, "unconfined", other_port);
    assert_eq!(text(&control), "connected", "{control}");
    eprintln!(
        "network: 1 port reached; 2 connections, 1 datagram, and UNIX, raw, MPTCP and Fast Open sockets denied; control connected"
    );
}

#[test]
fn limits_stop_a_memory_hog_a_busy_loop_and_a_large_file_with_their_own_message() {
    let (python, prefix) = python();
    let workspace = Workspace::new(
        &r#"
[[tools]]
name = "hog"
command.argv = ["PYTHON", "-c", "b = bytearray(256 * 1024 * 1024); print(len(b))"]
sandbox = { memory = "64MiB", execute = ["PREFIX"] }

[[tools]]
name = "hog-unconfined"
command.argv = ["PYTHON", "-c", "b = bytearray(256 * 1024 * 1024); print(len(b))"]

[[tools]]
name = "spin"
command.script = 'while :; do :; done'
command.timeout = "60s"
sandbox = { cpu = "1s" }

[[tools]]
name = "big-file"
command.script = 'exec head -c 3000000 /dev/zero > "$TMPDIR/big"'
sandbox = { file-size = "1MiB", write = ["{temp-dir}"] }

[[tools]]
name = "many-files"
command.argv = ["PYTHON", "-c", "fs = [open('/dev/null') for _ in range(200)]; print(len(fs))"]
sandbox = { open-files = 32, execute = ["PREFIX"] }
"#
        .replace("PYTHON", &python)
        .replace("PREFIX", &prefix),
    );
    let mut server = workspace.serve_legacy();

    let result = server.call("hog", json!({}));
    assert!(is_error(&result), "{result}");
    assert!(
        text(&result).contains("exceeded its memory limit of 64 MiB"),
        "{result}"
    );
    let control = server.call("hog-unconfined", json!({}));
    assert_eq!(text(&control), "268435456", "{control}");

    let started = std::time::Instant::now();
    let result = server.call("spin", json!({}));
    assert!(
        text(&result).contains("exceeded its CPU time limit of 1s"),
        "{result}"
    );
    assert!(
        started.elapsed().as_secs() < 30,
        "the CPU limit, not the timeout"
    );

    let result = server.call("big-file", json!({}));
    assert!(
        text(&result).contains("exceeded its file size limit of 1 MiB"),
        "{result}"
    );
    let result = server.call("many-files", json!({}));
    assert!(
        text(&result).contains("exceeded its limit of 32 open files"),
        "{result}"
    );
    eprintln!("limits: memory, cpu, file-size and open-files each stopped with their message");
}

#[test]
fn a_fork_bomb_stops_at_processes() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "bomb"
command.script = 'i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; echo "all $i started"'
command.timeout = "20s"
sandbox = { processes = 16 }

[[tools]]
name = "few"
command.script = 'for i in 1 2 3 4; do sleep 0.1 & done; wait; echo fine'
sandbox = { processes = 16 }
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 0, "{stderr}");
    // As root the kernel exempts the server from RLIMIT_NPROC: `check` says so, and the
    // attack runs with the server as an unprivileged user, as it should be deployed.
    if crate::harness::is_root() {
        assert!(
            stderr.contains("NOT enforced: processes 16 (the kernel exempts root"),
            "{stderr}"
        );
    }
    let mut server = Server::start_command(
        unprivileged(&workspace).args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    let result = server.call("bomb", json!({}));
    if server
        .stderr()
        .contains("needs unprivileged user namespaces")
    {
        crate::harness::skip(
            Feature::UserNamespaces,
            "this kernel gives users no user namespaces",
        );
        return;
    }
    assert!(is_error(&result), "{result}");
    assert!(
        text(&result).contains("exceeded its limit of 16 processes"),
        "{result}"
    );
    let result = server.call("few", json!({}));
    assert_eq!(text(&result), "fine", "a few processes still run: {result}");
    eprintln!("processes: the bomb stopped at 16, a tool with 4 children still runs");
}

#[test]
fn seccomp_and_scopes_deny_namespaces_debugging_and_signals_to_the_server() {
    let abi = landlock_abi();
    let (python, prefix) = python();
    // Each probe prints `name=status`: unshare(2) through unshare(1); PTRACE_SEIZE of a
    // child the program forked itself (which Yama allows, so only seccomp stops it); a
    // signal to the server, its parent.
    let probes = r#"
unshare --user true 2>/dev/null; echo "unshare=$?"
kill -0 $PPID 2>/dev/null; echo "signal=$?"
PYTHON -c "
import ctypes, os, time
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
print('ptrace=%d' % ctypes.CDLL(None, use_errno=True).ptrace(0x4206, child, 0, 0))
os.kill(child, 9)
"
"#
    .replace("PYTHON", &python);
    let workspace = Workspace::new(&format!(
        "[[tools]]\nname = \"escape\"\ncommand.script = '''{probes}'''\nsandbox = {{ execute = [\"{prefix}\"] }}\n\n\
         [[tools]]\nname = \"escape-unconfined\"\ncommand.script = '''{probes}'''\n"
    ));
    // Without the call's own PID namespace, where `$PPID` is the server (in one, the server
    // is out of sight: `sandbox_escapes::nothing_a_sandboxed_call_started_outlives_it`).
    let mut server = Server::start_command(
        std::process::Command::new(crate::harness::BINARY)
            .env("MCP_SERVE_PID_NAMESPACES", "0")
            .arg("--config")
            .arg(workspace.manifest()),
    );
    server.handshake("2025-11-25");
    let result = server.call("escape", json!({}));
    let output = text(&result);
    assert!(output.contains("unshare=1"), "{result}");
    assert!(output.contains("ptrace=-1"), "{result}");
    if abi >= 6 {
        assert!(output.contains("signal=1"), "{result}");
    } else {
        crate::harness::skip(
            Feature::Landlock(6),
            "signal scope: needs Landlock ABI 6 (Linux 6.12)",
        );
    }
    let control = server.call("escape-unconfined", json!({}));
    assert_eq!(
        text(&control),
        "unshare=0\nsignal=0\nptrace=0",
        "the control does all three: {control}"
    );
    eprintln!("seccomp: unshare and ptrace denied; signal to the server denied (ABI {abi})");
}

#[test]
fn a_required_sandbox_refuses_to_serve_on_a_kernel_without_what_it_needs() {
    let secret_reader = |required: bool| {
        format!(
            "[[tools]]\nname = \"read\"\narguments.path = {{ type = \"string\" }}\ncommand.argv = [\"cat\", \"--\", \"{{path}}\"]\n[tools.sandbox]\nread = [\"./data\"]\nrequired = {required}\n"
        )
    };
    // Simulated: a kernel without Landlock.
    let workspace = planted(&secret_reader(true));
    let mut check = std::process::Command::new(crate::harness::BINARY);
    let output = check
        .args([
            "check",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ])
        .env("MCP_SERVE_LANDLOCK_ABI", "0")
        .output()
        .expect("check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the sandbox is required, but this kernel cannot enforce: file rules (the kernel has no Landlock)"),
        "{stderr}"
    );
    let server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("MCP_SERVE_LANDLOCK_ABI", "0")],
    );
    let (status, _) = server.close();
    assert_eq!(status.code(), Some(2), "the server refuses to serve");

    // Not required: it serves, says what it cannot enforce, and runs with less.
    let workspace = planted(&secret_reader(false));
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("MCP_SERVE_LANDLOCK_ABI", "0")],
    );
    server.handshake("2025-11-25");
    let dir = workspace.dir.path().display().to_string();
    let result = server.call("read", json!({"path": format!("{dir}/secret.txt")}));
    assert_eq!(text(&result), "the secret", "unenforced: {result}");
    assert!(
        server
            .stderr()
            .contains("sandbox: not enforced on this kernel: file rules"),
        "{}",
        server.stderr()
    );

    // An older ABI: TCP rules need 4.
    let workspace = Workspace::new(
        "[[tools]]\nname = \"t\"\ncommand.argv = [\"true\"]\nsandbox = { network = [\"127.0.0.1:80\"], required = true }\n",
    );
    let output = std::process::Command::new(crate::harness::BINARY)
        .args([
            "check",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ])
        .env("MCP_SERVE_LANDLOCK_ABI", "3")
        .output()
        .expect("check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs Landlock ABI 4"), "{stderr}");
}

#[test]
fn a_tool_sandbox_may_only_narrow_the_servers() {
    let workspace = planted(
        r#"
[server.sandbox]
read = ["./data"]
network = ["127.0.0.1:8080"]
memory = "256MiB"
required = false

[[tools]]
name = "inherits"
arguments.path = { type = "string" }
command.argv = ["cat", "--", "{path}"]

[[tools]]
name = "wider"
command.argv = ["true"]
[tools.sandbox]
read = [".", "{path}"]
write = ["./out"]
network = true
memory = "1GiB"

[[tools]]
name = "api"
http.url = "http://127.0.0.1:9/"
sandbox = { network = false }

[[tools]]
name = "preload"
arguments.lib = { type = "string" }
command.argv = ["true"]
command.env = { LD_PRELOAD = "{lib}" }
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "is outside the server's sandbox, which lets tools read only beneath",
        "`{path}`: sandbox paths are fixed at load",
        "which lets tools write only beneath: /dev/null, /dev/full",
        "`network` widens the server's sandbox",
        "`memory` widens the server's sandbox",
        "a sandbox confines commands; this tool has no `[tools.command]`",
        "`LD_PRELOAD` tells the dynamic loader what code to run: an argument can never fill it",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }

    // What a tool leaves out, it inherits.
    let workspace = planted(
        "[server.sandbox]\nread = [\"./data\"]\n\n[[tools]]\nname = \"inherits\"\narguments.path = { type = \"string\" }\ncommand.argv = [\"cat\", \"--\", \"{path}\"]\n",
    );
    if landlock_abi() >= 1 {
        let mut server = workspace.serve_legacy();
        let dir = workspace.dir.path().display().to_string();
        let result = server.call("inherits", json!({"path": format!("{dir}/secret.txt")}));
        assert!(is_error(&result), "{result}");
        let result = server.call("inherits", json!({"path": format!("{dir}/data/notes.txt")}));
        assert_eq!(text(&result), "public notes", "{result}");
    }
}

#[test]
fn the_read_only_recipe_in_the_docs_works_as_written() {
    let docs = std::fs::read_to_string(crate::harness::repo_root().join("docs/security.md"))
        .expect("docs/security.md");
    let recipe = docs
        .split("#### Recipe: a read-only tool")
        .nth(1)
        .and_then(|rest| rest.split("```toml\n").nth(1))
        .and_then(|block| block.split("\n```").next())
        .expect("the recipe's TOML block");
    let workspace = Workspace::new(recipe);
    std::fs::create_dir(workspace.path("notes")).expect("notes");
    std::fs::write(workspace.path("notes/todo.md"), "buy milk\n").expect("note");
    std::fs::write(workspace.path("private.txt"), "buy gold\n").expect("private");
    // `required = true` with `processes`: as root the kernel cannot count them, so the
    // recipe is served as a user, the way it is meant to be.
    let mut server = Server::start_command(
        unprivileged(&workspace).args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    let result = server.call("search-notes", json!({"pattern": "buy"}));
    assert_eq!(text(&result), "notes/todo.md:1:buy milk", "{result}");
    let result = server.call("search-notes", json!({"pattern": "gold"}));
    assert_eq!(text(&result), "", "nothing outside notes/: {result}");
    drop(server);

    // The recipe's sandbox, with a program that reads what it is told, beside the same
    // program unconfined: the sandbox, not the fixed argv, keeps `private.txt` out.
    let reader = recipe.replace(
        r#"command.argv = ["grep", "-rn", "-e", "{pattern}", "--", "notes"]"#,
        r#"command.argv = ["cat", "--", "{pattern}"]"#,
    );
    assert_ne!(reader, recipe, "the recipe's argv line moved");
    let unconfined = reader
        .split("[tools.sandbox]")
        .next()
        .expect("before the sandbox")
        .replace("search-notes", "unconfined");
    std::fs::write(workspace.manifest(), format!("{reader}\n{unconfined}")).expect("manifest");
    let mut server = Server::start_command(
        unprivileged(&workspace).args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    let denied = server.call("search-notes", json!({"pattern": "private.txt"}));
    // (The recipe's `success-codes = [0, 1]` makes cat's failure an empty answer.)
    assert_eq!(text(&denied), "", "{denied}");
    let allowed = server.call("search-notes", json!({"pattern": "notes/todo.md"}));
    assert_eq!(text(&allowed), "buy milk", "{allowed}");
    let control = server.call("unconfined", json!({"pattern": "private.txt"}));
    assert_eq!(text(&control), "buy gold", "{control}");
}

#[test]
fn a_symlink_planted_in_a_sandbox_path_after_load_is_refused_not_followed() {
    if landlock_abi() < 1 {
        crate::harness::skip(Feature::Landlock(1), "this kernel has no Landlock");
        return;
    }
    let workspace = planted(
        "[[tools]]\nname = \"read\"\narguments.path = { type = \"string\" }\ncommand.argv = [\"cat\", \"--\", \"{path}\"]\nsandbox.read = [\"./data/inputs\"]\n",
    );
    std::fs::create_dir(workspace.path("data/inputs")).expect("inputs");
    std::fs::write(workspace.path("data/inputs/a.txt"), "input\n").expect("input");
    let mut server = workspace.serve_legacy();
    let dir = workspace.dir.path().display().to_string();
    let result = server.call("read", json!({"path": format!("{dir}/data/inputs/a.txt")}));
    assert_eq!(text(&result), "input", "{result}");
    // Another tool (or anything of the server's user) swaps the folder for a link to the
    // workspace, where the secret is.
    std::fs::remove_dir_all(workspace.path("data/inputs")).expect("remove");
    std::os::unix::fs::symlink(workspace.dir.path(), workspace.path("data/inputs"))
        .expect("symlink");
    let result = server.call(
        "read",
        json!({"path": format!("{dir}/data/inputs/secret.txt")}),
    );
    assert!(is_error(&result), "{result}");
    assert!(
        text(&result).contains("has become a symlink since the server loaded its manifest"),
        "{result}"
    );
}

#[test]
fn check_prints_the_abi_and_warns_of_a_program_its_sandbox_cannot_start() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"bare\"\ncommand.argv = [\"cat\", \"/dev/null\"]\nsandbox = { system = false }\n",
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.starts_with("sandbox: Landlock ABI "), "{stderr}");
    assert!(
        stderr.contains("  tool `bare`\n    enforced: files: read nothing; write nothing; runs `"),
        "{stderr}"
    );
    assert!(
        stderr.contains("which its sandbox cannot execute: add its folder to `execute`")
            && stderr.contains("[sandbox-program]"),
        "{stderr}"
    );
    // And indeed it cannot start: the dynamic loader is not executable in its sandbox.
    if landlock_abi() >= 1 {
        let mut server = workspace.serve_legacy();
        let result = server.call("bare", json!({}));
        // The loader's name depends on the machine (`/lib64/ld-linux-x86-64.so.2`).
        let said = text(&result);
        assert!(
            said.starts_with("`cat` could not start in its sandbox: it denied `/lib")
                && said.contains("/ld-")
                && said.ends_with(
                    "(Permission denied (os error 13)); add `system = true` to `[tools.sandbox]`"
                ),
            "{result}"
        );
    }
}
