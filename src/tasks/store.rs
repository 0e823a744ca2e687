//! Where tasks are kept: `embedded` (`SQLite` in a data directory) or `shared` (Redis). Both
//! give the same guarantees: `create` is durable before it returns; `update` writes only a
//! task that is still running (compare-and-set on the status), so the first terminal status
//! wins; the first answer to a question wins; `signal` tells the process running a task that
//! it was cancelled or answered (Redis: at once, by pub/sub; `SQLite`: that process polls).

pub mod embedded;
pub mod shared;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Record;

/// The store could not be reached or read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("the task store: {0}")]
    Io(String),
    #[error("the task store holds a record this version cannot read: {0}")]
    Corrupt(String),
    #[error("invalid --task-store `{0}`: expected redis://HOST[:PORT][/DB]")]
    Url(String),
    #[error(
        "--task-store: TLS to Redis (rediss://) is not built in; reach Redis on a private network or through a TLS tunnel, as redis://"
    )]
    Tls,
}

/// Where the tasks are: `--task-store`, else `--data-dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// `tasks.sqlite3` in this directory.
    Embedded(PathBuf),
    /// A Redis URL.
    Redis(String),
}

impl StoreLocation {
    /// From the command line: a Redis URL wins; else the data directory, else the default.
    pub fn from_options(
        task_store: Option<&str>,
        data_dir: Option<&Path>,
    ) -> Result<Self, StoreError> {
        if let Some(url) = task_store {
            if url.starts_with("rediss://") {
                return Err(StoreError::Tls);
            }
            if !url.starts_with("redis://") {
                return Err(StoreError::Url(url.to_owned()));
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
            Self::Redis(url) => shared::redacted(url),
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
pub enum Store {
    Embedded(Arc<embedded::Embedded>),
    Shared(Arc<shared::Shared>),
}

impl Store {
    pub async fn open(location: &StoreLocation) -> Result<Self, StoreError> {
        match location {
            StoreLocation::Embedded(directory) => {
                let directory = directory.clone();
                let opened =
                    tokio::task::spawn_blocking(move || embedded::Embedded::open(&directory))
                        .await
                        .map_err(|error| StoreError::Io(error.to_string()))??;
                Ok(Self::Embedded(Arc::new(opened)))
            }
            StoreLocation::Redis(url) => {
                Ok(Self::Shared(Arc::new(shared::Shared::open(url).await?)))
            }
        }
    }

    /// Keeps a new task. It is readable by every process once this returns.
    pub async fn create(&self, record: &Record) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.create(record)),
            Self::Shared(store) => store.create(record).await,
        }
    }

    /// The task, unless unknown or expired.
    pub async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let now = super::now_ms();
        let found = match self {
            Self::Embedded(store) => blocking(store, |store| store.get(id))?,
            Self::Shared(store) => store.get(id).await?,
        };
        Ok(found.filter(|record| !record.status.is_terminal() || record.expires_ms() >= now))
    }

    /// Writes `record` if the stored task is still running; `false` when it had already
    /// ended (cancelled, failed, or completed elsewhere), and then nothing was written.
    pub async fn update(&self, record: &Record) -> Result<bool, StoreError> {
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
    ) -> Result<bool, StoreError> {
        match self {
            Self::Embedded(store) => {
                blocking(store, |store| store.fail_lapsed(record, seen_lease_ms))
            }
            Self::Shared(store) => store.fail_lapsed(record, seen_lease_ms).await,
        }
    }

    /// Keeps answers to a task's questions; a key answered before keeps its first answer.
    pub async fn answer(&self, id: &str, answers: &Map<String, Value>) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.answer(id, answers)),
            Self::Shared(store) => store.answer(id, answers).await,
        }
    }

    /// Every answer given to a task so far.
    pub async fn answers(&self, id: &str) -> Result<Map<String, Value>, StoreError> {
        match self {
            Self::Embedded(store) => blocking(store, |store| store.answers(id)),
            Self::Shared(store) => store.answers(id).await,
        }
    }

    /// Every task not yet expired, oldest first.
    pub async fn list(&self) -> Result<Vec<Record>, StoreError> {
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
    pub async fn purge(&self) -> Result<usize, StoreError> {
        let now = super::now_ms();
        match self {
            Self::Embedded(store) => blocking(store, |store| store.purge(now)),
            // Redis expires keys itself.
            Self::Shared(store) => store.purge(now).await,
        }
    }

    /// Tells whichever process runs the task (Redis only; an embedded store's runners poll).
    pub async fn signal(&self, signal: &Signal) -> Result<(), StoreError> {
        match self {
            Self::Embedded(_) => Ok(()),
            Self::Shared(store) => store.publish(signal).await,
        }
    }

    /// Signals from other processes, when the store carries them.
    pub async fn signals(&self) -> Result<Option<tokio::sync::mpsc::Receiver<Signal>>, StoreError> {
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
    operation: impl FnOnce(&embedded::Embedded) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
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
