//! The OTLP/HTTP exporter (cargo feature `otlp`, on by default): spans leave in batches,
//! as protobuf unless the standard variables ask for JSON.

use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::TracesError;

/// A tracer provider that exports to `endpoint` (a full `/v1/traces` URL).
pub(super) fn provider(
    endpoint: &str,
    resource: Resource,
) -> Result<SdkTracerProvider, TracesError> {
    // The exporter's client speaks TLS with the provider the rest of the server uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint);
    // Chosen here, always: the crate falls back to JSON (with its JSON feature built) for
    // an absent, empty or misspelt value; the OTLP default, and the cheaper encoding, is
    // protobuf.
    let protocol = |variable: &str| {
        std::env::var(variable).ok().and_then(|protocol| {
            match protocol.trim().to_ascii_lowercase().as_str() {
                "http/json" => Some(opentelemetry_otlp::Protocol::HttpJson),
                "http/protobuf" => Some(opentelemetry_otlp::Protocol::HttpBinary),
                _ => None,
            }
        })
    };
    exporter = exporter.with_protocol(
        protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| protocol("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or(opentelemetry_otlp::Protocol::HttpBinary),
    );
    let exporter = exporter
        .build()
        .map_err(|error| TracesError::Exporter(error.to_string()))?;
    Ok(SdkTracerProvider::builder()
        .with_resource(resource)
        .with_batch_exporter(exporter)
        .build())
}
