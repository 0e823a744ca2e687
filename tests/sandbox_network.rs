//! `network = ["name:port", …]` attacked with real programs: two HTTP listeners on the same
//! port, one on 127.0.0.1 and one on 127.0.0.2 (`one.test` and `two.test`, pinned with
//! `MCP_SERVE_RESOLVE`), and a third on another port. A sandboxed Python client asks the
//! egress proxy for the listed one and for everything around it, and tries to go around the
//! proxy. Each attack has its control: the same request unconfined, or from a tool whose
//! list names the target, reaches it, so a refusal is the sandbox's doing.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{Ipv4Addr, TcpListener};

use serde_json::{Value, json};

use crate::harness::Feature;
use crate::harness::{Server, Workspace, python, text};

/// A tiny HTTP server: `/redirect` answers 302 to `location`, anything else its name.
fn listen(address: Ipv4Addr, port: u16, name: &'static str, location: String) -> u16 {
    let listener = TcpListener::bind((address, port)).expect("listener");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
                header.clear();
            }
            let response = if line.contains(" /redirect ") {
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{name}",
                    name.len()
                )
            };
            let _ = (&stream).write_all(response.as_bytes());
        }
    });
    port
}

/// The client: `get URL` (urllib, which follows the proxy variables and redirects),
/// `connect HOST PORT` (a CONNECT to the proxy in `$HTTPS_PROXY`, then `GET /` through the
/// tunnel), `connect-as TOKEN HOST PORT` (with other credentials, or `none`), `direct HOST
/// PORT` (ignoring the proxy), `udp HOST PORT`, `token` (its proxy URL's password), `many N
/// HOST PORT SECONDS` (N tunnels open at once, each then asked `GET /`, held SECONDS more),
/// `hold-fork N HOST PORT` (N tunnels held open while it forks), `flood N SECONDS HOST PORT`
/// (N bare connections to the proxy's port held SECONDS, how many are still open, then
/// `connect`), `hold N SECONDS HOST PORT` (N tunnels opened and held SECONDS).
const PROBE: &str = r"
import base64, os, socket, sys, time, urllib.error, urllib.parse, urllib.request
mode, args = sys.argv[1], sys.argv[2:]
proxy = urllib.parse.urlsplit(os.environ.get('HTTPS_PROXY', 'http://127.0.0.1:1'))
def tunnel(host, port, token):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
    auth = '' if token in (None, 'none') else 'Proxy-Authorization: Basic %s\r\n' % base64.b64encode(('call:' + token).encode()).decode()
    s.sendall(('CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n%s\r\n' % (host, port, host, port, auth)).encode())
    f = s.makefile('rb')
    status = f.readline().split()[1].decode()
    while f.readline() not in (b'\r\n', b''):
        pass
    return s, f, status
