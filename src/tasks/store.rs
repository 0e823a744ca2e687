//! Where tasks are kept: `embedded` (`SQLite` in a data directory) or `shared` (Redis). Both
//! give the same guarantees: `create` is durable before it returns; `update` writes only a
//! task that is still running (compare-and-set on the status), so the first terminal status
//! wins; the first answer to a question wins; `signal` tells the process running a task that
//! it was cancelled or answered (Redis: at once, by pub/sub; `SQLite`: that process polls).
//!
//! Both keep what they hold within [`Limits`], per owner and in all: `create` refuses a task
//! past a bound, `update` a result that would pass one, `answer` answers that would, each
//! checked in the transaction (`SQLite`) or Lua script (Redis) that writes, so writers
//! racing on several processes cannot pass a bound together. Both keep the key that owners
//! are hashed with ([`OwnerKey`](super::owner::OwnerKey)), made once by whichever process opens the store first.

pub mod embedded;
#[cfg(feature = "redis")]
pub mod shared;
/// Without the `redis` feature, a Redis store that cannot be opened: `--task-store` says so.
#[cfg(not(feature = "redis"))]
#[path = "store/shared_unbuilt.rs"]
pub mod shared;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Limits, Record, Status};
use crate::units::size_text;

/// The store could not be reached or read. What failed below it is kept as the source, in
/// an `Arc` because one error can be told to several waiters (the error is `Clone`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TaskStoreError {
    /// A folder or file of the embedded store.
    #[error("the task store: {}: {source}", path.display())]
    File {
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    /// `SQLite` refused, at `path` when the store was being opened.
    #[error("the task store: {}{source}", located(path.as_deref()))]
    Sqlite {
        path: Option<PathBuf>,
        source: Arc<rusqlite::Error>,
    },
    /// Redis refused or could not be reached (`url` without its password).
    #[cfg(feature = "redis")]
    #[error("the task store: {doing} Redis at {url}: {source}")]
    Redis {
        doing: &'static str,
        url: String,
        source: Arc<redis::RedisError>,
    },
    #[error("the task store: a record could not be written as JSON: {0}")]
    Encode(Arc<serde_json::Error>),
    #[error("the task store: no randomness for {what}: {source}")]
    Random {
        what: &'static str,
        source: getrandom::Error,
    },
    #[error("the task store: task {0} exists already")]
    Exists(String),
    #[error("the task store: its owner key changed twice while starting a task")]
    Rekeyed,
    #[error("the task store: its lock was poisoned")]
    Poisoned,
    #[error("the task store: its opening ended early: {0}")]
    Worker(Arc<tokio::task::JoinError>),
    #[error("the task store holds a record this version cannot read: {0}")]
    Corrupt(String),
    #[error("invalid --task-store `{0}`: expected redis://HOST[:PORT][/DB]")]
    Url(String),
    #[error(
        "--task-store: TLS to Redis (rediss://) is not built in; reach Redis on a private network or through a TLS tunnel, as redis://"
    )]
    Tls,
    #[error(
        "--task-store: this mcp-serve was built without the Redis task store (cargo feature `redis`); use --data-dir, or a build with default features"
    )]
    NotBuilt,
    /// Keeping it would pass one of the store's [`Limits`].
    #[error("{0}")]
    Full(Full),
}

/// `path: ` before a message, or nothing.
fn located(path: Option<&Path>) -> String {
    path.map(|path| format!("{}: ", path.display()))
        .unwrap_or_default()
}

impl From<rusqlite::Error> for TaskStoreError {
    fn from(source: rusqlite::Error) -> Self {
        Self::Sqlite {
            path: None,
            source: Arc::new(source),
        }
    }
}

impl From<serde_json::Error> for TaskStoreError {
    fn from(source: serde_json::Error) -> Self {
        Self::Encode(Arc::new(source))
    }
}

/// Which of the store's bounds a write would pass, how far it is used, and what the write
/// needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Full {
    pub bound: Bound,
    pub limit: u64,
    pub used: u64,
    /// Bytes the write would add (for a bound on tasks, one task).
    pub needed: u64,
}

/// One of the store's [`Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    TasksPerCaller,
    BytesPerCaller,
    Tasks,
    Bytes,
}

impl Bound {
    /// As the stores' scripts and queries name it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "caller-tasks" => Some(Self::TasksPerCaller),
            "caller-bytes" => Some(Self::BytesPerCaller),
            "tasks" => Some(Self::Tasks),
            "bytes" => Some(Self::Bytes),
            _ => None,
        }
    }

    /// The limit this bound is, in `limits`.
    pub fn limit(self, limits: &Limits) -> u64 {
        match self {
            Self::TasksPerCaller => limits.tasks_per_caller,
            Self::BytesPerCaller => limits.bytes_per_caller,
            Self::Tasks => limits.tasks,
            Self::Bytes => limits.bytes,
        }
    }
}

