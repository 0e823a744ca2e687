//! The shared store: Redis, for replicas. A task is one JSON value under
//! `mcp-serve:task:ID` (expiring with the task), its answers a hash under
//! `mcp-serve:answers:ID`, and a sorted set `mcp-serve:tasks` lists them for operators.
//! Status changes are compare-and-set in a Lua script; cancels and answers are published on
//! the `mcp-serve:tasks` channel so the replica running the task hears at once.

use futures_util::StreamExt;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use serde_json::{Map, Value};

use super::{Signal, StoreError};
use crate::tasks::Record;

const CHANNEL: &str = "mcp-serve:tasks";
const INDEX: &str = "mcp-serve:tasks";

/// Writes the task only while the stored one is still running.
const UPDATE: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local status = cjson.decode(current)['status']
if status ~= 'working' and status ~= 'input_required' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// Writes `failed` only while the stored task runs on the lease the reader saw.
const FAIL_LAPSED: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local stored = cjson.decode(current)
if stored['status'] ~= 'working' and stored['status'] ~= 'input_required' then return 0 end
if stored['lease_ms'] ~= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// Keeps the first answer per key, for as long as the task is kept.
const ANSWER: &str = r"
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ttl + 60000)
return 1
";

#[derive(Clone)]
pub struct Shared {
    client: redis::Client,
    connection: ConnectionManager,
    update: redis::Script,
    fail_lapsed: redis::Script,
    answer: redis::Script,
    url: String,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Shared")
            .field("url", &redacted(&self.url))
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
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let failed = |error: redis::RedisError| {
            StoreError::Io(format!("cannot reach Redis at {}: {error}", redacted(url)))
        };
        let client = redis::Client::open(url).map_err(|error| {
            StoreError::Io(format!("invalid --task-store {}: {error}", redacted(url)))
        })?;
        let connection = client.get_connection_manager().await.map_err(failed)?;
        Ok(Self {
            client,
            connection,
            update: redis::Script::new(UPDATE),
            fail_lapsed: redis::Script::new(FAIL_LAPSED),
            answer: redis::Script::new(ANSWER),
            url: url.to_owned(),
        })
    }

    fn failed(&self, error: &redis::RedisError) -> StoreError {
        StoreError::Io(format!("Redis at {}: {error}", redacted(&self.url)))
    }

    /// How long Redis keeps the key: until the task may be forgotten (at least a second).
    fn keep_ms(record: &Record) -> u64 {
        record
            .expires_ms()
            .saturating_sub(crate::tasks::now_ms())
            .max(1_000)
    }

    pub async fn create(&self, record: &Record) -> Result<(), StoreError> {
        let text = serde_json::to_string(record).map_err(|e| StoreError::Io(e.to_string()))?;
        let mut connection = self.connection.clone();
        let created: bool = redis::cmd("SET")
            .arg(task_key(&record.id))
            .arg(text)
            .arg("NX")
            .arg("PX")
            .arg(Self::keep_ms(record))
            .query_async::<Option<String>>(&mut connection)
            .await
            .map_err(|error| self.failed(&error))?
            .is_some();
        if !created {
            return Err(StoreError::Io(format!("task {} exists already", record.id)));
        }
        let _: () = connection
            .zadd(INDEX, &record.id, record.created_ms)
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    pub async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let mut connection = self.connection.clone();
        let text: Option<String> = connection
            .get(task_key(id))
            .await
            .map_err(|error| self.failed(&error))?;
        text.map(|text| decode(&text)).transpose()
    }

    pub async fn update(&self, record: &Record) -> Result<bool, StoreError> {
        let text = serde_json::to_string(record).map_err(|e| StoreError::Io(e.to_string()))?;
        let mut connection = self.connection.clone();
        let written: i64 = self
            .update
            .key(task_key(&record.id))
            .arg(text)
            .arg(Self::keep_ms(record))
            .invoke_async(&mut connection)
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(written == 1)
    }

    pub async fn fail_lapsed(
        &self,
        record: &Record,
        seen_lease_ms: u64,
    ) -> Result<bool, StoreError> {
        let text = serde_json::to_string(record).map_err(|e| StoreError::Io(e.to_string()))?;
        let mut connection = self.connection.clone();
        let written: i64 = self
            .fail_lapsed
            .key(task_key(&record.id))
            .arg(text)
            .arg(Self::keep_ms(record))
            .arg(seen_lease_ms.to_string())
            .invoke_async(&mut connection)
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(written == 1)
    }

    pub async fn answer(&self, id: &str, answers: &Map<String, Value>) -> Result<(), StoreError> {
        if answers.is_empty() {
            return Ok(());
        }
        let mut invocation = self.answer.key(task_key(id));
        invocation.key(answers_key(id));
        for (key, answer) in answers {
            invocation.arg(key).arg(answer.to_string());
        }
        let mut connection = self.connection.clone();
        let _: i64 = invocation
            .invoke_async(&mut connection)
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    pub async fn answers(&self, id: &str) -> Result<Map<String, Value>, StoreError> {
        let mut connection = self.connection.clone();
        let stored: Vec<(String, String)> = connection
            .hgetall(answers_key(id))
            .await
            .map_err(|error| self.failed(&error))?;
        stored
            .into_iter()
            .map(|(key, text)| {
                serde_json::from_str(&text)
                    .map(|answer| (key, answer))
                    .map_err(|error| StoreError::Corrupt(error.to_string()))
            })
            .collect()
    }

    pub async fn list(&self) -> Result<Vec<Record>, StoreError> {
        let mut connection = self.connection.clone();
        let ids: Vec<String> = connection
            .zrange(INDEX, 0, -1)
            .await
            .map_err(|error| self.failed(&error))?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = ids.iter().map(|id| task_key(id)).collect();
        let texts: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&keys)
            .query_async(&mut connection)
            .await
            .map_err(|error| self.failed(&error))?;
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
                .map_err(|error| self.failed(&error))?;
        }
        Ok(records)
    }

    /// Redis expires the tasks; this forgets the index entries of expired ones.
    pub async fn purge(&self, _now_ms: u64) -> Result<usize, StoreError> {
        let before: usize = {
            let mut connection = self.connection.clone();
            connection
                .zcard(INDEX)
                .await
                .map_err(|error| self.failed(&error))?
        };
        let kept = self.list().await?.len();
        Ok(before.saturating_sub(kept))
    }

    pub async fn publish(&self, signal: &Signal) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        let _: i64 = connection
            .publish(CHANNEL, signal.encode())
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Listens on the channel, reconnecting after a second whenever Redis goes away.
    pub async fn subscribe(&self) -> Result<tokio::sync::mpsc::Receiver<Signal>, StoreError> {
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

    async fn pubsub(&self) -> Result<redis::aio::PubSub, StoreError> {
        let mut pubsub = self
            .client
            .get_async_pubsub()
            .await
            .map_err(|error| self.failed(&error))?;
        pubsub
            .subscribe(CHANNEL)
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(pubsub)
    }
}

fn decode(text: &str) -> Result<Record, StoreError> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt(error.to_string()))
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
    #[test]
    fn passwords_never_show() {
        assert_eq!(
            super::redacted("redis://127.0.0.1:6379/2"),
            "redis://127.0.0.1:6379/2"
        );
        assert_eq!(
            super::redacted("rediss://app:s3cr@t@redis.example:6380/0"),
            "rediss://app:***@redis.example:6380/0"
        );
        assert_eq!(super::redacted("redis://:hunter2@h/0"), "redis://:***@h/0");
    }
}
