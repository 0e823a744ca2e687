//! The ways around `[tools.sandbox]` that its rules do not name, attacked: a descriptor the
//! server inherited, metadata changes (`chmod`, `utime`, xattr, `chown`) outside the write
//! paths, a listening socket under a port list, and another process's priority. Each attack
//! also runs unconfined (the control), so that a pass proves the sandbox did it.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::Feature;
use crate::harness::{BINARY, Server, Workspace, is_root, python, run, text, unprivileged};

fn call_text(server: &mut Server, tool: &str) -> String {
    let result: Value = server.call(tool, json!({}));
    text(&result).to_owned()
}

/// A tool and its unconfined twin, running the same Python.
fn twins(name: &str, script: &str, sandbox: &str) -> String {
    let (python, prefix) = python();
    let argv = json!([python, "-c", script]).to_string();
    format!(
        "[[tools]]\nname = \"{name}\"\ncommand.argv = {argv}\n[tools.sandbox]\nexecute = [{prefix:?}]\n{sandbox}\n\n\
         [[tools]]\nname = \"{name}-unconfined\"\ncommand.argv = {argv}\n\n"
    )
}

#[test]
fn descriptors_the_server_inherited_are_closed_before_the_program_runs() {
    let script = "import os\nfor fd in (3, 9):\n    try:\n        print(fd, os.read(fd, 100).decode().strip())\n    except OSError as e:\n        print(fd, 'closed', e.errno)";
    let workspace = Workspace::new(&twins(
        "peek",
        script,
        "read = [\"./data\"]\nnetwork = false",
    ));
    std::fs::create_dir(workspace.path("data")).expect("data");
    let secret = workspace.path("secret.txt");
    std::fs::write(&secret, "the secret\n").expect("secret");
    // A shell wrapper leaves descriptors 3 and 9 open on the secret, not close-on-exec, as a
    // host, a supervisor or a wrapper script can.
    let mut server = Server::start_command(
        Command::new("sh")
            .args(["-c", "exec 3<\"$1\" 9<\"$1\"; shift; exec \"$@\"", "sh"])
            .arg(&secret)
            .arg(BINARY)
            .arg("--config")
            .arg(workspace.manifest()),
    );
    server.handshake("2025-11-25");
    let confined = call_text(&mut server, "peek");
    let ebadf = libc_ebadf();
    assert!(
        confined.contains(&format!("3 closed {ebadf}"))
            && confined.contains(&format!("9 closed {ebadf}")),
        "{confined}"
    );
    assert!(!confined.contains("the secret"), "{confined}");
    // The control: unconfined, the program inherits the descriptor and reads the secret.
    let control = call_text(&mut server, "peek-unconfined");
    assert!(control.contains("3 the secret"), "{control}");
    eprintln!("descriptors: 2 attacks, 2 denied, the control read the secret");
}

const fn libc_ebadf() -> i32 {
    9
}

/// Tries each metadata change on each path and prints `op path changed|refused ERRNO`.
const METADATA: &str = "import os, sys\nfor path in sys.argv[1:]:\n    for name, op in [('chmod', lambda p: os.chmod(p, 0o600)), ('utime', lambda p: os.utime(p, (0, 0))), ('xattr', lambda p: os.setxattr(p, 'user.mcp', b'x')), ('chown', lambda p: os.chown(p, os.getuid(), os.getgid()))]:\n        try:\n            op(path); print(name, path, 'changed')\n        except OSError as e:\n            print(name, path, 'refused', e.errno)";