impl std::fmt::Display for Full {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            limit,
            used,
            needed,
            ..
        } = *self;
        match self.bound {
            Bound::TasksPerCaller => write!(
                formatter,
                "the task store keeps at most {limit} tasks per caller (`--max-tasks-per-caller`) and this caller has {used}; a task is forgotten `task-ttl` after it ends"
            ),
            Bound::Tasks => write!(
                formatter,
                "the task store keeps at most {limit} tasks in all (`--max-tasks`) and holds {used}; a task is forgotten `task-ttl` after it ends"
            ),
            Bound::BytesPerCaller => write!(
                formatter,
                "the task store keeps at most {} of tasks per caller (`--max-task-bytes-per-caller`), this caller's take {} and this needs {} more",
                size_text(limit),
                size_text(used),
                size_text(needed)
            ),
            Bound::Bytes => write!(
                formatter,
                "the task store keeps at most {} of tasks in all (`--max-task-bytes`), it holds {} and this needs {} more",
                size_text(limit),
                size_text(used),
                size_text(needed)
            ),
        }
    }
}

/// What the store holds now, for one owner and in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) caller_tasks: u64,
    pub(crate) caller_bytes: u64,
    pub(crate) tasks: u64,
    pub(crate) bytes: u64,
}

impl Usage {
    /// Why `tasks` more tasks (`0` or `1`) taking `bytes` more would not fit, the caller's
    /// bounds checked first; `None` when they fit. (`shared`'s Lua script checks the same,
    /// in the same order.)
    pub(crate) fn refuse(&self, limits: &Limits, tasks: u64, bytes: u64) -> Option<Full> {
        let checks = [
            (Bound::TasksPerCaller, self.caller_tasks, tasks),
            (Bound::BytesPerCaller, self.caller_bytes, bytes),
            (Bound::Tasks, self.tasks, tasks),
            (Bound::Bytes, self.bytes, bytes),
        ];
        checks.into_iter().find_map(|(bound, used, more)| {
            let limit = bound.limit(limits);
            (more > 0 && used.saturating_add(more) > limit).then_some(Full {
                bound,
                limit,
                used,
                needed: bytes,
            })
        })
    }
}

/// What a record takes in the store: its text, and what the process running it holds.
pub(crate) fn taken(text: &str, record: &Record) -> u64 {
    u64::try_from(text.len())
        .unwrap_or(u64::MAX)
        .saturating_add(record.held_bytes)
}

/// Whether a write of `record` is held to the bounds: a result, the one write that can grow
/// a task without limit. Progress, logs and lease renewals are bounded by the record's own
/// rules and always written (a renewal refused would fail a running task).
pub(crate) fn checked(record: &Record) -> bool {
    record.status == Status::Completed
}

/// Where the tasks are: `--task-store`, else `--data-dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreLocation {
    /// `tasks.sqlite3` in this directory.
    Embedded(PathBuf),
    /// A Redis URL.
    Redis(String),
}

impl TaskStoreLocation {
    /// From the command line: a Redis URL wins; else the data directory, else the default.
    pub fn from_options(
        task_store: Option<&str>,
        data_dir: Option<&Path>,
    ) -> Result<Self, TaskStoreError> {
        if let Some(url) = task_store {
            if url.starts_with("rediss://") {
                return Err(TaskStoreError::Tls);
            }
            if !url.starts_with("redis://") {
                return Err(TaskStoreError::Url(url.to_owned()));
            }
            return Ok(Self::Redis(url.to_owned()));
        }
        Ok(Self::Embedded(
            data_dir.map_or_else(default_data_dir, Path::to_path_buf),
        ))
    }

    /// For messages: the file, or the Redis URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Self::Embedded(directory) => directory.join(embedded::FILE).display().to_string(),
            Self::Redis(url) => redacted(url),
        }
    }
}

/// `$XDG_STATE_HOME/mcp-serve`, else `~/.local/state/mcp-serve`, else `./.mcp-serve`.
pub fn default_data_dir() -> PathBuf {
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|value| !value.is_empty()) {
        return PathBuf::from(state).join("mcp-serve");
    }
    std::env::var_os("HOME")
        .filter(|value| !value.is_empty())
        .map_or_else(
            || PathBuf::from(".mcp-serve"),
            |home| PathBuf::from(home).join(".local/state/mcp-serve"),
        )
}

/// A message for the process running a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    Cancel(String),
    Answer(String),
}

impl Signal {
    pub fn encode(&self) -> String {
        match self {
            Self::Cancel(id) => format!("cancel {id}"),
            Self::Answer(id) => format!("answer {id}"),
        }
    }

