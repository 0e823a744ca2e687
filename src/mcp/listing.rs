//! The `tools/list` answer: per revision, cut to a caller's scopes when tools have them.
//!
//! The answer everyone gets is the same bytes for as long as the registry stands, so it is
//! serialized once per snapshot and revision ([`Handler::listing_bytes`]): the stdio transport
//! writes those bytes itself instead of handing the request to rmcp, which would clone the
//! list and serialize it again for every request (a 1,000-tool list is about 300 KB).

use std::sync::{Arc, OnceLock};

use rmcp::model::{CacheScope, ListToolsResult, ServerResult};

use super::convert;
use super::state::Handler;
use crate::auth::Subject;
use crate::revision::Revision;

/// How long 2026 clients may cache `tools/list` when the manifest is not watched.
const LIST_TTL_MS: u64 = 60_000;

/// The serialized full answer of each revision, made on first use.
#[derive(Debug, Default)]
pub(super) struct Serialized([OnceLock<Arc<[u8]>>; 4]);

impl Handler {
    /// The answer for `revision`: every tool, or only those `subject`'s token may call; in
    /// discovery mode, discovery's tools and this connection's additions.
    pub(super) fn listing(&self, revision: Revision, subject: Option<&Subject>) -> ListToolsResult {
        let snapshot = self.snapshot();
        let listing = &snapshot.listings[revision.index()];
        let mut result = if snapshot.discovery {
            ListToolsResult::with_all_items(self.discovery_listing(&snapshot, revision, |tool| {
                subject.is_none_or(|subject| subject.0.grants(&tool.scopes))
            }))
        } else {
            match subject {
                None => ListToolsResult::with_all_items(listing.clone()),
                Some(subject) => ListToolsResult::with_all_items(
                    listing
                        .iter()
                        .filter(|listed| {
                            snapshot
                                .registry
                                .tool(&listed.name)
                                .is_some_and(|tool| subject.0.grants(&tool.scopes))
                        })
                        .cloned()
                        .collect(),
                ),
            }
        };
        if revision == Revision::V2026_07 {
            // A watched manifest can change at any time: then the list is not cacheable. Nor
            // is a list cut to the caller's scopes: after a step-up the same caller may call
            // more, and a client that kept the list would not see it (the official
            // TypeScript client keeps it for the TTL, whatever its token).
            let ttl = if self.state.watching || subject.is_some() {
                0
            } else {
                LIST_TTL_MS
            };
            let scope = if subject.is_some() {
                CacheScope::Private
            } else {
                CacheScope::Public
            };
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
            result.meta = Some(convert::server_info_meta(&snapshot.server_info));
        }
        result
    }

    /// The full answer for `revision` as JSON (the `result` member of the response), serialized
    /// once per registry snapshot. `None` only if serializing failed, which rmcp's own path
    /// would then report.
    pub(super) fn listing_bytes(&self, revision: Revision) -> Option<Arc<[u8]>> {
        let snapshot = self.snapshot();
        // A connection's own list (discovery mode) is not the snapshot's.
        if snapshot.discovery {
            return None;
        }
        let cell = &snapshot.serialized.0[revision.index()];
        if let Some(bytes) = cell.get() {
            return Some(Arc::clone(bytes));
        }
        // As rmcp finishes a result before sending it: the cache hints a 2026 answer needs,
        // and none of 2026's `resultType` for an older client.
        let mut result = ServerResult::ListToolsResult(self.listing(revision, None));
        if revision == Revision::V2026_07 {
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        let bytes: Arc<[u8]> = serde_json::to_vec(&result).ok()?.into();
        Some(Arc::clone(cell.get_or_init(|| bytes)))
    }
}
