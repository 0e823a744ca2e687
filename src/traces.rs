//! Traces: an OpenTelemetry span per MCP request and per backend run, exported over
//! OTLP/HTTP to `--otlp-endpoint` or where the standard `OTEL_EXPORTER_OTLP_*` variables say.
//!
//! The W3C trace context comes in with a request (its `_meta`, else its HTTP headers: see
//! [`context`]) and goes out to what the request runs: `TRACEPARENT` and `TRACESTATE` in a
//! command's environment, `traceparent` and `tracestate` headers on an HTTP backend's
//! request, so a script's own spans join the trace ([`Run`]).
//!
//! Off (no endpoint), nothing is built, a request pays one check, and a context a client
//! sent still reaches the backends unchanged, as a proxy passes it on.

pub mod context;
#[cfg(feature = "otlp")]
mod otlp;
/// Without the `otlp` feature, no exporter: an endpoint, given or configured, is refused.
#[cfg(not(feature = "otlp"))]
#[path = "traces/otlp_unbuilt.rs"]
mod otlp;
mod run;

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};

pub use run::Run;

/// The tracer, once traces are on; spans come from here.
static TRACER: OnceLock<Tracer> = OnceLock::new();

/// How long the last spans may take to leave when the server stops.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(3);

/// The path OTLP/HTTP receivers take traces on, below a base endpoint.
const TRACES_PATH: &str = "/v1/traces";

/// Traces being exported; dropping this sends the last spans.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    endpoint: String,
}

/// Why traces could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error("--otlp-endpoint `{0}` is not an http:// or https:// URL")]
    Endpoint(String),
    #[error(
        "{0}=grpc is not supported: mcp-serve exports traces over OTLP/HTTP (`http/protobuf`, the default, or `http/json`)"
    )]
    Grpc(&'static str),
    #[error("could not set up the OTLP exporter: {0}")]
    Exporter(String),
    #[error(
        "traces: this mcp-serve was built without the OTLP exporter (cargo feature `otlp`); unset {0}, or use a build with default features"
    )]
    NotBuilt(&'static str),
}

/// The tracer, when traces are on.
pub(crate) fn tracer() -> Option<&'static Tracer> {
    TRACER.get()
}

/// Where spans would go: the flag (a base URL, or one ending in `/v1/traces`), else the
/// standard variables. `None` when traces are off, which they also are with
/// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
fn endpoint(flag: Option<&str>) -> Result<Option<String>, TracesError> {
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let disabled = variable("OTEL_SDK_DISABLED")
        .is_some_and(|value| value.eq_ignore_ascii_case("true"))
        || variable("OTEL_TRACES_EXPORTER").is_some_and(|value| value.eq_ignore_ascii_case("none"));
    if let Some(flag) = flag {
        let url = reqwest::Url::parse(flag).map_err(|_| TracesError::Endpoint(flag.to_owned()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(TracesError::Endpoint(flag.to_owned()));
        }
        let base = flag.trim_end_matches('/');
        return Ok(Some(if base.ends_with(TRACES_PATH) {
            base.to_owned()
        } else {
            format!("{base}{TRACES_PATH}")
        }));
    }
    if disabled {
        return Ok(None);
    }
    Ok(variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
        variable("OTEL_EXPORTER_OTLP_ENDPOINT")
            .map(|base| format!("{}{TRACES_PATH}", base.trim_end_matches('/')))
    }))
}

/// Starts exporting spans when an endpoint is given or configured; `None` leaves traces off.
/// The service is named by `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`), else by the
/// manifest's server name; sampling follows `OTEL_TRACES_SAMPLER` (by default every trace
/// a client did not mark unsampled), batching the `OTEL_BSP_*` variables.
pub fn init(
    flag: Option<&str>,
    service: &str,
    instance: &str,
) -> Result<Option<Traces>, TracesError> {
    let Some(endpoint) = endpoint(flag)? else {
        return Ok(None);
    };
    for variable in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if std::env::var(variable)
            .is_ok_and(|protocol| protocol.trim().eq_ignore_ascii_case("grpc"))
        {
            return Err(TracesError::Grpc(variable));
        }
    }
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES")
            .is_ok_and(|attributes| attributes.contains("service.name="));
    let mut resource = opentelemetry_sdk::Resource::builder().with_attributes([
        KeyValue::new("service.instance.id", instance.to_owned()),
        KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
    ]);
    if !named {
        resource = resource.with_service_name(service.to_owned());
    }
    let provider = otlp::provider(&endpoint, resource.build())?;
    let tracer = provider.tracer("mcp-serve");
    if TRACER.set(tracer).is_err() {
        tracing::warn!("traces were already set up; keeping the first exporter");
    }
    let endpoint = without_credentials(&endpoint);
    tracing::info!(%endpoint, "exporting traces over OTLP/HTTP");
    Ok(Some(Traces { provider, endpoint }))
}

/// The endpoint as logs may show it: any `user:password@` removed.
fn without_credentials(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        _ => endpoint.to_owned(),
    }
}

/// Variables that may hold the collector's credentials, withheld from commands.
pub const CREDENTIAL_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

impl Drop for Traces {
    /// Sends the spans still buffered, waiting at most a few seconds for the receiver.
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown_with_timeout(FLUSH_TIMEOUT) {
            tracing::warn!(%error, endpoint = %self.endpoint, "could not send the last spans");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_endpoint_gets_the_traces_path_and_a_full_one_is_kept() {
        assert_eq!(
            endpoint(Some("http://127.0.0.1:4318"))
                .expect("valid")
                .as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        assert_eq!(
            endpoint(Some("http://collector:4318/"))
                .expect("valid")
                .as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            endpoint(Some("https://otel.example/v1/traces"))
                .expect("valid")
                .as_deref(),
            Some("https://otel.example/v1/traces")
        );
    }

    #[test]
    fn credentials_in_an_endpoint_are_not_shown() {
        assert_eq!(
            without_credentials("https://user:k3y@otel.example/v1/traces"),
            "https://otel.example/v1/traces"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:4318/v1/traces"),
            "http://127.0.0.1:4318/v1/traces"
        );
    }

    #[test]
    fn an_endpoint_that_is_not_an_http_url_is_refused() {
        for flag in [
            "127.0.0.1:4318",
            "grpc://collector:4317",
            "file:///tmp/spans",
            "http://",
        ] {
            assert!(
                matches!(endpoint(Some(flag)), Err(TracesError::Endpoint(_))),
                "{flag} was accepted"
            );
        }
    }
}
