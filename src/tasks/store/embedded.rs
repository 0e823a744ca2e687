//! The embedded store: one `SQLite` file (`tasks.sqlite3`) in the data directory. WAL mode and
//! `SQLite`'s file locks let every mcp-serve process on the machine share it (several stdio
//! servers, replicas on one host); `synchronous = NORMAL` makes each write survive the
//! process being killed (a power cut may lose the last few).
//!
//! Each task row carries its owner's tag and what it takes (`bytes`: the record and what its
//! process holds; `answer_bytes`), so a write that could pass a bound sums them in the same
//! `BEGIN IMMEDIATE` transaction that writes: two processes cannot both pass the check.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{
    Connection, OptionalExtension, Transaction, TransactionBehavior, named_params, params,
};
use serde_json::{Map, Value};

use super::{TaskStoreError, Usage, checked, taken};
use crate::tasks::owner::{OwnerKey, is_tag};
use crate::tasks::{Limits, Record, now_ms};

/// The file in the data directory.
pub const FILE: &str = "tasks.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    record TEXT NOT NULL,
    owner TEXT,
    bytes INTEGER NOT NULL DEFAULT 0,
    answer_bytes INTEGER NOT NULL DEFAULT 0,
    bucket TEXT
);
CREATE TABLE IF NOT EXISTS answers (
    task TEXT NOT NULL,
    key TEXT NOT NULL,
    answer TEXT NOT NULL,
    PRIMARY KEY (task, key)
);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
";

/// After the columns they name exist (a store made before they did gets them first).
const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_ms);
DROP INDEX IF EXISTS tasks_usage;
CREATE INDEX IF NOT EXISTS tasks_bucket ON tasks (bucket, status, expires_ms, bytes, answer_bytes);
";

const RUNNING: &str = "status IN ('working', 'input_required')";

/// A task the store still counts: running, or ended and not yet past its ttl.
const COUNTED: &str = "(status IN ('working', 'input_required') OR expires_ms >= :now)";

#[derive(Debug)]
pub struct Embedded {
    connection: Mutex<Connection>,
    key: OwnerKey,
    limits: Limits,
}

impl Embedded {
    /// Opens (creating) the store in `directory`; a directory it creates is private to the
    /// user, and so is the file (`SQLite` gives its `-wal` and `-shm` files the same mode).
    pub fn open(directory: &Path, limits: Limits) -> Result<Self, TaskStoreError> {
        create_private_dir(directory)?;
        let path = directory.join(FILE);
        create_private_file(&path)?;
        let at = |error: TaskStoreError| match error {
            TaskStoreError::Sqlite { path: None, source } => TaskStoreError::Sqlite {
                path: Some(path.clone()),
                source,
            },
            other => other,
        };
        let mut connection = Connection::open(&path).map_err(|error| at(error.into()))?;
        connection.busy_timeout(Duration::from_secs(5))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        let key = prepare(&mut connection).map_err(at)?;
        Ok(Self {
            connection: Mutex::new(connection),
            key,
            limits,
        })
    }

    /// The key owners are hashed with, the same for every process on this file.
    pub fn key(&self) -> &OwnerKey {
        &self.key
    }

    fn with<T>(
        &self,
        operation: impl FnOnce(&mut Connection) -> Result<T, TaskStoreError>,
    ) -> Result<T, TaskStoreError> {
        let mut connection = self
            .connection
            .lock()
            .map_err(|_| TaskStoreError::Poisoned)?;
        operation(&mut connection)
    }

