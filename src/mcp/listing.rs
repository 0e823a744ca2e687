//! The `tools/list` answer: per revision, cut to a caller's scopes when tools have them.
//!
//! Nothing of it is made before a client asks. The answer everyone gets is the same bytes
//! for as long as the registry stands, so it is serialized once per snapshot and revision
//! ([`Handler::listing_pieces`]), one tool at a time: a tool's definition is made whole
//! (its `[schemas]` attached), written and dropped, so a manifest of 19,000 tools never
//! holds them all as values. The bytes are kept in [`Pieces`], never joined, and a revision
//! that lists every tool as another already made shares its entries. Both transports send
//! those pieces themselves (stdio as a line, HTTP in place of the empty answer the handler
//! gives rmcp: [`Handler::listing_or_spliced`]), instead of rmcp, which would make each tool
//! a value again and serialize the answer whole for every request. A list cut to a caller's
//! scopes, and one asked for in an HTTP session, is made from each tool's entry in rmcp's
//! types, kept once made ([`Listed`]).

use std::sync::{Arc, OnceLock};

use rmcp::model::{CacheScope, ListToolsResult, ServerResult, Tool};

use super::convert;
use super::pieces::{Entries, Pieces, Spliced};
use super::state::{Handler, Snapshot, listed_in_every_revision};
use crate::auth::Subject;
use crate::registry::Registry;
use crate::revision::Revision;

/// From how many tools `tools/list` is written on every core: below, starting threads
/// costs more than it saves (a 1,000-tool list is written in milliseconds).
const PARALLEL_FROM: usize = 1_000;

/// How long 2026 clients may cache `tools/list` when the manifest is not watched.
const LIST_TTL_MS: u64 = 60_000;

/// The serialized full answer of each revision, made on first use (`None`: it is not
/// served from here), one at a time, so that each can share the entries of those made
/// before it, however many clients of other revisions ask at once.
#[derive(Debug, Default)]
pub(super) struct Serialized {
    made: [OnceLock<Option<Arc<Pieces>>>; 4],
    making: std::sync::Mutex<()>,
}

/// Each tool of a snapshot as every revision lists it, made when first asked for; in
/// discovery mode, discovery's own tools.
#[derive(Debug)]
pub(super) struct Listed {
    tools: Box<[OnceLock<Option<[Tool; 4]>>]>,
    own: [Vec<Tool>; 4],
}

impl Listed {
    /// For a registry of `count` tools.
    pub(super) fn new(count: usize) -> Self {
        Self {
            tools: (0..count).map(|_| OnceLock::new()).collect(),
            own: Default::default(),
        }
    }

    /// Discovery's own tools, per revision, beside the registry's `count` tools (a call to
    /// one by name still asks for its entry: `get_tool`).
    pub(super) fn discovery(own: [Vec<Tool>; 4], count: usize) -> Self {
        Self {
            own,
            ..Self::new(count)
        }
    }

    /// Discovery's own tools as `revision` lists them.
    pub(super) fn own(&self, revision: Revision) -> &[Tool] {
        &self.own[revision.index()]
    }

    /// The tool at `index` of `registry` as `revision` lists it. `None` for a definition
    /// rmcp cannot represent (a bug on our side, logged).
    pub(super) fn tool(
        &self,
        registry: &Registry,
        index: usize,
        revision: Revision,
    ) -> Option<Tool> {
        let cell = self.tools.get(index)?;
        let listed = cell.get_or_init(|| {
            let tool = registry.tools().nth(index)?;
            listed_in_every_revision(tool)
                .inspect_err(|error| tracing::error!(tool = %tool.name, "not listed: {error}"))
                .ok()
        });
        listed.as_ref().map(|every| every[revision.index()].clone())
    }
}

