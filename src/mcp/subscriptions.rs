//! `resources/subscribe` for 2025 clients that can hear back (stdio, or HTTP with
//! `--sessions`) to a declared file resource: each subscription remembers the file as last
//! seen, and the `--watch` loop tells the subscriber when it changes.

use std::sync::Mutex;
use std::time::SystemTime;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{ErrorData, Peer, RoleServer};

use crate::caller::Identity;
use crate::registry::Registry;
use crate::resource::Source;

/// The most subscriptions the server holds (every caller, every resource).
const MAX_SUBSCRIPTIONS: usize = 10_000;

/// How long one notification may take to leave.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// What a file looked like: its modification time and length.
type Fingerprint = Option<(SystemTime, u64)>;

#[derive(Debug)]
struct Subscription {
    /// Who subscribed: the stdio client or a session (the key), and how to reach it.
    caller: Identity,
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
        Source::Text(_) | Source::Blob(_) | Source::Page { .. } => None,
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
        caller: Identity,
        peer: Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), ErrorData> {
        if caller == Identity::Anonymous {
            return Err(ErrorData::invalid_request(
                "a subscription needs a connection to notify: stdio, or HTTP with --sessions",
                None,
            ));
        }
        if registry.resource(uri).is_none() {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{uri}` to subscribe to"),
                Some(serde_json::json!({ "uri": uri })),
            ));
        }
        if file_of(registry, uri).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "`{uri}` never changes while the server runs (only file resources do), so there is nothing to subscribe to"
                ),
                None,
            ));
        }
        let seen = fingerprint(file_of(registry, uri));
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|entry| {
                !(entry.peer.is_transport_closed() || entry.uri == uri && entry.caller == caller)
            });
            // Declared resources bound each caller's list; this bounds the callers.
            if entries.len() >= MAX_SUBSCRIPTIONS {
                return Err(ErrorData::invalid_request(
                    format!(
                        "the server holds {MAX_SUBSCRIPTIONS} subscriptions already; try again later"
                    ),
                    None,
                ));
            }
            entries.push(Subscription {
                caller,
                peer,
                uri: uri.to_owned(),
                seen,
            });
        }
        Ok(())
    }

    pub(super) fn unsubscribe(&self, caller: &Identity, uri: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|entry| !(entry.uri == uri && &entry.caller == caller));
        }
    }

    /// Tells each subscriber whose file changed since it was last seen; forgets the
    /// subscribers that are gone.
    pub(super) async fn notify_changes(&self, registry: &Registry) {
        let due: Vec<(Identity, Peer<RoleServer>, String)> = match self.entries.lock() {
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
            // A client that stops reading must not hold up the watch loop (and reloads).
            let sent = tokio::time::timeout(
                SEND_TIMEOUT,
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone())),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                self.unsubscribe(&caller, &uri);
            }
        }
    }
}
