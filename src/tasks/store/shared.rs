//! The shared store: Redis, for replicas. A task is one JSON value under
//! `mcp-serve:task:ID` (expiring with the task), its answers a hash under
//! `mcp-serve:answers:ID`, and a sorted set `mcp-serve:tasks` lists them for operators.
//! Status changes are compare-and-set in a Lua script; cancels and answers are published on
//! the `mcp-serve:tasks` channel so the replica running the task hears at once.
//!
//! What the store holds is counted beside the tasks: `mcp-serve:usage` (per task: its
//! record's bytes, its answers' bytes, the tag of the caller it counts for: its token's
//! subject or its address, never its session), `mcp-serve:usage:expiry` (a sorted set of
//! when each is forgotten), and per caller and in all (`*`) `mcp-serve:usage:tasks`
//! and `mcp-serve:usage:bytes`. Every write is one Lua script that forgets the counts of
//! expired tasks, checks the bounds and writes, so replicas racing cannot pass a bound
//! together. `mcp-serve:owner-key` is the key owners are hashed with.

use std::sync::{Arc, RwLock};

use futures_util::StreamExt;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use serde_json::{Map, Value};

use super::{Bound, Full, Signal, TaskStoreError, checked, redacted, taken};
use crate::tasks::owner::OwnerKey;
use crate::tasks::{Limits, Record, now_ms};

const CHANNEL: &str = "mcp-serve:tasks";
const INDEX: &str = "mcp-serve:tasks";
const OWNER_KEY: &str = "mcp-serve:owner-key";
const USAGE: &str = "mcp-serve:usage";
const EXPIRY: &str = "mcp-serve:usage:expiry";
const COUNTS: &str = "mcp-serve:usage:tasks";
const BYTES: &str = "mcp-serve:usage:bytes";

/// The start of every writing script: KEYS[1..4] are the counts (`USAGE`, `EXPIRY`,
/// `COUNTS`, `BYTES`), ARGV[1..4] the limits (tasks, bytes, tasks and bytes per caller).
/// The checks are `Usage::refuse`'s, in its order.
const COUNTING: &str = r"
local USAGE, EXPIRY, COUNTS, BYTES = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local MAX_TASKS, MAX_BYTES = tonumber(ARGV[1]), tonumber(ARGV[2])
local MAX_CALLER_TASKS, MAX_CALLER_BYTES = tonumber(ARGV[3]), tonumber(ARGV[4])
local function used(hash, field)
  return tonumber(redis.call('HGET', hash, field) or '0')
end
local function add(hash, field, by)
  if by ~= 0 and redis.call('HINCRBY', hash, field, by) <= 0 then
    redis.call('HDEL', hash, field)
  end
end
-- A task's record bytes, answer bytes and owner, or nil.
local function entry(id)
  local text = redis.call('HGET', USAGE, id)
  if not text then return nil end
  local bytes, answered, owner = string.match(text, '^(%d+) (%d+) (.+)$')
  return tonumber(bytes), tonumber(answered), owner
end
-- Why `tasks` more tasks taking `bytes` more would not fit for `owner`, or nil.
local function refused(owner, tasks, bytes)
  local checks = {
    {'caller-tasks', used(COUNTS, owner), tasks, MAX_CALLER_TASKS},
    {'caller-bytes', used(BYTES, owner), bytes, MAX_CALLER_BYTES},
    {'tasks', used(COUNTS, '*'), tasks, MAX_TASKS},
    {'bytes', used(BYTES, '*'), bytes, MAX_BYTES},
  }
  for _, check in ipairs(checks) do
    if check[3] > 0 and check[2] + check[3] > check[4] then
      return {'full', check[1], tostring(check[2]), tostring(bytes)}
    end
  end
  return nil