impl Handler {
    /// The answer for `revision`: every tool, or only those `subject`'s token may call; in
    /// discovery mode, discovery's tools and this connection's additions.
    /// `apps`: the client renders MCP Apps ([`super::apps::for_client`]).
    pub(super) fn listing(
        &self,
        revision: Revision,
        subject: Option<&Subject>,
        apps: bool,
    ) -> ListToolsResult {
        let snapshot = self.snapshot();
        let shown = |tool: &crate::tool::Tool| {
            tool.shown_to(apps) && subject.is_none_or(|subject| subject.0.grants(&tool.scopes))
        };
        let tools = if snapshot.discovery {
            self.discovery_listing(&snapshot, revision, apps, shown)
        } else {
            snapshot
                .registry
                .tools()
                .enumerate()
                .filter(|(_, tool)| shown(tool))
                .filter_map(|(index, tool)| {
                    let listed = snapshot.listed.tool(&snapshot.registry, index, revision)?;
                    super::apps::for_client(tool, listed, apps)
                })
                .collect()
        };
        self.finish_listing(ListToolsResult::with_all_items(tools), revision, subject)
    }

    /// [`Self::listing`], unless the transport puts a kept answer in place of an empty one
    /// (`spliced`, an HTTP request's): then the full answer is left there, and the same
    /// answer with no tool is returned for rmcp to frame. An answer not made yet is made
    /// on the blocking pool: for a big manifest it takes seconds, which would hold every
    /// other connection of this lane.
    pub(super) async fn listing_or_spliced(
        &self,
        revision: Revision,
        subject: Option<&Subject>,
        apps: bool,
        spliced: Option<&Spliced>,
    ) -> ListToolsResult {
        let spliced = spliced.filter(|spliced| subject.is_none() && spliced.takes(revision));
        let snapshot = self.snapshot();
        let made = spliced
            .and_then(|_| kept(&snapshot, revision))
            .map(OnceLock::get);
        let pieces = match made {
            None => None,
            Some(Some(made)) => made.clone(),
            Some(None) => {
                let handler = self.clone();
                tokio::task::spawn_blocking(move || handler.listing_pieces(revision))
                    .await
                    .ok()
                    .flatten()
            }
        };
        if let (Some(spliced), Some(pieces)) = (spliced, pieces) {
            let empty = pieces.empty().clone();
            spliced.leave(pieces);
            return empty;
        }
        self.listing(revision, subject, apps)
    }

    /// The cache hints and server information a 2026 answer carries.
    fn finish_listing(
        &self,
        mut result: ListToolsResult,
        revision: Revision,
        subject: Option<&Subject>,
    ) -> ListToolsResult {
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
            // Nor public when tools have MCP Apps: it depends on what the request declares.
            let scope = if subject.is_some() || self.snapshot().apps.tools {
                CacheScope::Private
            } else {
                CacheScope::Public
            };
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
            result.meta = Some(convert::server_info_meta(&self.snapshot().server_info));
        }
        result
    }

    /// The full answer for `revision` as JSON (the `result` member of the response), serialized
    /// once per registry snapshot, in pieces. `None` if serializing failed, which rmcp's own
    /// path would then report, or if the answer holds a secret, which that path redacts as
    /// it sends it.
    pub(super) fn listing_pieces(&self, revision: Revision) -> Option<Arc<Pieces>> {
        let snapshot = self.snapshot();
        kept(&snapshot, revision)?
            .get_or_init(|| {
                let _making = snapshot
                    .serialized
                    .making
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let pieces = self.serialized(&snapshot, revision)?;
                let held = super::outgoing::pieces_hold_secret(
                    pieces.iter(),
                    snapshot.registry.door_redactor(),
                );
                (!held).then(|| Arc::new(pieces))
            })
            .clone()
    }

    /// [`Self::listing_pieces`], made.
    fn serialized(&self, snapshot: &Snapshot, revision: Revision) -> Option<Pieces> {
        // The answer with no tool, finished as rmcp finishes a result before sending it
        // (the cache hints a 2026 answer needs, none of 2026's `resultType` for an older
        // client); then each tool written into its `tools`.
        let empty =
            self.finish_listing(ListToolsResult::with_all_items(Vec::new()), revision, None);
        let mut result = ServerResult::ListToolsResult(empty.clone());
        if revision == Revision::V2026_07 {
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
        }
        // `tools` is the last member rmcp writes.
        let envelope = serde_json::to_vec(&result).ok()?;
        let mut head = envelope.strip_suffix(b"[]}")?.to_vec();
        if !head.ends_with(b"\"tools\":") {
            return None;
        }
        head.push(b'[');
        let tools: Vec<&Arc<crate::tool::Tool>> = snapshot.registry.tools().collect();
        // The entries other revisions already made: an entry written alike is kept once.
        let made: Vec<&Entries> = Revision::ALL
            .into_iter()
            .filter(|other| *other != revision)
            .filter_map(|other| snapshot.serialized.made[other.index()].get()?.as_ref())
            .map(|made| made.tools())
            .collect();
        let entries = entries(&tools, revision, &made)?;
        Some(Pieces::new(
            head,
            entries,
            Arc::clone(&snapshot.registry),
            empty,
        ))
    }
}

