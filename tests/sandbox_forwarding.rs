//! A host list's forwarder (in the call's network namespace, from its loopback to the
//! egress proxy) under the program's own limits: the forwarder is the sandbox's, so the
//! program's `processes`, `open-files` and `cpu` are the program's alone, however many
//! connections it holds. The server runs as a user, so that `RLIMIT_NPROC` applies (the
//! kernel exempts root). Each tool's control is the same program under a limit generous
//! enough that the forwarder never mattered: the answer it gets is the one expected.

use serde_json::json;

use crate::harness::{Feature, Server, Workspace, text};
use crate::sandbox_network::{Listeners, RESOLVE, listeners, workspace};

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

fn probe(server: &mut Server, tool: &str, args: &[&str]) -> String {
    let result = server.call(tool, json!({ "args": args }));
    text(&result).trim().to_owned()
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
