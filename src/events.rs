//! Events a running tool reports: progress and log lines, in the script protocol's JSON form,
//! with the rules for passing them on (progress only increases and is rate-limited; logs
//! are filtered by level).
//!
//! A command that opts in gets `MCP_SERVE_EVENTS`, the path of a pipe to write lines to:
//!
//! ```text
//! {"progress": 30, "total": 100, "message": "copying"}
//! {"log": "warning", "message": "disk almost full", "data": {"free": "2G"}}
//! ```

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

/// RFC 5424 levels, least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.as_str() == text)
    }
}

/// One event from a running tool.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        message: String,
        data: Option<Value>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineWire {
    progress: Option<f64>,
    total: Option<f64>,
    log: Option<String>,
    message: Option<String>,
    data: Option<Value>,
}

/// Why a line from a tool's events pipe is no event (the line is logged and skipped).
#[derive(Debug, thiserror::Error)]
pub enum EventLineError {
    #[error("not an event line: {0}")]
    Json(#[from] serde_json::Error),
    #[error("progress and total must be finite numbers")]
    NotFinite,
    #[error("`{0}` is not a log level")]
    Level(String),
    #[error("an event line has either `progress` or `log`")]
    Neither,
}

/// Reads one line of the script protocol.
pub fn parse_line(line: &str) -> Result<CallEvent, EventLineError> {
    let wire: LineWire = serde_json::from_str(line)?;
    match (wire.progress, wire.log) {
        (Some(progress), None) => {
            if !progress.is_finite() || wire.total.is_some_and(|total| !total.is_finite()) {
                return Err(EventLineError::NotFinite);
            }
            Ok(CallEvent::Progress {
                progress,
                total: wire.total,
                message: wire.message,
            })
        }
        (None, Some(level)) => {
            let level = LogLevel::parse(&level).ok_or(EventLineError::Level(level))?;
            Ok(CallEvent::Log {
                level,
                message: wire.message.unwrap_or_default(),
                data: wire.data,
            })
        }
        _ => Err(EventLineError::Neither),
    }
}

/// Decides which progress values go out: strictly increasing, at most one per interval, and a
/// heartbeat when the tool has been quiet for a while.
#[derive(Debug)]
pub struct ProgressGate {
    min_interval: Duration,
    last_value: Option<f64>,
    last_sent: Option<Instant>,
    /// A value held back by the rate limit, sent when the interval has passed.
    pending: Option<(f64, Option<f64>, Option<String>)>,
    last_total: Option<f64>,
}

impl ProgressGate {
    pub fn new(min_interval: Duration) -> Self {
        Self {
            min_interval,
            last_value: None,
            last_sent: None,
            pending: None,
            last_total: None,
        }
    }

    /// Offers a value; returns what to send now, if anything.
    pub fn offer(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        now: Instant,
    ) -> Option<(f64, Option<f64>, Option<String>)> {
        let floor = self
            .pending
            .as_ref()
            .map(|(value, ..)| *value)
            .or(self.last_value);
        if floor.is_some_and(|floor| progress <= floor) {
            return None;
        }
        let due = self
            .last_sent
            .is_none_or(|sent| now.duration_since(sent) >= self.min_interval);
        if due {
            self.pending = None;
            Some(self.sent(progress, total, message, now))
        } else {
            self.pending = Some((progress, total, message));
            None
        }
    }

    /// A held-back value whose time has come.
    pub fn flush(&mut self, now: Instant) -> Option<(f64, Option<f64>, Option<String>)> {
        let due = self
            .last_sent
            .is_none_or(|sent| now.duration_since(sent) >= self.min_interval);
        if !due {
            return None;
        }
        let (progress, total, message) = self.pending.take()?;
        Some(self.sent(progress, total, message, now))
    }