/// Where `snapshot` keeps its answer for `revision`; `None` for a list not served from
/// pieces: a connection's own (discovery mode), or one whose tools have MCP Apps, which
/// depends on what the client renders.
fn kept(snapshot: &Snapshot, revision: Revision) -> Option<&OnceLock<Option<Arc<Pieces>>>> {
    (!snapshot.discovery && !snapshot.apps.tools)
        .then(|| &snapshot.serialized.made[revision.index()])
}

/// A tool's entry in an answer (`None`: not listed).
type Entry = Option<Arc<[u8]>>;

/// Each of `tools`' entries as `revision` lists it, sharing one of `made` written alike; a
/// big list in as many parts as there are cores, each written on its own thread, a small
/// one (most manifests) on this one. `None` if one could not be written.
fn entries(
    tools: &[&Arc<crate::tool::Tool>],
    revision: Revision,
    made: &[&Entries],
) -> Option<Entries> {
    let written: Vec<Option<Vec<Entry>>> = if tools.len() < PARALLEL_FROM {
        vec![written(tools, 0, revision, made)]
    } else {
        let parts = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let size = tools.len().div_ceil(parts).max(1);
        std::thread::scope(|scope| {
            let threads: Vec<_> = tools
                .chunks(size)
                .enumerate()
                .map(|(part, tools)| {
                    scope.spawn(move || written(tools, part * size, revision, made))
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().ok().flatten())
                .collect()
        })
    };
    let mut by_tool = Vec::with_capacity(tools.len());
    for part in written {
        by_tool.extend(part?);
    }
    Some(Entries::new(by_tool))
}

/// [`entries`] of `tools`, the first at `start` in the registry.
fn written(
    tools: &[&Arc<crate::tool::Tool>],
    start: usize,
    revision: Revision,
    made: &[&Entries],
) -> Option<Vec<Entry>> {
    let mut entries = Vec::with_capacity(tools.len());
    let mut entry = Vec::new();
    for (offset, tool) in tools.iter().enumerate() {
        entry.clear();
        if !write_entry(tool, revision, &mut entry)? {
            entries.push(None);
            continue;
        }
        let shared = made
            .iter()
            .find_map(|made| made.of(start + offset).filter(|made| made[..] == entry[..]));
        entries.push(Some(
            shared.map_or_else(|| Arc::from(&entry[..]), Arc::clone),
        ));
    }
    Some(entries)
}

/// Writes `tool`'s entry as `revision` lists it after what `entry` holds: `Some(false)` for
/// a definition rmcp cannot represent (a bug on our side, logged, and the tool left out),
/// `None` if it could not be written.
fn write_entry(tool: &crate::tool::Tool, revision: Revision, entry: &mut Vec<u8>) -> Option<bool> {
    let mut listed = match super::state::listed(tool, revision) {
        Ok(listed) => listed,
        Err(error) => {
            tracing::error!(tool = %tool.name, "not listed: {error}");
            return Some(false);
        }
    };
    if revision < Revision::V2026_07 {
        // rmcp's `strip_non_object_output_for_legacy_peer`, for one tool.
        listed.output_schema.take_if(|schema| {
            schema.get("type").and_then(serde_json::Value::as_str) != Some("object")
        });
    }
    serde_json::to_writer(entry, &listed).ok()?;
    Some(true)
}
