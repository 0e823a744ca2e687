//! A host list's forwarder (in the call's network namespace, from its loopback to the
//! egress proxy) under the program's own limits: the forwarder is the sandbox's, so the
//! program's `processes`, `open-files` and `cpu` are the program's alone, however many
//! connections it holds. The server runs as a user, so that `RLIMIT_NPROC` applies (the
//! kernel exempts root). Each tool's control is the same program under a limit generous
//! enough that the forwarder never mattered: the answer it gets is the one expected.

use serde_json::json;

use crate::harness::{Feature, Server, Workspace, text};
use crate::sandbox_network::{Listeners, RESOLVE, listeners, probe, workspace};

/// A tool running the probe under `list`, with `limits` (TOML lines) in its sandbox, on
/// the system's Python (the tests' own may live under /root, out of the user's reach).
fn limited(name: &str, list: &str, limits: &str) -> String {
    format!(
        "[[tools]]\nname = \"{name}\"\narguments.args = {{ type = \"array\", items = {{ type = \"string\" }} }}\n\
         command.argv = [\"/usr/bin/python3\", \"./probe.py\", \"{{args}}\"]\n\
         [tools.sandbox]\nexecute = [\"/usr\"]\nread = [\"./probe.py\"]\nnetwork = {list}\n{limits}\n\n"
    )
}

