//! The proxy's connections: accept, read the head, decide, then tunnel or forward once.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::request::{self, Forward, Kind, Request};
use super::{Allowed, Egress, EgressError, Listening, Verdict};
use crate::connections::{Admitted, Budget, Peer};

/// How long a client has to send its request head (a program's HTTP client sends it at once).
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one address has to accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

fn failed(what: &'static str) -> impl FnOnce(std::io::Error) -> EgressError {
    move |source| EgressError::Start { what, source }
}

/// Binds the Unix socket (in a private folder) and serves it on the current runtime.
pub(super) fn listen(egress: &Arc<Egress>) -> Result<Listening, EgressError> {
    let folder = tempfile::Builder::new()
        .prefix("mcp-serve-egress-")
        .tempdir()
        .map_err(failed("make its folder"))?;
    let socket = folder.path().join("proxy.sock");
    let unix = tokio::net::UnixListener::bind(&socket).map_err(failed("listen on its socket"))?;
    let on_unix = Arc::clone(egress);
    tokio::spawn(async move {
        loop {
            match unix.accept().await {
                Ok((stream, _)) => {
                    if let Some(admitted) = admit(Peer::Local) {
                        tokio::spawn(Arc::clone(&on_unix).serve_stamped(stream, admitted));
                    }
                }
                Err(error) => accept_failed(&error).await,
            }
        }
    });
    tracing::debug!(socket = %socket.display(), "egress proxy listening");
    Ok(Listening {
        _folder: folder,
        socket,
        tcp: OnceLock::new(),
    })
}

/// Binds the TCP port on 127.0.0.1 and serves it on the current runtime; returns the port.
pub(super) fn listen_tcp(egress: &Arc<Egress>) -> Result<u16, EgressError> {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| {
            listener.set_nonblocking(true)?;
            tokio::net::TcpListener::from_std(listener)
        })
        .map_err(failed("listen on 127.0.0.1"))?;
    let port = tcp.local_addr().map_err(failed("find its port"))?.port();
    let on_tcp = Arc::clone(egress);
    tokio::spawn(async move {
        loop {
            match tcp.accept().await {
                Ok((stream, _)) => {
                    // A program on this host, as on the Unix socket: not one of the HTTP
                    // endpoint's clients from 127.0.0.1, whose share it must not take.
                    if let Some(admitted) = admit(Peer::Local) {
                        tokio::spawn(Arc::clone(&on_tcp).serve(stream, None, admitted));
                    }
                }
                Err(error) => accept_failed(&error).await,
            }
        }
    });
    tracing::debug!(port, "egress proxy listening on 127.0.0.1");
    Ok(port)
}

/// A connection's place in the budget, as two descriptors (it and its upstream); `None`
/// (the connection is closed) when it is full.
fn admit(peer: Peer) -> Option<Admitted> {
    Budget::get()
        .admit(peer, 2)
        .inspect_err(|full| tracing::warn!("egress proxy: connection closed: {full}"))
        .ok()
}

/// Out of descriptors, say: make room, and wait a little rather than spin.
async fn accept_failed(error: &std::io::Error) {
    let shed = Budget::get().relieve();
    tracing::warn!(shed, "egress proxy: accept failed: {error}");
    tokio::time::sleep(Duration::from_millis(if shed { 5 } else { 100 })).await;
}

impl Egress {
    /// A connection on the Unix socket: a trampoline's forwarder, which first writes its
    /// call's token and a newline. The program's own credentials, if any, are not looked at.
    async fn serve_stamped(
        self: Arc<Self>,
        mut client: tokio::net::UnixStream,
        admitted: Admitted,
    ) {
        let mut token = Vec::with_capacity(32);
        let read = tokio::time::timeout(HEAD_TIMEOUT, async {
            while token.len() <= 64 {
                match client.read_u8().await? {
                    b'\n' => return Ok(true),
                    byte => token.push(byte),
                }
            }
            Ok::<_, std::io::Error>(false)
        })
        .await;
        if let (Ok(Ok(true)), Ok(token)) = (read, String::from_utf8(token)) {
            self.serve(client, Some(token), admitted).await;
        }
    }

