//! `resources/subscribe` for 2025-era clients that can hear back (stdio, or HTTP with
//! `--sessions`): each subscription remembers its resource's file as last seen, and the
//! `--watch` loop tells the subscriber when that file changes.

use std::sync::Mutex;
use std::time::SystemTime;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{ErrorData, Peer, RoleServer};

use crate::registry::Registry;
use crate::resource::Source;
use crate::results::store::Caller;

/// What a file looked like: its modification time and length.
type Fingerprint = Option<(SystemTime, u64)>;

#[derive(Debug)]
struct Subscription {
    /// Who subscribed: the stdio client or a session (the key), and how to reach it.
    caller: Caller,
    peer: Peer<RoleServer>,
    uri: String,
    seen: Fingerprint,
}

/// Every live subscription.
#[derive(Debug, Default)]
pub(super) struct Subscriptions {
    entries: Mutex<Vec<Subscription>>,
}

/// The file behind `uri`, when a declared resource reads one.
fn file_of<'a>(registry: &'a Registry, uri: &str) -> Option<&'a std::path::Path> {
    match &registry.resource(uri)?.source {
        Source::File(path) => Some(path),
        Source::Text(_) | Source::Blob(_) => None,
    }
}

fn fingerprint(path: Option<&std::path::Path>) -> Fingerprint {
    let metadata = std::fs::metadata(path?).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

impl Subscriptions {
    /// Subscribes `peer` to a resource the manifest declares or a template serves.
    pub(super) fn subscribe(
        &self,
        registry: &Registry,
        caller: Caller,
        peer: Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), ErrorData> {
        if caller == Caller::Anonymous {
            return Err(ErrorData::invalid_request(
                "a subscription needs a connection to notify: stdio, or HTTP with --sessions",
                None,
            ));
        }
        let known = registry.resource(uri).is_some()
            || registry
                .templates()
                .iter()
                .any(|template| template.matches(uri).is_some());
        if !known {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{uri}` to subscribe to"),
                Some(serde_json::json!({ "uri": uri })),
            ));
        }
        let seen = fingerprint(file_of(registry, uri));
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|entry| !(entry.uri == uri && entry.caller == caller));
            entries.push(Subscription {
                caller,
                peer,
                uri: uri.to_owned(),
                seen,
            });
        }
        Ok(())
    }

    pub(super) fn unsubscribe(&self, caller: &Caller, uri: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|entry| !(entry.uri == uri && &entry.caller == caller));
        }
    }

    /// Tells each subscriber whose file changed since it was last seen; forgets the
    /// subscribers that are gone.
    pub(super) async fn notify_changes(&self, registry: &Registry) {
        let due: Vec<(Caller, Peer<RoleServer>, String)> = match self.entries.lock() {
            Ok(mut entries) => entries
                .iter_mut()
                .filter_map(|entry| {
                    let now = fingerprint(file_of(registry, &entry.uri));
                    (now != entry.seen).then(|| {
                        entry.seen = now;
                        (entry.caller.clone(), entry.peer.clone(), entry.uri.clone())
                    })
                })
                .collect(),
            Err(_) => return,
        };
        for (caller, peer, uri) in due {
            let sent = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                .await;
            if sent.is_err() {
                self.unsubscribe(&caller, &uri);
            }
        }
    }
}
