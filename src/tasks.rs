//! Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a tool call that is
//! answered at once with a task id and runs on; the client polls `tasks/get`, answers the
//! task's questions with `tasks/update` and may `tasks/cancel` it.
//!
//! - [`record`] is what is kept of a task (status, result or error, questions, progress,
//!   logs, the lease of the process running it) and its wire form (`DetailedTask`).
//! - [`store`] keeps records where every process that serves the manifest can reach them:
//!   `store::embedded` (`SQLite` in `--data-dir`, shared by processes on one machine) or
//!   `store::shared` (Redis, `--task-store redis://…`, shared by replicas). A record is
//!   written before the answer that names it; a status only ever moves from running
//!   (`working`, `input_required`) to one terminal status, by compare-and-set, so a cancel
//!   and a completion racing on two replicas agree on one outcome. What it keeps is bounded
//!   ([`Limits`]) per owner and in all, checked in the same transaction (Lua script) that
//!   writes, so replicas racing cannot pass a bound together.
//! - [`owner`] is who owns a task as the store keeps it: a keyed hash, never the caller's
//!   session id or subject.
//! - [`runner`] runs a task in this process: the questions in rounds (`crate::inputs`), the
//!   tool's one call path, progress and logs kept with the task, a lease renewed while it
//!   runs (a task whose process died reads as `failed` once its lease has run out), and a
//!   cancel from any process kills its process group.
//!
//! `mcp::tasks` adapts this to rmcp; `commands::tasks` reads the store for operators.

pub mod owner;
pub mod record;
pub mod runner;
pub mod store;

use std::time::Duration;

pub use record::{Record, Status};
pub use runner::Tasks;
pub use store::{TaskStore, TaskStoreError, TaskStoreLocation};

/// Whether a tool's calls may run as tasks (`task = "…"` on a tool, or its `[server]` default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Always answered in the request.
    #[default]
    Never,
    /// A task when the client declares the extension, else answered in the request.
    Optional,
    /// Only as a task: a client that does not declare the extension is refused.
    Required,
}

impl Policy {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "never" => Some(Self::Never),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// The manifest's task settings (`[server] task-ttl`, `task-poll-interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// How long a task is kept after it ends (its `ttlMs` counts from creation, and is
    /// raised when it ends so the result is kept this long).
    pub ttl: Duration,
    /// The `pollIntervalMs` suggested to clients.
    pub poll_interval: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
        }
    }
}

/// How much the task store keeps, live tasks and ended ones kept for their `task-ttl` alike
/// (`--max-tasks`, `--max-task-bytes`, `--max-tasks-per-caller`,
/// `--max-task-bytes-per-caller`). A task's bytes are its record as stored (its result,
/// progress and logs) and its answers, and while it runs the arguments the process running
/// it holds. Callers that nothing names (stdio, stateless HTTP without a token's subject)
/// are one caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub tasks: u64,
    pub bytes: u64,
    pub tasks_per_caller: u64,
    pub bytes_per_caller: u64,
}

impl Default for Limits {
    /// A caller that starts 100 tasks within a `task-ttl` (an hour by default) is far past
    /// any agent's use, and 64 MiB is 16 results of `--max-body`'s default 4 MiB. In all, room
    /// for 100 such callers, held to 1 GiB: Redis keeps it all in memory.
    fn default() -> Self {
        Self {
            tasks: 10_000,
            bytes: 1 << 30,
            tasks_per_caller: 100,
            bytes_per_caller: 64 << 20,
        }
    }
}

/// A new task id: 128 random bits, as 32 lowercase hex digits.
pub fn new_id() -> Result<String, TaskStoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|source| TaskStoreError::Random {
        what: "a task id",
        source,
    })?;
    Ok(bytes
        .iter()
        .fold(String::with_capacity(32), |mut id, byte| {
            use std::fmt::Write as _;
            let _ = write!(id, "{byte:02x}");
            id
        }))
}

/// Whether `id` has the shape of an id this server makes.
pub fn well_formed(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_well_formed_and_nothing_else_is() {
        let first = new_id().expect("id");
        let second = new_id().expect("id");
        assert_ne!(first, second);
        assert!(well_formed(&first), "{first}");
        for bad in [
            "",
            "../../etc/passwd",
            &first[..31],
            &format!("{first}0"),
            &first.to_uppercase(),
            "g0000000000000000000000000000000",
            "mcp-serve:task:*",
        ] {
            assert!(!well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn policies_read_back() {
        for policy in [Policy::Never, Policy::Optional, Policy::Required] {
            assert_eq!(Policy::parse(policy.as_str()), Some(policy));
        }
        assert_eq!(Policy::parse("sometimes"), None);
    }
}
