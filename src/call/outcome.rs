//! Stage 10: how a call ended, counted once in the metrics (when it ended here) and written
//! once in the audit log (for every request the pipeline answered).

use std::time::Duration;

use serde_json::{Map, Value};

use super::{Caller, Services};
use crate::registry::Registry;

/// How a call, or one request of it, ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The tool answered with `isError`.
    Error,
    /// Refused before running: the server or the tool was at its limit.
    Busy,
    /// Refused before running: the caller was over the tool's rate.
    RateLimited,
    /// Refused before running: the arguments did not fit the tool's schema.
    InvalidArguments,
    /// Refused before running: a missing scope or identity, a declined question, a client
    /// that could not be asked, an unknown tool.
    Refused,
    /// It asked the client for input and goes on in a later request (2026).
    Pending,
    /// It became a task; the task's own end is counted when it comes.
    Task,
    /// The request was cancelled.
    Cancelled,
}

impl Outcome {
    /// The outcomes a call ends with, in the metrics' order.
    pub const ENDED: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Error,
        Outcome::Busy,
        Outcome::RateLimited,
        Outcome::InvalidArguments,
        Outcome::Refused,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Busy => "busy",
            Outcome::RateLimited => "rate_limited",
            Outcome::InvalidArguments => "invalid_arguments",
            Outcome::Refused => "refused",
            Outcome::Pending => "input_required",
            Outcome::Task => "task",
            Outcome::Cancelled => "cancelled",
        }
    }

    /// Its place among [`Outcome::ENDED`], when the call ended with it.
    pub fn ended_index(self) -> Option<usize> {
        Self::ENDED.iter().position(|ended| *ended == self)
    }
}

/// One request's end, for the record.
#[derive(Debug)]
pub(super) struct Request<'a> {
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
pub(super) fn record(services: &Services, registry: &Registry, request: &Request<'_>) {
    if request.known {
        ended(services, request.tool, request.ended, request.ran);
    }
    if !services.audit.enabled {
        return;
    }
    services.audit.record(
        &crate::audit::Record {
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
