//! The OTLP exporter, left out of this build (`cargo build --no-default-features`): traces
//! stay off, and asking for them fails at start, saying why. A client's trace context still
//! reaches the backends unchanged.

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::TracesError;

pub(super) fn provider(
    _endpoint: &str,
    _resource: Resource,
) -> Result<SdkTracerProvider, TracesError> {
    Err(TracesError::NotBuilt(
        "--otlp-endpoint and OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT",
    ))
}