end
-- Forgets the counts of tasks past their expiry (Redis has expired their keys).
local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', '(' .. now, 'LIMIT', 0, 1000)
  for _, id in ipairs(gone) do
    local bytes, answered, owner = entry(id)
    if bytes then
      add(COUNTS, owner, -1)
      add(COUNTS, '*', -1)
      add(BYTES, owner, -(bytes + answered))
      add(BYTES, '*', -(bytes + answered))
      redis.call('HDEL', USAGE, id)
    end
    redis.call('ZREM', EXPIRY, id)
  end
end
-- Counts the task's record as `bytes` from now on, until `expires`; when `checked`, refused
-- if that growth would pass a bound.
local function recount(id, bytes, expires, checked)
  local before, answered, owner = entry(id)
  if not before then return nil end
  local more = bytes - before
  if checked and more > 0 then
    local refusal = refused(owner, 0, more)
    if refusal then return refusal end
  end
  redis.call('HSET', USAGE, id, bytes .. ' ' .. answered .. ' ' .. owner)
  redis.call('ZADD', EXPIRY, expires, id)
  add(BYTES, owner, more)
  add(BYTES, '*', more)
  return nil
end
";

/// Keeps a new task unless it would pass a bound. KEYS[5] the task, KEYS[6] the index,
/// KEYS[7] the owner key; ARGV[5] the record, [6] how long to keep it (ms), [7] the id,
/// [8] created (ms), [9] the tag of the caller it counts for (`-`: none), [10] its bytes, [11] when it expires
/// (ms), [12] now (ms), [13] the owner key this process hashed with.
const CREATE: &str = r"
local key = redis.call('GET', KEYS[7])
if not key then
  redis.call('SET', KEYS[7], ARGV[13])
elseif key ~= ARGV[13] then
  return {'rekey', key}
end
sweep(ARGV[12])
local owner, bytes = ARGV[9], tonumber(ARGV[10])
local refusal = refused(owner, 1, bytes)
if refusal then return refusal end
if not redis.call('SET', KEYS[5], ARGV[5], 'NX', 'PX', ARGV[6]) then return {'exists'} end
redis.call('ZADD', KEYS[6], ARGV[8], ARGV[7])
redis.call('HSET', USAGE, ARGV[7], ARGV[10] .. ' 0 ' .. owner)
redis.call('ZADD', EXPIRY, ARGV[11], ARGV[7])
add(COUNTS, owner, 1)
add(COUNTS, '*', 1)
add(BYTES, owner, bytes)
add(BYTES, '*', bytes)
return {'ok'}
";

/// Writes the task only while the stored one is still running. KEYS[5] the task; ARGV[5]
/// the record, [6] how long to keep it (ms), [7] the id, [8] its bytes, [9] when it expires
/// (ms), [10] `1` when the write is held to the bounds.
const UPDATE: &str = r"
local current = redis.call('GET', KEYS[5])
if not current then return {'ended'} end
local status = cjson.decode(current)['status']
if status ~= 'working' and status ~= 'input_required' then return {'ended'} end
local refusal = recount(ARGV[7], tonumber(ARGV[8]), ARGV[9], ARGV[10] == '1')
if refusal then return refusal end
redis.call('SET', KEYS[5], ARGV[5], 'PX', ARGV[6])
return {'ok'}
";

/// Writes `failed` only while the stored task runs on the lease the reader saw. As
/// `UPDATE`, with ARGV[10] the lease seen.
const FAIL_LAPSED: &str = r"
local current = redis.call('GET', KEYS[5])
if not current then return {'ended'} end
local stored = cjson.decode(current)
if stored['status'] ~= 'working' and stored['status'] ~= 'input_required' then return {'ended'} end
if stored['lease_ms'] ~= tonumber(ARGV[10]) then return {'ended'} end
recount(ARGV[7], tonumber(ARGV[8]), ARGV[9], false)
redis.call('SET', KEYS[5], ARGV[5], 'PX', ARGV[6])
return {'ok'}
";

/// Keeps the first answer per key, for as long as the task is kept, unless the new answers
/// would pass a bound. KEYS[5] the task, KEYS[6] its answers; ARGV[5] the id, then key and
/// answer pairs.
const ANSWER: &str = r"
local ttl = redis.call('PTTL', KEYS[5])
if ttl < 0 then return {'ended'} end
local added = 0
for i = 6, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[6], ARGV[i]) == 0 then
    added = added + #ARGV[i] + #ARGV[i + 1]
  end
end
if added == 0 then return {'ok'} end
local bytes, answered, owner = entry(ARGV[5])
if bytes then
  local refusal = refused(owner, 0, added)
  if refusal then return refusal end
  redis.call('HSET', USAGE, ARGV[5], bytes .. ' ' .. (answered + added) .. ' ' .. owner)
  add(BYTES, owner, added)
  add(BYTES, '*', added)
