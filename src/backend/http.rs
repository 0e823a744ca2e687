//! The HTTP backend: a request built structurally from the arguments (percent-encoded path
//! segments, serialized query parameters, validated header values, JSON built as a value),
//! sent with a bounded response, and handed to the output pipeline
//! ([`ToolResult::from_response`]), with secrets redacted from what comes back.

mod client;
pub mod multipart;
mod request;
mod trace;

pub use request::RequestError;

use std::time::Duration;

use serde_json::{Map, Value};

pub use client::{HttpClients, RedirectRules};
pub use request::{Body, JsonTemplate, QueryParameter, QueryStyle, UrlTemplate};

use crate::results::ToolResult;
use crate::results::response::Response;
use crate::schema::CompiledSchema;
use crate::secret::Redactor;
use crate::template::Template;

/// How much of an error response's body is quoted.
const EXCERPT_BYTES: usize = 2048;
/// Read past the excerpt, so that a secret straddling its end is redacted before the cut.
const EXCERPT_SLACK: usize = 4096;

/// An HTTP tool's backend, fully checked at load.
#[derive(Debug, Clone)]
pub struct HttpBackend {
    pub tool: String,
    pub method: reqwest::Method,
    pub url: UrlTemplate,
    pub query: Vec<QueryParameter>,
    pub headers: Vec<(reqwest::header::HeaderName, Template)>,
    pub body: Body,
    /// Arguments whose value keeps `/` (and the other reserved characters that cannot move
    /// the request) where it fills a whole path segment or query value (`allow-reserved`).
    pub allow_reserved: Vec<String>,
    /// The most a request's file and base64 parts may add up to.
    pub max_upload: usize,
    pub timeout: Duration,
    pub max_response: usize,
    /// Statuses that mean success; empty means any 2xx.
    pub success_statuses: Vec<u16>,
    /// A JSON pointer picking part of a JSON response.
    pub pointer: Option<String>,
    /// Which of the server's clients it uses (they keep connections alive across calls).
    pub redirects: RedirectRules,
    /// That client, taken from the server's on the first call: later calls need no lock.
    pub client: std::sync::OnceLock<reqwest::Client>,
    pub redactor: Redactor,
}

/// Why a call failed; `Display` is the one-line reason (already redacted by the caller).
#[derive(Debug, thiserror::Error)]
enum HttpError {
    /// Why the call's arguments make no request (a URL too long, a header value with a line
    /// break, a path segment `..`).
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error(transparent)]
    Client(#[from] client::ClientError),
    #[error("the request to {url} timed out after {}s", after.as_secs_f64())]
    Timeout { url: String, after: Duration },
    #[error("could not reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("the response from {url} is larger than {limit} bytes, the tool's limit")]
    TooLarge { url: String, limit: usize },
    #[error("HTTP {status} from {method} {url}")]
    Status {
        status: String,
        method: String,
        url: String,
        excerpt: String,
    },
    #[error("the request to {url} failed: {reason}")]
    Other { url: String, reason: String },
}

impl HttpBackend {
    /// Sends the request and makes its result. `redactor` knows every secret the manifest
    /// references (this tool's among them): the response, an error's excerpt and the log
    /// line are redacted with it before they are cut, decoded or encoded.
    pub async fn call(
        &self,
        arguments: &Map<String, Value>,
        output_schema: Option<&CompiledSchema>,
        clients: &HttpClients,
        redactor: &Redactor,
    ) -> ToolResult {
        match self.exchange(arguments, clients).await {
            Ok((content_type, bytes)) => {
                // Before anything is decoded or encoded: a blob's base64 cannot hide a secret.
                let bytes = if redactor.is_empty() {
                    bytes
                } else {
                    redactor.redact_bytes(bytes)
                };
                let response = Response {
                    tool: &self.tool,
                    content_type: content_type.as_deref(),
                    bytes,
                    pointer: self.pointer.as_deref(),
                };
                // What JSON escapes (`\u0061`) hid from the byte-level pass is found once
                // parsed, by the pipeline's pass over every backend's result
                // (`call::run`), which this result reaches before anything reads it.
                ToolResult::from_response(response, output_schema)
            }
            Err(error) => {
                let mut text = redactor.redact(&error.to_string());
                if let HttpError::Status { excerpt, .. } = &error
                    && !excerpt.is_empty()
                {
                    text.push_str("\n\n");
                    let excerpt = redactor.redact(excerpt);
                    let mut cut = excerpt.len().min(EXCERPT_BYTES);
                    while !excerpt.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.push_str(&excerpt[..cut]);
                }
                tracing::info!(tool = %self.tool, reason = %text.lines().next().unwrap_or_default(), "HTTP call failed");
                ToolResult::error(text)
            }
        }
    }

