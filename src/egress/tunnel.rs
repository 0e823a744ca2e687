//! A `CONNECT` tunnel, carried: nothing the client sends goes upstream before its first
//! bytes are judged, while what the server sends flows back from the start (where the server
//! speaks first, the client waits for it). A TLS ClientHello must name the tunnel's host in
//! its SNI, or name none, and so must a second one after a HelloRetryRequest ([`hello`]); a
//! plain-HTTP request must name it in its target and `Host`, and so must each request after
//! it on the tunnel ([`plain`]). Anything else (SSH, a database's protocol) is carried as it
//! is: a list names hosts and ports, not protocols. A refusal closes the tunnel and is a
//! decision like any other (reason `fronting`, or `bad-request` for what cannot be read).

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::watch;
use tokio::time::Instant;

use super::allow::Host;
use super::hello::{self, Alert, ClientHello};
use super::plain;
use super::request::Request;
use super::{Allowed, Egress, Verdict};

/// How long the rest of a ClientHello or request head may take once its first byte came.
/// The wait for that first byte is not bounded: where the server speaks first, the client
/// waits for it, and nothing goes upstream meanwhile.
const OPENING_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of the client's first bytes read to judge them.
const MAX_OPENING: usize = hello::MAX_HELLO;
const ESTABLISHED: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";

/// What a tunnel's first bytes are.
#[derive(Debug)]
enum Opening {
    /// A TLS ClientHello for the tunnel's host (or for none), whole.
    Tls(ClientHello),
    /// A plain-HTTP request head for the tunnel's host, whole.
    Http(plain::Head),
    /// Neither: carried as it is.
    Other,
}

/// Why a tunnel is closed.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("its TLS ClientHello names `{0}` (SNI)")]
    Sni(String),
    #[error("its TLS ClientHello cannot be read: {0}")]
    Hello(#[from] hello::Malformed),
    #[error("{0}")]
    Http(#[from] plain::Refused),
    #[error("its first {0} bytes are not a whole ClientHello or request head")]
    TooLong(usize),
    #[error("its ClientHello or request head did not end within {OPENING_TIMEOUT:?}")]
    Slow,
    #[error("a request after its first asks to upgrade")]
    LateUpgrade,
}

impl Refused {
    /// The metric label and log word.
    fn reason(&self) -> &'static str {
        match self {
            Self::Sni(_) => "fronting",
            Self::Http(refused) => refused.reason(),
            _ => "bad-request",
        }
    }
}

/// Why one direction of a tunnel stopped before its end.
#[derive(Debug)]
enum Stop {
    /// A read or write failed: the tunnel is gone.
    Io,
    /// The client sent what the tunnel does not carry.
    Refused(Refused),
}

impl From<std::io::Error> for Stop {
    fn from(_: std::io::Error) -> Self {
        Self::Io
    }
}

impl From<Refused> for Stop {
    fn from(refused: Refused) -> Self {
        Self::Refused(refused)
    }
}

/// What `back` holds the server's first bytes for: a test of them, and where its answer goes.
type Inspect = (fn(&[u8]) -> Option<bool>, watch::Sender<Option<bool>>);

