//! A proxy request's head: read whole (bounded) before anything is decided, then parsed
//! (httparse) into what the proxy needs: the target, the call's token, the headers to pass on.

use base64::Engine as _;
use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::allow::Host;

/// The longest request head read.
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// What a client asked for.
#[derive(Debug)]
pub(super) struct Request {
    pub(super) kind: Kind,
    pub(super) host: Host,
    pub(super) port: u16,
    /// `host:port` as the client wrote it, for logs and messages.
    pub(super) authority: String,
    /// The password of `Proxy-Authorization: Basic …`: which call this is.
    pub(super) token: Option<String>,
    /// Bytes the client sent after the head.
    pub(super) rest: Vec<u8>,
}

#[derive(Debug)]
pub(super) enum Kind {
    /// `CONNECT host:port`: a tunnel.
    Connect,
    /// `GET http://host/path`: one request, forwarded in origin form.
    Forward(Forward),
}

/// A plain-HTTP request to pass on.
#[derive(Debug)]
pub(super) struct Forward {
    /// The request line and headers to send upstream, ending with the blank line.
    pub(super) head: Vec<u8>,
    /// The body's length (`Content-Length`); chunked bodies are refused.
    pub(super) body: u64,
}

/// Why a head is refused before any rule is looked at.
#[derive(Debug, thiserror::Error)]
pub(super) enum Malformed {
    #[error("the request head is longer than {MAX_HEAD} bytes")]
    TooLong,
    #[error("the client closed the connection before the request head ended")]
    Closed,
    #[error("could not read the request: {0}")]
    Io(#[from] std::io::Error),
    #[error("not an HTTP request: {0}")]
    Parse(httparse::Error),
    #[error("`{0}` is not a proxy request (CONNECT host:port, or an absolute http:// URL)")]
    Target(String),
    #[error("the Host header `{header}` is not the URL's host `{url}`")]
    HostMismatch { header: String, url: String },
    #[error("more than one Host header")]
    Hosts,
    #[error("request bodies sent in chunks are not forwarded (send a Content-Length)")]
    Chunked,
    #[error("the Content-Length is not a number")]
    Length,
    #[error("more than one Content-Length header")]
    Lengths,
}

impl Malformed {
    /// The status the client gets.
    pub(super) fn status(&self) -> u16 {
        match self {
            Self::TooLong => 431,
            Self::Chunked => 411,
            _ => 400,
        }
    }
}

/// Reads a head (up to the blank line) and parses it.
pub(super) async fn read(client: &mut (impl AsyncRead + Unpin)) -> Result<Request, Malformed> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 2048];
    loop {
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Err(Malformed::Closed);
        }
        let searched_from = buffer.len().saturating_sub(3);
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer[searched_from..]
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
        {
            let end = searched_from + end + 4;
            if end > MAX_HEAD {
                return Err(Malformed::TooLong);
            }
            let rest = buffer.split_off(end);
            return parse(&buffer, rest);
        }
        if buffer.len() > MAX_HEAD {
            return Err(Malformed::TooLong);
        }
    }
}

fn parse(head: &[u8], rest: Vec<u8>) -> Result<Request, Malformed> {
    let mut headers = [httparse::EMPTY_HEADER; 96];
    let mut request = httparse::Request::new(&mut headers);
    request.parse(head).map_err(Malformed::Parse)?;
    let method = request.method.unwrap_or_default();
    let target = request.path.unwrap_or_default();
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case(name))
            .map(|header| String::from_utf8_lossy(header.value).into_owned())
    };
    let token = header("proxy-authorization").and_then(|value| basic_password(&value));
    let bad_target = || Malformed::Target(target.to_owned());
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None).ok_or_else(bad_target)?;
        return Ok(Request {
            kind: Kind::Connect,
            host,
            port,
            authority: target.to_owned(),
            token,
            rest,
        });
    }
    let url = target
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
        .ok_or_else(bad_target)?;
    let split = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (written, path) = url.split_at(split);
    let (host, port) = authority(written, Some(80)).ok_or_else(bad_target)?;
    // The same host and port, however written (`a.test` is `A.test:80`); one `Host` only, as
    // the server is sent only the URL's.
    if named(request.headers, "host").count() > 1 {
        return Err(Malformed::Hosts);
    }
    if let Some(sent) = header("host")
        && authority(sent.trim(), Some(80)) != Some((host.clone(), port))
    {
        return Err(Malformed::HostMismatch {
            header: sent,
            url: written.to_owned(),
        });
    }
    if header("transfer-encoding").is_some() {
        return Err(Malformed::Chunked);
    }
    let body = content_length(request.headers)?;
    let path = match path.split('#').next() {
        Some("") | None => "/",
        Some(path) if path.starts_with('?') => &format!("/{path}"),
        Some(path) => path,
    };
    let mut upstream = format!("{method} {path} HTTP/1.1\r\nHost: {written}\r\n").into_bytes();
    for header in request.headers.iter() {
        if HOP_BY_HOP
            .iter()
            .any(|name| header.name.eq_ignore_ascii_case(name))
        {
            continue;
        }
        upstream.extend_from_slice(header.name.as_bytes());
        upstream.extend_from_slice(b": ");
        upstream.extend_from_slice(header.value);
        upstream.extend_from_slice(b"\r\n");
    }
    upstream.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request {
        kind: Kind::Forward(Forward {
            head: upstream,
            body,
        }),
        host,
        port,
        authority: written.to_owned(),
        token,
        rest,
    })
}