/// `system`: the system's Python, which a user other than root can run (the tests' own may
/// live under /root).
fn metadata_workspace(system: bool) -> Workspace {
    let (python, prefix) = if system {
        ("/usr/bin/python3".to_owned(), "/usr".to_owned())
    } else {
        python()
    };
    let tool = |name: &str, paths: &[&str], sandbox: Option<&str>| {
        let mut argv = vec![python.clone(), "-c".into(), METADATA.into()];
        argv.extend(paths.iter().map(|path| (*path).to_owned()));
        let mut text = format!(
            "[[tools]]\nname = \"{name}\"\ncommand.argv = {}\n",
            json!(argv)
        );
        if let Some(sandbox) = sandbox {
            text.push_str(&format!(
                "[tools.sandbox]\nexecute = [{prefix:?}]\n{sandbox}\n"
            ));
        }
        text + "\n"
    };
    let manifest = tool(
        "meta",
        &["tools.toml", "secret.txt", "out/mine.txt"],
        Some("read = [\".\"]\nwrite = [\"./out\"]"),
    ) + &tool("meta-unconfined", &["control.txt"], None);
    let workspace = Workspace::new(&manifest);
    std::fs::create_dir(workspace.path("out")).expect("out");
    for name in ["secret.txt", "out/mine.txt", "control.txt"] {
        std::fs::write(workspace.path(name), "x\n").expect("file");
    }
    workspace
}

/// The file's mode and modification time.
fn stamp(workspace: &Workspace, name: &str) -> (u32, i64) {
    let meta = std::fs::metadata(workspace.path(name)).expect("metadata");
    (meta.permissions().mode() & 0o7777, meta.mtime())
}

fn attack_metadata(workspace: &Workspace, server: &mut Server, outside_refused: i32) -> usize {
    let before: Vec<_> = ["tools.toml", "secret.txt"]
        .map(|name| stamp(workspace, name))
        .into();
    let confined = call_text(server, "meta");
    let mut denied = 0;
    for path in ["tools.toml", "secret.txt"] {
        for op in ["chmod", "utime", "xattr", "chown"] {
            let line = format!("{op} {path} refused {outside_refused}");
            assert!(confined.contains(&line), "{line}: {confined}");
            denied += 1;
        }
    }
    let after: Vec<_> = ["tools.toml", "secret.txt"]
        .map(|name| stamp(workspace, name))
        .into();
    assert_eq!(before, after, "a file outside the write paths changed");
    // The control: unconfined, each change is made.
    let control = call_text(server, "meta-unconfined");
    for op in ["chmod", "utime", "xattr", "chown"] {
        assert!(
            control.contains(&format!("{op} control.txt changed")),
            "{control}"
        );
    }
    assert_eq!(stamp(workspace, "control.txt"), (0o600, 0));
    eprintln!("metadata: {denied} attacks denied; the control changed its file 4 times");
    // Inside the write paths, the changes are the tool's to make (with the mounts).
    usize::from(confined.contains("chmod out/mine.txt changed"))
}

