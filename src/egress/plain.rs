//! A plain-HTTP request inside a `CONNECT` tunnel: its head read whole (httparse), its
//! target's authority and its `Host` checked against the tunnel's host and port, then sent on
//! rebuilt from what was parsed (so the server reads the very head the proxy checked, never a
//! byte a looser parser would read otherwise), its body framed by `Content-Length`.

use super::allow::Host;
use super::request::{self, MAX_HEAD, Malformed};

/// One request head, checked.
#[derive(Debug)]
pub(super) struct Head {
    /// The head to send on, ending with the blank line.
    pub(super) bytes: Vec<u8>,
    /// How many of the client's bytes it took.
    pub(super) length: usize,
    /// The length of its body.
    pub(super) body: u64,
    /// It asks to become a WebSocket: after a `101`, what follows is not HTTP.
    pub(super) upgrade: bool,
}

/// Why a request inside a tunnel is refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    #[error("a request inside it names `{named}`")]
    Fronting { named: String },
    #[error("a request inside it asks to upgrade to `{0}` (only `websocket` is carried)")]
    Upgrade(String),
    #[error("`{0}` inside it is neither a path nor an absolute URL")]
    Target(String),
    #[error("a request inside it: {0}")]
    Malformed(#[from] Malformed),
}

impl Refused {
    /// The status the client gets (when the refused request is the tunnel's first).
    pub(super) fn status(&self) -> u16 {
        match self {
            Self::Fronting { .. } | Self::Upgrade(_) => 403,
            Self::Target(_) => 400,
            Self::Malformed(malformed) => malformed.status(),
        }
    }

    /// The metric label and log word.
    pub(super) fn reason(&self) -> &'static str {
        match self {
            Self::Fronting { .. } => "fronting",
            _ => "bad-request",
        }
    }
}

/// The request head at the start of `bytes`, checked against the tunnel's `host` and `port`;
/// `Ok(None)` until it is whole.
pub(super) fn head(bytes: &[u8], host: &Host, port: u16) -> Result<Option<Head>, Refused> {
    let mut headers = [httparse::EMPTY_HEADER; 96];
    let mut request = httparse::Request::new(&mut headers);
    let length = match request.parse(bytes).map_err(Malformed::Parse)? {
        httparse::Status::Complete(length) if length <= MAX_HEAD => length,
        httparse::Status::Partial if bytes.len() <= MAX_HEAD => return Ok(None),
        _ => return Err(Malformed::TooLong.into()),
    };
    let method = request.method.unwrap_or_default();
    let target = request.path.unwrap_or_default();
    let names_the_tunnel = |text: &str| {
        request::authority_parts(text.trim()).is_some_and(|(named, named_port)| {
            named == *host && named_port.is_none_or(|p| p == port)
        })
    };
    let fronting = |named: &[u8]| Refused::Fronting {
        named: String::from_utf8_lossy(named).into_owned(),
    };
    if let Some(authority) = authority(method, target)?
        && !names_the_tunnel(authority)
    {
        return Err(fronting(authority.as_bytes()));
    }
    let mut hosts = request::named(request.headers, "host");
    if let Some(named) = hosts.next() {
        if hosts.next().is_some() {
            return Err(Malformed::Hosts.into());
        }
        if !std::str::from_utf8(named).is_ok_and(names_the_tunnel) {
            return Err(fronting(named));
        }
    }
    if request::named(request.headers, "transfer-encoding")
        .next()
        .is_some()
    {
        return Err(Malformed::Chunked.into());
    }
    let body = request::content_length(request.headers)?;
    let mut upgrade = false;
    for asked in request::named(request.headers, "upgrade") {
        if !asked.trim_ascii().eq_ignore_ascii_case(b"websocket") {
            return Err(Refused::Upgrade(
                String::from_utf8_lossy(asked).into_owned(),
            ));
        }
        upgrade = true;
    }
    let version = request.version.unwrap_or(1);
    let mut rebuilt = format!("{method} {target} HTTP/1.{version}\r\n").into_bytes();
    for header in request.headers.iter() {
        rebuilt.extend_from_slice(header.name.as_bytes());
        rebuilt.extend_from_slice(b": ");
        rebuilt.extend_from_slice(header.value);
        rebuilt.extend_from_slice(b"\r\n");
    }
    rebuilt.extend_from_slice(b"\r\n");
    Ok(Some(Head {
        bytes: rebuilt,
        length,
        body,
        upgrade,
    }))
}