    /// Keeps a new task whose `owner` is already its tag, counted in `bucket` (a tag too),
    /// unless it would pass a bound.
    pub fn create(&self, record: &Record, bucket: Option<&str>) -> Result<(), TaskStoreError> {
        let text = serde_json::to_string(record)?;
        let bytes = taken(&text, record);
        let limits = self.limits;
        self.with(|connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                ?;
            let used = usage(&transaction, bucket)?;
            if let Some(full) = used.refuse(&limits, 1, bytes) {
                return Err(TaskStoreError::Full(full));
            }
            transaction
                .execute(
                    "INSERT INTO tasks (id, status, created_ms, expires_ms, record, owner, bytes, bucket) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        record.id,
                        record.status.as_str(),
                        sql_int(record.created_ms),
                        sql_int(record.expires_ms()),
                        text,
                        record.owner,
                        sql_int(bytes),
                        bucket
                    ],
                )
                ?;
            transaction.commit().map_err(TaskStoreError::from)
        })
    }

    pub fn get(&self, id: &str) -> Result<Option<Record>, TaskStoreError> {
        let text: Option<String> = self.with(|connection| {
            connection
                .query_row("SELECT record FROM tasks WHERE id = ?1", [id], |row| {
                    row.get(0)
                })
                .optional()
                .map_err(TaskStoreError::from)
        })?;
        text.map(|text| decode(&text)).transpose()
    }

    pub fn update(&self, record: &Record) -> Result<bool, TaskStoreError> {
        let text = serde_json::to_string(record)?;
        let bytes = taken(&text, record);
        let write = format!(
            "UPDATE tasks SET status = ?2, expires_ms = ?3, record = ?4, bytes = ?5 WHERE id = ?1 AND {RUNNING}"
        );
        let values = params![
            record.id,
            record.status.as_str(),
            sql_int(record.expires_ms()),
            text,
            sql_int(bytes)
        ];
        if !checked(record) {
            return self.with(|connection| Ok(connection.execute(&write, values)? == 1));
        }
        let limits = self.limits;
        self.with(|connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let stored: Option<(Option<String>, i64)> = transaction
                .query_row(
                    &format!("SELECT bucket, bytes FROM tasks WHERE id = ?1 AND {RUNNING}"),
                    [&record.id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let Some((bucket, before)) = stored else {
                return Ok(false);
            };
            let more = bytes.saturating_sub(u64::try_from(before).unwrap_or(0));
            if more > 0
                && let Some(full) = usage(&transaction, bucket.as_deref())?.refuse(&limits, 0, more)
            {
                return Err(TaskStoreError::Full(full));
            }
            let changed = transaction.execute(&write, values)?;
            transaction.commit()?;
            Ok(changed == 1)
        })
    }

    pub fn fail_lapsed(&self, record: &Record, seen_lease_ms: u64) -> Result<bool, TaskStoreError> {
        let text = serde_json::to_string(record)?;
        let bytes = taken(&text, record);
        self.with(|connection| {
            let changed = connection
                .execute(
                    &format!(
                        "UPDATE tasks SET status = ?2, expires_ms = ?3, record = ?4, bytes = ?6 WHERE id = ?1 AND {RUNNING} AND json_extract(record, '$.lease_ms') = ?5"
                    ),
                    params![
                        record.id,
                        record.status.as_str(),
                        sql_int(record.expires_ms()),
                        text,
                        sql_int(seen_lease_ms),
                        sql_int(bytes)
                    ],
                )
                ?;
            Ok(changed == 1)
        })
    }

    /// Keeps the answers not given before, unless they would pass a bound; nothing for a
    /// task the store no longer has.
    pub fn answer(&self, id: &str, answers: &Map<String, Value>) -> Result<(), TaskStoreError> {
        let limits = self.limits;
        self.with(|connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(bucket) = transaction
                .query_row("SELECT bucket FROM tasks WHERE id = ?1", [id], |row| {
                    row.get::<_, Option<String>>(0)
                })
                .optional()?
            else {
                return Ok(());
            };
            let mut new = Vec::new();
            for (key, answer) in answers {
                let given = transaction
                    .query_row(
                        "SELECT 1 FROM answers WHERE task = ?1 AND key = ?2",
                        params![id, key],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                if !given {
                    new.push((key, answer.to_string()));
                }
            }
            let added = new.iter().fold(0u64, |sum, (key, text)| {
                sum.saturating_add(u64::try_from(key.len() + text.len()).unwrap_or(u64::MAX))
            });
            if added == 0 {
                return Ok(());
            }
            if let Some(full) = usage(&transaction, bucket.as_deref())?.refuse(&limits, 0, added) {
                return Err(TaskStoreError::Full(full));
            }
            for (key, text) in &new {
                transaction.execute(
                    "INSERT OR IGNORE INTO answers (task, key, answer) VALUES (?1, ?2, ?3)",
                    params![id, key, text],
                )?;
            }
            transaction.execute(
                "UPDATE tasks SET answer_bytes = answer_bytes + ?2 WHERE id = ?1",
                params![id, sql_int(added)],
            )?;
            transaction.commit().map_err(TaskStoreError::from)
        })
    }

    pub fn answers(&self, id: &str) -> Result<Map<String, Value>, TaskStoreError> {
        self.with(|connection| {
            let mut statement =
                connection.prepare_cached("SELECT key, answer FROM answers WHERE task = ?1")?;
            let rows = statement.query_map([id], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?;
            let mut answers = Map::new();
            for row in rows {
                let (key, text) = row?;
                let answer = serde_json::from_str(&text)
                    .map_err(|error| TaskStoreError::Corrupt(error.to_string()))?;
                answers.insert(key, answer);
            }
            Ok(answers)
        })
    }

    pub fn list(&self) -> Result<Vec<Record>, TaskStoreError> {
        let texts: Vec<String> = self.with(|connection| {
            let mut statement =
                connection.prepare("SELECT record FROM tasks ORDER BY created_ms, id")?;
            let rows = statement.query_map([], |row| row.get(0))?;
            rows.collect::<Result<_, _>>().map_err(TaskStoreError::from)
        })?;
        texts.iter().map(|text| decode(text)).collect()
    }

    pub fn purge(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        self.with(|connection| {
            let transaction = connection.transaction()?;
            let expired = format!("SELECT id FROM tasks WHERE NOT {RUNNING} AND expires_ms < ?1");
            transaction.execute(
                &format!("DELETE FROM answers WHERE task IN ({expired})"),
                [sql_int(now_ms)],
            )?;
            let deleted = transaction.execute(
                &format!("DELETE FROM tasks WHERE NOT {RUNNING} AND expires_ms < ?1"),
                [sql_int(now_ms)],
            )?;
            transaction.commit()?;
            Ok(deleted)
        })
    }
}

/// What the store counts now: the tasks of the caller `bucket` names and every task, with
/// their bytes.
fn usage(transaction: &Transaction<'_>, bucket: Option<&str>) -> Result<Usage, TaskStoreError> {
    let now = sql_int(now_ms());
    let sums = |filter: &str, parameters: &[(&str, &dyn rusqlite::ToSql)]| {
        transaction
            .query_row(
                &format!(
                    "SELECT COUNT(*), COALESCE(SUM(bytes + answer_bytes), 0) FROM tasks WHERE {filter}{COUNTED}"
                ),
                parameters,
                |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)),
            )
            .map(|(count, bytes)| {
                (
                    u64::try_from(count).unwrap_or(0),
                    u64::try_from(bytes).unwrap_or(0),
                )
            })
            .map_err(TaskStoreError::from)
    };
    let (caller_tasks, caller_bytes) = sums(
        "bucket IS :bucket AND ",
        named_params! {":bucket": bucket, ":now": now},
    )?;
    let (tasks, bytes) = sums("", named_params! {":now": now})?;
    Ok(Usage {
        caller_tasks,
        caller_bytes,
        tasks,
        bytes,
    })
}