/// The server, as a user, with a tool of each limit (and the folder it runs in); `None` where users get no user
/// namespaces (the skip fails where `scripts/features` says they have them).
fn serve() -> Option<(Server, String, Workspace)> {
    let Listeners { port, .. } = listeners();
    let p = port.to_string();
    let list = format!(r#"["localhost:{p}"]"#);
    let workspace = workspace(
        &[
            limited("one-process", &list, "processes = 1"),
            limited("two-processes", &list, "processes = 2"),
            limited("roomy", &list, "processes = 64"),
            limited("few-files", &list, "open-files = 32\ncpu = \"1s\""),
            limited("many-files", &list, "open-files = 256"),
        ]
        .concat(),
    );
    let mut server = Server::start_command(
        crate::harness::unprivileged(&workspace)
            .args(["--config", workspace.manifest().to_str().expect("path")])
            .env("MCP_SERVE_RESOLVE", RESOLVE),
    );
    server.handshake("2025-11-25");
    let first = probe(&mut server, "roomy", &["connect", "localhost", &p]);
    if first.contains("could not create") {
        crate::harness::skip(
            Feature::UserNamespaces,
            "this kernel gives users no user namespaces",
        );
        return None;
    }
    assert_eq!(
        first, "one",
        "control: a tunnel under a generous process limit"
    );
    Some((server, p, workspace))
}

/// The server (as root) under `RLIMIT_NOFILE` `limit`, which its trampolines inherit.
fn serve_with_descriptors(workspace: &Workspace, limit: usize) -> Server {
    let mut server = Server::start_command(
        std::process::Command::new("prlimit")
            .arg(format!("--nofile={limit}:{limit}"))
            .arg(crate::harness::BINARY)
            .args(["--config", workspace.manifest().to_str().expect("path")]),
    );
    server.handshake("2025-11-25");
    server
}

/// With a thread of the forwarder's own per connection counted in the program's limit,
/// `processes = 1` left no room for the first connection (reset).
#[test]
fn a_tunnel_opens_under_a_limit_of_one_process() {
    let Some((mut server, p, _workspace)) = serve() else {
        return;
    };
    assert_eq!(
        probe(&mut server, "one-process", &["connect", "localhost", &p]),
        "one",
        "a tunnel under `processes = 1`"
    );
}

/// ...and tunnels held open took the program's fork (with `processes = 2`, the second
/// thread's failure hung the call).
#[test]
fn tunnels_held_open_take_nothing_from_the_programs_forks() {
    let Some((mut server, p, _workspace)) = serve() else {
        return;
    };
    assert_eq!(
        probe(&mut server, "roomy", &["hold-fork", "6", "localhost", &p]),
        "forked with 6 held",
        "control: a fork with six tunnels held, under a generous limit"
    );
    assert_eq!(
        probe(
            &mut server,
            "two-processes",
            &["hold-fork", "6", "localhost", &p]
        ),
        "forked with 6 held",
        "a fork with six tunnels held under `processes = 2`"
    );
}

/// With the forwarder under the program's `open-files`, its descriptors ran out before the
/// program's; at the limit its `accept` failed in a loop, which spent the CPU limit of the
/// process it ran in and killed the call.
#[test]
fn tunnels_at_once_take_nothing_from_the_programs_descriptors_or_cpu() {
    let Some((mut server, p, _workspace)) = serve() else {
        return;
    };
    assert_eq!(
        probe(
            &mut server,
            "many-files",
            &["many", "12", "localhost", &p, "0"]
        ),
        "answered 12 of 12",
        "control: twelve tunnels at once under a generous descriptor limit"
    );
    assert_eq!(
        probe(
            &mut server,
            "few-files",
            &["many", "12", "localhost", &p, "1.5"]
        ),
        "answered 12 of 12",
        "twelve tunnels at once, held 1.5 s, under `open-files = 32` and `cpu = \"1s\"`"
    );
}

/// The forwarder's descriptors are the server's (`RLIMIT_NOFILE`, which the trampoline
/// inherits): a program that opens more connections than can be forwarded at once finds the
/// forwarder within its descriptors and idle (the rest wait in the listener's queue, or the
/// server's budget sheds the idle ones), and a tunnel served once the flood ends.
#[test]
fn a_forwarder_out_of_descriptors_queues_and_serves_again() {
    const LIMIT: usize = 64;
    const FLOOD: usize = 48;
    let Listeners { port, .. } = listeners();
    let p = port.to_string();
    let list = format!(r#"["localhost:{p}"]"#);
    let workspace = workspace(&limited("flood", &list, ""));
    let mut server = serve_with_descriptors(&workspace, LIMIT);
    let flood = FLOOD.to_string();
    let id = server.start_request(
        "tools/call",
        json!({ "name": "flood", "arguments": { "args": ["flood", flood, "3", "localhost", &p] } }),
    );
    // The trampoline (the server's child), once it holds all it can.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (trampoline, held) = loop {
        let found = children(server.pid()).into_iter().find_map(|child| {
            let fds = std::fs::read_dir(format!("/proc/{child}/fd")).ok()?.count();
            (fds > LIMIT / 2).then_some((child, fds))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the forwarder never held the flood"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(held <= LIMIT, "{held} descriptors under a limit of {LIMIT}");
    let before = cpu_ticks(trampoline);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let spent = cpu_ticks(trampoline) - before;
    // Spinning, it would spend the whole second (100 ticks); waiting, next to nothing.
    assert!(
        spent < 30,
        "the full forwarder spent {spent} ticks of CPU in one second"
    );
    let result = server.response(id);
    let text = text(&result["result"]);
    assert!(
        text.starts_with("open ") && text.ends_with(&format!(" of {FLOOD}\none")),
        "a tunnel once the flood closed: {result}"
    );
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// User and system time of `pid`, in clock ticks (`utime` and `stime` of /proc/PID/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

/// Every tool's program is one peer of the connection budget at the egress proxy, so one
/// call may hold only a quarter of that share: a call that opens all the tunnels it can
/// leaves the others theirs.
#[test]
fn one_call_cannot_take_every_other_calls_tunnels() {
    const LIMIT: usize = 64;
    let Listeners { port, .. } = listeners();
    let p = port.to_string();
    let list = format!(r#"["localhost:{p}"]"#);
    let workspace = workspace(&limited("tunnels", &list, ""));
    let mut server = serve_with_descriptors(&workspace, LIMIT);
    let hog = server.start_request(
        "tools/call",
        json!({ "name": "tunnels", "arguments": { "args": ["hold", "13", "2", "localhost", &p] } }),
    );
    std::thread::sleep(std::time::Duration::from_millis(700));
    let other = server.start_request(
        "tools/call",
        json!({ "name": "tunnels", "arguments": { "args": ["connect", "localhost", &p] } }),
    );
    // Both answers, in whichever order they come.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 2 {
        let message = server.next_message(deadline).expect("both calls answered");
        if let Some(id) = message["id"].as_i64() {
            answers.insert(id, text(&message["result"]).trim().to_owned());
        }
    }
    assert_eq!(
        answers[&other], "one",
        "another call's tunnel while one holds all it may"
    );
    // Under 64 descriptors the programs' share is 24 (12 tunnels): a call holds 3 of them.
    assert_eq!(
        answers[&hog], "held 3 failed 0",
        "the call that asked for 13"
    );
}
