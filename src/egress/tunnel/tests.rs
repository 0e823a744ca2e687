use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::egress::Allowance;
use crate::egress::hello::tests::{in_records, retry_request, rustls_hello};
use crate::egress::request::Kind;

const ONE: &str = "one.test";

/// A tunnel being carried: the client's end, the server's end, and the proxy's counts.
struct Tunnel {
    client: DuplexStream,
    server: DuplexStream,
    metrics: Arc<crate::metrics::Metrics>,
}

/// A tunnel to `host:443`, the `CONNECT` followed by `rest`, its `200` read.
async fn open(host: &str, rest: &[u8]) -> Tunnel {
    let (mut client, proxy) = tokio::io::duplex(64 * 1024);
    let (server, upstream) = tokio::io::duplex(64 * 1024);
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let egress = Egress::new(Some(Arc::clone(&metrics)));
    let allowed = Allowed {
        tool: "t".into(),
        call: "c".into(),
        allowance: Arc::new(Allowance { rules: Vec::new() }),
        ended: CancellationToken::new(),
        held: Arc::default(),
    };
    let request = Request {
        kind: Kind::Connect,
        host: Host::target(host).expect("a host"),
        port: 443,
        authority: format!("{host}:443"),
        token: None,
        rest: rest.to_vec(),
    };
    tokio::spawn(async move { egress.tunnel(&allowed, proxy, upstream, request).await });
    let mut established = vec![0; ESTABLISHED.len()];
    client.read_exact(&mut established).await.expect("200");
    assert_eq!(established, ESTABLISHED);
    Tunnel {
        client,
        server,
        metrics,
    }
}

impl Tunnel {
    /// What the server receives from now until the proxy closes its side.
    async fn server_got(&mut self) -> Vec<u8> {
        let mut got = Vec::new();
        self.server.read_to_end(&mut got).await.expect("read");
        got
    }

    /// What the client receives from now until the proxy closes its side.
    async fn client_got(&mut self) -> Vec<u8> {
        let mut got = Vec::new();
        self.client.read_to_end(&mut got).await.expect("read");
        got
    }

    /// Exactly `bytes`, at the server.
    async fn server_reads(&mut self, bytes: &[u8]) {
        let mut got = vec![0; bytes.len()];
        self.server.read_exact(&mut got).await.expect("read");
        assert_eq!(got, bytes);
    }

    /// Exactly `bytes`, at the client.
    async fn client_reads(&mut self, bytes: &[u8]) {
        let mut got = vec![0; bytes.len()];
        self.client.read_exact(&mut got).await.expect("read");
        assert_eq!(got, bytes);
    }

    /// Written by the client in pieces of `size`, each in its own write.
    async fn client_sends(&mut self, bytes: &[u8], size: usize) {
        for piece in bytes.chunks(size) {
            self.client.write_all(piece).await.expect("write");
            tokio::task::yield_now().await;
        }
    }

    fn denied(&self, reason: &str) -> bool {
        self.metrics.render().contains(&format!(
            "mcp_serve_egress_decisions_total{{tool=\"t\",decision=\"deny\",reason=\"{reason}\"}} 1\n"
        ))
    }
}

#[tokio::test]
async fn a_client_hello_for_another_host_is_refused_before_a_byte_goes_upstream() {
    for name in ["two.test", "one.test.two.test", "one.tes"] {
        let mut tunnel = open(ONE, b"").await;
        tunnel.client_sends(&rustls_hello(name, true), 100).await;
        assert_eq!(
            tunnel.client_got().await,
            hello::alert(Alert::UnrecognizedName),
            "{name}"
        );
        assert_eq!(tunnel.server_got().await, b"", "{name}");
        assert!(tunnel.denied("fronting"), "{name}");
    }
    // A tunnel to an address: a name in the SNI is another host.
    let mut tunnel = open("127.0.0.1", b"").await;
    tunnel.client_sends(&rustls_hello(ONE, true), 1000).await;
    assert_eq!(tunnel.server_got().await, b"");
    assert!(tunnel.denied("fronting"));
}

#[tokio::test]
async fn a_client_hello_for_the_tunnels_host_goes_on_whole_however_it_comes() {
    let hello = rustls_hello(ONE, true);
    for (what, bytes, with_connect, size) in [
        ("in one write", hello.clone(), 0, usize::MAX),
        ("a byte at a time", hello.clone(), 0, 1),
        ("in records of 7", in_records(&hello, 7), 0, 5),
        ("partly with the CONNECT", hello.clone(), 10, 100),
        ("all with the CONNECT", hello.clone(), hello.len(), 1),
    ] {
        let mut tunnel = open(ONE, &bytes[..with_connect]).await;
        tunnel.client_sends(&bytes[with_connect..], size).await;
        tunnel.server_reads(&bytes).await;
        // Then both ways, as they come.
        tunnel
            .server
            .write_all(b"\x16\x03\x03hello")
            .await
            .expect("write");
        tunnel.client_reads(b"\x16\x03\x03hello").await;
        tunnel
            .client_sends(b"\x17\x03\x03\xff\xffencrypted", 3)
            .await;
        tunnel.server_reads(b"\x17\x03\x03\xff\xffencrypted").await;
        tunnel.client.shutdown().await.expect("shut down");
        assert_eq!(tunnel.server_got().await, b"", "{what}");
    }
    // A server that answers with a byte: passed on at once.
    let mut tunnel = open(ONE, b"").await;
    tunnel.client_sends(&hello, 1000).await;
    tunnel.server_reads(&hello).await;
    tunnel.server.write_all(b"x").await.expect("write");
    tunnel.client_reads(b"x").await;
    // No SNI to a name: carried (and logged).
    let mut tunnel = open(ONE, b"").await;
    let bare = rustls_hello(ONE, false);
    tunnel.client_sends(&bare, 1000).await;
    tunnel.server_reads(&bare).await;
}

