//! An HTTP load driver: `clients` keep-alive connections, each sending requests back to
//! back for a fixed time, every answer checked.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde_json::Value;

use crate::stats::Latency;

/// What each request is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A JSON-RPC `tools/call` sent with `POST` to an MCP endpoint; the answer must be a result
    /// that is not an error.
    Mcp {
        url: Uri,
        body: Bytes,
        /// `Authorization: Bearer …`, for a server that requires a token.
        authorization: Option<String>,
    },
    /// A plain GET that must answer 200 (the floor).
    Get { url: Uri },
}

/// The outcome of one load.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Load {
    pub(crate) clients: usize,
    pub(crate) ok: u64,
    pub(crate) errors: u64,
    pub(crate) seconds: f64,
    pub(crate) per_second: f64,
    pub(crate) latency: Latency,
    pub(crate) first_error: Option<String>,
}

/// Runs the load on a single-threaded runtime of its own, leaving the other core to the
/// server.
pub(crate) fn run(target: &Target, clients: usize, duration: Duration) -> anyhow::Result<Load> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let started = Instant::now();
        let deadline = started + duration;
        let tasks: Vec<_> = (0..clients)
            .map(|_| tokio::spawn(client(target.clone(), deadline)))
            .collect();
        let mut samples = Vec::new();
        let (mut ok, mut errors, mut first_error) = (0, 0, None);
        for task in tasks {
            let outcome = task.await?;
            ok += outcome.ok;
            errors += outcome.errors;
            samples.extend(outcome.samples);
            first_error = first_error.or(outcome.first_error);
        }
        let seconds = started.elapsed().as_secs_f64();
        #[expect(clippy::cast_precision_loss, reason = "request counts are small")]
        let per_second = ok as f64 / seconds;
        Ok(Load {
            clients,
            ok,
            errors,
            seconds,
            per_second,
            latency: Latency::of(&samples),
            first_error,
        })
    })
}

#[derive(Default)]
struct Outcome {
    ok: u64,
    errors: u64,
    samples: Vec<Duration>,
    first_error: Option<String>,
}

async fn client(target: Target, deadline: Instant) -> Outcome {
    let mut outcome = Outcome::default();
    if let Err(error) = drive(&target, deadline, &mut outcome).await {
        outcome.errors += 1;
        outcome.first_error.get_or_insert(format!("{error:#}"));
    }
    outcome
}

async fn drive(target: &Target, deadline: Instant, outcome: &mut Outcome) -> anyhow::Result<()> {
    let url = match target {
        Target::Mcp { url, .. } | Target::Get { url } => url,
    };
    let authority = url.authority().context("no host in the URL")?.clone();
    let stream = tokio::net::TcpStream::connect(authority.as_str()).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    while Instant::now() < deadline {
        let request = match target {
            Target::Mcp {
                url,
                body,
                authorization,
            } => {
                let builder = match authorization {
                    Some(value) => {
                        Request::builder().header("authorization", format!("Bearer {value}"))
                    }
                    None => Request::builder(),
                };
                builder
                    .method(Method::POST)
                    .uri(url.path())
                    .header("host", authority.as_str())
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", crate::stdio::VERSION)
                    .body(Full::new(body.clone()))?
            }
            Target::Get { url } => Request::builder()
                .uri(url.path())
                .header("host", authority.as_str())
                .body(Full::new(Bytes::new()))?,
        };
        let sent = Instant::now();
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        let took = sent.elapsed();
        let verdict = if status.is_success() {
            match target {
                Target::Mcp { .. } => check_mcp(&body),
                Target::Get { .. } => Ok(()),
            }
        } else {
            Err(format!("HTTP {status}"))
        };
        match verdict {
            Ok(()) => {
                outcome.ok += 1;
                outcome.samples.push(took);
            }
            Err(problem) => {
                outcome.errors += 1;
                outcome.first_error.get_or_insert(problem);
            }
        }
    }
    Ok(())
}

/// The answer, plain JSON or server-sent events, must carry a result that is not an error.
fn check_mcp(body: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|_| "the answer is not UTF-8".to_owned())?;
    let message = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Value>(text).ok()
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
    };
    let message = message.ok_or_else(|| format!("no JSON-RPC answer in {text:?}"))?;
    match message.get("result") {
        Some(result) if result["isError"] != Value::Bool(true) && result["content"].is_array() => {
            Ok(())
        }
        _ => Err(format!("not a successful result: {message}")),
    }
}
