//! The Redis task store, left out of this build (`cargo build --no-default-features`): the
//! same methods as `shared.rs`, on a store that can never be opened, so `store.rs` reads the
//! same in both builds. `--task-store redis://…` fails at start, saying why.

#![allow(
    clippy::unused_async,
    reason = "the signatures are those of the Redis store"
)]

use std::convert::Infallible;

use serde_json::{Map, Value};

use super::{Signal, StoreError};
use crate::tasks::owner::OwnerKey;
use crate::tasks::{Limits, Record};

/// Never made: [`Shared::open`] always fails.
#[derive(Debug)]
pub struct Shared {
    never: Infallible,
}

impl Shared {
    pub async fn open(_url: &str, _limits: Limits) -> Result<Self, StoreError> {
        Err(StoreError::NotBuilt)
    }

    pub fn key(&self) -> OwnerKey {
        match self.never {}
    }

    pub async fn reread_key(&self) -> Result<bool, StoreError> {
        match self.never {}
    }

    pub async fn create(
        &self,
        _record: &mut Record,
        _owner: Option<&str>,
        _bucket: Option<&str>,
    ) -> Result<(), StoreError> {
        match self.never {}
    }

    pub async fn get(&self, _id: &str) -> Result<Option<Record>, StoreError> {
        match self.never {}
    }

    pub async fn update(&self, _record: &Record) -> Result<bool, StoreError> {
        match self.never {}
    }

    pub async fn fail_lapsed(
        &self,
        _record: &Record,
        _seen_lease_ms: u64,
    ) -> Result<bool, StoreError> {
        match self.never {}
    }

    pub async fn answer(&self, _id: &str, _answers: &Map<String, Value>) -> Result<(), StoreError> {
        match self.never {}
    }

    pub async fn answers(&self, _id: &str) -> Result<Map<String, Value>, StoreError> {
        match self.never {}
    }

    pub async fn list(&self) -> Result<Vec<Record>, StoreError> {
        match self.never {}
    }

    pub async fn purge(&self, _now_ms: u64) -> Result<usize, StoreError> {
        match self.never {}
    }

    pub async fn publish(&self, _signal: &Signal) -> Result<(), StoreError> {
        match self.never {}
    }

    pub async fn subscribe(&self) -> Result<tokio::sync::mpsc::Receiver<Signal>, StoreError> {
        match self.never {}
    }
}
