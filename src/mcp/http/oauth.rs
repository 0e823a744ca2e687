//! The OAuth resource server over HTTP: the metadata clients discover the issuer from
//! (RFC 9728), the bearer check that turns a token into a principal (or a `401` whose
//! challenge says where the metadata is), and the scope check that answers `403
//! insufficient_scope` for a tool the token does not grant, so a client can step up.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::bearer_credentials;
use super::body::Peek;
use crate::auth::oauth::{Rejection, Verifier};
use crate::auth::{Principal, Subject};
use crate::mcp::Handler;

/// What the layers share.
#[derive(Debug, Clone)]
pub(super) struct Resource {
    pub(super) verifier: Arc<Verifier>,
    /// The absolute URL of the metadata, for challenges.
    pub(super) metadata_url: Arc<str>,
    pub(super) handler: Handler,
}

impl Resource {
    fn count_failure(&self, reason: &'static str) {
        if let Some(metrics) = self.handler.metrics() {
            metrics.auth_failure(reason);
        }
    }
}

/// The metadata document, where RFC 9728 puts it for the endpoint's URL, and at the root.
pub(super) fn metadata_routes(resource: &Resource) -> axum::Router {
    let (_, path) = resource.verifier.settings().metadata_location();
    let document = axum::routing::get(metadata).with_state(resource.clone());
    let routes = axum::Router::new().route(&path, document.clone());
    if path == "/.well-known/oauth-protected-resource" {
        routes
    } else {
        routes.route("/.well-known/oauth-protected-resource", document)
    }
}

/// The metadata document.
async fn metadata(State(resource): State<Resource>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        resource.verifier.settings().metadata().to_string(),
    )
        .into_response()
}

/// Requires a valid access token: the refusal (`401`, `403`, `503`), or `None` with the
/// principal in the request's extensions and the token itself removed, so nothing
/// downstream can see or forward it.
pub(super) async fn authenticate(resource: &Resource, request: &mut Request) -> Option<Response> {
    let settings = resource.verifier.settings();
    let Some(token) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| bearer_credentials(value.as_bytes()))
        .and_then(|token| std::str::from_utf8(token).ok())
        .map(ToOwned::to_owned)
    else {
        resource.count_failure("missing");
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", resource.metadata_url);
        if !settings.required_scopes.is_empty() {
            challenge.push_str(&format!(
                ", scope=\"{}\"",
                settings.required_scopes.join(" ")
            ));
        }
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            &challenge,
            "an access token is required",
        ));
    };
    let verified = resource.verifier.verify(&token).await;
    if let Err(rejection) = &verified {
        resource.count_failure(rejection.reason());
    }
    let principal = match verified {
        Ok(principal) => principal,
        Err(Rejection::Invalid(reason)) => {
            tracing::info!(reason, "refused an access token");
            let challenge = format!(
                "Bearer error=\"invalid_token\", error_description=\"{reason}\", resource_metadata=\"{}\"",
                resource.metadata_url
            );
            return Some(refuse(StatusCode::UNAUTHORIZED, &challenge, reason));
        }
        Err(Rejection::Unavailable(error)) => {
            tracing::warn!(%error, "could not check an access token");
            let mut response = refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "",
                "the authorization server's keys are unavailable; try again shortly",
            );
            response.headers_mut().remove(header::WWW_AUTHENTICATE);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            return Some(response);
        }
    };
    if !principal.grants(&settings.required_scopes) {
        resource.count_failure("insufficient_scope");
        return Some(insufficient(
            resource,
            &principal,
            &settings.required_scopes,
        ));
    }
    request.headers_mut().remove(header::AUTHORIZATION);
    request.extensions_mut().insert(Subject(principal));
    None
}

/// After the body is read (by the body layer, which asks this, saving a layer per request):
/// a `tools/call`, `prompts/get`, `resources/read`, `resources/subscribe` or
/// `completion/complete` of something whose scopes the token lacks is refused with `403`
/// before it reaches the server.
pub(super) fn refuse_unscoped(
    resource: &Resource,
    extensions: &axum::http::Extensions,
    peek: &Peek,
) -> Option<Response> {
    // Without scopes in the manifest there is nothing to look for, and the body is not
    // parsed here.
    if !resource.handler.anything_scoped() {
        return None;
    }
    let needed = peek
        .target()
        .and_then(|target| resource.handler.scopes_for(target))?;
    let Subject(principal) = extensions.get::<Subject>()?;
    if principal.grants(&needed) {
        return None;
    }
    resource.count_failure("insufficient_scope");
    Some(insufficient(resource, principal, &needed))
}

fn insufficient(resource: &Resource, principal: &Principal, needed: &[String]) -> Response {
    let missing = principal.missing(needed).join(" ");
    tracing::info!(subject = %principal.subject, missing, "refused a call: insufficient scope");
    // The scopes to ask for are the ones the token has plus the ones missing.
    let mut scopes = principal.scopes.clone();
    for scope in needed {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"this needs the scope {missing}\"",
        scopes.join(" "),
        resource.metadata_url
    );
    refuse(
        StatusCode::FORBIDDEN,
        &challenge,
        &format!("this needs the scope {missing}"),
    )
}

fn refuse(status: StatusCode, challenge: &str, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": message},
    });
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
