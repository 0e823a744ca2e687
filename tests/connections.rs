//! Idle connections never starve the server (guarantee 8): under `ulimit -n 1024`, a flood
//! of connections that never send a byte, from the clients' own address, is admitted within
//! the connection budget, the oldest idle ones shed to make room, and a real client is
//! answered throughout. Where the flood's connections were closed by the server is the proof
//! the budget did it: without it they were all held (30 s each) and `accept` failed with
//! "Too many open files" for everyone.

use std::io::Read as _;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::Feature;
use crate::harness::{BINARY, Server, Workspace, python};
use crate::http_harness::HttpServer;
use crate::sandbox_network::{Listeners, RESOLVE, listeners, probe, tool, workspace};

const TOOL: &str = r#"
[[tools]]
name = "hello"
input-schema = '{"type": "object"}'
[tools.static]
content = [{ type = "text", text = "hello" }]
"#;

/// More descriptors for the test's own flood than the server under test may have.
fn raise_own_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("limit");
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("raise");
    }
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).expect("limit");
    assert!(
        soft >= 4096,
        "the test needs 4096 descriptors for its flood, has {soft}"
    );
}

/// Whether the server has closed `stream` (shed it).
fn closed(mut stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut byte = [0_u8; 1];
    match stream.read(&mut byte) {
        Ok(read) => read == 0,
        Err(error) => error.kind() != std::io::ErrorKind::WouldBlock,
    }
}

fn port(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("port")
}

#[test]
fn idle_connections_do_not_starve_a_real_client() {
    raise_own_limit();
    let workspace = Workspace::new(TOOL);
    let server = HttpServer::start_with_nofile(&workspace.manifest(), &["-v"], 1024);
    let address = format!("127.0.0.1:{}", port(&server.url));

    // 1,100 silent connections, more than the server's 1,024 descriptors.
    let flood: Vec<TcpStream> = (0..1100)
        .map(|_| TcpStream::connect(&address).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));

    // A flooder that goes on opening silent connections while the real client works.
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicUsize::new(0));
    let flooder = {
        let (stop, opened, address) = (Arc::clone(&stop), Arc::clone(&opened), address.clone());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Ok(stream) = TcpStream::connect(&address) {
                    held.push(stream);
                    opened.fetch_add(1, Ordering::Relaxed);
                }
                if held.len() >= 1500 {
                    held.drain(..500);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    // A connection of its own per call: between calls a kept connection is idle, and the
    // budget sheds idle connections oldest first, the client's as the flood's.
    let client = crate::http_harness::http_client_unpooled(crate::harness::TIMEOUT);
    let mut latencies = Vec::new();
    for id in 0..20 {
        let started = Instant::now();
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hello", "arguments": {}}});
        let response = crate::http_harness::post_to(
            &client,
            &server.url,
            &call,
            &[("MCP-Protocol-Version", "2025-11-25")],
        );
        assert_eq!(response.status(), 200);
        let reply = crate::http_harness::message(response, id);
        latencies.push(started.elapsed());
        assert_eq!(reply["result"]["content"][0]["text"], "hello", "{reply}");
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    flooder.join().expect("flooder");

    let shed = flood.iter().filter(|stream| closed(stream)).count();
    latencies.sort();
    let log = server.log();
    eprintln!(
        "flood: 1,100 silent connections, then {} more while 20 calls ran; the server closed {shed} of the first 1,100; call latency median {:?}, worst {:?}",
        opened.load(Ordering::Relaxed),
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    assert!(
        shed >= 1100 - 768,
        "the budget (768 of 1,024 descriptors) closed only {shed} idle connections"
    );
    assert!(
        !log.contains("Too many open files"),
        "accept ran out of descriptors: {log}"
    );
}

/// Connections with a request in progress are not shed: at the cap, a new connection that
/// finds every other busy is closed at once, and the busy ones finish. `--max-connections 4`
/// with four calls in flight (a slow command), a fifth connection gets no answer, and each
/// of the four calls completes.
#[test]
fn busy_connections_are_never_shed() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "slow"
input-schema = '{"type": "object"}'
[tools.command]
argv = ["sleep", "2"]
"#,
    );
    let server = HttpServer::start(
        &workspace.manifest(),
        &[
            "--max-connections",
            "4",
            "--max-connections-per-address",
            "4",
        ],
    );
    let calls: Vec<_> = (0..4)
        .map(|_| crate::http_harness::call_in_background(&server.url, "slow", &[]))
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    let client = crate::http_harness::http_client(Duration::from_secs(5));
    let refused = client
        .post(&server.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}).to_string())
        .send();
    assert!(
        refused.is_err(),
        "a fifth connection is closed: {refused:?}"
    );
    for call in calls {
        let reply = call
            .join()
            .expect("thread")
            .unwrap_or_else(|| panic!("the busy call was kept: {}", server.log()));
        assert!(reply.get("result").is_some(), "{reply}");
    }
    assert!(
        server.log().contains(
            "connection closed: the connections from this address hold 4 descriptors, its most, and each is busy"
        ),
        "{}",
        server.log()
    );
}