end
for i = 6, #ARGV, 2 do redis.call('HSETNX', KEYS[6], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[6], ttl + 60000)
return {'ok'}
";

/// A script's answer.
enum Reply {
    Written,
    /// The task had ended (or is gone): nothing was written.
    Ended,
    Exists,
    /// The store's owner key is another than this process's (Redis lost it and another
    /// process made it anew).
    Rekey(String),
}

pub struct Shared {
    client: redis::Client,
    connection: ConnectionManager,
    create: redis::Script,
    update: redis::Script,
    fail_lapsed: redis::Script,
    answer: redis::Script,
    key: RwLock<OwnerKey>,
    limits: Limits,
    url: String,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Shared")
            .field("url", &redacted(&self.url))
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn task_key(id: &str) -> String {
    format!("mcp-serve:task:{id}")
}

fn answers_key(id: &str) -> String {
    format!("mcp-serve:answers:{id}")
}

impl Shared {
    pub async fn open(url: &str, limits: Limits) -> Result<Self, TaskStoreError> {
        let failed = |doing| {
            move |source| TaskStoreError::Redis {
                doing,
                url: redacted(url),
                source: Arc::new(source),
            }
        };
        let client = redis::Client::open(url).map_err(failed("cannot open"))?;
        let mut connection = client
            .get_connection_manager()
            .await
            .map_err(failed("cannot reach"))?;
        // The first process to open the store makes the key; every other reads it.
        let made = OwnerKey::generate()?;
        let (stored,): (Option<String>,) = redis::pipe()
            .cmd("SET")
            .arg(OWNER_KEY)
            .arg(made.as_stored())
            .arg("NX")
            .ignore()
            .cmd("GET")
            .arg(OWNER_KEY)
            .query_async(&mut connection)
            .await
            .map_err(failed("cannot reach"))?;
        let script = |body: &str| redis::Script::new(&format!("{COUNTING}{body}"));
        Ok(Self {
            client,
            connection,
            create: script(CREATE),
            update: script(UPDATE),
            fail_lapsed: script(FAIL_LAPSED),
            answer: script(ANSWER),
            key: RwLock::new(stored.map_or(made, OwnerKey::from_stored)),
            limits,
            url: url.to_owned(),
        })
    }

    fn failed(&self, error: redis::RedisError) -> TaskStoreError {
        TaskStoreError::Redis {
            doing: "talking to",
            url: redacted(&self.url),
            source: Arc::new(error),
        }
    }

    /// The key owners are hashed with, as this process last read it.
    pub fn key(&self) -> OwnerKey {
        match self.key.read() {
            Ok(key) => key.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_key(&self, stored: String) {
        let key = OwnerKey::from_stored(stored);
        match self.key.write() {
            Ok(mut kept) => *kept = key,
            Err(poisoned) => *poisoned.into_inner() = key,
        }
    }

    /// Reads the owner key again; whether it had changed.
    pub async fn reread_key(&self) -> Result<bool, TaskStoreError> {
        let mut connection = self.connection.clone();
        let stored: Option<String> = connection
            .get(OWNER_KEY)
            .await
            .map_err(|error| self.failed(error))?;
        match stored {
            Some(stored) if stored != self.key().as_stored() => {
                tracing::info!("the task store's owner key was made anew; reading it");
                self.set_key(stored);
                Ok(true)
            }
            // Gone: the next task this process starts keeps this process's key again.
            _ => Ok(false),
        }
    }

    /// How long Redis keeps the key: until the task may be forgotten (at least a second).
    fn keep_ms(record: &Record) -> u64 {
        record.expires_ms().saturating_sub(now_ms()).max(1_000)
    }

    /// A script with the counts' keys and the limits, as every writing script starts.
    fn counting<'a>(&self, script: &'a redis::Script) -> redis::ScriptInvocation<'a> {
        let mut invocation = script.key(USAGE);
        invocation
            .key(EXPIRY)
            .key(COUNTS)
            .key(BYTES)
            .arg(self.limits.tasks)
            .arg(self.limits.bytes)
            .arg(self.limits.tasks_per_caller)
            .arg(self.limits.bytes_per_caller);
        invocation
    }

