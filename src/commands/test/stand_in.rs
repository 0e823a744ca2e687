//! A stand-in for an HTTP tool's upstream while `mcp-serve test` runs an example that
//! declares one: it answers every request with the declared response and remembers what it
//! was asked.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Response, StatusCode};

use crate::tool::ExampleUpstream;

/// A request the stand-in received.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub(super) method: String,
    /// The path, with `?query` when there is one.
    pub(super) target: String,
}

/// A running stand-in; stopped when dropped.
#[derive(Debug)]
pub(super) struct StandIn {
    pub(super) address: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Shared {
    upstream: Arc<ExampleUpstream>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl StandIn {
    /// Starts on a free loopback port.
    pub(super) async fn start(upstream: &ExampleUpstream) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            upstream: Arc::new(upstream.clone()),
            seen: Arc::clone(&seen),
        };
        let router = axum::Router::new().fallback(answer).with_state(shared);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(Self {
            address,
            seen,
            task,
        })
    }

    /// What it was asked, in order.
    pub(super) fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or_default()
    }
}

async fn answer(State(shared): State<Shared>, request: Request) -> Response<Body> {
    if let Ok(mut seen) = shared.seen.lock() {
        seen.push(Seen {
            method: request.method().to_string(),
            target: request
                .uri()
                .path_and_query()
                .map_or_else(|| "/".to_owned(), ToString::to_string),
        });
    }
    let upstream = &shared.upstream;
    let mut response = Response::new(Body::from(upstream.body.clone()));
    // One request per connection: nothing is left open once the example is done.
    response.headers_mut().insert(
        axum::http::header::CONNECTION,
        HeaderValue::from_static("close"),
    );
    *response.status_mut() = StatusCode::from_u16(upstream.status).unwrap_or(StatusCode::OK);
    for (name, value) in &upstream.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