    pub fn decode(text: &str) -> Option<Self> {
        let (kind, id) = text.split_once(' ')?;
        if !super::well_formed(id) {
            return None;
        }
        match kind {
            "cancel" => Some(Self::Cancel(id.to_owned())),
            "answer" => Some(Self::Answer(id.to_owned())),
            _ => None,
        }
    }
}

/// An open store; cheap to clone.
#[derive(Debug, Clone)]
pub enum TaskStore {
    Embedded(Arc<embedded::Embedded>),
    Shared(Arc<shared::Shared>),
}

impl TaskStore {
    pub async fn open(
        location: &TaskStoreLocation,
        limits: Limits,
    ) -> Result<Self, TaskStoreError> {
        match location {
            TaskStoreLocation::Embedded(directory) => {
                let directory = directory.clone();
                let opened = tokio::task::spawn_blocking(move || {
                    embedded::Embedded::open(&directory, limits)
                })
                .await
                .map_err(|error| TaskStoreError::Worker(Arc::new(error)))??;
                Ok(Self::Embedded(Arc::new(opened)))
            }
            TaskStoreLocation::Redis(url) => Ok(Self::Shared(Arc::new(
                shared::Shared::open(url, limits).await?,
            ))),
        }
    }

    /// Keeps a new task owned by `owner` (who may see it: the record is given its tag),
    /// counted against the per-caller bounds of `bucket` (who the caller is, which a client
    /// cannot multiply by opening sessions), unless that would pass a bound
    /// ([`TaskStoreError::Full`]). It is readable by every process once this returns.
    pub async fn create(
        &self,
        record: &mut Record,
        owner: Option<&str>,
        bucket: Option<&str>,
    ) -> Result<(), TaskStoreError> {
        match self {
            Self::Embedded(store) => {
                record.owner = owner.map(|owner| store.key().tag(owner));
                let bucket = bucket.map(|bucket| store.key().tag(bucket));
                blocking(store, |store| store.create(record, bucket.as_deref()))
            }
            Self::Shared(store) => store.create(record, owner, bucket).await,
        }
    }

    /// The tag `owner`'s tasks carry in this store.
    pub fn tag(&self, owner: &str) -> String {
        match self {
            Self::Embedded(store) => store.key().tag(owner),
            Self::Shared(store) => store.key().tag(owner),
        }
    }

    /// Reads the owner key again (Redis: another process may have made it anew after Redis
    /// lost it); whether it changed.
    pub async fn reread_key(&self) -> Result<bool, TaskStoreError> {
        match self {
            Self::Embedded(_) => Ok(false),
            Self::Shared(store) => store.reread_key().await,
        }
    }

    /// The task, unless unknown or expired.
    pub async fn get(&self, id: &str) -> Result<Option<Record>, TaskStoreError> {
        let now = super::now_ms();
        let found = match self {
            Self::Embedded(store) => blocking(store, |store| store.get(id))?,
            Self::Shared(store) => store.get(id).await?,
        };
        Ok(found.filter(|record| !record.status.is_terminal() || record.expires_ms() >= now))
    }

    /// Writes `record` if the stored task is still running; `false` when it had already
    /// ended (cancelled, failed, or completed elsewhere), and then nothing was written. A
    /// result that would pass a bound is not written ([`TaskStoreError::Full`]).
    pub async fn update(&self, record: &Record) -> Result<bool, TaskStoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.update(record)),
            Self::Shared(store) => store.update(record).await,
        }
    }

    /// Writes `failed`, the record given, only if the stored task is still running with the
    /// lease `seen_lease_ms` (not renewed since it was read); whether it was written.
    pub async fn fail_lapsed(
        &self,
        record: &Record,
        seen_lease_ms: u64,
    ) -> Result<bool, TaskStoreError> {
        match self {
            Self::Embedded(store) => {
                blocking(store, |store| store.fail_lapsed(record, seen_lease_ms))
            }
            Self::Shared(store) => store.fail_lapsed(record, seen_lease_ms).await,
        }
    }

    /// Keeps answers to a task's questions; a key answered before keeps its first answer.
    /// Answers that would pass a bound are not kept ([`TaskStoreError::Full`]).
    pub async fn answer(
        &self,
        id: &str,
        answers: &Map<String, Value>,
    ) -> Result<(), TaskStoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.answer(id, answers)),
            Self::Shared(store) => store.answer(id, answers).await,
        }
    }

    /// Every answer given to a task so far.
    pub async fn answers(&self, id: &str) -> Result<Map<String, Value>, TaskStoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.answers(id)),
            Self::Shared(store) => store.answers(id).await,
        }
    }

    /// Every task not yet expired, oldest first.
    pub async fn list(&self) -> Result<Vec<Record>, TaskStoreError> {
        let now = super::now_ms();
        let all = match self {
            Self::Embedded(store) => blocking(store, embedded::Embedded::list)?,
            Self::Shared(store) => store.list().await?,
        };
        Ok(all
            .into_iter()
            .filter(|record| !record.status.is_terminal() || record.expires_ms() >= now)
            .collect())
    }

    /// Forgets ended tasks past their ttl; how many.
    pub async fn purge(&self) -> Result<usize, TaskStoreError> {
        let now = super::now_ms();
        match self {
            Self::Embedded(store) => blocking(store, |store| store.purge(now)),
            // Redis expires keys itself.
            Self::Shared(store) => store.purge(now).await,
        }
    }

    /// Tells whichever process runs the task (Redis only; an embedded store's runners poll).
    pub async fn signal(&self, signal: &Signal) -> Result<(), TaskStoreError> {
        match self {
            Self::Embedded(_) => Ok(()),
            Self::Shared(store) => store.publish(signal).await,
        }
    }

    /// Signals from other processes, when the store carries them.
    pub async fn signals(
        &self,
    ) -> Result<Option<tokio::sync::mpsc::Receiver<Signal>>, TaskStoreError> {
        match self {
            Self::Embedded(_) => Ok(None),
            Self::Shared(store) => store.subscribe().await.map(Some),
        }
    }

    /// Whether runners must poll for cancels and answers.
    pub fn polled(&self) -> bool {
        matches!(self, Self::Embedded(_))
    }
}

