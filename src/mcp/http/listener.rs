//! The accept loop: hyper's HTTP/1 server with a header-read (and keep-alive idle) timeout,
//! `TCP_NODELAY`, graceful shutdown, and a lingering close; each connection is served on one
//! of the [`super::lanes`], one runtime per core. Every connection is admitted by
//! the process's connection budget ([`crate::connections`]) first: at its cap, the oldest idle
//! connection (no request in progress) is closed to make room, and a connection that finds
//! every other busy is closed at once. Accepting never stops: out of descriptors all the
//! same, an idle connection is shed and the loop backs off for a moment.
//!
//! A lingering close (nginx's `lingering_close`): when hyper is done with a connection, its
//! socket is not closed at once. Closing a socket with unread bytes in it, or with bytes still
//! arriving, makes the kernel answer with a reset, and a client still writing its request
//! (a header past the limit, a body the server refused) then gets that reset, often before
//! it reads the answer that was sent (`431`, `413`, `408`). So the socket's write side is shut
//! (the client reads the answer to its end), and what the client still sends is read and
//! dropped until it closes, for at most [`LINGER`] and [`LINGER_BYTES`]. A client that
//! closed first costs one read.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::lanes::Lanes;
use super::service::Counting;
use super::{HttpOptions, Lifecycle, router};
use crate::connections::{Admitted, Budget, Peer};
use crate::mcp::Handler;

/// The most a request's head (request line and headers) may take; hyper answers 431 past it.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How long a finished connection goes on reading what its client still sends, at most.
const LINGER: Duration = Duration::from_secs(5);

/// How much of it is read and dropped, at most.
const LINGER_BYTES: usize = 1 << 20;

/// Serves until `shutdown` resolves, then drains: readiness turns 503 and new MCP requests
/// are refused with 503 while in-flight calls get up to `shutdown_grace` to finish; then the
/// listener closes and whatever is left is cancelled (which kills its processes).
pub async fn serve_listener(
    handler: Handler,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let lifecycle = Lifecycle::default();
    let app = router(&handler, &options, &lifecycle);
    let graceful = GracefulShutdown::new();
    let trusted = Arc::new(options.trusted_proxies.clone());
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        // Headers larger than this get 431 (hyper's default is about 400 KB).
        .max_buf_size(MAX_HEADER_BYTES)
        .keep_alive(true);
    tokio::pin!(shutdown);
    let drained = async {
        (&mut shutdown).await;
        lifecycle.start_draining();
        tracing::info!(calls = handler.calls_in_flight(), "draining");
        let idle = async {
            while handler.calls_in_flight() > 0 {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        };
        if tokio::time::timeout(options.shutdown_grace, idle)
            .await
            .is_err()
        {
            tracing::warn!(
                calls = handler.calls_in_flight(),
                "grace period over; stopping the remaining calls"
            );
        }
    };
    tokio::pin!(drained);
    let lanes = Lanes::start();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: make room and back off instead
                    // of spinning.
                    let shed = Budget::get().relieve();
                    tracing::warn!(%error, shed, "accept failed");
                    tokio::time::sleep(Duration::from_millis(if shed { 5 } else { 50 })).await;
                    continue;
                }
            },
            () = &mut drained => break,
        };
        let admitted = match Budget::get().admit(Peer::Address(peer.ip()), 1) {
            Ok(admitted) => admitted,
            Err(full) => {
                tracing::warn!(%peer, "connection closed: {full}");
                continue;
            }
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(Counting {
            app: app.clone(),
            handler: handler.clone(),
            peer,
            trusted: Arc::clone(&trusted),
            requests: admitted.requests(),
            sessions: options.sessions.is_some(),
        });
        // Served on a lane from here on: the socket moves to that runtime's reactor.
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!(%peer, %error, "connection closed: its socket could not move to a lane");
                continue;
            }
        };
        let connection = Connection {
            builder: builder.clone(),
            watcher: graceful.watcher(),
            service,
            admitted,
        };
        lanes.next().spawn(connection.serve(stream, peer));
    }
    drop(listener);
    // Let finished responses flush, then end everything still open (session streams).
    lifecycle.cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), graceful.shutdown()).await;
    // What is left on the lanes is dropped with them (its processes killed).
    let _ = tokio::task::spawn_blocking(move || drop(lanes)).await;
    Ok(())
}

