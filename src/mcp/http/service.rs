//! The service hyper runs for one connection: the router, with the client's address on each
//! request, the request counted in progress for the connection budget until its response's
//! body is sent, and that body's JSON and events redacted as they leave
//! ([`crate::mcp::outgoing`]).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::TrustedProxies;
use super::splice::{Frames, Framing, Spliced};
use crate::connections::{Busy, Requests};

use crate::mcp::Handler;

/// The router, for one connection: each request carries the client's address (the peer's,
/// or the one a trusted proxy forwarded: for per-caller limits when nothing else names the
/// caller) and counts as in progress, so the connection is not shed, until its response's
/// body has been sent or dropped.
///
/// Every JSON body and SSE event leaves through [`crate::mcp::outgoing`], which redacts a
/// secret of the served manifest that the door that built it missed.
#[derive(Clone)]
pub(super) struct Counting {
    pub(super) app: axum::Router,
    pub(super) handler: Handler,
    pub(super) peer: SocketAddr,
    pub(super) trusted: Arc<TrustedProxies>,
    pub(super) requests: Requests,
    /// Legacy clients get sessions (`--sessions`).
    pub(super) sessions: bool,
}

impl tower::Service<hyper::Request<hyper::body::Incoming>> for Counting {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        // In progress from when its body has all arrived: a client that holds back the last
        // bytes of a body holds an idle connection, the first to be shed, not a busy one.
        let busy: Slot = Arc::default();
        let arrived = Arrived {
            body: None,
            requests: self.requests.clone(),
            busy: Arc::clone(&busy),
        };
        let mut request = request.map(|body| {
            let mut arrived = arrived;
            if http_body::Body::is_end_stream(&body) {
                arrived.mark();
            }
            arrived.body = Some(body);
            arrived
        });
        let client = self.trusted.client(self.peer.ip(), request.headers());
        let address = if client == self.peer.ip() {
            self.peer
        } else {
            SocketAddr::new(client, 0)
        };
        request
            .extensions_mut()
            .insert(crate::mcp::ClientAddress(address));
        // A full `tools/list` answer is sent from its pieces, outside a session.
        let spliced = Spliced::new(self.sessions);
        request.extensions_mut().insert(spliced.clone());
        let app = self.app.clone();
        let handler = self.handler.clone();
        Box::pin(async move {
            let response = tower::ServiceExt::oneshot(app, request).await?;
            let kind = response
                .headers()
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map_or(Kind::Other, |value| {
                    if value.starts_with("text/event-stream") {
                        Kind::Events
                    } else if value.starts_with("application/json") {
                        Kind::Json
                    } else {
                        Kind::Other
                    }
                });
            let registry = handler.registry();
            let response = if kind == Kind::Json
                && (spliced.left().is_some() || !registry.door_redactor().is_empty())
            {
                // Whole already (rmcp writes a JSON answer in one piece): made to leave here,
                // so its Content-Length is that of what is sent.
                let (parts, body) = response.into_parts();
                let bytes = match http_body_util::BodyExt::collect(body).await {
                    Ok(collected) => collected.to_bytes(),
                    Err(error) => {
                        tracing::debug!(%error, "a response body failed before it was sent");
                        axum::body::Bytes::new()
                    }
                };
                json_leaving(parts, &bytes, &spliced, &registry)
            } else {
                response
            };
            drop(registry);
            let kind = if kind == Kind::Json {
                Kind::Other
            } else {
                kind
            };
            let spliced = (kind == Kind::Events).then_some(spliced);
            Ok(response.map(|body| {
                axum::body::Body::new(Counted {
                    body,
                    kind,
                    handler,
                    spliced,
                    frames: None,
                    _busy: busy,
                })
            }))
        })
    }
}

