//! A backend run's span, and the trace context it hands to what it runs.

use std::borrow::Cow;

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};

use super::context::{Outgoing, outgoing};

/// One backend run inside the current request's trace. With traces on it is a span (ended
/// when this is dropped, so a cancelled run's span ends too); with traces off it only
/// carries the client's context on to the backend.
#[derive(Debug)]
pub struct Run {
    context: Context,
    recording: bool,
}

impl Run {
    /// A run under the request being served, or `None` when there is no trace to join.
    /// `describe` (the span's name and attributes) is called only when traces are on.
    pub fn start(
        kind: SpanKind,
        describe: impl FnOnce() -> (Cow<'static, str>, Vec<KeyValue>),
    ) -> Option<Self> {
        let current = Context::current();
        let Some(tracer) = super::tracer() else {
            // Off: hand on the client's context, if it sent one.
            return current.span().span_context().is_valid().then_some(Self {
                context: current,
                recording: false,
            });
        };
        let (name, attributes) = describe();
        let span = tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(tracer, &current);
        let recording = span.is_recording();
        Some(Self {
            context: current.with_span(span),
            recording,
        })
    }

    /// The context to hand to the backend: this run's span (or the client's, when off).
    pub fn outgoing(&self) -> Option<Outgoing> {
        outgoing(&self.context)
    }

    /// Adds attributes learned while running (an exit code, a status).
    pub fn record(&self, attributes: impl FnOnce() -> Vec<KeyValue>) {
        if self.recording {
            self.context.span().set_attributes(attributes());
        }
    }

    /// Marks the run failed: `kind` is a low-cardinality `error.type`.
    pub fn fail(
        &self,
        kind: impl Into<opentelemetry::Value>,
        message: impl Into<Cow<'static, str>>,
    ) {
        if self.recording {
            let span = self.context.span();
            span.set_attribute(KeyValue::new("error.type", kind));
            span.set_status(Status::error(message));
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if self.recording {
            self.context.span().end();
        }
    }
}