impl Egress {
    /// Carries a tunnel to `upstream` for `request`, a `CONNECT` the call's list admits.
    pub(super) async fn tunnel(
        &self,
        allowed: &Allowed,
        client: impl AsyncRead + AsyncWrite + Unpin,
        upstream: impl AsyncRead + AsyncWrite + Unpin,
        request: Request,
    ) {
        let Request {
            host,
            port,
            authority,
            rest,
            ..
        } = request;
        let (mut from_client, mut to_client) = tokio::io::split(client);
        let (mut from_upstream, mut to_upstream) = tokio::io::split(upstream);
        let deny = |refused: &Refused| {
            let why = format!("a tunnel to `{authority}`: {refused}");
            self.decided(
                Some(allowed),
                &authority,
                Verdict::Deny(refused.reason()),
                &why,
            );
            why
        };
        if to_client.write_all(ESTABLISHED).await.is_err() {
            return;
        }
        let mut bytes = rest;
        let opening = first_bytes(
            &mut from_client,
            &mut to_client,
            &mut from_upstream,
            &mut bytes,
            |bytes| judge(bytes, &host, port),
        )
        .await;
        let carried = match opening {
            Ok(None) => return,
            Err(refused) => {
                let why = deny(&refused);
                let _ = to_client.write_all(&answer(&refused, &bytes, &why)).await;
                let _ = to_client.shutdown().await;
                return;
            }
            Ok(Some(Opening::Other)) => tokio::try_join!(
                async {
                    to_upstream.write_all(&bytes).await?;
                    forth(&mut from_client, &mut to_upstream).await
                },
                back(&mut from_upstream, &mut to_client, None),
            ),
            Ok(Some(Opening::Tls(hello))) => {
                noted(allowed, &authority, &host, &hello);
                let rest = bytes.split_off(hello.length);
                let (tell, told) = watch::channel(None);
                tokio::try_join!(
                    async {
                        to_upstream.write_all(&bytes).await?;
                        after_hello(&mut from_client, &mut to_upstream, rest, told, &host).await
                    },
                    back(
                        &mut from_upstream,
                        &mut to_client,
                        Some((hello::retry_requested as fn(&[u8]) -> Option<bool>, tell))
                    ),
                )
            }
            Ok(Some(Opening::Http(head))) => {
                let rest = bytes.split_off(head.length);
                let (inspect, told) = if head.upgrade {
                    let (tell, told) = watch::channel(None);
                    (
                        Some((switched as fn(&[u8]) -> Option<bool>, tell)),
                        Some(told),
                    )
                } else {
                    (None, None)
                };
                tokio::try_join!(
                    async {
                        to_upstream.write_all(&head.bytes).await?;
                        let body = head.body;
                        requests(
                            &mut from_client,
                            &mut to_upstream,
                            rest,
                            body,
                            told,
                            &host,
                            port,
                        )
                        .await
                    },
                    back(&mut from_upstream, &mut to_client, inspect),
                )
            }
        };
        if let Err(Stop::Refused(refused)) = carried {
            deny(&refused);
        }
    }
}

/// Logs what a ClientHello leaves unchecked.
fn noted(allowed: &Allowed, target: &str, host: &Host, hello: &ClientHello) {
    let (tool, call) = (allowed.tool.as_str(), allowed.call.as_str());
    // To an address, no SNI is the rule (RFC 6066 names hosts only).
    if hello.names.is_empty() && host.is_name() {
        tracing::info!(
            tool,
            call,
            target,
            "egress: a TLS tunnel whose ClientHello names no server (no SNI), carried: it reaches the server's default site"
        );
    }
    if hello.ech {
        tracing::info!(
            tool,
            call,
            target,
            "egress: a TLS tunnel whose ClientHello is encrypted (ECH), carried: only its outer name is checked"
        );
    }
}

/// Reads the client's first bytes into `bytes` until `judge` can tell what they are, while
/// what the server sends meanwhile goes to the client; `Ok(None)` when either side closes
/// first.
async fn first_bytes(
    from_client: &mut (impl AsyncRead + Unpin),
    to_client: &mut (impl AsyncWrite + Unpin),
    from_upstream: &mut (impl AsyncRead + Unpin),
    bytes: &mut Vec<u8>,
    judge: impl Fn(&[u8]) -> Result<Option<Opening>, Refused>,
) -> Result<Option<Opening>, Refused> {
    let mut deadline = None;
    let mut chunk = vec![0; 4096];
    let mut from_server = vec![0; 4096];
    loop {
        if !bytes.is_empty() {
            if let Some(opening) = judge(bytes)? {
                return Ok(Some(opening));
            }
            if bytes.len() > MAX_OPENING {
                return Err(Refused::TooLong(bytes.len()));
            }
            deadline.get_or_insert_with(|| Instant::now() + OPENING_TIMEOUT);
        }
        tokio::select! {
            read = from_client.read(&mut chunk) => match read {
                Ok(read) if read > 0 => bytes.extend_from_slice(&chunk[..read]),
                _ => return Ok(None),
            },
            read = from_upstream.read(&mut from_server) => {
                let read = read.unwrap_or(0);
                if read == 0 || to_client.write_all(&from_server[..read]).await.is_err() {
                    return Ok(None);
                }
            }
            () = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                return Err(Refused::Slow);
            }
        }
    }
}

/// What the first bytes are, once they tell.
fn judge(bytes: &[u8], host: &Host, port: u16) -> Result<Option<Opening>, Refused> {
    if bytes.first() == Some(&hello::HANDSHAKE) {
        let Some(hello) = hello::client_hello(bytes)? else {
            return Ok(None);
        };
        return match stranger(&hello, host) {
            Some(named) => Err(Refused::Sni(named)),
            None => Ok(Some(Opening::Tls(hello))),
        };
    }
    match request_line(bytes) {
        None => Ok(None),
        Some(false) => Ok(Some(Opening::Other)),
        Some(true) => Ok(plain::head(bytes, host, port)?.map(Opening::Http)),
    }
}