    async fn run(&self, invocation: &redis::ScriptInvocation<'_>) -> Result<Reply, TaskStoreError> {
        let mut connection = self.connection.clone();
        let reply: Vec<String> = invocation
            .invoke_async(&mut connection)
            .await
            .map_err(|error| self.failed(error))?;
        let word = |index: usize| reply.get(index).map_or("", String::as_str);
        let number = |index: usize| word(index).parse::<u64>().unwrap_or(0);
        match word(0) {
            "ok" => Ok(Reply::Written),
            "ended" => Ok(Reply::Ended),
            "exists" => Ok(Reply::Exists),
            "rekey" => Ok(Reply::Rekey(word(1).to_owned())),
            "full" => {
                let bound = Bound::from_name(word(1)).ok_or_else(|| {
                    TaskStoreError::Corrupt(format!("a script's answer {reply:?}"))
                })?;
                Err(TaskStoreError::Full(Full {
                    bound,
                    limit: bound.limit(&self.limits),
                    used: number(2),
                    needed: number(3),
                }))
            }
            _ => Err(TaskStoreError::Corrupt(format!(
                "a script's answer {reply:?}"
            ))),
        }
    }

    /// Keeps a new task owned by `owner` (the record is given its tag).
    /// Counted against `bucket`'s per-caller bounds.
    pub async fn create(
        &self,
        record: &mut Record,
        owner: Option<&str>,
        bucket: Option<&str>,
    ) -> Result<(), TaskStoreError> {
        // A second try when the store's key turned out to be another process's.
        for _ in 0..2 {
            let key = self.key();
            record.owner = owner.map(|owner| key.tag(owner));
            let text = serde_json::to_string(&*record)?;
            let bytes = taken(&text, record);
            let mut invocation = self.counting(&self.create);
            invocation
                .key(task_key(&record.id))
                .key(INDEX)
                .key(OWNER_KEY)
                .arg(text)
                .arg(Self::keep_ms(record))
                .arg(&record.id)
                .arg(record.created_ms)
                .arg(bucket.map_or_else(|| "-".to_owned(), |bucket| key.tag(bucket)))
                .arg(bytes)
                .arg(record.expires_ms())
                .arg(now_ms())
                .arg(key.as_stored());
            match self.run(&invocation).await? {
                Reply::Written => return Ok(()),
                Reply::Exists | Reply::Ended => {
                    return Err(TaskStoreError::Exists(record.id.clone()));
                }
                Reply::Rekey(stored) => {
                    tracing::info!("the task store's owner key was made anew; reading it");
                    self.set_key(stored);
                }
            }
        }
        Err(TaskStoreError::Rekeyed)
    }

    pub async fn get(&self, id: &str) -> Result<Option<Record>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let text: Option<String> = connection
            .get(task_key(id))
            .await
            .map_err(|error| self.failed(error))?;
        text.map(|text| decode(&text)).transpose()
    }

    pub async fn update(&self, record: &Record) -> Result<bool, TaskStoreError> {
        let checked = if checked(record) { "1" } else { "0" };
        self.rewrite(&self.update, record, checked.to_owned()).await
    }

    pub async fn fail_lapsed(
        &self,
        record: &Record,
        seen_lease_ms: u64,
    ) -> Result<bool, TaskStoreError> {
        self.rewrite(&self.fail_lapsed, record, seen_lease_ms.to_string())
            .await
    }

    /// Runs `script` (`UPDATE` or `FAIL_LAPSED`) to write `record` over the kept one, with
    /// the script's own last argument; whether it was written.
    async fn rewrite(
        &self,
        script: &redis::Script,
        record: &Record,
        last: String,
    ) -> Result<bool, TaskStoreError> {
        let text = serde_json::to_string(record)?;
        let bytes = taken(&text, record);
        let mut invocation = self.counting(script);
        invocation
            .key(task_key(&record.id))
            .arg(text)
            .arg(Self::keep_ms(record))
            .arg(&record.id)
            .arg(bytes)
            .arg(record.expires_ms())
            .arg(last);
        Ok(matches!(self.run(&invocation).await?, Reply::Written))
    }