#[tokio::test]
async fn a_second_client_hello_after_a_retry_request_is_checked_as_the_first() {
    // A client in middlebox compatibility mode sends a change of cipher spec before it.
    let change = [20, 3, 3, 0, 1, 1];
    for (second, carried) in [(ONE, true), ("two.test", false)] {
        let mut tunnel = open(ONE, b"").await;
        let first = rustls_hello(ONE, true);
        tunnel.client_sends(&first, 1000).await;
        tunnel.server_reads(&first).await;
        tunnel
            .server
            .write_all(&retry_request())
            .await
            .expect("write");
        tunnel.client_reads(&retry_request()).await;
        let hello = rustls_hello(second, true);
        tunnel
            .client_sends(&[&change[..], &hello].concat(), 50)
            .await;
        if carried {
            tunnel.server_reads(&[&change[..], &hello].concat()).await;
        } else {
            assert_eq!(tunnel.server_got().await, change, "the hello never");
            assert!(tunnel.denied("fronting"));
        }
    }
}

#[tokio::test]
async fn a_second_client_hello_sent_ahead_waits_for_the_servers_answer() {
    let (first, second) = (rustls_hello(ONE, true), rustls_hello("two.test", true));
    for retry in [true, false] {
        let mut tunnel = open(ONE, b"").await;
        tunnel
            .client_sends(&[&first[..], &second].concat(), 4096)
            .await;
        tunnel.server_reads(&first).await;
        let early = tokio::time::timeout(Duration::from_millis(50), tunnel.server.read_u8()).await;
        assert!(early.is_err(), "nothing before the server answers");
        if retry {
            tunnel
                .server
                .write_all(&retry_request())
                .await
                .expect("write");
            assert_eq!(tunnel.server_got().await, b"");
            assert!(tunnel.denied("fronting"));
        } else {
            // A ServerHello: the client's next records are the server's to judge.
            let mut hello = retry_request();
            hello[20] ^= 1;
            tunnel.server.write_all(&hello).await.expect("write");
            tunnel.server_reads(&second).await;
        }
    }
}

