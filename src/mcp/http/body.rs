//! Reading a request's body before rmcp does: within a time limit (a client that sends its
//! headers and then trickles or stalls gets 408, not a connection held forever) and a size
//! limit (413), and a look at what the message is, for the layers that need to know (the
//! session cap, cancelling a session's call when its client hangs up, the JSON-RPC error
//! that replaces an empty answer or rmcp's plain-text refusal of a body it cannot read).

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;

/// How long and how large a body may be, and, with OAuth, the scopes what it asks for needs.
#[derive(Debug, Clone)]
pub(super) struct BodyLimits {
    pub(super) timeout: Duration,
    pub(super) max_bytes: usize,
    pub(super) scopes: Option<super::oauth::Resource>,
}

/// What a request acts on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ScopeTarget<'a> {
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
    /// A resource template, by its `uri-template`.
    Template(&'a str),
}

/// What the body says it is; in the request's extensions after [`read_body`]. Read only
/// when a layer asks (most requests never need it), once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peek {
    bytes: Bytes,
    parsed: OnceLock<Parsed>,
}

#[derive(Debug, Clone, Default)]
struct Parsed {
    method: Option<String>,
    id: Option<Value>,
    /// `params.name`: the tool of a `tools/call`, the prompt of a `prompts/get`.
    name: Option<String>,
    /// `params.uri`: what a `resources/read` or `resources/subscribe` reads.
    uri: Option<String>,
    /// `params.ref.type` of a `completion/complete` (whose `name` or `uri` is the ref's).
    reference: Option<String>,
}

impl Peek {
    fn of(bytes: Bytes) -> Self {
        Self {
            bytes,
            parsed: OnceLock::new(),
        }
    }

    fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| {
            #[derive(serde::Deserialize)]
            struct Message {
                method: Option<String>,
                id: Option<Value>,
                params: Option<Value>,
            }
            match serde_json::from_slice::<Message>(&self.bytes) {
                Ok(message) => {
                    // A completion names its prompt or template in `params.ref`.
                    let completion = message.method.as_deref() == Some("completion/complete");
                    let target = message.params.as_ref().and_then(|params| {
                        if completion {
                            params.get("ref")
                        } else {
                            Some(params)
                        }
                    });
                    let text = |key: &str| {
                        target
                            .and_then(|target| target.get(key))
                            .and_then(Value::as_str)
                            .map(ToOwned::to_owned)
                    };
                    Parsed {
                        id: message.id.filter(|id| id.is_string() || id.is_number()),
                        name: text("name"),
                        uri: text("uri"),
                        reference: completion.then(|| text("type")).flatten(),
                        method: message.method,
                    }
                }
                Err(_) => Parsed::default(),
            }
        })
    }

    /// The JSON-RPC method, when the body is one message with one.
    pub(super) fn method(&self) -> Option<&str> {
        self.parsed().method.as_deref()
    }

    /// What the request acts on, for the scopes it needs: the tool a `tools/call` names,
    /// the prompt of a `prompts/get`, the URI a `resources/read` or `resources/subscribe`
    /// reads, the prompt or template a `completion/complete` completes.
    pub(super) fn target(&self) -> Option<ScopeTarget<'_>> {
        let parsed = self.parsed();
        match parsed.method.as_deref()? {
            "tools/call" => parsed.name.as_deref().map(ScopeTarget::Tool),
            "prompts/get" => parsed.name.as_deref().map(ScopeTarget::Prompt),
            "resources/read" | "resources/subscribe" => {
                parsed.uri.as_deref().map(ScopeTarget::Resource)
            }
            "completion/complete" => match parsed.reference.as_deref()? {
                "ref/prompt" => parsed.name.as_deref().map(ScopeTarget::Prompt),
                "ref/resource" => parsed.uri.as_deref().map(ScopeTarget::Template),
                _ => None,
            },
            _ => None,
        }
    }

    /// The request id, when the message has one.
    pub(super) fn id(&self) -> Option<&Value> {
        self.parsed().id.as_ref()
    }

    /// `400` with the JSON-RPC error for a body that is not one JSON-RPC message rmcp can
    /// read, as stdio answers the same bytes: `-32700` when it is not JSON, `-32600` for a
    /// batch, a value that is not a message, or one whose id is not a string or number,
    /// and `-32602` (with the id) for a request whose params do not fit its method.
    /// `None` when rmcp can read it (its refusal was about something else).
    pub(super) fn unreadable(&self) -> Option<Response> {
        let (id, code, message) = self.why_unreadable()?;
        tracing::debug!(code, %message, "refusing a body that is not a JSON-RPC message");
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        });
        Some(
            (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response(),
        )
    }

    /// The id, code and message of [`Self::unreadable`]'s error.
    fn why_unreadable(&self) -> Option<(Value, i64, String)> {
        let error = serde_json::from_slice::<ClientJsonRpcMessage>(&self.bytes).err()?;
        Some(match serde_json::from_slice::<Value>(&self.bytes) {
            Err(parse) => (Value::Null, -32700, format!("Parse error: {parse}")),
            Ok(Value::Array(_)) => (
                Value::Null,
                -32600,
                "Invalid request: batches are not supported".to_owned(),
            ),
            Ok(value) => {
                let id = value
                    .get("id")
                    .filter(|id| id.is_string() || id.is_number())
                    .cloned();
                match (id, value.get("method").and_then(Value::as_str)) {
                    (Some(id), Some(method)) => (
                        id,
                        -32602,
                        format!("invalid params for `{method}`: {error}"),
                    ),
                    (id, _) => (
                        id.unwrap_or(Value::Null),
                        -32600,
                        format!("Invalid request: {error}"),
                    ),
                }
            }
        })
    }
}

