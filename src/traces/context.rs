//! The W3C trace context (`traceparent`, `tracestate`) in and out. Parsing and writing are
//! the OpenTelemetry SDK's propagator's, which drops a malformed value rather than guess:
//! a request with one starts a trace of its own.

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The header and `_meta` key of the trace's position.
pub const TRACEPARENT: &str = "traceparent";
/// The header and `_meta` key of vendors' trace state.
pub const TRACESTATE: &str = "tracestate";

/// A request's trace context, as its carrier held it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Carried<'a> {
    pub traceparent: Option<&'a str>,
    pub tracestate: Option<&'a str>,
}

/// The longest `tracestate` passed on (W3C: 32 members of at most 256 characters; in
/// practice a few hundred bytes).
const MAX_TRACESTATE: usize = 512;

impl Extractor for Carried<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent,
            // The propagator checks only its commas and equals signs; anything that could
            // not be a header value (a NUL, a newline) would reach a command's environment.
            TRACESTATE => self.tracestate.filter(|state| {
                state.len() <= MAX_TRACESTATE
                    && state.bytes().all(|byte| (0x20..0x7f).contains(&byte))
            }),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

/// The context a request continues: the first carrier with a valid `traceparent` (the
/// request's own `_meta` before the HTTP request's headers, which may carry several
/// messages), or `None`.
pub fn incoming(carriers: &[Carried<'_>]) -> Option<Context> {
    let propagator = TraceContextPropagator::new();
    carriers
        .iter()
        .filter(|carried| carried.traceparent.is_some())
        .map(|carried| propagator.extract(carried))
        .find(|context| context.span().span_context().is_valid())
}

/// The context this process was started in (`TRACEPARENT`, `TRACESTATE`), for commands for
/// people run inside a traced script.
pub fn from_environment() -> Option<Context> {
    let traceparent = std::env::var("TRACEPARENT").ok()?;
    let tracestate = std::env::var("TRACESTATE").ok();
    incoming(&[Carried {
        traceparent: Some(&traceparent),
        tracestate: tracestate.as_deref(),
    }])
}

/// What to hand on from `context`: its `traceparent`, and its `tracestate` when not empty;
/// `None` when it holds no valid span.
pub fn outgoing(context: &Context) -> Option<Outgoing> {
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut outgoing = Outgoing::default();
    TraceContextPropagator::new().inject_context(context, &mut outgoing);
    (!outgoing.traceparent.is_empty()).then_some(outgoing)
}

/// A trace context to hand on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outgoing {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

impl Injector for Outgoing {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.traceparent = value,
            TRACESTATE if !value.is_empty() => self.tracestate = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn carried(traceparent: &str) -> Carried<'_> {
        Carried {
            traceparent: Some(traceparent),
            tracestate: None,
        }
    }

    #[test]
    fn a_valid_context_passes_through_unchanged() {
        let context = incoming(&[Carried {
            traceparent: Some(PARENT),
            tracestate: Some("vendor=opaque"),
        }])
        .expect("a valid traceparent");
        let out = outgoing(&context).expect("a span context");
        assert_eq!(out.traceparent, PARENT);
        assert_eq!(out.tracestate.as_deref(), Some("vendor=opaque"));
    }

    #[test]
    fn the_first_valid_carrier_wins() {
        let header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let context = incoming(&[carried("garbage"), carried(header)]).expect("the header");
        assert_eq!(outgoing(&context).expect("valid").traceparent, header);
        let context = incoming(&[carried(PARENT), carried(header)]).expect("the meta");
        assert_eq!(outgoing(&context).expect("valid").traceparent, PARENT);
    }

    #[test]
    fn malformed_contexts_are_dropped() {
        for hostile in [
            "",
            "garbage",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nX-Injected: 1",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",
        ] {
            assert!(
                incoming(&[carried(hostile)]).is_none(),
                "{hostile:?} was accepted"
            );
        }
        assert!(incoming(&[]).is_none());
        for hostile in [
            "k=v\u{0}",
            "k=a\nX-Injected: 1",
            "k=\u{7f}",
            &"k=v,".repeat(200),
        ] {
            let context = incoming(&[Carried {
                traceparent: Some(PARENT),
                tracestate: Some(hostile),
            }])
            .expect("the traceparent is fine");
            let out = outgoing(&context).expect("valid");
            assert_eq!(out.traceparent, PARENT);
            assert_eq!(out.tracestate, None, "{hostile:?} was passed on");
        }
        assert!(outgoing(&Context::new()).is_none());
    }
}
