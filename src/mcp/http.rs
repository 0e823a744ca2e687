//! Streamable HTTP: rmcp's service mounted in axum, behind our security layers, served by a
//! hyper accept loop with timeouts, `TCP_NODELAY` and graceful shutdown.
//!
//! Stateless by default (no session ids; GET and DELETE answer 405), so any replica can
//! serve any request; `--sessions` gives clients of the `initialize` lifecycle sessions with a cap and idle expiry.
//! 2026-07-28 is always stateless (rmcp routes it so).

mod auth;
mod body;
mod endpoint;
mod forwarded;
mod gate;
mod lanes;
mod listener;
mod oauth;
mod service;
mod sessions;
mod splice;
mod throttle;

pub use forwarded::{Network, NotANetwork, TrustedProxies};

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use auth::BearerToken;
pub(crate) use body::ScopeTarget;
pub use listener::serve_listener;

use super::Handler;
use endpoint::Endpoint;

/// Everything the HTTP transport can be told.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where the MCP endpoint is mounted, e.g. `/mcp`.
    pub path: String,
    /// Legacy sessions, when enabled.
    pub sessions: Option<SessionLimits>,
    /// Answer with `application/json` when no notification precedes the result.
    pub json_response: bool,
    /// Accepted `Host` values (host or host:port).
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (`scheme://host:port`, `:*` for any port); a present
    /// Origin that is not listed gets 403.
    pub allowed_origins: Vec<String>,
    /// Required bearer token, if any.
    pub token: Option<BearerToken>,
    /// Required OAuth access tokens, checked by this verifier (`[server.auth]`).
    pub oauth: Option<Arc<crate::auth::oauth::Verifier>>,
    /// Where responses and refused requests are counted, if anywhere.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Serve `/metrics` here too, behind the same authentication (`--metrics`).
    pub metrics_route: bool,
    pub max_body_bytes: usize,
    /// How long a connection may take to send a request's headers, and how long an idle
    /// keep-alive connection stays open.
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive once its headers have.
    pub body_read_timeout: Duration,
    /// How long in-flight calls get to finish after SIGTERM before their processes are killed.
    pub shutdown_grace: Duration,
    /// Every request's allowance, per caller (`--request-rate`).
    pub request_rate: Option<crate::rate::Rate>,
    /// What is recorded per call and per refused request (`--audit`).
    pub audit: crate::audit::Audit,
    /// Reverse proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub trusted_proxies: TrustedProxies,
}

/// Bounds on legacy sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    pub max_sessions: usize,
    pub idle: Duration,
}

/// Shared between the router and the accept loop.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lifecycle {
    draining: Arc<AtomicBool>,
    /// Cancelling this ends every rmcp session and in-flight request.
    pub(crate) cancel: CancellationToken,
}

impl Lifecycle {
    pub(crate) fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }
}

/// The loopback `Host` names allowed by default, and the `Origin`s that go with them.
pub fn loopback_hosts() -> Vec<String> {
    ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(String::from)
        .to_vec()
}

pub fn loopback_origins() -> Vec<String> {
    ["http", "https"]
        .iter()
        .flat_map(|scheme| {
            ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("{scheme}://{host}:*"))
        })
        .collect()
}

/// The MCP endpoints alone: the server's at `options.path`, and one per toolset at
/// `{path}/{set}` ([`toolset_endpoints`]), each rmcp's service, stateless or with legacy
/// sessions; one session manager and cap for all, and each body read against the server's
/// scopes (the same for a set's tools; for another tool, the refusal the server's endpoint
/// gives the same token).
fn endpoints(
    handler: &Handler,
    options: &HttpOptions,
    lifecycle: &Lifecycle,
    resource: Option<&oauth::Resource>,
) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(options.sessions.is_some())
        .with_json_response(options.json_response)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(lifecycle.cancel.child_token());
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let manager = options.sessions.map(|limits| {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.idle);
        Arc::new(manager)
    });
    let mut router = Router::new();
    for (path, served) in toolset_endpoints(handler, &options.path) {
        // A 2025 session is a connection that lasts, with a list of its own in discovery
        // mode; a stateless request is its own.
        let sessions = manager.is_some();
        let factory = move || {
            let handler = match &served {
                Served::Server(handler) => handler.clone(),
                Served::Set(lazy) => lazy.handler()?,
            };
            Ok(super::traced::Traced(if sessions {
                handler.connection()
            } else {
                handler
            }))
        };
        // Exactly one path: `route_service`, not `nest_service`, which would also take
        // every path below it and rewrite each request's URI.
        router = match &manager {
            None => router.route_service(
                &path,
                Endpoint::new(
                    StreamableHttpService::new(
                        factory,
                        Arc::new(NeverSessionManager::default()),
                        config.clone(),
                    ),
                    None,
                ),
            ),
            Some(manager) => router.route_service(
                &path,
                Endpoint::new(
                    StreamableHttpService::new(factory, Arc::clone(manager), config.clone()),
                    Some(Arc::clone(manager)),
                ),
            ),
        };
    }
    let router = match (options.sessions, manager) {
        (Some(limits), Some(manager)) => router.route_layer(axum::middleware::from_fn_with_state(
            sessions::Cap {
                manager,
                max: limits.max_sessions,
                opening: Arc::default(),
            },
            sessions::enforce_cap,
        )),
        _ => router,
    };
    // Outside the session cap, which reads what it finds; with OAuth it also refuses what
    // the token's scopes do not reach, once the body says what is asked for.
    router.route_layer(axum::middleware::from_fn_with_state(
        body::BodyLimits {
            timeout: options.body_read_timeout,
            max_bytes: options.max_body_bytes,
            scopes: resource.cloned(),
        },
        body::read_body,
    ))
}