/// Creates or completes the schema and reads the owner key, making it when the store has
/// none, in one transaction: processes opening a new file at once agree on one key.
fn prepare(connection: &mut Connection) -> Result<OwnerKey, TaskStoreError> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    transaction.execute_batch(SCHEMA)?;
    transaction.execute(
        "INSERT OR IGNORE INTO meta (name, value) VALUES ('owner-key', ?1)",
        [OwnerKey::generate()?.as_stored()],
    )?;
    let key = OwnerKey::from_stored(transaction.query_row(
        "SELECT value FROM meta WHERE name = 'owner-key'",
        [],
        |row| row.get(0),
    )?);
    let counted: i64 = transaction.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('tasks') WHERE name = 'bytes'",
        [],
        |row| row.get(0),
    )?;
    if counted == 0 {
        upgrade(&transaction, &key)?;
    }
    let bucketed: i64 = transaction.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('tasks') WHERE name = 'bucket'",
        [],
        |row| row.get(0),
    )?;
    if bucketed == 0 {
        // A store made before callers were counted by who they are: its tasks count for
        // their owner, as they did.
        transaction.execute_batch(
            "ALTER TABLE tasks ADD COLUMN bucket TEXT; UPDATE tasks SET bucket = owner;",
        )?;
    }
    transaction.execute_batch(INDEXES)?;
    transaction.commit()?;
    Ok(key)
}

