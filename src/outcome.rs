//! How a call, or one request of it, ended: the one fact the pipeline's last stage hands
//! the metrics and the audit log (`call::record` counts and writes it).

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