    /// One client connection: one request (a tunnel, or one forwarded request), for the
    /// call a forwarder `stamped`, or else the one its proxy credentials name.
    async fn serve(
        self: Arc<Self>,
        mut client: impl AsyncRead + AsyncWrite + Unpin,
        stamped: Option<String>,
        admitted: Admitted,
    ) {
        let read = tokio::select! {
            read = tokio::time::timeout(HEAD_TIMEOUT, request::read(&mut client)) => read,
            // Shed to make room before it asked for anything.
            () = admitted.shed.cancelled() => return,
        };
        let request = match read {
            Ok(Ok(request)) => request,
            // Gone, or silent past the timeout: nothing was asked.
            Ok(Err(request::Malformed::Closed)) | Err(_) => return,
            Ok(Err(malformed)) => {
                self.decided(
                    None,
                    "",
                    Verdict::Deny("bad-request"),
                    &malformed.to_string(),
                );
                respond(&mut client, malformed.status(), &malformed.to_string()).await;
                return;
            }
        };
        let target = request.authority.clone();
        let token = stamped.or_else(|| request.token.clone());
        let Some(allowed) = token.as_deref().and_then(|token| self.allowed(token)) else {
            let why = if token.is_some() {
                "the proxy credentials are not those of a running call"
            } else {
                "no proxy credentials (use the proxy URL in $HTTPS_PROXY as it is, with its user and password)"
            };
            self.decided(None, &target, Verdict::Deny("credentials"), why);
            respond(&mut client, 407, why).await;
            return;
        };
        let Some(_held) = allowed.hold() else {
            let why = "this call holds as many connections through the proxy as one call may";
            self.decided(Some(&allowed), &target, Verdict::Deny("call-limit"), why);
            respond(&mut client, 429, why).await;
            return;
        };
        // A running call's: no longer idle, never shed while it lasts.
        let _busy = admitted.busy();
        let upstream = tokio::select! {
            upstream = self.open(&allowed, &request) => upstream,
            () = allowed.ended.cancelled() => return,
        };
        let upstream = match upstream {
            Ok(upstream) => upstream,
            Err((status, message)) => {
                respond(&mut client, status, &message).await;
                return;
            }
        };
        let carried = async {
            match request.kind {
                Kind::Connect => self.tunnel(&allowed, client, upstream, request).await,
                Kind::Forward(head) => forward(client, upstream, head, request.rest).await,
            }
        };
        tokio::select! {
            () = carried => {}
            () = allowed.ended.cancelled() => {}
        }
    }

    /// Checks the request against the call's list, resolves, and connects to an admitted
    /// address; every outcome is a decision, logged and counted.
    async fn open(&self, allowed: &Allowed, request: &Request) -> Result<TcpStream, (u16, String)> {
        let target = request.authority.as_str();
        let deny = |verdict: Verdict, status: u16, message: String| {
            self.decided(Some(allowed), target, verdict, &message);
            Err((status, message))
        };
        if let Err(refusal) = allowed.allowance.admits(&request.host, request.port) {
            let message = match refusal {
                super::Refusal::Port => format!(
                    "`{target}`: this tool's network list names the host on other ports only"
                ),
                _ => format!("`{target}` is not in this tool's network list"),
            };
            return deny(Verdict::Deny(refusal.label()), 403, message);
        }
        let addresses = match self.overrides.resolve(&request.host, request.port).await {
            Ok(addresses) if !addresses.is_empty() => addresses,
            Ok(_) => {
                return deny(
                    Verdict::Fail("unresolved"),
                    502,
                    format!("`{target}` has no address"),
                );
            }
            Err(error) => {
                return deny(
                    Verdict::Fail("unresolved"),
                    502,
                    format!("`{target}` could not be resolved: {error}"),
                );
            }
        };
        let mut admitted: Vec<SocketAddr> = Vec::new();
        let mut refused = None;
        for address in addresses {
            match allowed.allowance.admits_address(&request.host, address) {
                Ok(()) => admitted.push(address),
                Err(refusal) => {
                    refused.get_or_insert((address, refusal));
                }
            }
        }
        if admitted.is_empty() {
            let (address, refusal) = refused.unwrap_or((
                SocketAddr::from(([0, 0, 0, 0], 0)),
                super::Refusal::NotListed,
            ));
            return deny(
                Verdict::Deny(refusal.label()),
                403,
                format!(
                    "`{target}` resolves to {address}, a {} address this tool's network list does not name",
                    refusal.label()
                ),
            );
        }
        let mut last = None;
        // Exactly the addresses checked: never resolved again (no rebinding in between).
        for address in admitted {
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => {
                    self.decided(
                        Some(allowed),
                        target,
                        Verdict::Allow,
                        &format!("to {address}"),
                    );
                    return Ok(stream);
                }
                Ok(Err(error)) => last = Some(format!("{address}: {error}")),
                Err(_) => last = Some(format!("{address}: no answer within {CONNECT_TIMEOUT:?}")),
            }
        }
        deny(
            Verdict::Fail("unreachable"),
            502,
            format!(
                "`{target}` could not be reached: {}",
                last.unwrap_or_default()
            ),
        )
    }
}

/// Carries one forwarded request and its response.
async fn forward(
    mut client: impl AsyncRead + AsyncWrite + Unpin,
    mut upstream: TcpStream,
    forward: Forward,
    rest: Vec<u8>,
) {
    let sent = async {
        upstream.write_all(&forward.head).await?;
        let buffered = usize::try_from(forward.body)
            .unwrap_or(usize::MAX)
            .min(rest.len());
        upstream.write_all(&rest[..buffered]).await?;
        let more = forward.body - buffered as u64;
        tokio::io::copy(&mut (&mut client).take(more), &mut upstream).await?;
        // The response, byte for byte; the origin closes (`Connection: close`).
        tokio::io::copy(&mut upstream, &mut client).await?;
        client.shutdown().await
    };
    let _ = sent.await;
}

/// A short plain-text answer from the proxy itself.
async fn respond(client: &mut (impl AsyncWrite + Unpin), status: u16, message: &str) {
    let _ = client.write_all(response(status, message).as_bytes()).await;
    let _ = client.shutdown().await;
}

/// The proxy's answer, in full: `Connection: close`, the message as its body.
pub(super) fn response(status: u16, message: &str) -> String {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        407 => "Proxy Authentication Required",
        411 => "Length Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let body = format!("mcp-serve egress proxy: {message}\n");
    let challenge = if status == 407 {
        "Proxy-Authenticate: Basic realm=\"mcp-serve\"\r\n"
    } else {
        ""
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\n{challenge}Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