/// Runs a `SQLite` operation on the blocking pool.
fn blocking<T>(
    store: &Arc<embedded::Embedded>,
    operation: impl FnOnce(&embedded::Embedded) -> Result<T, TaskStoreError>,
) -> Result<T, TaskStoreError> {
    // The closure borrows the caller's data, so it runs here under `block_in_place` where the
    // runtime allows it, and inline otherwise (current-thread runtimes, tests).
    let store = Arc::clone(store);
    match tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
            tokio::task::block_in_place(|| operation(&store))
        }
        _ => operation(&store),
    }
}

/// The URL without its password.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split_once(':').map_or("", |(user, _)| user);
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redacted("redis://127.0.0.1:6379/2"),
            "redis://127.0.0.1:6379/2"
        );
        assert_eq!(
            redacted("rediss://app:s3cr@t@redis.example:6380/0"),
            "rediss://app:***@redis.example:6380/0"
        );
        assert_eq!(redacted("redis://:hunter2@h/0"), "redis://:***@h/0");
    }

    #[test]
    fn the_callers_bounds_are_checked_first_and_each_says_what_to_do() {
        let limits = Limits {
            tasks: 10,
            bytes: 10 << 20,
            tasks_per_caller: 3,
            bytes_per_caller: 3 << 20,
        };
        let used = Usage {
            caller_tasks: 2,
            caller_bytes: 2 << 20,
            tasks: 9,
            bytes: 9 << 20,
        };
        assert_eq!(
            used.refuse(&limits, 1, 1 << 20),
            None,
            "exactly at the bounds"
        );
        let full = used
            .refuse(&limits, 1, (1 << 20) + 1)
            .expect("past the caller's bytes");
        assert_eq!(full.bound, Bound::BytesPerCaller);
        assert_eq!(
            full.to_string(),
            "the task store keeps at most 3.0 MiB of tasks per caller (`--max-task-bytes-per-caller`), this caller's take 2.0 MiB and this needs 1.0 MiB more"
        );
        let crowded = Usage {
            caller_tasks: 3,
            ..used
        };
        let full = crowded
            .refuse(&limits, 1, 10)
            .expect("past the caller's tasks");
        assert_eq!(
            full.to_string(),
            "the task store keeps at most 3 tasks per caller (`--max-tasks-per-caller`) and this caller has 3; a task is forgotten `task-ttl` after it ends"
        );
        // A result adds no task: only bytes are checked.
        assert_eq!(crowded.refuse(&limits, 0, 10), None);
        let others = Usage {
            caller_tasks: 0,
            caller_bytes: 0,
            tasks: 10,
            bytes: 9 << 20,
        };
        let full = others.refuse(&limits, 1, 10).expect("past the total");
        assert_eq!(full.bound, Bound::Tasks);
        assert!(
            full.to_string()
                .contains("at most 10 tasks in all (`--max-tasks`)")
        );
        let full = Usage { tasks: 0, ..others }
            .refuse(&limits, 1, (1 << 20) + 1)
            .expect("past the total bytes");
        assert_eq!(full.bound, Bound::Bytes);
        for (bytes, shown) in [
            (512, "512 B"),
            (921_700, "900.1 KiB"),
            (3 << 20, "3.0 MiB"),
            (1 << 30, "1.0 GiB"),
            (5 << 40, "5120.0 GiB"),
        ] {
            assert_eq!(crate::units::size_text(bytes), shown);
        }
    }
}