/// Brings a store an older version made up to date: the owner and size columns, and every
/// record's owner replaced by its tag (the old text zeroed, not left in free pages).
fn upgrade(transaction: &Transaction<'_>, key: &OwnerKey) -> Result<(), TaskStoreError> {
    transaction.execute_batch(
        "ALTER TABLE tasks ADD COLUMN owner TEXT;
             ALTER TABLE tasks ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE tasks ADD COLUMN answer_bytes INTEGER NOT NULL DEFAULT 0;",
    )?;
    transaction.pragma_update(None, "secure_delete", true)?;
    let rows: Vec<(String, String)> = {
        let mut statement = transaction.prepare("SELECT id, record FROM tasks")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (id, text) in rows {
        // A record this version cannot read is left as it is, and reported when read.
        let Ok(mut record) = serde_json::from_str::<Record>(&text) else {
            continue;
        };
        record.owner = record.owner.map(|owner| {
            if is_tag(&owner) {
                owner
            } else {
                key.tag(&owner)
            }
        });
        let text = serde_json::to_string(&record)?;
        transaction.execute(
            "UPDATE tasks SET owner = ?2, bytes = ?3, record = ?4 WHERE id = ?1",
            params![id, record.owner, sql_int(taken(&text, &record)), text],
        )?;
    }
    transaction
        .execute(
            "UPDATE tasks SET answer_bytes = (SELECT COALESCE(SUM(length(CAST(key AS BLOB)) + length(CAST(answer AS BLOB))), 0) FROM answers WHERE task = tasks.id)",
            [],
        )
        ?;
    transaction
        .pragma_update(None, "secure_delete", false)
        .map_err(TaskStoreError::from)
}

fn decode(text: &str) -> Result<Record, TaskStoreError> {
    serde_json::from_str(text).map_err(|error| TaskStoreError::Corrupt(error.to_string()))
}

fn sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn create_private_file(path: &Path) -> Result<(), TaskStoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(TaskStoreError::File {
            path: path.to_owned(),
            source: Arc::new(source),
        }),
    }
}