/// A name in the hello that is not the tunnel's host, compared as hosts are (case aside,
/// without a trailing dot).
fn stranger(hello: &ClientHello, host: &Host) -> Option<String> {
    hello
        .names
        .iter()
        .find(|name| Host::target(name).as_ref() != Some(host))
        .cloned()
}

/// Whether the bytes begin a request: their first line, past the blank lines and spaces a
/// lenient server skips, says `HTTP/`. `None` until that line ends, or a NUL (which no
/// server reads in a request line) shows a binary protocol.
fn request_line(bytes: &[u8]) -> Option<bool> {
    let start = bytes
        .iter()
        .position(|byte| !matches!(byte, b'\r' | b'\n' | b' ' | b'\t' | 0x0b | 0x0c))?;
    let line = &bytes[start..];
    let end = line.iter().position(|&byte| byte == b'\n');
    let line = &line[..end.unwrap_or(line.len())];
    if line
        .windows(5)
        .any(|window| window.eq_ignore_ascii_case(b"HTTP/"))
    {
        return Some(true);
    }
    (end.is_some() || line.contains(&0)).then_some(false)
}

/// What the client is told when its first bytes are refused: a fatal alert, as a TLS server
/// would send; an HTTP response, as an HTTP server would.
fn answer(refused: &Refused, bytes: &[u8], why: &str) -> Vec<u8> {
    let tls = bytes.first() == Some(&hello::HANDSHAKE);
    let status = match refused {
        Refused::Sni(_) => return hello::alert(Alert::UnrecognizedName).to_vec(),
        _ if tls => return hello::alert(Alert::DecodeError).to_vec(),
        Refused::Http(refused) => refused.status(),
        Refused::TooLong(_) => 431,
        _ => 400,
    };
    super::serve::response(status, why).into_bytes()
}

/// The client's bytes to the server, to the end.
async fn forth(
    from_client: &mut (impl AsyncRead + Unpin),
    to_upstream: &mut (impl AsyncWrite + Unpin),
) -> Result<(), Stop> {
    tokio::io::copy(from_client, to_upstream).await?;
    to_upstream.shutdown().await?;
    Ok(())
}

/// The server's bytes to the client, to the end. With `inspect`, the first are held until it
/// can tell what they are (from at most `MAX_OPENING` of them), and its answer is told
/// before the client sees them: the client's next move depends on them.
async fn back(
    from_upstream: &mut (impl AsyncRead + Unpin),
    to_client: &mut (impl AsyncWrite + Unpin),
    inspect: Option<Inspect>,
) -> Result<(), Stop> {
    if let Some((inspect, tell)) = inspect {
        let mut held = Vec::new();
        let mut chunk = vec![0; 4096];
        let told = loop {
            match inspect(&held) {
                Some(told) => break told,
                None if held.len() > MAX_OPENING => break false,
                None => {}
            }
            let read = from_upstream.read(&mut chunk).await?;
            if read == 0 {
                break false;
            }
            held.extend_from_slice(&chunk[..read]);
        };
        tell.send_replace(Some(told));
        to_client.write_all(&held).await?;
    }
    tokio::io::copy(from_upstream, to_client).await?;
    to_client.shutdown().await?;
    Ok(())
}

/// What `back` told (`false` if it never will: the server side has ended).
async fn told(told: &mut watch::Receiver<Option<bool>>) -> bool {
    loop {
        if let Some(answer) = *told.borrow_and_update() {
            return answer;
        }
        if told.changed().await.is_err() {
            return told.borrow().unwrap_or(false);
        }
    }
}