/// An admitted connection, ready to be served on a lane.
struct Connection {
    builder: hyper::server::conn::http1::Builder,
    watcher: hyper_util::server::graceful::Watcher,
    service: TowerToHyperService<Counting>,
    admitted: Admitted,
}

impl Connection {
    /// Serves it on the current runtime (its lane) until it ends, is shed, or the server
    /// stops; then lingers ([`linger`]).
    async fn serve(self, stream: std::net::TcpStream, peer: SocketAddr) {
        let stream = match TcpStream::from_std(stream) {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!(%peer, %error, "connection closed: a lane could not take its socket");
                return;
            }
        };
        let (socket, returned) = Lingering::new(stream);
        let connection = self
            .builder
            .serve_connection(TokioIo::new(socket), self.service);
        let connection = self.watcher.watch(connection);
        let shed = self.admitted.shed.clone();
        tokio::select! {
            ended = connection => if let Err(error) = ended {
                tracing::debug!(%peer, %error, "connection ended with an error");
            },
            () = shed.cancelled() => {
                tracing::debug!(%peer, "closed an idle connection to make room for a new one");
                return;
            }
        }
        if let Ok(stream) = returned.await {
            tokio::select! {
                () = linger(stream, peer) => {}
                () = shed.cancelled() => {}
            }
        }
        drop(self.admitted);
    }
}

/// A connection's socket for hyper, handed back when hyper lets go of it, so that it can be
/// closed gently ([`linger`]).
struct Lingering {
    stream: Option<TcpStream>,
    back: Option<oneshot::Sender<TcpStream>>,
}

impl Lingering {
    fn new(stream: TcpStream) -> (Self, oneshot::Receiver<TcpStream>) {
        let (back, returned) = oneshot::channel();
        (
            Self {
                stream: Some(stream),
                back: Some(back),
            },
            returned,
        )
    }

    fn stream(self: Pin<&mut Self>) -> io::Result<Pin<&mut TcpStream>> {
        self.get_mut()
            .stream
            .as_mut()
            .map(Pin::new)
            .ok_or_else(|| io::ErrorKind::NotConnected.into())
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        if let (Some(stream), Some(back)) = (self.stream.take(), self.back.take()) {
            // Nobody waits when the connection's task is gone: the socket is closed here.
            let _ = back.send(stream);
        }
    }
}

impl AsyncRead for Lingering {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_read(context, buffer),
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

impl AsyncWrite for Lingering {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => stream.poll_write(context, bytes),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => stream.poll_write_vectored(context, buffers),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream
            .as_ref()
            .is_some_and(AsyncWrite::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_flush(context),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_shutdown(context),
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

/// Closes a connection hyper is done with: at once when its client closed first; else its
/// write side is shut and what the client still sends is read and dropped until the client
/// closes, [`LINGER`] passes or [`LINGER_BYTES`] were read.
async fn linger(mut stream: TcpStream, peer: SocketAddr) {
    let mut probe = [0u8; 64];
    let mut drained = match stream.try_read(&mut probe) {
        // The client closed first, or the socket is broken: nothing to wait for.
        Ok(0) => return,
        Err(error) if error.kind() != io::ErrorKind::WouldBlock => return,
        Ok(read) => read,
        Err(_) => 0,
    };
    let _ = stream.shutdown().await;
    let deadline = tokio::time::Instant::now() + LINGER;
    let mut sink = vec![0u8; 16 * 1024];
    while drained < LINGER_BYTES {
        match tokio::time::timeout_at(deadline, stream.read(&mut sink)).await {
            Ok(Ok(0) | Err(_)) | Err(_) => break,
            Ok(Ok(read)) => drained += read,
        }
    }
    if drained > 0 {
        tracing::debug!(%peer, drained, "dropped what a client sent after its last answer");
    }
}