/// The TCP ports process `pid` listens on (its sockets, found in /proc/net/tcp).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fds")
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let mut ports: Vec<u16> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let listening = fields.get(3) == Some(&"0A");
            let ours = fields
                .get(9)
                .is_some_and(|inode| inodes.iter().any(|own| own == inode));
            let port = fields.get(1)?.rsplit(':').next()?;
            (listening && ours).then(|| u16::from_str_radix(port, 16).ok())?
        })
        .collect();
    ports.sort_unstable();
    ports
}

/// A listener at `one.test` (loopback) and a workspace whose tool `one` may reach it through
/// the proxy; the URL to get.
fn one_listed_host() -> (Listeners, Workspace, String) {
    let listening = listeners();
    let (_, prefix) = python();
    let p = listening.port.to_string();
    let list = format!(r#"["one.test:{p}", "127.0.0.1:{p}"]"#);
    let workspace = workspace(&tool("one", Some(&list), &prefix));
    (listening, workspace, format!("http://one.test:{p}/"))
}

/// A stdio server for the host-list tool `one`, under `ulimit -n nofile`.
fn proxy_server(workspace: &Workspace, nofile: u32, namespaces: bool) -> Server {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "ulimit -Sn {nofile} && ulimit -Hn {nofile} && exec \"$0\" \"$@\""
        ))
        .arg(BINARY)
        .arg("--config")
        .arg(workspace.manifest())
        .env("MCP_SERVE_RESOLVE", RESOLVE);
    if !namespaces {
        command.env("MCP_SERVE_NETWORK_NAMESPACES", "0");
    }
    let mut server = Server::start_command(&mut command);
    server.handshake("2025-11-25");
    server
}

/// Where calls have a network namespace, the proxy is reached through its Unix socket only:
/// no TCP port is opened for any local user to flood. The control: with namespaces turned
/// off, the same call opens one.
#[test]
fn the_egress_proxy_opens_a_tcp_port_only_for_calls_without_a_namespace() {
    let (_listening, workspace, url) = one_listed_host();
    let get = ["get", url.as_str()];
    let mut server = proxy_server(&workspace, 1024, true);
    assert_eq!(probe(&mut server, "one", &get), "one");
    assert_eq!(
        listening_ports(server.pid()),
        Vec::<u16>::new(),
        "in a namespace: no port"
    );
    drop(server);
    let mut server = proxy_server(&workspace, 1024, false);
    assert_eq!(probe(&mut server, "one", &get), "one");
    assert_eq!(
        listening_ports(server.pid()).len(),
        1,
        "the control: a port on loopback"
    );
}

/// Without namespaces the proxy's TCP port is open to every local user: 1,100 connections
/// that never send a byte, at `ulimit -n 1024`, and a host-list call still goes through,
/// the flood's connections shed (the proof the budget did it: without it the server ran out
/// of descriptors and every tool failed with "Too many open files").
#[test]
fn a_flood_at_the_egress_proxys_port_does_not_stop_calls() {
    if crate::sandbox::landlock_abi() < 4 {
        crate::harness::skip(
            Feature::Landlock(4),
            "TCP rules need Landlock ABI 4 (Linux 6.7)",
        );
        return;
    }
    raise_own_limit();
    let (_listening, workspace, url) = one_listed_host();
    let get = ["get", url.as_str()];
    let mut server = proxy_server(&workspace, 1024, false);
    assert_eq!(probe(&mut server, "one", &get), "one");
    let proxy = listening_ports(server.pid());
    assert_eq!(proxy.len(), 1, "{proxy:?}");
    let flood: Vec<TcpStream> = (0..1100)
        .map(|_| TcpStream::connect(("127.0.0.1", proxy[0])).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let mut latencies = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        assert_eq!(
            probe(&mut server, "one", &get),
            "one",
            "{}",
            server.stderr()
        );
        latencies.push(started.elapsed());
    }
    let shed = flood.iter().filter(|stream| closed(stream)).count();
    latencies.sort();
    eprintln!(
        "egress flood: 1,100 silent connections at the proxy's port; {shed} closed by the server; 5 host-list calls through it, median {:?}",
        latencies[2]
    );
    assert!(shed >= 1100 - 768, "the budget closed only {shed}");
    assert!(
        !server.stderr().contains("Too many open files"),
        "{}",
        server.stderr()
    );
}

