//! What is kept of a task, and its wire form (`CreateTaskResult`'s task fields and
//! `tasks/get`'s `DetailedTask`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Logs kept per task (the newest).
pub const KEPT_LOGS: usize = 50;
/// A kept log line's message and data, at most (a record is rewritten on every progress write).
pub const KEPT_LOG_BYTES: usize = 4096;

/// A task's status (SEP-2663).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The last progress a task reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One log line a task reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub at_ms: u64,
    pub level: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub tool: String,
    /// The tag ([`super::owner`]) of the caller that created it, where a session or a
    /// token's subject names the caller; other callers cannot see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// From creation; raised when the task ends, so its result is kept `ttl` after that.
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// While running: the process running it renews this; well past it, the task is failed.
    pub lease_ms: u64,
    /// How long one renewal lasts (`--task-lease` of the process running it).
    #[serde(default)]
    pub lease_for_ms: u64,
    /// Which process runs it (host, pid, start).
    pub replica: String,
    /// While `input_required`: the questions, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// When completed: the `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// When failed: the JSON-RPC error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogLine>,
    /// Log lines ever reported (`logs` keeps the newest).
    #[serde(default)]
    pub logged: u64,
    /// While it runs: the bytes of the arguments the process running it holds, counted
    /// against the store's bounds as if they were kept; none once it ends.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held_bytes: u64,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if"
)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Record {
    /// When the store may forget it.
    pub fn expires_ms(&self) -> u64 {
        let kept = self.created_ms.saturating_add(self.ttl_ms);
        if self.status.is_terminal() {
            kept
        } else {
            kept.max(self.lease_ms)
        }
    }

    /// Whether its process stopped renewing the lease before it ended: the lease ran out
    /// half a lease ago (a grace for a slow renewal or a clock a little off).
    pub fn lease_lapsed(&self, now_ms: u64) -> bool {
        !self.status.is_terminal() && self.lease_ms.saturating_add(self.lease_for_ms / 2) < now_ms
    }

    /// Ends the task with `status` at `now_ms`, keeping it `ttl` longer from now; its
    /// process holds nothing for it any more.
    pub fn end(&mut self, status: Status, ttl_ms: u64, now_ms: u64) {
        self.status = status;
        self.updated_ms = now_ms;
        self.input_requests = None;
        self.held_bytes = 0;
        self.ttl_ms = now_ms
            .saturating_sub(self.created_ms)
            .saturating_add(ttl_ms)
            .max(self.ttl_ms);
    }

    /// Ends the task as failed with a JSON-RPC error.
    pub fn fail(&mut self, code: i64, message: &str, data: Option<Value>, ttl_ms: u64, now: u64) {
        let mut error = Map::new();
        error.insert("code".into(), json!(code));
        error.insert("message".into(), json!(message));
        if let Some(data) = data {
            error.insert("data".into(), data);
        }
        self.error = Some(error);
        self.result = None;
        self.message = Some(message.to_owned());
        self.end(Status::Failed, ttl_ms, now);
    }

    /// Keeps a log line, dropping the oldest beyond [`KEPT_LOGS`]; a long message is cut and
    /// large data left out.
    pub fn log(&mut self, mut line: LogLine) {
        if line.message.len() > KEPT_LOG_BYTES {
            let mut end = KEPT_LOG_BYTES;
            while !line.message.is_char_boundary(end) {
                end -= 1;
            }
            line.message.truncate(end);
            line.message.push('…');
        }
        if line
            .data
            .as_ref()
            .is_some_and(|data| data.to_string().len() > KEPT_LOG_BYTES)
        {
            line.data = Some(json!("(left out: larger than 4 KiB)"));
        }
        if self.logs.len() >= KEPT_LOGS {
            self.logs.remove(0);
        }
        self.logs.push(line);
        self.logged += 1;
    }

    /// The task fields every answer carries (`Task`).
    pub fn task_json(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.id));
        task.insert("status".into(), json!(self.status.as_str()));
        if let Some(message) = &self.message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(timestamp(self.created_ms)));
        task.insert("lastUpdatedAt".into(), json!(timestamp(self.updated_ms)));
        task.insert("ttlMs".into(), json!(self.ttl_ms));
        task.insert("pollIntervalMs".into(), json!(self.poll_ms));
        task
    }

    /// `tasks/get`'s `DetailedTask`: the questions not yet answered (`answered` keys are
    /// left out; when none is left the task is `working` again), the result or the error.
    pub fn detailed(&self, answered: &[String]) -> Map<String, Value> {
        let mut task = self.task_json();
        match self.status {
            Status::InputRequired => {
                let pending: Map<String, Value> = self
                    .input_requests
                    .iter()
                    .flatten()
                    .filter(|(key, _)| !answered.contains(key))
                    .map(|(key, request)| (key.clone(), request.clone()))
                    .collect();
                if pending.is_empty() {
                    task.insert("status".into(), json!(Status::Working.as_str()));
                } else {
                    task.insert("inputRequests".into(), Value::Object(pending));
                }
            }
            Status::Completed => {
                task.insert(
                    "result".into(),
                    Value::Object(self.result.clone().unwrap_or_default()),
                );
            }
            Status::Failed => {
                task.insert(
                    "error".into(),
                    Value::Object(self.error.clone().unwrap_or_default()),
                );
            }
            Status::Working | Status::Cancelled => {}
        }
        task
    }
}