    /// Builds the request, sends it and reads the response, inside the call's trace.
    async fn exchange(
        &self,
        arguments: &Map<String, Value>,
        clients: &HttpClients,
    ) -> Result<(Option<String>, Vec<u8>), HttpError> {
        let mut request = self.build(arguments)?;
        clients.reroute(&mut request)?;
        let run = trace::start(&mut request);
        let exchanged = self.send(request, clients, run.as_ref()).await;
        trace::end(run.as_ref(), &exchanged);
        exchanged
    }

    /// Sends the request and reads the response within the size limit.
    async fn send(
        &self,
        request: reqwest::Request,
        clients: &HttpClients,
        run: Option<&crate::traces::Run>,
    ) -> Result<(Option<String>, Vec<u8>), HttpError> {
        let url = request.url().to_string();
        let method = request.method().to_string();
        // A stand-in (`mcp-serve test`) has its own client; the cached one is the server's.
        let stand_in;
        let client = if clients.is_standing_in() {
            stand_in = clients.get(self.redirects)?;
            &stand_in
        } else if let Some(client) = self.client.get() {
            client
        } else {
            let client = clients.get(self.redirects)?;
            self.client.get_or_init(|| client)
        };
        let mut response = client
            .execute(request)
            .await
            .map_err(|error| classify(&error, &url, self.timeout))?;
        let status = response.status();
        trace::responded(run, status);
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if response
            .content_length()
            .is_some_and(|length| length > self.max_response as u64)
            && self.succeeded(status)
        {
            return Err(HttpError::TooLarge {
                url,
                limit: self.max_response,
            });
        }
        let mut body = Vec::new();
        let keep = if self.succeeded(status) {
            self.max_response
        } else {
            EXCERPT_BYTES + EXCERPT_SLACK
        };
        loop {
            let chunk = match tokio::time::timeout(self.timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => chunk,
                Ok(Ok(None)) => break,
                Ok(Err(error)) => return Err(classify(&error, &url, self.timeout)),
                Err(_elapsed) => {
                    return Err(HttpError::Timeout {
                        url,
                        after: self.timeout,
                    });
                }
            };
            if body.len() + chunk.len() > keep {
                if self.succeeded(status) {
                    return Err(HttpError::TooLarge {
                        url,
                        limit: self.max_response,
                    });
                }
                body.extend_from_slice(&chunk[..keep - body.len()]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        if !self.succeeded(status) {
            return Err(HttpError::Status {
                status: format!(
                    "{} {}",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or_default()
                )
                .trim_end()
                .to_owned(),
                method,
                url,
                excerpt: String::from_utf8_lossy(&body).trim().to_owned(),
            });
        }
        Ok((content_type, body))
    }

    /// The request a call with `arguments` sends (nothing is sent): for tests that take it
    /// apart.
    pub fn request(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<reqwest::Request, RequestError> {
        self.build(arguments)
    }

    /// The request `call` would send, for `mcp-serve call --dry-run`, secrets redacted. The
    /// error is text too: redacted here, where the secrets are known, before anyone shows it.
    pub fn describe(&self, arguments: &Map<String, Value>) -> Result<String, String> {
        let request = self
            .build(arguments)
            .map_err(|error| self.redactor.redact(&error.to_string()))?;
        let mut out = format!("{} {}\n", request.method(), request.url());
        for (name, value) in request.headers() {
            out.push_str(&format!(
                "{name}: {}\n",
                String::from_utf8_lossy(value.as_bytes())
            ));
        }
        if let Some(body) = request.body().and_then(reqwest::Body::as_bytes) {
            out.push('\n');
            out.push_str(&String::from_utf8_lossy(body));
            out.push('\n');
        }
        Ok(self.redactor.redact(&out))
    }

    fn succeeded(&self, status: reqwest::StatusCode) -> bool {
        if self.success_statuses.is_empty() {
            status.is_success()
        } else {
            self.success_statuses.contains(&status.as_u16())
        }
    }
}

/// One line saying why reqwest failed, with the causes it chains.
fn classify(error: &reqwest::Error, url: &str, timeout: Duration) -> HttpError {
    let mut reason = String::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reason = cause.to_string();
        source = cause.source();
    }
    if reason.is_empty() {
        reason = error.to_string();
    }
    let url = url.to_owned();
    if error.is_timeout() {
        HttpError::Timeout {
            url,
            after: timeout,
        }
    } else if error.is_connect() {
        HttpError::Connect { url, reason }
    } else {
        HttpError::Other { url, reason }
    }
}