#[test]
fn metadata_changes_outside_the_write_paths_are_refused() {
    const EROFS: i32 = 30;
    const EPERM: i32 = 1;
    // As root, with a mount namespace of the call's own.
    let workspace = metadata_workspace(false);
    let mut server = workspace.serve_legacy();
    assert_eq!(attack_metadata(&workspace, &mut server, EROFS), 1);
    let inside = call_text(&mut server, "meta");
    for op in ["chmod", "utime", "xattr", "chown"] {
        assert!(
            inside.contains(&format!("{op} out/mine.txt changed")),
            "{inside}"
        );
    }

    // As a user, through a user namespace.
    let workspace = metadata_workspace(true);
    if is_root() {
        for entry in walk(workspace.dir.path()) {
            std::os::unix::fs::chown(&entry, Some(65534), Some(65534)).expect("chown");
        }
    }
    let mut server = Server::start_command(
        unprivileged(&workspace).args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    assert_eq!(attack_metadata(&workspace, &mut server, EROFS), 1);

    // Without mount namespaces, seccomp refuses them everywhere, the write paths too, and
    // `check` says so.
    let workspace = metadata_workspace(false);
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("MCP_SERVE_MOUNT_NAMESPACES", "0")],
    );
    server.handshake("2025-11-25");
    assert_eq!(attack_metadata(&workspace, &mut server, EPERM), 0);
    let inside = call_text(&mut server, "meta");
    assert!(
        inside.contains(&format!("chmod out/mine.txt refused {EPERM}")),
        "{inside}"
    );
    let mut check = Command::new(BINARY);
    let output = check
        .args(["check", "--config"])
        .arg(workspace.manifest())
        .env("MCP_SERVE_MOUNT_NAMESPACES", "0")
        .env("NO_COLOR", "1")
        .output()
        .expect("check");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("no chmod, chown, utime or xattr anywhere, the write paths too"),
        "{said}"
    );
    let (_, stdout, stderr) = run(
        &[
            "check",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ],
        workspace.dir.path(),
    );
    let said = stdout + &stderr;
    assert!(
        said.contains("everything but the write paths mounted read-only"),
        "{said}"
    );
    // The tests' server has the small trampoline beside it, and uses it.
    assert!(
        said.contains(&format!(
            "commands start through {}",
            env!("CARGO_BIN_EXE_mcp-serve-sandbox")
        )),
        "{said}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_listening_socket_is_refused_unless_the_network_is_open() {
    // `listen` without `bind` auto-binds a port on every interface, which Landlock's bind
    // rule never sees; `bind` then `listen` is Landlock's to refuse.
    let script = "import socket\nfor name, make in [('listen', lambda: socket.socket().listen()), ('bind', lambda: socket.create_server(('127.0.0.1', 0)))]:\n    try:\n        make(); print(name, 'listening')\n    except OSError as e:\n        print(name, 'refused', e.errno)";
    let workspace = Workspace::new(
        &(twins("listen", script, "network = [\"127.0.0.1:9\"]")
            + &twins("listen-closed", script, "network = false")),
    );
    let mut server = workspace.serve_legacy();
    let mut denied = 0;
    for tool in ["listen", "listen-closed"] {
        let confined = call_text(&mut server, tool);
        assert!(confined.contains("listen refused 1"), "{tool}: {confined}");
        assert!(confined.contains("bind refused"), "{tool}: {confined}");
        denied += 2;
    }
    let control = call_text(&mut server, "listen-unconfined");
    assert!(
        control.contains("listen listening") && control.contains("bind listening"),
        "{control}"
    );
    eprintln!("listening: {denied} attacks denied; the control listened twice");
}

#[test]
fn a_tool_cannot_lower_the_servers_priority() {
    // The command's parent (the server, or the sandbox's init): the same user may renice it, and with PRIO_USER
    // every process of the user (which the control does not try: it would succeed). To 19,
    // the lowest priority, which needs no privilege however nice the suite already runs.
    let script = "import os, sys\ncases = [('server', os.PRIO_PROCESS, os.getppid()), ('self', os.PRIO_PROCESS, 0)]\nif sys.argv[1:] == ['all']:\n    cases.append(('user', os.PRIO_USER, 0))\nfor name, which, who in cases:\n    try:\n        os.setpriority(which, who, 19); print(name, 'changed')\n    except OSError as e:\n        print(name, 'refused', e.errno)";
    let (python, prefix) = python();
    let argv = |extra: &[&str]| {
        let mut argv = vec![python.as_str(), "-c", script];
        argv.extend(extra);
        json!(argv).to_string()
    };
    let workspace = Workspace::new(&format!(
        "[[tools]]\nname = \"renice\"\ncommand.argv = {}\n[tools.sandbox]\nexecute = [{prefix:?}]\nnetwork = false\n\n\
         [[tools]]\nname = \"renice-unconfined\"\ncommand.argv = {}\n",
        argv(&["all"]),
        argv(&[])
    ));
    let mut server = workspace.serve_legacy();
    let confined = call_text(&mut server, "renice");
    assert!(confined.contains("server refused 1"), "{confined}");
    assert!(confined.contains("user refused 1"), "{confined}");
    assert!(confined.contains("self changed"), "{confined}");
    let control = call_text(&mut server, "renice-unconfined");
    assert!(control.contains("server changed"), "{control}");
    eprintln!("priorities: 2 attacks denied, its own allowed; the control reniced the server");
}