pub(super) async fn read_body(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, limits.max_bytes);
    let bytes = match tokio::time::timeout(limits.timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(error)) => {
            if error
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "the request body is larger than {} bytes, the limit",
                        limits.max_bytes
                    ),
                );
            }
            tracing::debug!(%error, "reading a request body failed");
            return refuse(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
        Err(_elapsed) => {
            tracing::info!(
                after = ?limits.timeout,
                "a client did not send its request body in time"
            );
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request body did not arrive within {}s",
                    limits.timeout.as_secs_f64()
                ),
            );
        }
    };
    let peek = Peek::of(bytes.clone());
    if let Some(refused) = limits
        .scopes
        .as_ref()
        .and_then(|resource| super::oauth::refuse_unscoped(resource, &parts.extensions, &peek))
    {
        return refused;
    }
    parts.extensions.insert(peek);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// An HTTP error with a JSON-RPC error body (no id: the message was never read).
fn refuse(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    });
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if status == StatusCode::REQUEST_TIMEOUT {
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::{Peek, ScopeTarget};

    fn peek(text: &'static str) -> Peek {
        Peek::of(text.as_bytes().to_vec().into())
    }

    #[test]
    fn peeks_at_the_method_and_id_only() {
        let request = peek(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#);
        assert_eq!(request.method(), Some("initialize"));
        assert_eq!(request.id(), Some(&serde_json::json!(7)));
        let notification = peek(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(notification.id(), None);
        let garbage = peek("{not json");
        assert!(garbage.method().is_none() && garbage.id().is_none());
        assert_eq!(peek(r#"{"id":{"x":1},"method":"m"}"#).id(), None);
        let call = peek(r#"{"id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#);
        assert!(matches!(call.target(), Some(ScopeTarget::Tool("t"))));
        let get = peek(r#"{"id":1,"method":"prompts/get","params":{"name":"p"}}"#);
        assert!(matches!(get.target(), Some(ScopeTarget::Prompt("p"))));
        let read = peek(r#"{"id":1,"method":"resources/read","params":{"uri":"docs://a"}}"#);
        assert!(matches!(
            read.target(),
            Some(ScopeTarget::Resource("docs://a"))
        ));
        let completion = peek(
            r#"{"id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"r://{id}"},"argument":{"name":"id","value":""}}}"#,
        );
        assert!(matches!(
            completion.target(),
            Some(ScopeTarget::Template("r://{id}"))
        ));
        let completion = peek(
            r#"{"id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}"#,
        );
        assert!(matches!(
            completion.target(),
            Some(ScopeTarget::Prompt("p"))
        ));
        let listed = peek(r#"{"id":1,"method":"tools/list","params":{"name":"t"}}"#);
        assert!(listed.target().is_none());
    }

    #[test]
    fn unreadable_bodies_get_the_error_stdio_gives_and_readable_ones_none() {
        let why = |text: &'static str| peek(text).why_unreadable().map(|(id, code, _)| (id, code));
        let null = serde_json::Value::Null;
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":1"#),
            Some((null.clone(), -32700))
        );
        assert_eq!(why(""), Some((null.clone(), -32700)));
        assert_eq!(why("[]"), Some((null.clone(), -32600)));
        assert_eq!(why("7"), Some((null.clone(), -32600)));
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
            Some((null, -32600))
        );
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":"q","method":7}"#),
            Some((serde_json::json!("q"), -32600))
        );
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":3}"#),
            Some((serde_json::json!(2), -32602))
        );
        assert_eq!(why(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(why(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
    }
}
