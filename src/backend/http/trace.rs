//! An HTTP backend's request in the call's trace: a client span named and described as
//! OpenTelemetry's HTTP conventions say, and `traceparent`/`tracestate` on the request. The
//! span names the server, never the URL's path or query: those carry arguments and
//! secrets.

use std::borrow::Cow;

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;
use reqwest::header::{HeaderName, HeaderValue};

use super::HttpError;
use crate::traces::Run;
use crate::traces::context::{TRACEPARENT, TRACESTATE};

/// Starts the request's span (or only carries the client's context, with traces off) and
/// adds the context's headers, unless the manifest sets them itself.
pub(super) fn start(request: &mut reqwest::Request) -> Option<Run> {
    let run = Run::start(SpanKind::Client, || {
        let method = request.method().as_str().to_owned();
        let url = request.url();
        let mut attributes = vec![
            KeyValue::new("http.request.method", method.clone()),
            KeyValue::new("url.scheme", url.scheme().to_owned()),
        ];
        if let Some(host) = url.host_str() {
            attributes.push(KeyValue::new("server.address", host.to_owned()));
        }
        if let Some(port) = url.port_or_known_default() {
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
        (Cow::Owned(method), attributes)
    })?;
    if let Some(outgoing) = run.outgoing() {
        let headers = request.headers_mut();
        let mut add = |name: &'static str, value: &str| {
            let name = HeaderName::from_static(name);
            if !headers.contains_key(&name)
                && let Ok(value) = HeaderValue::from_str(value)
            {
                headers.insert(name, value);
            }
        };
        add(TRACEPARENT, &outgoing.traceparent);
        if let Some(state) = &outgoing.tracestate {
            add(TRACESTATE, state);
        }
    }
    Some(run)
}

/// Records the response's status.
pub(super) fn responded(run: Option<&Run>, status: reqwest::StatusCode) {
    if let Some(run) = run {
        run.record(|| {
            vec![KeyValue::new(
                "http.response.status_code",
                i64::from(status.as_u16()),
            )]
        });
    }
}

/// Records how the exchange ended.
pub(super) fn end<T>(run: Option<&Run>, exchanged: &Result<T, HttpError>) {
    let (Some(run), Err(error)) = (run, exchanged) else {
        return;
    };
    let kind: Cow<'static, str> = match error {
        HttpError::Status { status, .. } => {
            Cow::Owned(status.split(' ').next().unwrap_or_default().to_owned())
        }
        HttpError::Timeout { .. } => Cow::Borrowed("timeout"),
        HttpError::Connect { .. } => Cow::Borrowed("connect"),
        HttpError::TooLarge { .. } => Cow::Borrowed("limit_exceeded"),
        HttpError::Request(_) | HttpError::Client(_) | HttpError::Other { .. } => {
            Cow::Borrowed("request")
        }
    };
    // The message names the URL, which may carry secrets: the kind says enough.
    run.fail(kind.clone(), kind);
}