#[tokio::test]
async fn every_request_on_a_plain_tunnel_must_name_its_host() {
    let mut tunnel = open(ONE, b"").await;
    let body = "Host: two.test\r\n\r\nGET / HTTP/1.1\r\nHost: two.test\r\n\r\n";
    let first = format!(
        "POST / HTTP/1.1\r\nHost: one.test\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let second = "GET http://one.test/ HTTP/1.1\r\nHost: one.test:443\r\n\r\n";
    let third = "GET / HTTP/1.1\r\nHost: two.test\r\n\r\n";
    tunnel
        .client_sends(format!("{first}{second}{third}").as_bytes(), 9)
        .await;
    assert_eq!(
        tunnel.server_got().await,
        format!("{first}{second}").as_bytes()
    );
    assert!(tunnel.denied("fronting"));

    // The first: answered by the proxy, as the server would.
    let mut tunnel = open(ONE, b"").await;
    tunnel
        .client_sends(
            b"GET http://two.test/ HTTP/1.1\r\nHost: one.test\r\n\r\n",
            100,
        )
        .await;
    let answer = String::from_utf8(tunnel.client_got().await).expect("text");
    assert!(
        answer.starts_with("HTTP/1.1 403 Forbidden\r\n")
            && answer.contains("a tunnel to `one.test:443`: a request inside it names `two.test`"),
        "{answer}"
    );
    assert_eq!(tunnel.server_got().await, b"");
    assert!(tunnel.denied("fronting"));
}

#[tokio::test]
async fn a_websocket_is_carried_once_the_server_switches() {
    let upgrade =
        "GET /ws HTTP/1.1\r\nHost: one.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    let frame = b"\x81\x05hello";
    for (status, carried) in [("101 Switching Protocols", true), ("200 OK", false)] {
        let mut tunnel = open(ONE, b"").await;
        tunnel.client_sends(upgrade.as_bytes(), 1000).await;
        tunnel.server_reads(upgrade.as_bytes()).await;
        // What the client sends before the answer waits for it.
        tunnel.client_sends(frame, 1000).await;
        let answer = format!("HTTP/1.1 {status}\r\n\r\n");
        tunnel
            .server
            .write_all(answer.as_bytes())
            .await
            .expect("write");
        tunnel.client_reads(answer.as_bytes()).await;
        if carried {
            tunnel.server_reads(frame).await;
        } else {
            assert_eq!(tunnel.server_got().await, b"", "{status}");
            assert!(tunnel.denied("bad-request"));
        }
    }
}

#[tokio::test]
async fn other_protocols_are_carried_and_the_server_may_speak_first() {
    let mut tunnel = open(ONE, b"").await;
    tunnel
        .server
        .write_all(b"SSH-2.0-server\r\n")
        .await
        .expect("write");
    tunnel.client_reads(b"SSH-2.0-server\r\n").await;
    let banner = b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n\x00\x00\x01";
    tunnel.client_sends(banner, 4).await;
    tunnel.server_reads(banner).await;
    // PostgreSQL's first message: binary from its first byte.
    let mut tunnel = open(ONE, b"").await;
    tunnel.client_sends(b"\0\0\0\x08\x04\xd2\x16\x2f", 1).await;
    tunnel.server_reads(b"\0\0\0\x08\x04\xd2\x16\x2f").await;
}

/// Real time: the three wait out the proxy's five seconds together.
#[tokio::test]
async fn an_opening_that_never_ends_is_refused() {
    let hello = rustls_hello(ONE, true);
    let long = b"x".repeat(MAX_OPENING + 1);
    let cases = [
        (
            "half a ClientHello",
            hello[..hello.len() / 2].to_vec(),
            None,
        ),
        (
            "a request head",
            b"GET / HTTP/1.1\r\nHost: one.test\r\n".to_vec(),
            Some("400"),
        ),
        ("a line without end", long, Some("431")),
    ];
    let started = std::time::Instant::now();
    let refused = cases.into_iter().map(|(what, bytes, status)| async move {
        let mut tunnel = open(ONE, b"").await;
        tunnel.client_sends(&bytes, 4096).await;
        let answer = tunnel.client_got().await;
        match status {
            None => assert_eq!(answer, hello::alert(Alert::DecodeError), "{what}"),
            Some(status) => assert!(
                answer.starts_with(format!("HTTP/1.1 {status} ").as_bytes()),
                "{what}: {}",
                String::from_utf8_lossy(&answer)
            ),
        }
        assert_eq!(tunnel.server_got().await, b"", "{what}");
        assert!(tunnel.denied("bad-request"), "{what}");
    });
    futures_util::future::join_all(refused).await;
    assert!(started.elapsed() < OPENING_TIMEOUT * 2);
}

#[test]
fn first_bytes_are_told_apart_as_soon_as_they_can_be() {
    for (bytes, expected) in [
        (&b""[..], None),
        (b"GE", None),
        (b"\r\n", None),
        (b"PROXY TCP4 1.2.3.4", None),
        (b"GET / HTTP/1.1", Some(true)),
        (b"\r\n\r\n  GET / HTTP/1.1\r\n", Some(true)),
        (b"\x0cget / http/1.0\n", Some(true)),
        (b"SSH-2.0-OpenSSH_9.6 Ubuntu\r\nGET / HTTP/1.1", Some(false)),
        (b"*1\r\n$4\r\nPING\r\n", Some(false)),
        (b"\0\0\0\x08\x04\xd2\x16\x2f", Some(false)),
        (b"GET /\0", Some(false)),
    ] {
        assert_eq!(
            request_line(bytes),
            expected,
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    for (bytes, expected) in [
        (&b"HTTP/1.1 101 Switching Protocols\r\n"[..], Some(true)),
        (b"HTTP/1.1 101\r\n", Some(true)),
        (b"HTTP/1.0 101 x\n", Some(true)),
        (b"HTTP/1.1 200 OK\r\n", Some(false)),
        (b"HTTP/1.1 1010\r\n", Some(false)),
        (b"SSH-2.0 101\r\n", Some(false)),
        (b"HTTP/1.1 101", None),
        (b"HTTP/", None),
        (b"x", Some(false)),
        (b"HTTP/2 101\r\n", Some(false)),
    ] {
        assert_eq!(switched(bytes), expected);
    }
}

#[test]
fn names_are_compared_as_hosts_are() {
    let hello = |names: &[&str]| ClientHello {
        names: names.iter().map(|&name| name.to_owned()).collect(),
        ech: false,
        length: 0,
    };
    let one = Host::target(ONE).expect("a host");
    let address = Host::target("127.0.0.1").expect("an address");
    for (names, host, stray) in [
        (&["ONE.Test."][..], &one, None),
        (&[], &one, None),
        (&["one.test", "two.test"], &one, Some("two.test")),
        (&["one.test\0"], &one, Some("one.test\0")),
        (&["*.test"], &one, Some("*.test")),
        (&["127.0.0.1"], &address, None),
        (&["one.test"], &address, Some("one.test")),
    ] {
        assert_eq!(stranger(&hello(names), host).as_deref(), stray, "{names:?}");
    }
}