#[test]
fn a_root_servers_command_starts_with_no_capabilities() {
    // With CAP_SYS_ADMIN a program could clone a mount without its read-only flag
    // (`open_tree_attr`), with CAP_NET_ADMIN reconfigure the host's network, with
    // CAP_LINUX_IMMUTABLE make any file immutable.
    if !is_root() {
        crate::harness::skip(Feature::Root, "the server does not run as root here");
        return;
    }
    let script = "for line in open('/proc/self/status'):\n    if line.startswith(('CapEff', 'CapPrm', 'CapBnd')):\n        print(line.split()[0], int(line.split()[1], 16))";
    let workspace = Workspace::new(&twins(
        "caps",
        script,
        "network = [443]\nread = [\"/proc\"]",
    ));
    let mut server = workspace.serve_legacy();
    let confined = call_text(&mut server, "caps");
    for set in ["CapEff:", "CapPrm:", "CapBnd:"] {
        assert!(confined.contains(&format!("{set} 0")), "{confined}");
    }
    let control = call_text(&mut server, "caps-unconfined");
    assert!(!control.contains("CapEff: 0"), "{control}");
    eprintln!("capabilities: 3 sets empty; the control kept them");
}

#[test]
fn inode_flags_and_a_servers_limits_are_out_of_reach() {
    // `chattr` works on a descriptor opened for reading, and without mount namespaces
    // nothing else would refuse it: the same flags written back, which changes nothing.
    let script = "import fcntl, array, os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nflags = array.array('l', [0])\nfcntl.ioctl(fd, 0x80086601, flags, True)\ntry:\n    fcntl.ioctl(fd, 0x40086602, flags, True); print('setflags changed')\nexcept OSError as e:\n    print('setflags refused', e.errno)";
    let (python, prefix) = python();
    let tool = |name: &str, sandbox: &str| {
        format!(
            "[[tools]]\nname = \"{name}\"\ncommand.argv = {}\n{sandbox}\n",
            json!([python, "-c", script, "data/file.txt"])
        )
    };
    let workspace = Workspace::new(
        &(tool(
            "chattr",
            &format!("[tools.sandbox]\nexecute = [{prefix:?}]\nread = [\"./data\"]"),
        ) + &tool("chattr-unconfined", "")),
    );
    std::fs::create_dir(workspace.path("data")).expect("data");
    std::fs::write(workspace.path("data/file.txt"), "x\n").expect("file");
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("MCP_SERVE_MOUNT_NAMESPACES", "0")],
    );
    server.handshake("2025-11-25");
    let confined = call_text(&mut server, "chattr");
    assert!(confined.contains("setflags refused 1"), "{confined}");
    let control = call_text(&mut server, "chattr-unconfined");
    assert!(control.contains("setflags changed"), "{control}");

    // A server running as a user: its command is the same user, whom the kernel lets
    // lower the server's own limits (then every later call fails: too many open files).
    let workspace = Workspace::new(
        "[[tools]]\nname = \"starve\"\ncommand.script = 'prlimit --pid $PPID --nofile=4:4 && echo lowered'\n[tools.sandbox]\nnetwork = false\n\n\
         [[tools]]\nname = \"echo\"\ncommand.argv = [\"echo\", \"still here\"]\n",
    );
    let mut server = Server::start_command(
        unprivileged(&workspace).args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    let confined = call_text(&mut server, "starve");
    assert!(!confined.contains("lowered"), "{confined}");
    assert_eq!(call_text(&mut server, "echo"), "still here");
    eprintln!("inode flags and limits: 2 attacks denied; the chattr control changed its file");
}