def get(s, host):
    s.sendall(('GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % host).encode())
def connect(host, port, token):
    s, f, status = tunnel(host, port, token)
    if status != '200':
        print('status', status)
        return
    get(s, host)
    print(f.read().split(b'\r\n\r\n', 1)[1].decode())
def many(n, host, port):
    held, answered = [], 0
    for _ in range(n):
        try:
            held.append(tunnel(host, port, proxy.password))
        except (OSError, IndexError):
            pass
    for s, f, status in held:
        if status == '200':
            get(s, host)
    for s, f, status in held:
        try:
            answered += status == '200' and f.read().endswith(b'one')
        except OSError:
            pass
    return held, answered
try:
    if mode == 'get':
        try:
            print(urllib.request.urlopen(args[0], timeout=10).read().decode())
        except urllib.error.HTTPError as e:
            print('status', e.code)
    elif mode == 'connect':
        connect(args[0], args[1], proxy.password)
    elif mode == 'connect-as':
        connect(args[1], args[2], args[0])
    elif mode == 'direct':
        socket.create_connection((args[0], int(args[1])), timeout=5).close()
        print('connected')
    elif mode == 'udp':
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', (args[0], int(args[1])))
        print('sent')
    elif mode == 'token':
        print(proxy.password)
    elif mode == 'many':
        held, answered = many(int(args[0]), args[1], args[2])
        time.sleep(float(args[3]))
        print('answered', answered, 'of', args[0])
    elif mode == 'flood':
        flood = [socket.create_connection((proxy.hostname, proxy.port), timeout=10) for _ in range(int(args[0]))]
        time.sleep(float(args[1]))
        still = 0
        for s in flood:
            s.setblocking(False)
            try:
                still += s.recv(1) != b''
            except BlockingIOError:
                still += 1
            except OSError:
                pass
            s.close()
        print('open', still, 'of', args[0])
        connect(args[2], args[3], proxy.password)
    elif mode == 'hold':
        held, failed = [], 0
        for _ in range(int(args[0])):
            try:
                held.append(tunnel(args[2], args[3], proxy.password))
            except (OSError, IndexError):
                failed += 1
        time.sleep(float(args[1]))
        print('held', sum(status == '200' for s, f, status in held), 'failed', failed)
    elif mode == 'hold-fork':
        held, answered = many(int(args[0]), args[1], args[2])
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print('forked with', answered, 'held')
except OSError as e:
    print('refused', e.errno)
";

/// The addresses the tests' names resolve to, at the proxy.
pub(crate) const RESOLVE: &str = "one.test=127.0.0.1,two.test=127.0.0.2,loop.test=127.0.0.1,\
     mapped.test=::ffff:127.0.0.1,meta.test=169.254.169.254,inside.test=10.1.2.3";

/// Listeners on 127.0.0.1:P, 127.0.0.2:P and 127.0.0.1:Q.
pub(crate) struct Listeners {
    pub(crate) port: u16,
    pub(crate) other_port: u16,
}

pub(crate) fn listeners() -> Listeners {
    // The same free port on both addresses: a few tries, as another test may take one.
    for _ in 0..20 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|probe| probe.local_addr())
            .expect("a free port")
            .port();
        let (Ok(first), Ok(second)) = (
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)),
            TcpListener::bind((Ipv4Addr::new(127, 0, 0, 2), port)),
        ) else {
            continue;
        };
        drop((first, second));
        let redirect = format!("http://127.0.0.2:{port}/");
        listen(Ipv4Addr::LOCALHOST, port, "one", redirect.clone());
        listen(Ipv4Addr::new(127, 0, 0, 2), port, "two", redirect);
        let other_port = listen(Ipv4Addr::LOCALHOST, 0, "other", String::new());
        return Listeners { port, other_port };
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

/// A tool running the probe with `network` as its list (`None`: unconfined).
pub(crate) fn tool(name: &str, network: Option<&str>, prefix: &str) -> String {
    let (python, _) = python();
    let sandbox = network.map_or_else(String::new, |list| {
        format!(
            "[tools.sandbox]\nexecute = [\"{prefix}\"]\nread = [\"./probe.py\"]\nnetwork = {list}\n"
        )
    });
    format!(
        "[[tools]]\nname = \"{name}\"\narguments.args = {{ type = \"array\", items = {{ type = \"string\" }} }}\n\
         command.argv = [\"{python}\", \"./probe.py\", \"{{args}}\"]\n{sandbox}\n"
    )
}

pub(crate) fn workspace(tools: &str) -> Workspace {
    let workspace = Workspace::new(tools);
    std::fs::write(workspace.path("probe.py"), PROBE).expect("probe");
    workspace
}

pub(crate) fn serve(workspace: &Workspace, env: &[(&str, &str)]) -> Server {
    let mut env = env.to_vec();
    env.push(("MCP_SERVE_RESOLVE", RESOLVE));
    let mut server = Server::start_with(
        &workspace.manifest(),
        &["--metrics-addr", "127.0.0.1:0"],
        &env,
    );
    server.handshake("2025-11-25");
    server
}

/// The server's metrics, from the listener it announced.
pub(crate) fn metrics(server: &Server) -> String {
    let url = server
        .stderr()
        .lines()
        .find_map(|line| {
            line.strip_prefix("mcp-serve: metrics on ")
                .map(ToOwned::to_owned)
        })
        .unwrap_or_else(|| panic!("no metrics line: {}", server.stderr()));
    crate::http_harness::http_client(std::time::Duration::from_secs(10))
        .get(&url)
        .send()
        .and_then(reqwest::blocking::Response::text)
        .expect("metrics")
}

