//! rmcp's Streamable HTTP service behind an `Arc`, so that serving a request copies nothing.
//!
//! axum clones a route's service for every request, and rmcp's own `Service::call` clones
//! the service again; each clone deep-copies its configuration (the allowed `Host` and
//! `Origin` lists). callgrind counted the two copies and their frees at about a sixth of the
//! instructions of a static tool call over HTTP. `handle` needs only `&self`.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse as _, Response};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;

use crate::mcp::Handler;

/// The MCP endpoint: one rmcp service shared by every request.
pub(super) struct Endpoint<M> {
    service: Arc<StreamableHttpService<Handler, M>>,
}

impl<M> Endpoint<M> {
    pub(super) fn new(service: StreamableHttpService<Handler, M>) -> Self {
        Self {
            service: Arc::new(service),
        }
    }
}

impl<M> Clone for Endpoint<M> {
    fn clone(&self) -> Self {
        Self {
            service: Arc::clone(&self.service),
        }
    }
}

impl<M> fmt::Debug for Endpoint<M> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Endpoint").finish_non_exhaustive()
    }
}

impl<M: SessionManager> tower::Service<Request> for Endpoint<M> {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let service = Arc::clone(&self.service);
        Box::pin(async move { Ok(service.handle(request).await.into_response()) })
    }
}