/// A call that leaves its session, clears its environment (so no tag finds it) and exits;
/// and one that traps the SIGTERM a timeout sends.
fn escaping(seconds: &str) -> String {
    format!(
        r#"
[[tools]]
name = "escape"
command.script = 'setsid env -i sleep {seconds} & (setsid env -i sh -c "exec sleep {seconds}" &); sleep 0.3; echo "pid $$"'
command.timeout = "20s"
sandbox = {{ network = false }}

[[tools]]
name = "graceful"
command.script = 'trap "echo TERM > out/term.txt; exit 3" TERM; sleep 301 & wait'
command.timeout = "1s"
sandbox = {{ network = false, write = ["./out"] }}

[[tools]]
name = "signal"
arguments.pid = {{ type = "string" }}
command.script = 'kill -0 "$1" 2>/dev/null; echo "signal=$?"'
command.args = ["{{pid}}"]
sandbox = {{ network = false }}
"#
    )
}

/// With the call's own PID namespace (the server as root, and as a user through a user
/// namespace), nothing the call started is left once it has answered, and a timeout's
/// SIGTERM still reaches the program, and the server is out of its sight; without it (`MCP_SERVE_PID_NAMESPACES=0`, the
/// control), the escaped processes outlive the call, until the server exits.
#[test]
fn nothing_a_sandboxed_call_started_outlives_it() {
    let mut runs = vec![("as a user", "317.3", true), ("as a user", "317.4", false)];
    if is_root() {
        runs.extend([("as root", "317.1", true), ("as root", "317.2", false)]);
    }
    for (who, seconds, namespaced) in runs {
        let workspace = Workspace::new(&escaping(seconds));
        std::fs::create_dir(workspace.path("out")).expect("out");
        let mut command = if who == "as root" {
            Command::new(BINARY)
        } else {
            crate::harness::set_mode(&workspace.path("out"), 0o777);
            unprivileged(&workspace)
        };
        command.arg("--config").arg(workspace.manifest());
        if !namespaced {
            command.env("MCP_SERVE_PID_NAMESPACES", "0");
        }
        let mut server = Server::start_command(&mut command);
        server.handshake("2025-11-25");
        let said = call_text(&mut server, "escape");
        if namespaced && said != "pid 2" {
            let (_, check) = workspace.check();
            assert!(check.contains("PID namespaces no"), "{said}\n{check}");
            crate::harness::skip(Feature::UserNamespaces, "no PID namespaces here");
            continue;
        }
        // The sweep at the end of the call has run by the time it answers; a moment more.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let left = crate::harness::sleepers(seconds);
        eprintln!(
            "{who}, PID namespace {namespaced}: `{said}`, {} left",
            left.len()
        );
        if namespaced {
            assert!(left.is_empty(), "{who}: left behind: {left:?}");
            // The server's PID names no process of the namespace (Landlock's signal scope
            // is tested without one, in `sandbox::seccomp_and_scopes…`).
            let pid = server.pid().to_string();
            let result = server.call("signal", json!({ "pid": pid }));
            assert_eq!(
                text(&result),
                "signal=1",
                "{who}: the server is in sight: {result}"
            );
            let result = server.call("graceful", json!({}));
            assert_eq!(result["isError"], json!(true), "{result}");
            let term = std::fs::read_to_string(workspace.path("out/term.txt"));
            assert_eq!(term.ok().as_deref(), Some("TERM\n"), "{who}: {result}");
        } else {
            assert_ne!(said, "pid 2");
            assert_eq!(left.len(), 2, "{who}: the control left {left:?}");
            server.close();
            assert!(
                left.iter().all(|pid| crate::harness::wait_gone(*pid)),
                "{who}: the control's processes outlived the server"
            );
        }
    }
}

