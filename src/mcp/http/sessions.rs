//! A cap on legacy sessions: rmcp's session manager has none, and each costs memory and a
//! spawned worker until it idles out.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::body::Peek;

#[derive(Debug, Clone)]
pub(super) struct Cap {
    pub(super) manager: Arc<LocalSessionManager>,
    pub(super) max: usize,
    /// Requests that may open a session, being served now: counted with the open sessions,
    /// so that concurrent `initialize`s cannot pass the cap together.
    pub(super) opening: Arc<AtomicUsize>,
}

/// Refuses a request that would open a new session (an `initialize` POST, or one whose
/// method could not be read) when the cap is reached, with 503 and `Retry-After`.
/// Stateless requests (2026-07-28 clients, which never open a session) are not counted and
/// never refused.
pub(super) async fn enforce_cap(State(cap): State<Cap>, request: Request, next: Next) -> Response {
    let opens_session = request.method() == Method::POST
        && !request.headers().contains_key("mcp-session-id")
        && request
            .extensions()
            .get::<Peek>()
            .is_none_or(|peek| peek.method().is_none_or(|method| method == "initialize"));
    if !opens_session {
        return next.run(request).await;
    }
    let opening = cap.opening.fetch_add(1, Ordering::AcqRel);
    if cap.manager.sessions.read().await.len() + opening >= cap.max {
        cap.opening.fetch_sub(1, Ordering::AcqRel);
        tracing::warn!(
            max = cap.max,
            "refusing a new session: the session cap is reached"
        );
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"too many sessions (the limit is {}); try again later"}}}}"#,
            cap.max
        );
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [
                (header::RETRY_AFTER, "5"),
                (header::CONTENT_TYPE, "application/json"),
            ],
            body,
        )
            .into_response();
    }
    // Counted down however the request ends, a client hanging up included.
    let _opening = Opening(cap.opening);
    next.run(request).await
}

/// One request that may open a session, while it is served.
struct Opening(Arc<AtomicUsize>);

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