/// A request whose body has not all arrived is not in progress: a client that sends its
/// headers and holds back the body's last bytes holds idle connections, shed to make room,
/// so it cannot lock everyone out for `--body-timeout` (before, four such connections filled
/// `--max-connections 4` and every client was closed).
#[test]
fn a_body_held_back_does_not_hold_a_connection() {
    use std::io::Write as _;
    let workspace = Workspace::new(TOOL);
    let server = HttpServer::start(
        &workspace.manifest(),
        &[
            "--max-connections",
            "4",
            "--max-connections-per-address",
            "4",
        ],
    );
    let address = format!("127.0.0.1:{}", port(&server.url));
    let held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = TcpStream::connect(&address).expect("connect");
            write!(
                stream,
                "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
            )
            .expect("headers");
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let reply = server.legacy(1, "tools/call", json!({"name": "hello", "arguments": {}}));
    assert_eq!(reply["result"]["content"][0]["text"], "hello", "{reply}");
    let shed = held.iter().filter(|stream| closed(stream)).count();
    assert!(shed >= 1, "no held-back body was shed");
}

/// A TCP connection to 127.0.0.1:`port` from `source` (another loopback address).
fn connect_from(source: std::net::Ipv4Addr, port: u16) -> TcpStream {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
    socket
        .bind(&std::net::SocketAddr::from((source, 0)).into())
        .expect("bind");
    socket
        .connect(&std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)).into())
        .expect("connect");
    socket.into()
}

/// Idle connections from several addresses, each within its share, may fill the budget and
/// the descriptors running calls need beside it (their pipes): then a call's start sheds
/// idle connections and tries again, rather than fail with `EMFILE`.
#[test]
fn idle_connections_from_many_addresses_do_not_keep_calls_from_starting() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "slow"
input-schema = '{"type": "object"}'
[tools.command]
argv = ["/bin/sh", "-c", "sleep 1; echo done"]

[[tools]]
name = "reporting"
input-schema = '{"type": "object"}'
[tools.command]
script = '''sleep 1; echo '{"log": "info", "message": "x"}' > "$MCP_SERVE_EVENTS"; echo done'''
events = true

[[tools]]
name = "leaving"
input-schema = '{"type": "object"}'
[tools.command]
script = '''sleep 1; printf 'kept' > "$MCP_SERVE_OUTPUT_DIR/a.txt"; printf 'and this' > "$MCP_SERVE_OUTPUT_DIR/b.txt"; echo done'''
files = "embed"
"#,
    );
    let server = HttpServer::start_with_nofile(&workspace.manifest(), &[], 64);
    let port = port(&server.url);
    let flood: Vec<TcpStream> = [[127, 0, 0, 2], [127, 0, 0, 3]]
        .into_iter()
        .flat_map(|source| (0..24).map(move |_| connect_from(source.into(), port)))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    // Some with an events pipe, made in the call's folder before the command starts; some
    // leaving files, read after it ended.
    let calls: Vec<_> = (0..6)
        .map(|n| {
            let tool = ["slow", "reporting", "leaving"][n % 3];
            crate::http_harness::call_in_background(&server.url, tool, &[])
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        let reply = call.join().expect("thread");
        if n % 3 == 2 {
            let content = reply
                .as_ref()
                .map(|reply| reply["result"]["content"].to_string());
            assert!(
                content.as_deref().is_some_and(|content| content.contains("kept") && content.contains("and this")),
                "the files a call left, beside the flood: {reply:?}"
            );
        }
        let text = reply
            .as_ref()
            .map(|reply| reply["result"]["content"][0]["text"].clone());
        assert_eq!(
            text,
            Some(json!("done")),
            "a call beside 48 idle connections under 64 descriptors: {reply:?}"
        );
    }
    let shed = flood.iter().filter(|stream| closed(stream)).count();
    assert!(shed > 0, "no idle connection was shed: {}", server.log());
}