/// What an endpoint serves: the server's handler, or a toolset's, made on its first
/// request.
enum Served {
    Server(Handler),
    Set(Arc<crate::mcp::state::LazyToolset>),
}

/// Where each endpoint is: `path` serves `handler`, and `{path}/{set}` each toolset of its
/// registry alone (GitHub's remote server has `/x/{toolset}` for the same). `path` names at
/// least one segment and none under `/.well-known/` (`run` checks), and a set's name is
/// letters, digits, `_` and `-`, so no endpoint takes a path the server answers itself.
fn toolset_endpoints(handler: &Handler, path: &str) -> Vec<(String, Served)> {
    let mut endpoints = vec![(path.to_owned(), Served::Server(handler.clone()))];
    let base = path.trim_end_matches('/');
    for set in handler.registry().toolsets() {
        let at = format!("{base}/{}", set.name);
        endpoints.push((at, Served::Set(handler.lazy_toolset(&set.name))));
    }
    if endpoints.len() > 1 {
        tracing::info!(
            toolsets = endpoints.len() - 1,
            "each toolset is also served alone at {base}/{{toolset}}"
        );
    }
    endpoints
}

/// The whole application: health endpoints and the MCP endpoints behind their layers.
pub(crate) fn router(handler: &Handler, options: &HttpOptions, lifecycle: &Lifecycle) -> Router {
    let resource = options.oauth.as_ref().map(|verifier| oauth::Resource {
        verifier: verifier.clone(),
        metadata_url: verifier.settings().metadata_location().0.into(),
        handler: handler.clone(),
    });
    let mcp = endpoints(handler, options, lifecycle, resource.as_ref());
    // Inside authentication, which names the caller, and before the body is read; not on
    // `/metrics` (merged next).
    let mcp = match options.request_rate {
        Some(rate) => mcp.route_layer(axum::middleware::from_fn_with_state(
            Arc::new(crate::rate::RateLimiter::new(rate)),
            throttle::limit_requests,
        )),
        None => mcp,
    };
    let mcp = match (&options.metrics, options.metrics_route) {
        (Some(metrics), true) => mcp.merge(metrics_routes(Arc::clone(metrics))),
        _ => mcp,
    };
    let authentication = match (&options.token, &resource) {
        (_, Some(resource)) => gate::Authentication::OAuth(resource.clone()),
        (Some(token), None) => gate::Authentication::Token(token.clone()),
        (None, None) => gate::Authentication::None,
    };
    let mcp = mcp.route_layer(axum::middleware::from_fn_with_state(
        gate::Gate {
            draining: lifecycle.draining.clone(),
            authentication,
            metrics: options.metrics.clone(),
            sessions: options.sessions.is_some(),
            audit: options.audit,
        },
        gate::gate,
    ));
    let metadata = resource
        .as_ref()
        .map_or_else(Router::new, oauth::metadata_routes);
    // The gate counts the endpoint's responses; the health checks', the metadata's and
    // unknown paths' (404) are counted here.
    let outside = health(lifecycle.draining.clone()).merge(metadata);
    match &options.metrics {
        Some(metrics) => outside
            .fallback(|| std::future::ready(StatusCode::NOT_FOUND))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(metrics),
                count_responses,
            ))
            .merge(mcp),
        None => outside.merge(mcp),
    }
}

/// `/metrics`, in the OpenMetrics text format Prometheus reads.
fn metrics_routes(metrics: Arc<crate::metrics::Metrics>) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let text = metrics.render();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    text,
                )
            }
        }),
    )
}

/// Serves `/metrics` alone (`--metrics-addr`), until the process ends.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    metrics: Arc<crate::metrics::Metrics>,
) {
    if let Err(error) = axum::serve(listener, metrics_routes(metrics)).await {
        tracing::warn!(%error, "the metrics listener stopped");
    }
}

/// Counts every response by status.
async fn count_responses(
    axum::extract::State(metrics): axum::extract::State<Arc<crate::metrics::Metrics>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let response = next.run(request).await;
    metrics.http_response(response.status().as_u16());
    response
}

/// `/healthz` (the process answers) and `/readyz` (and is not draining).
fn health(draining: Arc<AtomicBool>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let draining = draining.load(Ordering::Acquire);
                async move {
                    if draining {
                        (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
                    } else {
                        (StatusCode::OK, "ready\n")
                    }
                }
            }),
        )
}

/// How a bound address is announced on stderr; tests and scripts read this line.
pub fn announce(address: SocketAddr, path: &str) -> String {
    format!("mcp-serve: listening on http://{address}{path}")
}