/// Headers for this hop only (and `Host`, which is written from the URL), never passed on:
/// the call's token stays with the proxy.
const HOP_BY_HOP: &[&str] = &[
    "host",
    "proxy-authorization",
    "proxy-connection",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

/// The values of the headers named `name`.
pub(super) fn named<'h>(
    headers: &'h [httparse::Header<'_>],
    name: &'static str,
) -> impl Iterator<Item = &'h [u8]> {
    headers
        .iter()
        .filter(move |header| header.name.eq_ignore_ascii_case(name))
        .map(|header| header.value)
}

/// The body's length: one `Content-Length` of digits only (`+5` or two headers could be
/// read otherwise by the server, and what follows the body taken for another request), or 0.
pub(super) fn content_length(headers: &[httparse::Header<'_>]) -> Result<u64, Malformed> {
    let mut lengths = named(headers, "content-length");
    let Some(length) = lengths.next() else {
        return Ok(0);
    };
    if lengths.next().is_some() {
        return Err(Malformed::Lengths);
    }
    let digits = length.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(Malformed::Length);
    }
    std::str::from_utf8(digits)
        .ok()
        .and_then(|digits| digits.parse().ok())
        .ok_or(Malformed::Length)
}

/// `host:port`, `[v6]:port`, or (with a default port) a bare host.
fn authority(text: &str, default_port: Option<u16>) -> Option<(Host, u16)> {
    let (host, port) = authority_parts(text)?;
    Some((host, port.or(default_port)?))
}

/// `host:port`, `[v6]:port` or a bare host, and its port if it has one.
pub(super) fn authority_parts(text: &str) -> Option<(Host, Option<u16>)> {
    if text.contains('@') {
        return None;
    }
    let (host, port) = if let Some(bracketed) = text.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        match after {
            "" => (host, None),
            after => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) if port.bytes().all(|byte| byte.is_ascii_digit()) => {
            Some(port.parse::<u16>().ok().filter(|port| *port > 0)?)
        }
        Some(_) => return None,
        None => None,
    };
    Some((Host::target(host)?, port))
}

/// The password of `Basic base64(user:password)`.
fn basic_password(value: &str) -> Option<String> {
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    text.split_once(':')
        .map(|(_, password)| password.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_text(text: &str) -> Result<Request, Malformed> {
        read(&mut text.as_bytes()).await
    }

    #[tokio::test]
    async fn connect_and_absolute_urls_are_read_with_the_calls_token() {
        // `call:secret`
        let auth = "Proxy-Authorization: Basic Y2FsbDpzZWNyZXQ=\r\n";
        let connect = read_text(&format!(
            "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n{auth}\r\nhello"
        ))
        .await
        .expect("connect");
        assert!(matches!(connect.kind, Kind::Connect));
        assert_eq!(connect.host, Host::Name("api.github.com".into()));
        assert_eq!(connect.port, 443);
        assert_eq!(connect.token.as_deref(), Some("secret"));
        assert_eq!(connect.rest, b"hello");

        let get = read_text(&format!(
            "POST http://one.test:8080/a?b=1 HTTP/1.1\r\nHost: one.test:8080\r\n{auth}Content-Length: 2\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\nok"
        ))
        .await
        .expect("forward");
        let Kind::Forward(forward) = &get.kind else {
            panic!("a forward")
        };
        assert_eq!(
            String::from_utf8_lossy(&forward.head),
            "POST /a?b=1 HTTP/1.1\r\nHost: one.test:8080\r\nContent-Length: 2\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(forward.body, 2);
        assert_eq!((get.port, get.rest.as_slice()), (8080, &b"ok"[..]));

        let same = read_text("GET http://A.test:80/ HTTP/1.1\r\nHost: a.TEST\r\n\r\n").await;
        assert!(same.is_ok(), "{same:?}");
        let bare = read_text("GET http://[::1]?x HTTP/1.1\r\n\r\n")
            .await
            .expect("forward");
        assert_eq!(bare.host, Host::Address("::1".parse().expect("v6")));
        assert_eq!(bare.port, 80);
        let Kind::Forward(forward) = &bare.kind else {
            panic!("a forward")
        };
        assert!(
            forward
                .head
                .starts_with(b"GET /?x HTTP/1.1\r\nHost: [::1]\r\n")
        );
    }

    #[tokio::test]
    async fn what_a_proxy_must_not_pass_on_is_refused() {
        for (head, status) in [
            ("GET /local HTTP/1.1\r\nHost: a.test\r\n\r\n", 400),
            ("GET https://a.test/ HTTP/1.1\r\n\r\n", 400),
            ("CONNECT a.test HTTP/1.1\r\n\r\n", 400),
            ("CONNECT *.a.test:443 HTTP/1.1\r\n\r\n", 400),
            ("GET http://user@a.test/ HTTP/1.1\r\n\r\n", 400),
            ("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", 400),
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
                400,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                411,
            ),
            // What the server could read otherwise than the proxy does.
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
                400,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 40\r\n\r\n",
                400,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nContent-Length: +4\r\n\r\n",
                400,
            ),
            ("GET http://[::1]x/ HTTP/1.1\r\n\r\n", 400),
            ("CONNECT a.test:+443 HTTP/1.1\r\n\r\n", 400),
        ] {
            let refused = read_text(head).await.expect_err(head);
            assert_eq!(refused.status(), status, "{head}: {refused}");
        }
        let long = format!(
            "GET http://a.test/ HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD)
        );
        assert_eq!(read_text(&long).await.expect_err("long").status(), 431);
        assert!(matches!(
            read_text("GET http://a.test/").await,
            Err(Malformed::Closed)
        ));
    }
}