/// The program, as the same user, cannot open the descriptors of the sandbox's own
/// processes through /proc (with `/proc` readable, the worst case): the init's pipe to the
/// trampoline (writing it full would hang the call), its stdio. The control, a process of
/// the program's own holding pipes, is reachable by the same probe.
#[test]
fn the_sandboxs_own_processes_are_out_of_the_programs_reach() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "reach"
command.script = '''
ppid() { while read -r key value; do [ "$key" = PPid: ] && echo "$value"; done < "/proc/$1/status"; }
pipes() { for fd in 0 1 2 3 4 5 6 7 8 9; do [ -p "/proc/$1/fd/$fd" ] && (: > "/proc/$1/fd/$fd") 2>/dev/null && printf "%s " "$fd"; done; }
sleep 5 | sleep 5 &
me=$(ppid self); init=$(ppid "$me"); trampoline=$(ppid "$init")
for d in /proc/[0-9]*; do [ "$(ppid "${d#/proc/}" 2>/dev/null)" = "$me" ] && sleeper=${d#/proc/}; done
echo "sleeper: $(pipes "$sleeper"); init: $(pipes "$init"); trampoline: $(pipes "$trampoline")"
kill %1 2>/dev/null; true
'''
sandbox = { network = false, read = ["/proc"] }
"#,
    );
    let mut command = unprivileged(&workspace);
    command.arg("--config").arg(workspace.manifest());
    let mut server = Server::start_command(&mut command);
    server.handshake("2025-11-25");
    let said = call_text(&mut server, "reach");
    let (sleeper, ours) = said.split_once(';').expect("the probe's line");
    assert!(sleeper.contains('1'), "the control is reachable: {said}");
    assert_eq!(ours.trim(), "init: ; trampoline:", "{said}");
}

/// Through the PID namespace's init, a program's end reads as it does without one: an
/// orphan killed by a real-time signal is reaped and the program goes on; a crash is a
/// signal, not an exit code (the standard library's SIGSEGV handler in the trampoline would
/// otherwise swallow the signal it raises).
#[test]
fn a_sandboxed_programs_end_reads_the_same_through_the_init() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "orphan"
command.script = '(sh -c "sleep 0.3; kill -34 \$\$" &); sleep 1; echo survived'
command.timeout = "10s"
sandbox = { network = false }

[[tools]]
name = "signal"
arguments.name = { type = "string" }
command.script = 'kill -"$1" $$'
command.args = ["{name}"]
sandbox = { network = false }
"#,
    );
    for pid_namespaces in ["1", "0"] {
        let mut server = Server::start_command(
            Command::new(BINARY)
                .env("MCP_SERVE_PID_NAMESPACES", pid_namespaces)
                .arg("--config")
                .arg(workspace.manifest()),
        );
        server.handshake("2025-11-25");
        assert_eq!(
            call_text(&mut server, "orphan"),
            "survived",
            "{pid_namespaces}"
        );
        for signal in ["SEGV", "BUS", "ABRT", "TERM", "KILL"] {
            let result = server.call("signal", json!({ "name": signal }));
            assert!(
                text(&result).contains(&format!("killed by signal SIG{signal}")),
                "PID namespaces {pid_namespaces}: {result}"
            );
        }
    }
}

/// `processes = 3` runs exactly three processes of the program's, with a host list (whose
/// forwarders are threads of ours) and the PID namespace's init, and without the namespace.
#[test]
fn the_process_limit_counts_the_programs_processes_only() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "three"
command.script = 'sleep 0.3 & sleep 0.3 & wait; echo ran'
sandbox = { network = ["example.com:443"], processes = 3 }

[[tools]]
name = "four"
command.script = 'sleep 0.3 & sleep 0.3 & sleep 0.3 & wait; echo ran'
sandbox = { network = ["example.com:443"], processes = 3 }
"#,
    );
    for pid_namespaces in ["1", "0"] {
        let mut command = unprivileged(&workspace);
        command
            .env("MCP_SERVE_PID_NAMESPACES", pid_namespaces)
            .arg("--config")
            .arg(workspace.manifest());
        let mut server = Server::start_command(&mut command);
        server.handshake("2025-11-25");
        let three = server.call("three", json!({}));
        if text(&three).contains("needs unprivileged user namespaces") {
            crate::harness::skip(Feature::UserNamespaces, "no user namespaces for users");
            return;
        }
        assert_eq!(text(&three), "ran", "{pid_namespaces}: {three}");
        let four = server.call("four", json!({}));
        assert!(
            text(&four).contains("exceeded its limit of 3 processes"),
            "{pid_namespaces}: {four}"
        );
    }
}