    pub async fn answer(
        &self,
        id: &str,
        answers: &Map<String, Value>,
    ) -> Result<(), TaskStoreError> {
        if answers.is_empty() {
            return Ok(());
        }
        let mut invocation = self.counting(&self.answer);
        invocation.key(task_key(id)).key(answers_key(id)).arg(id);
        for (key, answer) in answers {
            invocation.arg(key).arg(answer.to_string());
        }
        self.run(&invocation).await.map(|_| ())
    }

    pub async fn answers(&self, id: &str) -> Result<Map<String, Value>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let stored: Vec<(String, String)> = connection
            .hgetall(answers_key(id))
            .await
            .map_err(|error| self.failed(error))?;
        stored
            .into_iter()
            .map(|(key, text)| {
                serde_json::from_str(&text)
                    .map(|answer| (key, answer))
                    .map_err(|error| TaskStoreError::Corrupt(error.to_string()))
            })
            .collect()
    }

    pub async fn list(&self) -> Result<Vec<Record>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let ids: Vec<String> = connection
            .zrange(INDEX, 0, -1)
            .await
            .map_err(|error| self.failed(error))?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = ids.iter().map(|id| task_key(id)).collect();
        let texts: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&keys)
            .query_async(&mut connection)
            .await
            .map_err(|error| self.failed(error))?;
        let mut records = Vec::new();
        let mut gone = Vec::new();
        for (id, text) in ids.into_iter().zip(texts) {
            match text {
                Some(text) => records.push(decode(&text)?),
                None => gone.push(id),
            }
        }
        if !gone.is_empty() {
            let _: () = connection
                .zrem(INDEX, gone)
                .await
                .map_err(|error| self.failed(error))?;
        }
        Ok(records)
    }

    /// Redis expires the tasks; this forgets the index entries of expired ones.
    pub async fn purge(&self, _now_ms: u64) -> Result<usize, TaskStoreError> {
        let before: usize = {
            let mut connection = self.connection.clone();
            connection
                .zcard(INDEX)
                .await
                .map_err(|error| self.failed(error))?
        };
        let kept = self.list().await?.len();
        Ok(before.saturating_sub(kept))
    }

    pub async fn publish(&self, signal: &Signal) -> Result<(), TaskStoreError> {
        let mut connection = self.connection.clone();
        let _: i64 = connection
            .publish(CHANNEL, signal.encode())
            .await
            .map_err(|error| self.failed(error))?;
        Ok(())
    }

    /// Listens on the channel, reconnecting after a second whenever Redis goes away.
    pub async fn subscribe(&self) -> Result<tokio::sync::mpsc::Receiver<Signal>, TaskStoreError> {
        let (sender, receiver) = tokio::sync::mpsc::channel(256);
        // The first subscription is made here, so a cancel published once this returns is heard.
        let first = self.pubsub().await?;
        let client = self.client.clone();
        let url = redacted(&self.url);
        tokio::spawn(async move {
            let mut pubsub = Some(first);
            loop {
                if let Some(subscribed) = pubsub.take() {
                    let mut messages = subscribed.into_on_message();
                    while let Some(message) = messages.next().await {
                        let Ok(text) = message.get_payload::<String>() else {
                            continue;
                        };
                        if let Some(signal) = Signal::decode(&text)
                            && sender.send(signal).await.is_err()
                        {
                            return;
                        }
                    }
                    tracing::warn!(redis = %url, "lost the task channel; reconnecting");
                }
                if sender.is_closed() {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                if let Ok(mut again) = client.get_async_pubsub().await
                    && again.subscribe(CHANNEL).await.is_ok()
                {
                    pubsub = Some(again);
                }
            }
        });
        Ok(receiver)
    }

    async fn pubsub(&self) -> Result<redis::aio::PubSub, TaskStoreError> {
        let mut pubsub = self
            .client
            .get_async_pubsub()
            .await
            .map_err(|error| self.failed(error))?;
        pubsub
            .subscribe(CHANNEL)
            .await
            .map_err(|error| self.failed(error))?;
        Ok(pubsub)
    }
}

fn decode(text: &str) -> Result<Record, TaskStoreError> {
    serde_json::from_str(text).map_err(|error| TaskStoreError::Corrupt(error.to_string()))
}