pub(crate) fn probe(server: &mut Server, tool: &str, args: &[&str]) -> String {
    let result: Value = server.call(tool, json!({ "args": args }));
    text(&result).trim().to_owned()
}

/// The probe's tool must start in `workspace`'s folder (the manifest's), where `probe.py` is.
fn check_stderr(workspace: &Workspace, env: &[(&str, &str)]) -> (i32, String) {
    let mut command = std::process::Command::new(crate::harness::BINARY);
    let output = command
        .args(["check", "--config"])
        .arg(workspace.manifest())
        .envs(env.iter().copied())
        .output()
        .expect("check");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Tallies attacks and controls for the closing line.
#[derive(Default)]
struct Tally {
    attacks: usize,
    denied: usize,
    controls: usize,
}

impl Tally {
    fn denied(&mut self, what: &str, output: &str, expected: &str) {
        self.attacks += 1;
        assert_eq!(output, expected, "attack: {what}");
        self.denied += 1;
    }

    fn control(&mut self, what: &str, output: &str, expected: &str) {
        assert_eq!(output, expected, "control: {what}");
        self.controls += 1;
    }
}

#[test]
fn a_host_list_reaches_the_listed_name_through_the_proxy_and_nothing_else() {
    let Listeners { port, other_port } = listeners();
    let (_, prefix) = python();
    let (p, q) = (port.to_string(), other_port.to_string());
    let workspace = workspace(
        &[
            tool(
                "one",
                Some(&format!(r#"["one.test:{p}", "127.0.0.1:{p}"]"#)),
                &prefix,
            ),
            tool(
                "names-only",
                Some(&format!(
                    r#"["loop.test:{p}", "mapped.test:{p}", "meta.test:{p}", "inside.test:{p}"]"#
                )),
                &prefix,
            ),
            tool(
                "both",
                Some(&format!(
                    r#"["one.test:{p}", "two.test:{p}", "127.0.0.1:{p}", "127.0.0.2:{p}"]"#
                )),
                &prefix,
            ),
            tool("unconfined", None, &prefix),
        ]
        .concat(),
    );
    let mut server = serve(&workspace, &[]);
    let mut tally = Tally::default();
    let one_url = format!("http://one.test:{p}/");
    // Allowed: plain HTTP forwarding and a CONNECT tunnel to the listed name.
    assert_eq!(probe(&mut server, "one", &["get", &one_url]), "one");
    assert_eq!(
        probe(&mut server, "one", &["connect", "one.test", &p]),
        "one"
    );
    attack_through_and_around(&mut server, &mut tally, &p, &q);
    // Each decision counted: the three allowed requests (the redirect's first), the refusals
    // by reason.
    let counted = metrics(&server);
    for (tool, decision, reason, count) in [
        ("one", "allow", "listed", 3),
        ("one", "deny", "not-listed", 4),
        ("one", "deny", "port", 1),
        ("names-only", "deny", "loopback", 2),
        ("names-only", "deny", "metadata", 1),
        ("names-only", "deny", "private", 1),
    ] {
        let series = format!(
            "mcp_serve_egress_decisions_total{{tool=\"{tool}\",decision=\"{decision}\",reason=\"{reason}\"}} {count}\n"
        );
        assert!(counted.contains(&series), "{series} in {counted}");
    }
    controls(&mut server, &mut tally, &p, &q);
    drop(server);

    // Without Landlock, the namespace alone: nothing listens there but the forwarder.
    let mut server = serve(&workspace, &[("MCP_SERVE_LANDLOCK_ABI", "0")]);
    assert_eq!(probe(&mut server, "one", &["get", &one_url]), "one");
    for address in ["127.0.0.1", "127.0.0.2"] {
        tally.denied(
            &format!("a direct connect to {address} in the namespace alone"),
            &probe(&mut server, "one", &["direct", address, &p]),
            "refused 111",
        );
    }
    eprintln!(
        "network by host: {} attacks tried, {} denied; {} controls reached their target",
        tally.attacks, tally.denied, tally.controls
    );
}

/// Through the proxy to what the lists do not name, and around it.
fn attack_through_and_around(server: &mut Server, tally: &mut Tally, p: &str, q: &str) {
    let get = |server: &mut Server, url: &str| probe(server, "one", &["get", url]);
    tally.denied(
        "plain HTTP to the unlisted name on the same port",
        &get(server, &format!("http://two.test:{p}/")),
        "status 403",
    );
    tally.denied(
        "CONNECT to the unlisted name on the same port",
        &probe(server, "one", &["connect", "two.test", p]),
        "status 403",
    );
    tally.denied(
        "CONNECT to the other listener's address",
        &probe(server, "one", &["connect", "127.0.0.2", p]),
        "status 403",
    );
    tally.denied(
        "CONNECT to the listed name on another port",
        &probe(server, "one", &["connect", "one.test", q]),
        "status 403",
    );
    tally.denied(
        "a redirect from the listed host to the other",
        &get(server, &format!("http://one.test:{p}/redirect")),
        "status 403",
    );
    for (address, what) in [
        ("127.0.0.1", "a direct connect to the listed listener"),
        ("127.0.0.2", "a direct connect to the other listener"),
    ] {
        tally.denied(
            what,
            &probe(server, "one", &["direct", address, p]),
            "refused 13",
        );
    }
    tally.denied(
        "a datagram around the proxy",
        &probe(server, "one", &["udp", "127.0.0.1", p]),
        "refused 1",
    );
    // Listed names whose addresses are not public, with no address listed.
    for name in ["loop.test", "mapped.test", "meta.test", "inside.test"] {
        tally.denied(
            &format!("{name}, listed, resolving to a non-public address"),
            &probe(server, "names-only", &["connect", name, p]),
            "status 403",
        );
    }
    let log = server.stderr();
    for reason in ["not-listed", "port", "loopback", "metadata", "private"] {
        assert!(
            log.contains(&format!("reason=\"{reason}\"")),
            "{reason} in {log}"
        );
    }
}

/// The same targets from a tool that lists them, and unconfined.
fn controls(server: &mut Server, tally: &mut Tally, p: &str, q: &str) {
    // Controls: listed, the other listener is reached through the proxy; unconfined, each
    // listener directly and the redirect followed.
    tally.control(
        "two.test listed",
        &probe(server, "both", &["connect", "two.test", p]),
        "two",
    );
    tally.control(
        "the redirect, listed",
        &probe(
            server,
            "both",
            &["get", &format!("http://one.test:{p}/redirect")],
        ),
        "two",
    );
    for address in ["127.0.0.1", "127.0.0.2"] {
        tally.control(
            &format!("{address} unconfined"),
            &probe(server, "unconfined", &["direct", address, p]),
            "connected",
        );
    }
    tally.control(
        "the redirect, unconfined",
        &probe(
            server,
            "unconfined",
            &["get", &format!("http://127.0.0.1:{p}/redirect")],
        ),
        "two",
    );
    tally.control(
        "the other port, unconfined",
        &probe(
            server,
            "unconfined",
            &["get", &format!("http://127.0.0.1:{q}/")],
        ),
        "other",
    );
}

/// `localhost` names loopback by definition (RFC 6761): a list that names it (or a name
/// beneath it) reaches a listener on 127.0.0.1 through the proxy; `*`, another port, or a
/// list without it still refuses, as for any name that resolves to loopback.
#[test]
fn a_list_that_names_localhost_reaches_loopback_and_nothing_else_does() {
    let Listeners { port, other_port } = listeners();
    let (_, prefix) = python();
    let (p, q) = (port.to_string(), other_port.to_string());
    let workspace = workspace(
        &[
            tool(
                "local",
                Some(&format!(r#"["localhost:{p}", "*.localhost:{p}"]"#)),
                &prefix,
            ),
            tool(
                "star",
                Some(&format!(r#"["*:{p}", "one.test:{q}"]"#)),
                &prefix,
            ),
            tool("loop", Some(&format!(r#"["loop.test:{p}"]"#)), &prefix),
        ]
        .concat(),
    );
    let mut server = serve(&workspace, &[]);
    let mut tally = Tally::default();
    for host in ["localhost", "app.localhost"] {
        tally.control(
            &format!("{host} when the list names it"),
            &probe(&mut server, "local", &["connect", host, &p]),
            "one",
        );
    }
    tally.denied(
        "localhost on a port the list does not name",
        &probe(&mut server, "local", &["connect", "localhost", &q]),
        "status 403",
    );
    tally.denied(
        "localhost through `*`",
        &probe(&mut server, "star", &["connect", "localhost", &p]),
        "status 403",
    );
    tally.denied(
        "a listed name that resolves to loopback",
        &probe(&mut server, "loop", &["connect", "loop.test", &p]),
        "status 403",
    );
    tally.denied(
        "127.0.0.1 under a list that names localhost",
        &probe(&mut server, "local", &["connect", "127.0.0.1", &p]),
        "status 403",
    );
}

#[test]
fn one_tool_cannot_use_another_tools_allowance() {
    let Listeners { port, .. } = listeners();
    let (_, prefix) = python();
    let p = port.to_string();
    let workspace = workspace(
        &[
            tool(
                "a",
                Some(&format!(r#"["one.test:{p}", "127.0.0.1:{p}"]"#)),
                &prefix,
            ),
            tool(
                "b",
                Some(&format!(r#"["two.test:{p}", "127.0.0.2:{p}"]"#)),
                &prefix,
            ),
        ]
        .concat(),
    );
    let mut tally = Tally::default();
    // In a namespace of its own: the forwarder names the call, whatever the program sends.
    let mut server = serve(&workspace, &[]);
    tally.control(
        "a reaches its own",
        &probe(&mut server, "a", &["connect", "one.test", &p]),
        "one",
    );
    tally.control(
        "b reaches its own",
        &probe(&mut server, "b", &["connect", "two.test", &p]),
        "two",
    );
    tally.denied(
        "b asks for a's host",
        &probe(&mut server, "b", &["connect", "one.test", &p]),
        "status 403",
    );
    assert_eq!(
        probe(&mut server, "a", &["token"]),
        "None",
        "no credentials in the proxy URL"
    );
    tally.denied(
        "b with made-up credentials",
        &probe(
            &mut server,
            "b",
            &[
                "connect-as",
                "0123456789abcdef0123456789abcdef",
                "one.test",
                &p,
            ],
        ),
        "status 403",
    );
    drop(server);

    // On the host's loopback (no network namespace): the credentials name the call.
    let mut server = serve(&workspace, &[("MCP_SERVE_NETWORK_NAMESPACES", "0")]);
    let stolen = probe(&mut server, "a", &["token"]);
    assert_eq!(stolen.len(), 32, "a token: {stolen}");
    tally.control(
        "a reaches its own with its credentials",
        &probe(&mut server, "a", &["connect", "one.test", &p]),
        "one",
    );
    tally.denied(
        "b asks for a's host",
        &probe(&mut server, "b", &["connect", "one.test", &p]),
        "status 403",
    );
    tally.denied(
        "b with a's token, once a's call has ended",
        &probe(&mut server, "b", &["connect-as", &stolen, "one.test", &p]),
        "status 407",
    );
    tally.denied(
        "b without credentials",
        &probe(&mut server, "b", &["connect-as", "none", "one.test", &p]),
        "status 407",
    );
    tally.denied(
        "b with made-up credentials",
        &probe(
            &mut server,
            "b",
            &[
                "connect-as",
                "0123456789abcdef0123456789abcdef",
                "one.test",
                &p,
            ],
        ),
        "status 407",
    );
    eprintln!(
        "allowances: {} attacks tried, {} denied; {} controls reached their target",
        tally.attacks, tally.denied, tally.controls
    );
}

#[test]
fn without_a_network_namespace_landlock_holds_a_host_list_to_the_proxys_port() {
    if crate::sandbox::landlock_abi() < 4 {
        crate::harness::skip(
            Feature::Landlock(4),
            "TCP rules need Landlock ABI 4 (Linux 6.7)",
        );
        return;
    }
    let Listeners { port, .. } = listeners();
    let (_, prefix) = python();
    let p = port.to_string();
    let list = format!(r#"["one.test:{p}", "127.0.0.1:{p}"]"#);
    let workspace = workspace(
        &[
            tool("one", Some(&list), &prefix),
            tool("unconfined", None, &prefix),
        ]
        .concat(),
    );
    let without = [("MCP_SERVE_NETWORK_NAMESPACES", "0")];
    let (code, stderr) = check_stderr(&workspace, &without);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("TCP connect to the proxy's port only (Landlock): a program that ignores the proxy variables gets no network, but for that port on other hosts")
            && stderr.contains("NOT enforced: a network namespace (needs user namespaces)"),
        "{stderr}"
    );
    let mut server = serve(&workspace, &without);
    let mut tally = Tally::default();
    assert_eq!(
        probe(
            &mut server,
            "one",
            &["get", &format!("http://one.test:{p}/")]
        ),
        "one"
    );
    tally.denied(
        "CONNECT to the unlisted name",
        &probe(&mut server, "one", &["connect", "two.test", &p]),
        "status 403",
    );
    for address in ["127.0.0.1", "127.0.0.2"] {
        tally.denied(
            &format!("a direct connect to {address}"),
            &probe(&mut server, "one", &["direct", address, &p]),
            "refused 13",
        );
    }
    tally.denied(
        "a datagram around the proxy",
        &probe(&mut server, "one", &["udp", "127.0.0.1", &p]),
        "refused 1",
    );
    tally.control(
        "127.0.0.2 unconfined",
        &probe(&mut server, "unconfined", &["direct", "127.0.0.2", &p]),
        "connected",
    );
    drop(server);

    // `required = true` refuses to serve it so.
    std::fs::write(
        workspace.manifest(),
        format!("{}required = true\n", tool("one", Some(&list), &prefix)),
    )
    .expect("manifest");
    let (code, stderr) = check_stderr(&workspace, &without);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "the sandbox is required, but this kernel cannot enforce: a network namespace"
        ),
        "{stderr}"
    );
    eprintln!(
        "without namespaces: {} attacks tried, {} denied; {} controls reached their target",
        tally.attacks, tally.denied, tally.controls
    );
}

#[test]
fn a_host_list_tool_ends_as_its_program_ends_with_stdio_untouched() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "status"
arguments.code = { type = "integer" }
command.script = 'read -r line; echo "$line"; echo "$line to stderr" >&2; exit "$1"'
command.args = ["{code}"]
command.stdin = "json"
command.success-codes = [0]
sandbox = { network = ["api.example.com:443"] }

[[tools]]
name = "spin"
command.script = 'while :; do :; done'
command.timeout = "60s"
sandbox = { network = ["api.example.com:443"], cpu = "1s" }

[[tools]]
name = "graceful"
command.script = 'trap "echo TERM >> out/term.txt; exit 3" TERM; sleep 302 & wait'
command.timeout = "1s"
sandbox = { network = ["api.example.com:443"], write = ["./out"] }
"#,
    );
    std::fs::create_dir(workspace.path("out")).expect("out");
    // The timeout's SIGTERM reaches the program, with the call's own PID namespace and
    // without (where the trampoline forwards, with the signal held in its threads only).
    for pid_namespaces in ["1", "0"] {
        let mut server = Server::start_command(
            std::process::Command::new(crate::harness::BINARY)
                .env("MCP_SERVE_PID_NAMESPACES", pid_namespaces)
                .arg("--config")
                .arg(workspace.manifest()),
        );
        server.handshake("2025-11-25");
        let result = server.call("graceful", json!({}));
        assert!(text(&result).contains("timed out after 1s"), "{result}");
    }
    let term = std::fs::read_to_string(workspace.path("out/term.txt"));
    assert_eq!(
        term.ok().as_deref(),
        Some("TERM\nTERM\n"),
        "both trapped SIGTERM"
    );
    let mut server = workspace.serve_legacy();
    let result = server.call("status", json!({"code": 0}));
    assert_eq!(text(&result), r#"{"code":0}"#, "{result}");
    let result = server.call("status", json!({"code": 3}));
    assert!(
        text(&result).starts_with("`sh` exited with status 3")
            && text(&result).contains(r#"{"code":3} to stderr"#),
        "{result}"
    );
    let result = server.call("spin", json!({}));
    assert!(
        text(&result).contains("exceeded its CPU time limit of 1s"),
        "the program's signal passes through the trampoline: {result}"
    );
}

#[test]
fn check_says_what_each_form_of_network_list_means() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "hosts"
command.argv = ["true"]
sandbox = { network = ["api.github.com:443", "*.githubusercontent.com:443"] }

[[tools]]
name = "ports"
command.argv = ["true"]
sandbox = { network = ["*:443", "127.0.0.1:8080", 22] }
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("network: only api.github.com:443, *.githubusercontent.com:443 through the server's egress proxy")
            && stderr.contains("a program that ignores the proxy variables gets no network"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("TCP connect to ports of *:443, 127.0.0.1:8080, *:22 only, by port not host"),
        "{stderr}"
    );

    let workspace = Workspace::new(
        r#"
[server.sandbox]
network = ["*.example.com:443"]

[[tools]]
name = "narrower"
command.argv = ["true"]
sandbox = { network = ["api.example.com:443"] }

[[tools]]
name = "other-host"
command.argv = ["true"]
sandbox = { network = ["api.example.org:443"] }

[[tools]]
name = "direct"
command.argv = ["true"]
sandbox = { network = ["*:443"] }

[[tools]]
name = "bad"
command.argv = ["true"]
sandbox = { network = ["exa mple.com:443", "*.*.example.com:443"] }
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr
            .matches("`network` widens the server's sandbox")
            .count(),
        2,
        "other-host and direct: {stderr}"
    );
    assert!(
        stderr.contains("`exa mple.com` is not a host name")
            && stderr.contains("`*.*.example.com` is not a host name"),
        "{stderr}"
    );
}

#[test]
fn a_host_list_holds_for_a_server_running_as_a_user() {
    let Listeners { port, .. } = listeners();
    let list = format!(r#"["one.test:{port}", "127.0.0.1:{port}"]"#);
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "fetch"
arguments.url = {{ type = "string" }}
command.argv = ["curl", "-sS", "{{url}}"]
sandbox = {{ network = {list} }}

[[tools]]
name = "direct"
arguments.url = {{ type = "string" }}
command.argv = ["curl", "-sS", "--noproxy", "*", "{{url}}"]
sandbox = {{ network = {list} }}

[[tools]]
name = "unconfined"
arguments.url = {{ type = "string" }}
command.argv = ["curl", "-sS", "--noproxy", "*", "{{url}}"]
"#
    ));
    // The namespace is made through a user namespace of the call's own.
    let mut server = Server::start_command(
        crate::harness::unprivileged(&workspace)
            .args(["--config", workspace.manifest().to_str().expect("path")])
            .env("MCP_SERVE_RESOLVE", RESOLVE),
    );
    server.handshake("2025-11-25");
    let fetch = |server: &mut Server, tool: &str, url: String| {
        let result = server.call(tool, json!({ "url": url }));
        text(&result).trim().to_owned()
    };
    let listed = fetch(&mut server, "fetch", format!("http://one.test:{port}/"));
    if listed.contains("could not create") {
        crate::harness::skip(
            Feature::UserNamespaces,
            "this kernel gives users no user namespaces",
        );
        return;
    }
    let mut tally = Tally::default();
    assert_eq!(listed, "one");
    tally.denied(
        "the unlisted name",
        &fetch(&mut server, "fetch", format!("http://two.test:{port}/")),
        &format!("mcp-serve egress proxy: `two.test:{port}` is not in this tool's network list"),
    );
    let direct = fetch(&mut server, "direct", format!("http://127.0.0.1:{port}/"));
    tally.denied(
        "a direct connect",
        direct.lines().next().unwrap_or_default(),
        "`curl` exited with status 7",
    );
    tally.control(
        "unconfined",
        &fetch(
            &mut server,
            "unconfined",
            format!("http://127.0.0.2:{port}/"),
        ),
        "two",
    );
    eprintln!(
        "as a user: {} attacks tried, {} denied; {} controls reached their target",
        tally.attacks, tally.denied, tally.controls
    );
}