/// RFC 3339 in UTC, with milliseconds.
pub fn timestamp(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(String::new, |at| {
        at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Status) -> Record {
        Record {
            id: "0".repeat(32),
            tool: "t".into(),
            owner: None,
            status,
            message: None,
            created_ms: 1_000,
            updated_ms: 1_000,
            ttl_ms: 60_000,
            poll_ms: 1_000,
            lease_ms: 16_000,
            lease_for_ms: 15_000,
            replica: "here".into(),
            input_requests: None,
            result: None,
            error: None,
            progress: None,
            logs: Vec::new(),
            logged: 0,
            held_bytes: 0,
        }
    }

    #[test]
    fn the_wire_form_has_the_fields_of_its_status_and_no_other() {
        let mut asking = record(Status::InputRequired);
        let mut requests = Map::new();
        requests.insert("a".into(), json!({"method": "elicitation/create"}));
        requests.insert("b".into(), json!({"method": "elicitation/create"}));
        asking.input_requests = Some(requests);
        let wire = asking.detailed(&["a".into()]);
        assert_eq!(wire["status"], "input_required");
        assert_eq!(
            wire["inputRequests"].as_object().map(Map::len),
            Some(1),
            "{wire:?}"
        );
        assert!(wire["inputRequests"].get("b").is_some());
        let wire = asking.detailed(&["a".into(), "b".into()]);
        assert_eq!(wire["status"], "working");
        assert!(!wire.contains_key("inputRequests"));

        let mut done = record(Status::Working);
        done.result = Some(Map::new());
        done.end(Status::Completed, 60_000, 100_000);
        let wire = done.detailed(&[]);
        assert!(wire.contains_key("result") && !wire.contains_key("error"));
        // Kept a whole ttl after it ended, not after it began.
        assert_eq!(done.expires_ms(), 160_000);
        assert_eq!(wire["ttlMs"], 159_000);
        for key in ["requestState", "ttl", "pollInterval", "task"] {
            assert!(!wire.contains_key(key), "{key}");
        }
        assert_eq!(wire["createdAt"], "1970-01-01T00:00:01.000Z");

        let mut failed = record(Status::Working);
        failed.fail(-32603, "boom", None, 60_000, 2_000);
        let wire = failed.detailed(&[]);
        assert_eq!(wire["error"]["code"], -32603);
        assert!(!wire.contains_key("result"));
    }

    #[test]
    fn a_running_task_outlives_its_ttl_while_its_lease_holds() {
        let mut running = record(Status::Working);
        running.lease_ms = 500_000;
        assert_eq!(running.expires_ms(), 500_000);
        assert!(!running.lease_lapsed(400_000));
        // Half a lease of grace.
        assert!(!running.lease_lapsed(507_500));
        assert!(running.lease_lapsed(507_501));
        running.end(Status::Cancelled, 60_000, 2_000);
        assert!(!running.lease_lapsed(u64::MAX));
    }

    #[test]
    fn logs_keep_the_newest() {
        let mut task = record(Status::Working);
        for at_ms in 0..(KEPT_LOGS as u64 + 7) {
            task.log(LogLine {
                at_ms,
                level: "info".into(),
                message: String::new(),
                data: None,
            });
        }
        assert_eq!(task.logs.len(), KEPT_LOGS);
        assert_eq!(task.logged, KEPT_LOGS as u64 + 7);
        assert_eq!(task.logs[0].at_ms, 7);
        task.log(LogLine {
            at_ms: 0,
            level: "info".into(),
            message: "é".repeat(KEPT_LOG_BYTES),
            data: Some(json!("x".repeat(KEPT_LOG_BYTES))),
        });
        let last = task.logs.last().expect("kept");
        assert!(last.message.len() <= KEPT_LOG_BYTES + 3);
        assert_eq!(last.data, Some(json!("(left out: larger than 4 KiB)")));
    }
}
