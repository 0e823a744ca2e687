//! Whole-request limits (`--request-rate`, `--request-burst`): every request to the MCP
//! endpoint counts against its caller's allowance (the token's subject, else the client's
//! address), whatever it asks for; over it, `429 Too Many Requests` with `Retry-After`.
//! Inside the authentication layer, so a token's subject is known; per replica.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::rate::RateLimiter;

/// Counts the request against its caller's allowance, or refuses it.
pub(super) async fn limit_requests(
    State(limiter): State<Arc<RateLimiter>>,
    request: Request,
    next: Next,
) -> Response {
    // Closing a session never counts: a throttled client can always let go.
    if request.method() == axum::http::Method::DELETE {
        return next.run(request).await;
    }
    let caller = if let Some(subject) = request.extensions().get::<crate::auth::Subject>() {
        format!("sub:{}", subject.0.subject)
    } else if let Some(address) = request.extensions().get::<crate::mcp::ClientAddress>() {
        crate::rate::address_key(address.0.ip())
    } else {
        "anonymous".to_owned()
    };
    let Err(refused) = limiter.check(&caller) else {
        return next.run(request).await;
    };
    tracing::info!(retry_after = ?refused.retry_after, "refused a request over the request rate");
    let message = refused.describe("request");
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": message},
    });
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    // Whole seconds (RFC 9110), rounded up, so a client that waits that long gets in.
    let seconds = refused.retry_after.as_secs() + u64::from(refused.retry_after.subsec_nanos() > 0);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}
