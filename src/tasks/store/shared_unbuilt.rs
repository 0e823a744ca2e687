//! The Redis task store, left out of this build (`cargo build --no-default-features`): the
//! same methods as `shared.rs`, on a store that can never be opened, so `store.rs` reads the
//! same in both builds. `--task-store redis://…` fails at start, saying why.

#![allow(
    clippy::unused_async,
    reason = "the signatures are those of the Redis store"
)]

use std::convert::Infallible;

use serde_json::{Map, Value};

use super::{Signal, TaskStoreError};
use crate::tasks::owner::OwnerKey;
use crate::tasks::{Limits, Record};

/// Never made: [`Shared::open`] always fails.
#[derive(Debug)]
pub struct Shared {
    never: Infallible,
}

impl Shared {
    pub async fn open(_url: &str, _limits: Limits) -> Result<Self, TaskStoreError> {
        Err(TaskStoreError::NotBuilt)
    }

    pub fn key(&self) -> OwnerKey {
        match self.never {}
    }

    pub async fn reread_key(&self) -> Result<bool, TaskStoreError> {
        match self.never {}
    }

    pub async fn create(
        &self,
        _record: &mut Record,
        _owner: Option<&str>,
        _bucket: Option<&str>,
    ) -> Result<(), TaskStoreError> {
        match self.never {}
    }

    pub async fn get(&self, _id: &str) -> Result<Option<Record>, TaskStoreError> {
        match self.never {}
    }

    pub async fn update(&self, _record: &Record) -> Result<bool, TaskStoreError> {
        match self.never {}
    }

    pub async fn fail_lapsed(
        &self,
        _record: &Record,
        _seen_lease_ms: u64,
    ) -> Result<bool, TaskStoreError> {
        match self.never {}
    }

    pub async fn answer(
        &self,
        _id: &str,
        _answers: &Map<String, Value>,
    ) -> Result<(), TaskStoreError> {
        match self.never {}
    }

    pub async fn answers(&self, _id: &str) -> Result<Map<String, Value>, TaskStoreError> {
        match self.never {}
    }

    pub async fn list(&self) -> Result<Vec<Record>, TaskStoreError> {
        match self.never {}
    }

    pub async fn purge(&self, _now_ms: u64) -> Result<usize, TaskStoreError> {
        match self.never {}
    }

    pub async fn publish(&self, _signal: &Signal) -> Result<(), TaskStoreError> {
        match self.never {}
    }

    pub async fn subscribe(&self) -> Result<tokio::sync::mpsc::Receiver<Signal>, TaskStoreError> {
        match self.never {}
    }
}
