//! The embedded store: one `SQLite` file (`tasks.sqlite3`) in the data directory. WAL mode and
//! `SQLite`'s file locks let every mcp-serve process on the machine share it (several stdio
//! servers, replicas on one host); `synchronous = NORMAL` makes each write survive the
//! process being killed (a power cut may lose the last few).

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use super::StoreError;
use crate::tasks::Record;

/// The file in the data directory.
pub const FILE: &str = "tasks.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_ms);
CREATE TABLE IF NOT EXISTS answers (
    task TEXT NOT NULL,
    key TEXT NOT NULL,
    answer TEXT NOT NULL,
    PRIMARY KEY (task, key)
);
";

const RUNNING: &str = "status IN ('working', 'input_required')";

#[derive(Debug)]
pub struct Embedded {
    connection: Mutex<Connection>,
}

fn io(error: impl std::fmt::Display) -> StoreError {
    StoreError::Io(error.to_string())
}

impl Embedded {
    /// Opens (creating) the store in `directory`; a directory it creates is private to the
    /// user, and so is the file (`SQLite` gives its `-wal` and `-shm` files the same mode).
    pub fn open(directory: &Path) -> Result<Self, StoreError> {
        create_private_dir(directory)?;
        let path = directory.join(FILE);
        create_private_file(&path)?;
        let connection = Connection::open(&path)
            .map_err(|error| StoreError::Io(format!("{}: {error}", path.display())))?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(io)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(io)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(io)?;
        connection
            .execute_batch(SCHEMA)
            .map_err(|error| StoreError::Io(format!("{}: {error}", path.display())))?;
        Ok(Self {
            connection: Mutex::new(connection),
        })
    }

    fn with<T>(
        &self,
        operation: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = self
            .connection
            .lock()
            .map_err(|_| StoreError::Io("the store's lock was poisoned".into()))?;
        operation(&mut connection)
    }

    pub fn create(&self, record: &Record) -> Result<(), StoreError> {
        let text = serde_json::to_string(record).map_err(io)?;
        self.with(|connection| {
            connection
                .execute(
                    "INSERT INTO tasks (id, status, created_ms, expires_ms, record) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        record.id,
                        record.status.as_str(),
                        sql_int(record.created_ms),
                        sql_int(record.expires_ms()),
                        text
                    ],
                )
                .map_err(io)?;
            Ok(())
        })
    }

    pub fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let text: Option<String> = self.with(|connection| {
            connection
                .query_row("SELECT record FROM tasks WHERE id = ?1", [id], |row| {
                    row.get(0)
                })
                .optional()
                .map_err(io)
        })?;
        text.map(|text| decode(&text)).transpose()
    }

    pub fn update(&self, record: &Record) -> Result<bool, StoreError> {
        let text = serde_json::to_string(record).map_err(io)?;
        self.with(|connection| {
            let changed = connection
                .execute(
                    &format!(
                        "UPDATE tasks SET status = ?2, expires_ms = ?3, record = ?4 WHERE id = ?1 AND {RUNNING}"
                    ),
                    params![
                        record.id,
                        record.status.as_str(),
                        sql_int(record.expires_ms()),
                        text
                    ],
                )
                .map_err(io)?;
            Ok(changed == 1)
        })
    }

    pub fn fail_lapsed(&self, record: &Record, seen_lease_ms: u64) -> Result<bool, StoreError> {
        let text = serde_json::to_string(record).map_err(io)?;
        self.with(|connection| {
            let changed = connection
                .execute(
                    &format!(
                        "UPDATE tasks SET status = ?2, expires_ms = ?3, record = ?4 WHERE id = ?1 AND {RUNNING} AND json_extract(record, '$.lease_ms') = ?5"
                    ),
                    params![
                        record.id,
                        record.status.as_str(),
                        sql_int(record.expires_ms()),
                        text,
                        sql_int(seen_lease_ms)
                    ],
                )
                .map_err(io)?;
            Ok(changed == 1)
        })
    }

    pub fn answer(&self, id: &str, answers: &Map<String, Value>) -> Result<(), StoreError> {
        self.with(|connection| {
            let transaction = connection.transaction().map_err(io)?;
            for (key, answer) in answers {
                transaction
                    .execute(
                        "INSERT OR IGNORE INTO answers (task, key, answer) VALUES (?1, ?2, ?3)",
                        params![id, key, answer.to_string()],
                    )
                    .map_err(io)?;
            }
            transaction.commit().map_err(io)
        })
    }

    pub fn answers(&self, id: &str) -> Result<Map<String, Value>, StoreError> {
        self.with(|connection| {
            let mut statement = connection
                .prepare_cached("SELECT key, answer FROM answers WHERE task = ?1")
                .map_err(io)?;
            let rows = statement
                .query_map([id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                })
                .map_err(io)?;
            let mut answers = Map::new();
            for row in rows {
                let (key, text) = row.map_err(io)?;
                let answer = serde_json::from_str(&text)
                    .map_err(|error| StoreError::Corrupt(error.to_string()))?;
                answers.insert(key, answer);
            }
            Ok(answers)
        })
    }

    pub fn list(&self) -> Result<Vec<Record>, StoreError> {
        let texts: Vec<String> = self.with(|connection| {
            let mut statement = connection
                .prepare("SELECT record FROM tasks ORDER BY created_ms, id")
                .map_err(io)?;
            let rows = statement.query_map([], |row| row.get(0)).map_err(io)?;
            rows.collect::<Result<_, _>>().map_err(io)
        })?;
        texts.iter().map(|text| decode(text)).collect()
    }

    pub fn purge(&self, now_ms: u64) -> Result<usize, StoreError> {
        self.with(|connection| {
            let transaction = connection.transaction().map_err(io)?;
            let expired = format!("SELECT id FROM tasks WHERE NOT {RUNNING} AND expires_ms < ?1");
            transaction
                .execute(
                    &format!("DELETE FROM answers WHERE task IN ({expired})"),
                    [sql_int(now_ms)],
                )
                .map_err(io)?;
            let deleted = transaction
                .execute(
                    &format!("DELETE FROM tasks WHERE NOT {RUNNING} AND expires_ms < ?1"),
                    [sql_int(now_ms)],
                )
                .map_err(io)?;
            transaction.commit().map_err(io)?;
            Ok(deleted)
        })
    }
}