/// After the first ClientHello: records go on as they come, but a handshake record waits
/// for the server's first answer. After a HelloRetryRequest it must be the second
/// ClientHello, whose names are checked as the first's were; after anything else, the rest is
/// carried (what the client sends next is encrypted, or the server's to refuse).
async fn after_hello(
    from_client: &mut (impl AsyncRead + Unpin),
    to_upstream: &mut (impl AsyncWrite + Unpin),
    mut bytes: Vec<u8>,
    mut answer: watch::Receiver<Option<bool>>,
    host: &Host,
) -> Result<(), Stop> {
    let mut chunk = vec![0; 4096];
    // Whether the server asked for a second ClientHello, once it has answered.
    let mut retry = None;
    loop {
        if retry.is_none() {
            retry = *answer.borrow_and_update();
        }
        if retry == Some(false) {
            break;
        }
        match hello::header(&bytes) {
            // A change of cipher spec (sent early for middleboxes), or early data: on.
            Some((kind, _, length)) if kind != hello::HANDSHAKE => {
                if length > hello::MAX_RECORD {
                    return Err(Refused::Hello(hello::Malformed::RecordLength(length)).into());
                }
                if bytes.len() >= 5 + length {
                    to_upstream.write_all(&bytes[..5 + length]).await?;
                    bytes.drain(..5 + length);
                    continue;
                }
            }
            Some(_) if retry == Some(true) => {
                if let Some(second) = hello::client_hello(&bytes).map_err(Refused::Hello)? {
                    if let Some(named) = stranger(&second, host) {
                        return Err(Refused::Sni(named).into());
                    }
                    to_upstream.write_all(&bytes[..second.length]).await?;
                    bytes.drain(..second.length);
                    break;
                }
                if bytes.len() > MAX_OPENING {
                    return Err(Refused::TooLong(bytes.len()).into());
                }
            }
            // Before the server has answered, a handshake record may be a second ClientHello
            // sent ahead of the retry it hopes for: it waits.
            Some(_) => {
                retry = Some(told(&mut answer).await);
                continue;
            }
            None => {}
        }
        let read = tokio::select! {
            read = from_client.read(&mut chunk) => read?,
            value = told(&mut answer), if retry.is_none() => {
                retry = Some(value);
                continue;
            }
        };
        if read == 0 {
            // Done; a record cut short is not worth sending.
            to_upstream.shutdown().await?;
            return Ok(());
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    to_upstream.write_all(&bytes).await?;
    forth(from_client, to_upstream).await
}

/// Whether the server switches protocols (`HTTP/1.1 101`); `None` until its status line is
/// there (or its first bytes show it is not one).
fn switched(bytes: &[u8]) -> Option<bool> {
    // Not an HTTP answer at all: told at once, for a server that sends a little and waits.
    let version = b"HTTP/1.";
    if !bytes.starts_with(&version[..bytes.len().min(version.len())]) {
        return Some(false);
    }
    let end = bytes.iter().position(|&byte| byte == b'\n')?;
    let line = &bytes[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut words = line.split(|&byte| byte == b' ');
    Some(
        words
            .next()
            .is_some_and(|version| version.starts_with(b"HTTP/1."))
            && words.next() == Some(&b"101"[..]),
    )
}

/// After the first request: its body, then each request after it, checked as the first was.
/// A WebSocket upgrade (the first request's only) waits for the server's answer: after a
/// `101` the rest is carried, after anything else requests are read on.
async fn requests(
    from_client: &mut (impl AsyncRead + Unpin),
    to_upstream: &mut (impl AsyncWrite + Unpin),
    mut bytes: Vec<u8>,
    mut body: u64,
    mut upgrade: Option<watch::Receiver<Option<bool>>>,
    host: &Host,
    port: u16,
) -> Result<(), Stop> {
    let mut chunk = vec![0; 4096];
    loop {
        let buffered = usize::try_from(body).unwrap_or(usize::MAX).min(bytes.len());
        to_upstream.write_all(&bytes[..buffered]).await?;
        bytes.drain(..buffered);
        let more = body - buffered as u64;
        if more > 0 {
            let carried = tokio::io::copy(&mut (&mut *from_client).take(more), to_upstream).await?;
            if carried < more {
                to_upstream.shutdown().await?;
                return Ok(());
            }
        }
        if let Some(mut answer) = upgrade.take()
            && told(&mut answer).await
        {
            to_upstream.write_all(&bytes).await?;
            return forth(from_client, to_upstream).await;
        }
        let head = loop {
            if let Some(head) = plain::head(&bytes, host, port).map_err(Refused::Http)? {
                break head;
            }
            let read = from_client.read(&mut chunk).await?;
            if read == 0 {
                to_upstream.shutdown().await?;
                return Ok(());
            }
            bytes.extend_from_slice(&chunk[..read]);
        };
        // The answers to the requests before it may still be on their way: which one
        // would be the `101` is not known.
        if head.upgrade {
            return Err(Refused::LateUpgrade.into());
        }
        to_upstream.write_all(&head.bytes).await?;
        bytes.drain(..head.length);
        body = head.body;
    }
}

#[cfg(test)]
mod tests;