/// A whole JSON response as it leaves: a full `tools/list` answer sent from its pieces, or
/// the body read by the door.
fn json_leaving(
    mut parts: hyper::http::response::Parts,
    bytes: &axum::body::Bytes,
    spliced: &Spliced,
    registry: &crate::registry::Registry,
) -> axum::response::Response {
    let framed = spliced
        .left()
        .and_then(|pieces| super::splice::splice(bytes, Framing::Json, &pieces, registry));
    let body = if let Some(framed) = framed {
        parts.headers.insert(
            hyper::header::CONTENT_LENGTH,
            hyper::header::HeaderValue::from(framed.len()),
        );
        axum::body::Body::new(super::splice::Body(Frames::new(framed)))
    } else if registry.door_redactor().finds(bytes) {
        let bytes = crate::mcp::outgoing::message(bytes.to_vec(), registry.door_redactor());
        parts.headers.insert(
            hyper::header::CONTENT_LENGTH,
            hyper::header::HeaderValue::from(bytes.len()),
        );
        axum::body::Body::from(bytes)
    } else {
        axum::body::Body::from(bytes.clone())
    };
    hyper::Response::from_parts(parts, body)
}

/// The request in progress on a connection, once its body has arrived.
type Slot = Arc<std::sync::Mutex<Option<Busy>>>;

/// A request's body, marking the request in progress when its last byte has arrived.
struct Arrived {
    body: Option<hyper::body::Incoming>,
    requests: Requests,
    busy: Slot,
}

impl Arrived {
    fn mark(&self) {
        if let Ok(mut busy) = self.busy.lock()
            && busy.is_none()
        {
            *busy = Some(self.requests.start());
        }
    }
}

impl http_body::Body for Arrived {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(body).poll_frame(context);
        let ended = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(Ok(_))) => this
                .body
                .as_ref()
                .is_some_and(http_body::Body::is_end_stream),
            _ => false,
        };
        if ended {
            this.mark();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body
            .as_ref()
            .is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.as_ref().map_or_else(
            || http_body::SizeHint::with_exact(0),
            http_body::Body::size_hint,
        )
    }
}

/// What a response body holds, for the last redaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Redacted whole before it is sent.
    Json,
    /// Redacted event by event as it streams.
    Events,
    /// Health checks, metrics, OAuth metadata: built of no manifest value, sent as they are.
    Other,
}

/// A response body that keeps its connection counted busy until it is sent or dropped, and
/// whose JSON and events are redacted as they leave.
struct Counted {
    body: axum::body::Body,
    kind: Kind,
    handler: Handler,
    /// Where a full `tools/list` answer is left for an event of this stream, until sent.
    spliced: Option<Spliced>,
    /// That answer's event, being sent.
    frames: Option<Frames>,
    _busy: Slot,
}

impl Counted {
    /// An event of the stream as it leaves: a full `tools/list` answer sent from its
    /// pieces (this is its first frame; [`Self::frames`] holds the rest), or the event read
    /// by the door.
    fn leaving(&mut self, bytes: axum::body::Bytes) -> axum::body::Bytes {
        let registry = self.handler.registry();
        let redactor = registry.door_redactor();
        let spliced = self
            .spliced
            .as_ref()
            .and_then(Spliced::left)
            .and_then(|pieces| super::splice::splice(&bytes, Framing::Event, &pieces, &registry));
        if let Some(spliced) = spliced {
            self.spliced = None;
            let mut frames = Frames::new(spliced);
            let first = frames.next().unwrap_or_default();
            self.frames = Some(frames);
            return first;
        }
        if redactor.is_empty() || !redactor.finds(&bytes) {
            return bytes;
        }
        let bytes = bytes.to_vec();
        axum::body::Bytes::from(crate::mcp::outgoing::event_stream(bytes, redactor))
    }
}

impl http_body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(bytes) = this.frames.as_mut().and_then(Iterator::next) {
            return Poll::Ready(Some(Ok(http_body::Frame::data(bytes))));
        }
        this.frames = None;
        let polled = Pin::new(&mut this.body).poll_frame(context);
        if this.kind == Kind::Other {
            return polled;
        }
        polled.map(|frame| {
            frame.map(|frame| frame.map(|frame| frame.map_data(|bytes| this.leaving(bytes))))
        })
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_none() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        if self.frames.is_some() {
            return http_body::SizeHint::default();
        }
        self.body.size_hint()
    }
}
