//! Bearer-token authentication for the MCP endpoint.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;

/// The token clients must present; never logged, never forwarded to a backend.
#[derive(Clone)]
pub struct BearerToken(Arc<[u8]>);

impl BearerToken {
    pub fn new(token: &str) -> Self {
        Self(Arc::from(token.as_bytes()))
    }

    /// The token as text, for the redactor to hide it (`Registry::with_launch_secrets`).
    pub fn for_redaction(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// Compares in constant time (for tokens of equal length).
    fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.0.as_ref().ct_eq(presented))
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("BearerToken(<redacted>)")
    }
}

/// Refuses a request without `Authorization: Bearer <token>` (the `401`), or removes the
/// header (`None`), so nothing downstream can see or forward it.
pub(super) fn require_bearer(
    token: &BearerToken,
    metrics: Option<&crate::metrics::Metrics>,
    request: &mut Request,
) -> Option<Response> {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| bearer_credentials(value.as_bytes()))
        .is_some_and(|presented| token.matches(presented));
    if !presented {
        if let Some(metrics) = metrics {
            metrics.auth_failure("token");
        }
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"missing or invalid bearer token"}}"#;
        let mut response = (StatusCode::UNAUTHORIZED, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer realm="mcp-serve""#),
        );
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Some(response);
    }
    request.headers_mut().remove(header::AUTHORIZATION);
    None
}

/// The credentials of a `Bearer` authorization value. The scheme is case-insensitive
/// (RFC 7235, section 2.1) and may be followed by more than one space.
pub(super) fn bearer_credentials(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || !rest.starts_with(b" ") {
        return None;
    }
    let credentials = rest.trim_ascii_start();
    (!credentials.is_empty()).then_some(credentials)
}

#[cfg(test)]
mod tests {
    use super::{BearerToken, bearer_credentials};

    #[test]
    fn the_scheme_is_case_insensitive() {
        assert_eq!(bearer_credentials(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer_credentials(b"bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer_credentials(b"BEARER   abc"), Some(&b"abc"[..]));
        assert_eq!(bearer_credentials(b"Bearerabc"), None);
        assert_eq!(bearer_credentials(b"Basic abc"), None);
        assert_eq!(bearer_credentials(b"Bearer "), None);
    }

    #[test]
    fn only_the_exact_token_matches_and_debug_hides_it() {
        let token = BearerToken::new("s3cret");
        assert!(token.matches(b"s3cret"));
        assert!(!token.matches(b"s3cre"));
        assert!(!token.matches(b"s3cret "));
        assert!(!token.matches(b""));
        assert_eq!(format!("{token:?}"), "BearerToken(<redacted>)");
    }
}