fn decode(text: &str) -> Result<Record, StoreError> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt(error.to_string()))
}

fn sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn create_private_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(StoreError::Io(format!("{}: {error}", path.display()))),
    }
}

fn create_private_dir(directory: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .map_err(|error| StoreError::Io(format!("{}: {error}", directory.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::Status;
    use serde_json::json;

    fn record(id: &str) -> Record {
        serde_json::from_value(json!({
            "id": id, "tool": "t", "status": "working", "created_ms": 1, "updated_ms": 1,
            "ttl_ms": 10, "poll_ms": 1, "lease_ms": 100, "replica": "r"
        }))
        .expect("record")
    }

    #[test]
    fn the_first_terminal_status_wins_and_first_answers_stay() {
        let directory = tempfile::tempdir().expect("dir");
        let store = Embedded::open(directory.path()).expect("open");
        // A second process opening the same file at once is fine.
        let other = Embedded::open(directory.path()).expect("open twice");
        let id = "a".repeat(32);
        store.create(&record(&id)).expect("create");
        assert!(store.create(&record(&id)).is_err(), "ids are unique");

        let mut cancelled = record(&id);
        cancelled.end(Status::Cancelled, 10, 5);
        assert!(other.update(&cancelled).expect("cancel"));
        let mut completed = record(&id);
        completed.end(Status::Completed, 10, 6);
        assert!(!store.update(&completed).expect("too late"));
        assert_eq!(
            store.get(&id).expect("get").map(|r| r.status),
            Some(Status::Cancelled)
        );

        let mut first = Map::new();
        first.insert("k".into(), json!(1));
        store.answer(&id, &first).expect("answer");
        first.insert("k".into(), json!(2));
        first.insert("j".into(), json!(3));
        other.answer(&id, &first).expect("answer again");
        let answers = store.answers(&id).expect("answers");
        assert_eq!(answers.get("k"), Some(&json!(1)));
        assert_eq!(answers.get("j"), Some(&json!(3)));

        // Ended at 5 with a ttl of 10 from then: gone after 15, with its answers.
        assert_eq!(store.purge(14).expect("purge"), 0);
        assert_eq!(store.purge(100).expect("purge"), 1);
        assert!(store.get(&id).expect("get").is_none());
        assert!(store.answers(&id).expect("answers").is_empty());
        // Failing a lapsed lease needs the lease still as it was read.
        let mut lapsed = record(&"c".repeat(32));
        store.create(&lapsed).expect("create");
        lapsed.fail(-32603, "stopped", None, 10, 500);
        assert!(!store.fail_lapsed(&lapsed, 99).expect("renewed since"));
        assert!(store.fail_lapsed(&lapsed, 100).expect("still lapsed"));
        assert!(!store.fail_lapsed(&lapsed, 100).expect("already failed"));
        assert_eq!(store.purge(u64::MAX / 2).expect("purge"), 1);
        // The file is the user's alone.
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(directory.path().join(FILE))
                .expect("file")
                .permissions(),
        );
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // A running task is never purged.
        let running = "b".repeat(32);
        store.create(&record(&running)).expect("create");
        assert_eq!(store.purge(u64::MAX / 2).expect("purge"), 0);
        assert_eq!(store.list().expect("list").len(), 1);
    }
}
