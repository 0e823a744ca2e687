//! The accept loop: hyper's HTTP/1 server with a header-read (and keep-alive idle) timeout,
//! `TCP_NODELAY`, and graceful shutdown.

use std::future::Future;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::{HttpOptions, Lifecycle, router};
use crate::mcp::Handler;

/// The most a request's head (request line and headers) may take; hyper answers 431 past it.
const MAX_HEADER_BYTES: usize = 64 * 1024;

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
    let app = router(handler.clone(), &options, &lifecycle);
    let graceful = GracefulShutdown::new();
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
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut drained => break,
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        // The client's address, for per-caller rate limits when nothing else names the caller.
        let app = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(crate::mcp::ClientAddress(peer));
                request
            },
        );
        let service = TowerToHyperService::new(app);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    // Let finished responses flush, then end everything still open (session streams).
    lifecycle.cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), graceful.shutdown()).await;
    Ok(())
}
