//! Stage 10: how a call ended, counted once in the metrics (when it ended here) and written
//! once in the audit log (for every request the pipeline answered).

use std::time::Duration;

use serde_json::{Map, Value};

use super::Services;
use crate::caller::Caller;
use crate::outcome::Outcome;
use crate::registry::Registry;

/// One request's end, for the record.
#[derive(Debug)]
pub(super) struct Finished<'a> {
    pub(super) tool: &'a str,
    /// The tool exists (an unknown name makes no metrics series).
    pub(super) known: bool,
    pub(super) caller: &'a Caller,
    pub(super) ended: Outcome,
    /// How long its backend ran.
    pub(super) ran: Duration,
    /// How long the request took.
    pub(super) took: Duration,
    /// The arguments as the client sent them, when the audit wants them.
    pub(super) arguments: Option<&'a Map<String, Value>>,
}

/// Counts and writes one request's end.
pub(super) fn record(services: &Services, registry: &Registry, request: &Finished<'_>) {
    if request.known {
        ended(services, request.tool, request.ended, request.ran);
    }
    if !services.audit.enabled {
        return;
    }
    services.audit.record(
        &crate::audit::Entry {
            tool: request.tool,
            caller: &request.caller.rate_key(),
            outcome: request.ended,
            took: request.took,
            arguments: request.arguments,
        },
        registry.redactor(),
    );
}

/// Counts a call's end in the metrics (a task's, when its run ends).
pub(super) fn ended(services: &Services, tool: &str, outcome: Outcome, ran: Duration) {
    if let Some(metrics) = services.metrics.as_deref() {
        metrics.call_ended(tool, outcome, ran);
    }
}
