//! A cap on legacy sessions: rmcp's session manager has none, and each costs memory and a
//! worker task until it idles out.

use std::sync::Arc;

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
}

/// Refuses a request that would open a new session (an `initialize` POST) when the cap is
/// reached, with 503 and `Retry-After`. Stateless requests (2026-07-28 clients, which never
/// open a session) are not counted and never refused.
pub(super) async fn enforce_cap(State(cap): State<Cap>, request: Request, next: Next) -> Response {
    let opens_session = request.method() == Method::POST
        && !request.headers().contains_key("mcp-session-id")
        && request
            .extensions()
            .get::<Peek>()
            .is_some_and(|peek| peek.method.as_deref() == Some("initialize"));
    if opens_session && cap.manager.sessions.read().await.len() >= cap.max {
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
    next.run(request).await
}
