//! Domain fronting through a host list, attacked with a real program: a sandboxed Python
//! client opens a `CONNECT` tunnel to the listed `one.test` (pinned to 127.0.0.1 with
//! `MCP_SERVE_RESOLVE`), then names `two.test` inside it: in its TLS ClientHello (SNI,
//! made by Python's own `ssl`) or in a plain-HTTP `Host`. The upstream is a local listener
//! that records every byte it receives, so "refused" means it received none. Each attack
//! has its control: the same bytes naming the listed host reach the listener.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use crate::harness::{Server, Workspace, python};
use crate::sandbox_network::{metrics, probe, serve};

/// `tls HOST PORT SNI` (`-`: none) opens a tunnel and a TLS handshake in it;
/// `http HOST PORT NAME[,NAME…]` sends one request per name, all in one write, and prints
/// the first line of what comes back.
const FRONT: &str = r"
import base64, os, socket, ssl, sys, urllib.parse
mode, host, port, names = sys.argv[1:5]
proxy = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])
s = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
auth = '' if proxy.password is None else 'Proxy-Authorization: Basic %s\r\n' % base64.b64encode(('call:' + proxy.password).encode()).decode()
s.sendall(('CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n%s\r\n' % (host, port, host, port, auth)).encode())
head = b''
while not head.endswith(b'\r\n\r\n'):
    byte = s.recv(1)
    if not byte:
        break
    head += byte
status = head.split()[1].decode()
if status != '200':
    print('status', status)
    sys.exit()
try:
    if mode == 'tls':
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            context.wrap_socket(s, server_hostname=None if names == '-' else names)
            print('handshake')
        except ssl.SSLError as e:
            print('tls', e.reason)
    elif mode == 'http':
        s.sendall(''.join('GET / HTTP/1.1\r\nHost: %s\r\n\r\n' % name for name in names.split(',')).encode())
        answer = b''
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        print(answer.split(b'\r\n', 1)[0].decode() or 'closed')
except OSError as e:
    print('closed', e.errno)
";

/// A listener on 127.0.0.1 that reports what each connection sent (after a quiet second, or
/// its end), answering a plain-HTTP request with `200`.
fn recorder() -> (u16, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("address").port();
    let (sender, received) = mpsc::channel();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            stream
                .set_read_timeout(Some(Duration::from_secs(1)))
                .expect("timeout");
            let mut got = Vec::new();
            let mut chunk = [0; 4096];
            while let Ok(read) = stream.read(&mut chunk) {
                if read == 0 {
                    break;
                }
                got.extend_from_slice(&chunk[..read]);
            }
            if got.starts_with(b"GET ") {
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nrecorded",
                );
            }
            drop(stream);
            if sender.send(got).is_err() {
                return;
            }
        }
    });
    (port, received)
}

fn tool(prefix: &str, port: u16) -> String {
    let (python, _) = python();
    format!(
        "[[tools]]\nname = \"front\"\narguments.args = {{ type = \"array\", items = {{ type = \"string\" }} }}\n\
         command.argv = [\"{python}\", \"./front.py\", \"{{args}}\"]\n\
         [tools.sandbox]\nexecute = [\"{prefix}\"]\nread = [\"./front.py\"]\n\
         network = [\"one.test:{port}\", \"127.0.0.1:{port}\"]\n"
    )
}

/// What the listener received from the one connection the proxy opened for a probe.
fn upstream_got(received: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    received
        .recv_timeout(Duration::from_secs(15))
        .expect("the proxy connected upstream")
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn a_tunnel_to_a_listed_name_carries_only_that_name() {
    let (port, received) = recorder();
    let (_, prefix) = python();
    let workspace = Workspace::new(&tool(&prefix, port));
    std::fs::write(workspace.path("front.py"), FRONT).expect("probe");
    let mut server: Server = serve(&workspace, &[]);
    let p = port.to_string();
    let mut front = |args: &[&str]| probe(&mut server, "front", args);
    let (mut attacks, mut controls) = (0, 0);

    // TLS: the ClientHello's SNI names another host on the same server.
    let output = front(&["tls", "one.test", &p, "two.test"]);
    assert_eq!(
        output, "tls TLSV1_UNRECOGNIZED_NAME",
        "attack: SNI two.test"
    );
    assert_eq!(upstream_got(&received), b"", "attack: SNI two.test");
    attacks += 1;
    // Control: the same handshake naming the listed host reaches the listener, whole.
    let output = front(&["tls", "one.test", &p, "one.test"]);
    let got = upstream_got(&received);
    assert!(
        got.first() == Some(&22) && contains(&got, "one.test"),
        "control: SNI one.test ({output}): {got:?}"
    );
    controls += 1;
    // No SNI at all: carried (the server's default site), and logged.
    front(&["tls", "one.test", &p, "-"]);
    assert_eq!(upstream_got(&received).first(), Some(&22), "no SNI");

    // Plain HTTP: the first request names another host.
    let output = front(&["http", "one.test", &p, "two.test"]);
    assert_eq!(output, "HTTP/1.1 403 Forbidden", "attack: Host two.test");
    assert_eq!(upstream_got(&received), b"", "attack: Host two.test");
    attacks += 1;
    // A second request on the same tunnel names it, sent with the first.
    front(&["http", "one.test", &p, "one.test,two.test"]);
    let got = upstream_got(&received);
    assert!(
        contains(&got, "Host: one.test") && !contains(&got, "two.test"),
        "attack: a second request's Host two.test: {}",
        String::from_utf8_lossy(&got)
    );
    attacks += 1;
    // Control: the listed host, twice, reaches the listener as sent.
    let output = front(&["http", "one.test", &p, "one.test,one.test"]);
    assert_eq!(output, "HTTP/1.1 200 OK", "control: Host one.test");
    assert_eq!(
        upstream_got(&received),
        b"GET / HTTP/1.1\r\nHost: one.test\r\n\r\nGET / HTTP/1.1\r\nHost: one.test\r\n\r\n"
    );
    controls += 1;

    let log = server.stderr();
    assert!(
        log.contains("reason=\"fronting\"")
            && log.contains("its TLS ClientHello names `two.test` (SNI)")
            && log.contains("a request inside it names `two.test`")
            && log.contains("names no server (no SNI)"),
        "{log}"
    );
    let counted = metrics(&server);
    for (decision, reason, count) in [("deny", "fronting", 3), ("allow", "listed", 6)] {
        let series = format!(
            "mcp_serve_egress_decisions_total{{tool=\"front\",decision=\"{decision}\",reason=\"{reason}\"}} {count}\n"
        );
        assert!(counted.contains(&series), "{series} in {counted}");
    }
    eprintln!(
        "fronting: {attacks} attacks tried, {attacks} denied; {controls} controls reached their target"
    );
}