/// The authority a request target names: all of `CONNECT`'s, an absolute URL's
/// (`scheme://authority/…`, which a server takes over `Host`); none for a path or `*`.
fn authority<'t>(method: &str, target: &'t str) -> Result<Option<&'t str>, Refused> {
    if method.eq_ignore_ascii_case("CONNECT") {
        return Ok(Some(target));
    }
    if target.starts_with('/') || target == "*" {
        return Ok(None);
    }
    let (scheme, rest) = target
        .split_once("://")
        .ok_or_else(|| Refused::Target(target.to_owned()))?;
    if scheme.is_empty() || !scheme.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
        return Err(Refused::Target(target.to_owned()));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Ok(Some(&rest[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Option<Head>, Refused> {
        head(text.as_bytes(), &Host::Name("one.test".into()), 8080)
    }

    #[test]
    fn a_request_for_the_tunnels_host_is_passed_on_as_it_was_parsed() {
        for text in [
            "GET / HTTP/1.1\r\nHost: one.test\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: ONE.test.:8080\r\n\r\n",
            "GET http://one.test:8080/a?b HTTP/1.1\r\nHost: one.test\r\n\r\n",
            "GET http://one.test HTTP/1.1\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\nHost: one.test\r\n\r\n",
            "GET / HTTP/1.0\r\n\r\n",
            "\r\nGET / HTTP/1.1\r\nHost: one.test\r\n\r\n",
        ] {
            let head = check(text).expect(text).expect("whole");
            assert_eq!(head.length, text.len(), "{text}");
            assert_eq!(head.bytes, text.trim_start().as_bytes(), "{text}");
        }
        let text = "GET / HTTP/1.1\nHost: one.test\nContent-Length: 3\n\nabc";
        let lax = check(text).expect("lax").expect("whole");
        assert_eq!(
            (lax.bytes.as_slice(), lax.length, lax.body),
            (
                &b"GET / HTTP/1.1\r\nHost: one.test\r\nContent-Length: 3\r\n\r\n"[..],
                text.len() - 3,
                3
            )
        );
        let socket = check("GET /ws HTTP/1.1\r\nHost: one.test\r\nUpgrade: WebSocket\r\n\r\n")
            .expect("websocket")
            .expect("whole");
        assert!(socket.upgrade);
        assert!(matches!(
            check("GET / HTTP/1.1\r\nHost: one.test\r\n"),
            Ok(None)
        ));
    }

    #[test]
    fn another_name_or_port_anywhere_in_the_head_is_fronting() {
        for (text, named) in [
            ("GET / HTTP/1.1\r\nHost: two.test\r\n\r\n", "two.test"),
            (
                "GET / HTTP/1.1\r\nHost: one.test:8081\r\n\r\n",
                "one.test:8081",
            ),
            (
                "GET / HTTP/1.1\r\nHost: one.test.two.test\r\n\r\n",
                "one.test.two.test",
            ),
            (
                "GET / HTTP/1.1\r\nHost: user@one.test\r\n\r\n",
                "user@one.test",
            ),
            (
                "GET http://two.test/ HTTP/1.1\r\nHost: one.test\r\n\r\n",
                "two.test",
            ),
            (
                "GET https://one.test:443/ HTTP/1.1\r\nHost: one.test\r\n\r\n",
                "one.test:443",
            ),
            (
                "CONNECT two.test:8080 HTTP/1.1\r\nHost: one.test\r\n\r\n",
                "two.test:8080",
            ),
        ] {
            match check(text) {
                Err(Refused::Fronting { named: found }) => assert_eq!(found, named, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn what_could_be_read_two_ways_is_refused() {
        for (text, status) in [
            (
                "GET / HTTP/1.1\r\nHost: one.test\r\nHost: two.test\r\n\r\n",
                400,
            ),
            (
                "POST / HTTP/1.1\r\nHost: one.test\r\nContent-Length: 1\r\nContent-Length: 9\r\n\r\n",
                400,
            ),
            ("POST / HTTP/1.1\r\nContent-Length: +9\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("GET two.test/ HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", 403),
            (
                "GET / HTTP/1.1\r\nUpgrade: websocket\r\nUpgrade: h2c\r\n\r\n",
                403,
            ),
            ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
            (" GET / HTTP/1.1\r\nHost: two.test\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost : two.test\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nX: a\r\n folded: two.test\r\n\r\n", 400),
        ] {
            let refused = check(text).expect_err(text);
            assert_eq!(refused.status(), status, "{text}: {refused}");
        }
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(check(&long).expect_err("long").status(), 431);
        assert_eq!(check(&long[..=MAX_HEAD]).expect_err("long").status(), 431);
    }
}
