//! rmcp's Streamable HTTP service behind an `Arc`, so that serving a request copies nothing,
//! plus two things rmcp does not do:
//!
//! - when rmcp has no answer for a request (its handler was stopped: the server is shutting
//!   down past its grace period) or fails inside, it sends HTTP 500 with plain text; the
//!   client gets a JSON-RPC error for its request id instead;
//! - a JSON body rmcp cannot read (not JSON, not one JSON-RPC message) gets `415 fail to
//!   deserialize…` in plain text from rmcp; the client gets `400` with the JSON-RPC error
//!   stdio answers the same bytes with instead (`-32700`, `-32600`, `-32602`);
//! - in a legacy session, a client that hangs up before its answer arrives has its call
//!   cancelled (`notifications/cancelled` into the session), which kills the command; rmcp
//!   does this only for stateless requests. A `DELETE` of the session cancels each of its
//!   requests the same way before rmcp closes it (rmcp would let them run on for its
//!   5-second drain).
//!
//! axum clones a route's service for every request, and rmcp's own `Service::call` clones
//! the service again; each clone deep-copies its configuration (the allowed `Host` and
//! `Origin` lists). callgrind counted the two copies and their frees at about a sixth of the
//! instructions of a static tool call over HTTP. `handle` needs only `&self`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use http_body::{Body as _, Frame};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

use super::body::Peek;
use crate::mcp::traced::Traced;

/// The MCP endpoint: one rmcp service shared by every request.
pub(super) struct Endpoint<M> {
    service: Arc<StreamableHttpService<Traced, M>>,
    /// The legacy sessions, to cancel a call whose client hung up.
    sessions: Option<Arc<LocalSessionManager>>,
    /// Each session's requests not yet answered in full, to cancel when it is deleted.
    open: Arc<Open>,
}

/// The requests of each session whose answers have not been sent in full, by a number of
/// their own (a client may reuse a request id).
#[derive(Debug, Default)]
struct Open {
    requests: Mutex<HashMap<Arc<str>, HashMap<u64, Value>>>,
    next: AtomicU64,
}

impl Open {
    fn add(&self, session: &Arc<str>, request: Value) -> u64 {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut requests) = self.requests.lock() {
            requests
                .entry(Arc::clone(session))
                .or_default()
                .insert(number, request);
        }
        number
    }

    fn remove(&self, session: &str, number: u64) {
        if let Ok(mut requests) = self.requests.lock()
            && let Some(open) = requests.get_mut(session)
        {
            open.remove(&number);
            if open.is_empty() {
                requests.remove(session);
            }
        }
    }

    /// The session's open requests, forgotten here.
    fn take(&self, session: &str) -> Vec<Value> {
        self.requests
            .lock()
            .ok()
            .and_then(|mut requests| requests.remove(session))
            .map(|open| open.into_values().collect())
            .unwrap_or_default()
    }
}

impl<M> Endpoint<M> {
    pub(super) fn new(
        service: StreamableHttpService<Traced, M>,
        sessions: Option<Arc<LocalSessionManager>>,
    ) -> Self {
        Self {
            service: Arc::new(service),
            sessions,
            open: Arc::default(),
        }
    }
}

impl<M> Clone for Endpoint<M> {
    fn clone(&self) -> Self {
        Self {
            service: Arc::clone(&self.service),
            sessions: self.sessions.clone(),
            open: Arc::clone(&self.open),
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

    fn call(&mut self, mut request: Request) -> Self::Future {
        let service = Arc::clone(&self.service);
        let peek = request.extensions_mut().remove::<Peek>();
        // A request has a method and an id; a client's response has only the id. Read from
        // the body only when needed: with sessions, or when rmcp had no answer.
        let request_id = |peek: &Peek| peek.method().and(peek.id()).cloned();
        let session = request
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(Arc::<str>::from);
        if request.method() == axum::http::Method::DELETE
            && let (Some(sessions), Some(session)) = (&self.sessions, &session)
        {
            let (sessions, session) = (Arc::clone(sessions), Arc::clone(session));
            let cancelled = self.open.take(&session);
            return Box::pin(async move {
                for request in cancelled {
                    cancel(&sessions, &session, request, "the session was closed").await;
                }
                Ok(service.handle(request).await.into_response())
            });
        }
        let hang_up = match (
            &self.sessions,
            self.sessions
                .as_ref()
                .and(peek.as_ref())
                .and_then(request_id),
        ) {
            (Some(sessions), Some(id)) => session.map(|session| HangUp {
                sessions: Arc::clone(sessions),
                open: Arc::clone(&self.open),
                number: self.open.add(&session, id.clone()),
                session,
                request: id,
                armed: true,
            }),
            _ => None,
        };
        // rmcp answers 415 both for a Content-Type that is not JSON and for a JSON body it
        // cannot read; only the second is the body's fault.
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(is_json);
        Box::pin(async move {
            let response = service.handle(request).await.into_response();
            if response.status() == StatusCode::INTERNAL_SERVER_ERROR
                && let Some(id) = peek.as_ref().and_then(request_id)
            {
                return Ok(no_answer(&id));
            }
            if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
                && json
                && let Some(unreadable) = peek.as_ref().and_then(Peek::unreadable)
            {
                return Ok(unreadable);
            }
            Ok(match hang_up {
                // An empty answer (202) is complete as it is.
                Some(mut hang_up) if response.body().is_end_stream() => {
                    hang_up.armed = false;
                    response
                }
                // The answer is on its way; the call is over only when it has been sent.
                Some(hang_up) => {
                    let (parts, body) = response.into_parts();
                    Response::from_parts(parts, Body::new(Watched { body, hang_up }))
                }
                None => response,
            })
        })
    }
}

/// Whether a `Content-Type` is JSON (its essence, as rmcp reads it).
fn is_json(content_type: &str) -> bool {
    content_type
        .split_once(';')
        .map_or(content_type, |(essence, _)| essence)
        .trim()
        .eq_ignore_ascii_case("application/json")
}

/// The JSON-RPC error for a request rmcp gave no answer to.
fn no_answer(id: &Value) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32603,
            "message": "the server could not finish this request (it may be shutting down); try again",
        },
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Cancels a session's request when dropped before its answer was sent.
struct HangUp {
    sessions: Arc<LocalSessionManager>,
    open: Arc<Open>,
    number: u64,
    session: Arc<str>,
    request: Value,
    armed: bool,
}

impl Drop for HangUp {
    fn drop(&mut self) {
        self.open.remove(&self.session, self.number);
        if !self.armed {
            return;
        }
        let sessions = Arc::clone(&self.sessions);
        let session = Arc::clone(&self.session);
        let request = self.request.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                cancel(&sessions, &session, request, "the client hung up").await;
            });
        }
    }
}

/// Sends `notifications/cancelled` for `request` into `session`, as its client would.
async fn cancel(sessions: &LocalSessionManager, session: &Arc<str>, request: Value, why: &str) {
    let cancelled = json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request, "reason": why},
    });
    let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(cancelled) else {
        return;
    };
    tracing::info!(%session, "cancelling a session's request: {why}");
    let _ = sessions.accept_message(session, message).await;
}

/// A response body that disarms its [`HangUp`] once sent in full.
struct Watched {
    body: Body,
    hang_up: HangUp,
}

impl http_body::Body for Watched {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(context);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.hang_up.armed = false;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