    /// A heartbeat: a hair above the last value, so it still counts as progress.
    pub fn heartbeat(
        &mut self,
        message: String,
        now: Instant,
    ) -> (f64, Option<f64>, Option<String>) {
        let base = self
            .pending
            .take()
            .map_or(self.last_value.unwrap_or(0.0), |(value, ..)| value);
        let next = if self.last_value.is_none() && base == 0.0 {
            0.0
        } else {
            base + 1e-3
        };
        let next = if self.last_value.is_some_and(|last| next <= last) {
            base + 1e-3
        } else {
            next
        };
        self.sent(next, self.last_total, Some(message), now)
    }

    /// When the last value went out.
    pub fn last_sent(&self) -> Option<Instant> {
        self.last_sent
    }

    fn sent(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        now: Instant,
    ) -> (f64, Option<f64>, Option<String>) {
        self.last_value = Some(progress);
        self.last_sent = Some(now);
        if total.is_some() {
            self.last_total = total;
        }
        (progress, total.or(self.last_total), message)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{CallEvent, EventLineError, LogLevel, ProgressGate, parse_line};

    #[test]
    fn parses_progress_and_log_lines() {
        assert_eq!(
            parse_line(r#"{"progress": 3, "total": 10, "message": "copying"}"#).ok(),
            Some(CallEvent::Progress {
                progress: 3.0,
                total: Some(10.0),
                message: Some("copying".into())
            })
        );
        assert_eq!(
            parse_line(r#"{"log": "warning", "message": "low disk", "data": {"free": 2}}"#).ok(),
            Some(CallEvent::Log {
                level: LogLevel::Warning,
                message: "low disk".into(),
                data: Some(serde_json::json!({"free": 2}))
            })
        );
        assert!(matches!(
            parse_line("plain text"),
            Err(EventLineError::Json(_))
        ));
        assert!(
            matches!(parse_line(r#"{"log": "loud"}"#), Err(EventLineError::Level(level)) if level == "loud")
        );
        assert!(matches!(
            parse_line(r#"{"progress": 1, "log": "info"}"#),
            Err(EventLineError::Neither)
        ));
        assert!(matches!(
            parse_line(r#"{"progress": 1, "colour": 2}"#),
            Err(EventLineError::Json(_))
        ));
        assert!(matches!(
            parse_line(r#"{"progress": 1e999}"#),
            Err(EventLineError::Json(_))
        ));
        assert!(LogLevel::Warning > LogLevel::Info);
    }

    #[test]
    fn progress_only_increases_and_is_rate_limited() {
        let start = Instant::now();
        let mut gate = ProgressGate::new(Duration::from_millis(100));
        assert_eq!(
            gate.offer(1.0, Some(10.0), None, start),
            Some((1.0, Some(10.0), None))
        );
        assert_eq!(gate.offer(1.0, None, None, start), None, "not an increase");
        assert_eq!(
            gate.offer(2.0, None, None, start + Duration::from_millis(10)),
            None,
            "too soon: held"
        );
        assert_eq!(
            gate.offer(3.0, None, None, start + Duration::from_millis(20)),
            None,
            "replaces the held value"
        );
        assert_eq!(gate.flush(start + Duration::from_millis(50)), None);
        assert_eq!(
            gate.flush(start + Duration::from_millis(110)),
            Some((3.0, Some(10.0), None))
        );
        assert_eq!(
            gate.offer(2.5, None, None, start + Duration::from_millis(300)),
            None,
            "below the last sent value"
        );
    }

    #[test]
    fn heartbeats_still_increase() {
        let start = Instant::now();
        let mut gate = ProgressGate::new(Duration::from_millis(100));
        let (first, ..) = gate.heartbeat("still running".into(), start);
        let (second, ..) = gate.heartbeat("still running".into(), start + Duration::from_secs(1));
        assert!(second > first);
        gate.offer(5.0, Some(10.0), None, start + Duration::from_secs(2));
        let (third, total, _) =
            gate.heartbeat("still running".into(), start + Duration::from_secs(3));
        assert!(third > 5.0 && total == Some(10.0));
    }
}