fn create_private_dir(directory: &Path) -> Result<(), TaskStoreError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .map_err(|source| TaskStoreError::File {
            path: directory.to_owned(),
            source: Arc::new(source),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::Status;
    use crate::tasks::store::Bound;
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
        let store = Embedded::open(directory.path(), Limits::default()).expect("open");
        // A second process opening the same file at once is fine.
        let other = Embedded::open(directory.path(), Limits::default()).expect("open twice");
        let id = "a".repeat(32);
        create(&store, &record(&id)).expect("create");
        assert!(create(&store, &record(&id)).is_err(), "ids are unique");

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
        create(&store, &lapsed).expect("create");
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
        create(&store, &record(&running)).expect("create");
        assert_eq!(store.purge(u64::MAX / 2).expect("purge"), 0);
        assert_eq!(store.list().expect("list").len(), 1);
    }

    /// Keeps `record`, counted for its owner (as a caller's session-less bucket would be).
    fn create(store: &Embedded, record: &Record) -> Result<(), TaskStoreError> {
        store.create(record, record.owner.as_deref())
    }

    /// A running task created now, owned by `owner`'s tag in `store`.
    fn owned(store: &Embedded, id: char, owner: Option<&str>) -> Record {
        let now = now_ms();
        let mut task = record(&id.to_string().repeat(32));
        task.created_ms = now;
        task.ttl_ms = 60_000;
        task.lease_ms = now + 15_000;
        task.owner = owner.map(|owner| store.key().tag(owner));
        task
    }

    fn bound(outcome: Result<impl std::fmt::Debug, TaskStoreError>) -> Bound {
        match outcome {
            Err(TaskStoreError::Full(full)) => full.bound,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn bounds_hold_per_owner_and_in_all_across_processes_and_results_past_them_are_refused() {
        let directory = tempfile::tempdir().expect("dir");
        let limits = Limits {
            tasks: 4,
            bytes: 1 << 20,
            tasks_per_caller: 2,
            bytes_per_caller: 20_000,
        };
        let store = Embedded::open(directory.path(), limits).expect("open");
        let other = Embedded::open(directory.path(), limits).expect("another process");
        assert_eq!(store.key(), other.key(), "one key per file");
        create(&store, &owned(&store, 'a', Some("alice"))).expect("alice's first");
        create(&other, &owned(&other, 'b', Some("alice"))).expect("alice's second");
        let third = create(&other, &owned(&other, 'c', Some("alice")));
        assert_eq!(bound(third), Bound::TasksPerCaller);
        create(&store, &owned(&store, 'c', Some("bob"))).expect("bob's");
        create(&store, &owned(&store, 'd', None)).expect("an anonymous one");
        assert_eq!(
            bound(create(&other, &owned(&other, 'e', Some("carol")))),
            Bound::Tasks
        );

        // A result past alice's bytes is not written; a small one is; a failure always is.
        let mut large = owned(&store, 'a', Some("alice"));
        large.result = Some(Map::from_iter([("text".into(), json!("x".repeat(30_000)))]));
        large.end(Status::Completed, 60_000, now_ms());
        assert_eq!(bound(store.update(&large)), Bound::BytesPerCaller);
        assert_eq!(
            store.get(&large.id).expect("get").map(|task| task.status),
            Some(Status::Working)
        );
        let mut failed = owned(&store, 'a', Some("alice"));
        failed.fail(-32603, "the result was not kept", None, 60_000, now_ms());
        assert!(store.update(&failed).expect("a failure is written"));
        let mut small = owned(&store, 'b', Some("alice"));
        small.result = Some(Map::new());
        small.end(Status::Completed, 60_000, now_ms());
        assert!(store.update(&small).expect("a small result"));

        // Answers count too: bob's task may not take more than 20,000 bytes of them.
        let id = "c".repeat(32);
        let mut answers = Map::new();
        answers.insert("big".into(), json!("y".repeat(25_000)));
        assert_eq!(bound(store.answer(&id, &answers)), Bound::BytesPerCaller);
        assert!(store.answers(&id).expect("answers").is_empty());
        answers.insert("big".into(), json!("y".repeat(100)));
        store.answer(&id, &answers).expect("a small answer");
        assert_eq!(store.answers(&id).expect("answers").len(), 1);

        // Sessions of one caller (one address) share its bucket, whoever may see each.
        let folder = tempfile::tempdir().expect("dir");
        let crowded = Embedded::open(folder.path(), limits).expect("open");
        let address = crowded.key().tag("ip:192.0.2.7");
        for (id, session) in [('p', "s1"), ('q', "s2")] {
            crowded
                .create(&owned(&crowded, id, Some(session)), Some(&address))
                .expect("within the caller's two");
        }
        let third = crowded.create(&owned(&crowded, 'r', Some("s3")), Some(&address));
        assert_eq!(
            bound(third),
            Bound::TasksPerCaller,
            "a third session adds nothing"
        );
        let elsewhere = crowded.key().tag("ip:192.0.2.8");
        crowded
            .create(&owned(&crowded, 's', Some("s4")), Some(&elsewhere))
            .expect("another address has its own");

        // Held bytes (a running task's arguments) count until it ends.
        let mut holding = owned(&store, 'f', Some("dave"));
        holding.held_bytes = 30_000;
        assert_eq!(bound(create(&store, &holding)), Bound::BytesPerCaller);
    }

    #[test]
    fn a_store_an_older_version_made_gets_its_owners_hashed_and_counted() {
        let directory = tempfile::tempdir().expect("dir");
        let session = "88ff02fd-0fea-445b-9280-60ba41842930";
        let id = "a".repeat(32);
        {
            let old = Connection::open(directory.path().join(FILE)).expect("an old store");
            old.pragma_update(None, "journal_mode", "WAL").expect("wal");
            old.execute_batch(
                "CREATE TABLE tasks (id TEXT PRIMARY KEY, status TEXT NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL, record TEXT NOT NULL);
                 CREATE INDEX tasks_expiry ON tasks (expires_ms);
                 CREATE TABLE answers (task TEXT NOT NULL, key TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (task, key));",
            )
            .expect("the old schema");
            let mut task = record(&id);
            task.owner = Some(session.into());
            task.lease_ms = now_ms() + 60_000;
            old.execute(
                "INSERT INTO tasks VALUES (?1, 'working', 1, ?2, ?3)",
                params![
                    id,
                    sql_int(task.expires_ms()),
                    serde_json::to_string(&task).expect("json")
                ],
            )
            .expect("an old task");
            old.execute("INSERT INTO answers VALUES (?1, 'k', '\"v\"')", [&id])
                .expect("an old answer");
        }
        let limits = Limits {
            tasks_per_caller: 1,
            ..Limits::default()
        };
        {
            let store = Embedded::open(directory.path(), limits).expect("opened by this version");
            let upgraded = store.get(&id).expect("get").expect("kept");
            assert_eq!(upgraded.owner, Some(store.key().tag(session)));
            assert_eq!(store.answers(&id).expect("answers").len(), 1);
            let again = owned(&store, 'b', Some(session));
            assert_eq!(
                bound(create(&store, &again)),
                Bound::TasksPerCaller,
                "the old task counts"
            );
            create(&store, &owned(&store, 'c', None)).expect("another caller");
        }
        let reopened = Embedded::open(directory.path(), limits).expect("opened again");
        assert_eq!(reopened.list().expect("list").len(), 2);
        drop(reopened);
        for entry in std::fs::read_dir(directory.path()).expect("dir") {
            let path = entry.expect("entry").path();
            let bytes = std::fs::read(&path).expect("a store file");
            assert!(
                !bytes
                    .windows(session.len())
                    .any(|window| window == session.as_bytes()),
                "{} still holds the session id",
                path.display()
            );
        }
    }
}
