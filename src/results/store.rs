//! The resource store: outputs too large for a result (the whole of a truncated stdout) and
//! files a tool links to, kept on disk for a while and served by `resources/read`.
//!
//! It is bounded in total size and in age; the oldest entries go first. Each server process
//! has its own store (replicas behind a load balancer do not share one).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use super::content::ResourceLink;
use crate::caller::Identity;

/// Limits of the store.
#[derive(Debug, Clone, Copy)]
pub struct ResourceStoreLimits {
    pub max_total_bytes: u64,
    pub ttl: Duration,
}

impl Default for ResourceStoreLimits {
    fn default() -> Self {
        Self {
            max_total_bytes: 256 << 20,
            ttl: Duration::from_secs(3600),
        }
    }
}

#[derive(Debug)]
pub struct ResourceStore {
    limits: ResourceStoreLimits,
    /// Created on first use, removed with the store.
    dir: std::sync::OnceLock<Option<tempfile::TempDir>>,
    entries: Mutex<Entries>,
    next_id: AtomicU64,
    /// Bytes reserved by spools of calls in flight.
    spooling: AtomicU64,
}

/// The most of one call's output spooled for keeping.
pub const SPOOL_LIMIT: u64 = 64 << 20;

/// A call's output file before it is kept; removed when dropped (kept files were moved).
#[derive(Debug)]
pub struct Spool<'a> {
    store: &'a ResourceStore,
    path: Option<PathBuf>,
    reserve: u64,
}

impl Spool<'_> {
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl Drop for Spool<'_> {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            // Gone already when the store kept it (it was moved) or nothing was written.
            let _ = std::fs::remove_file(path);
        }
        self.store
            .spooling
            .fetch_sub(self.reserve, Ordering::AcqRel);
    }
}

#[derive(Debug, Default)]
struct Entries {
    by_uri: IndexMap<String, Entry>,
    total: u64,
}

#[derive(Debug)]
struct Entry {
    path: PathBuf,
    link: ResourceLink,
    created: Instant,
    owner: Identity,
}

/// May `caller` see `owner`'s output in `resources/list`: its own only, never a caller
/// nothing identifies.
fn may_list(caller: &Identity, owner: &Identity) -> bool {
    caller != &Identity::Anonymous && caller == owner
}

/// May `caller` read `owner`'s output by its link: anyone holding it, except that a session's
/// or a subject's outputs are theirs alone.
fn may_read(caller: &Identity, owner: &Identity) -> bool {
    match owner {
        Identity::Session(_) | Identity::Subject(_) => caller == owner,
        Identity::Only | Identity::Anonymous => true,
    }
}

/// The store, as seen by one call: what it keeps is the caller's.
#[derive(Debug, Clone)]
pub struct Keeper<'a> {
    pub store: &'a ResourceStore,
    pub caller: Identity,
}

impl Keeper<'_> {
    /// Keeps a file (moved into the store); `None` if it cannot be kept.
    pub fn keep_file(&self, path: &Path, name: &str, mime_type: &str) -> Option<ResourceLink> {
        self.store.keep_file(path, name, mime_type, &self.caller)
    }

    /// Keeps bytes; `None` if they cannot be kept.
    pub fn keep_bytes(&self, bytes: &[u8], name: &str, mime_type: &str) -> Option<ResourceLink> {
        self.store.keep_bytes(bytes, name, mime_type, &self.caller)
    }
}

impl ResourceStore {
    pub fn new(limits: ResourceStoreLimits) -> Self {
        Self {
            limits,
            dir: std::sync::OnceLock::new(),
            entries: Mutex::new(Entries::default()),
            next_id: AtomicU64::new(1),
            spooling: AtomicU64::new(0),
        }
    }

    fn dir(&self) -> Option<&Path> {
        self.dir
            .get_or_init(|| {
                tempfile::Builder::new()
                    .prefix("mcp-serve-resources-")
                    .tempdir()
                    .map_err(|error| tracing::warn!(%error, "cannot create the resource store"))
                    .ok()
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }

    /// A fresh file inside the store for output to be written to before it is kept, at
    /// most [`SPOOL_LIMIT`] bytes. Calls in flight share a budget as large as the store's
    /// own, so the disk holds at most twice `max_total_bytes`; `None` when it is spent. The
    /// file goes when the spool is dropped, unless the store kept it.
    pub fn spool(&self) -> Option<Spool<'_>> {
        let reserve = SPOOL_LIMIT.min(self.limits.max_total_bytes);
        let reserved = self.spooling.fetch_add(reserve, Ordering::AcqRel);
        if reserved + reserve > self.limits.max_total_bytes {
            self.spooling.fetch_sub(reserve, Ordering::AcqRel);
            tracing::debug!(
                "not keeping this call's full output: the store's budget for calls in flight is spent"
            );
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Created now, by the call: the command's task only opens it, so a call dropped
        // before the task starts leaves no file behind.
        let path = self
            .dir()
            .map(|dir| dir.join(format!("spool-{id}")))
            .filter(|path| std::fs::File::create(path).is_ok());
        let spool = Spool {
            store: self,
            path,
            reserve,
        };
        spool.path.is_some().then_some(spool)
    }

    /// The store as one caller sees it.
    pub fn keeper(&self, caller: Identity) -> Keeper<'_> {
        Keeper {
            store: self,
            caller,
        }
    }

    fn keep_file(
        &self,
        path: &Path,
        name: &str,
        mime_type: &str,
        owner: &Identity,
    ) -> Option<ResourceLink> {
        let size = std::fs::metadata(path).ok()?.len();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let target = self.dir()?.join(format!("resource-{id}"));
        if std::fs::rename(path, &target).is_err() {
            let _ = std::fs::remove_file(path);
            return None;
        }
        self.register(target, size, name, mime_type, owner)
    }

    fn keep_bytes(
        &self,
        bytes: &[u8],
        name: &str,
        mime_type: &str,
        owner: &Identity,
    ) -> Option<ResourceLink> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let target = self.dir()?.join(format!("resource-{id}"));
        std::fs::write(&target, bytes).ok()?;
        self.register(target, bytes.len() as u64, name, mime_type, owner)
    }

    fn register(
        &self,
        path: PathBuf,
        size: u64,
        name: &str,
        mime_type: &str,
        owner: &Identity,
    ) -> Option<ResourceLink> {
        let mut entries = self.entries.lock().ok()?;
        self.expire(&mut entries);
        if size > self.limits.max_total_bytes {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        while entries.total + size > self.limits.max_total_bytes {
            let Some((_, oldest)) = entries.by_uri.shift_remove_index(0) else {
                break;
            };
            entries.total -= oldest.link.size.unwrap_or(0);
            let _ = std::fs::remove_file(&oldest.path);
        }
        let encoded =
            percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC);
        // The link is the capability: 128 random bits, so no caller can guess another's.
        let mut key = [0_u8; 16];
        if getrandom::fill(&mut key).is_err() {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        let key = key.iter().fold(String::with_capacity(32), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        });
        let link = ResourceLink {
            uri: format!("mcp-serve://outputs/{key}/{encoded}"),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: Some(mime_type.to_owned()),
            size: Some(size),
            annotations: None,
        };
        entries.total += size;
        entries.by_uri.insert(
            link.uri.clone(),
            Entry {
                path,
                link: link.clone(),
                created: Instant::now(),
                owner: owner.clone(),
            },
        );
        Some(link)
    }

    fn expire(&self, entries: &mut Entries) {
        let ttl = self.limits.ttl;
        let expired: Vec<String> = entries
            .by_uri
            .iter()
            .filter(|(_, entry)| entry.created.elapsed() > ttl)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in expired {
            if let Some(entry) = entries.by_uri.shift_remove(&uri) {
                entries.total -= entry.link.size.unwrap_or(0);
                let _ = std::fs::remove_file(&entry.path);
            }
        }
    }

    /// What the store holds now for `caller`, oldest first.
    pub fn list(&self, caller: &Identity) -> Vec<ResourceLink> {
        let Ok(mut entries) = self.entries.lock() else {
            return Vec::new();
        };
        self.expire(&mut entries);
        entries
            .by_uri
            .values()
            .filter(|entry| may_list(caller, &entry.owner))
            .map(|entry| entry.link.clone())
            .collect()
    }

    /// The MIME type and bytes of a stored resource `caller` may read.
    pub fn read(&self, uri: &str, caller: &Identity) -> Option<(String, Vec<u8>)> {
        let path = {
            let mut entries = self.entries.lock().ok()?;
            self.expire(&mut entries);
            let entry = entries
                .by_uri
                .get(uri)
                .filter(|entry| may_read(caller, &entry.owner))?;
            (
                entry.path.clone(),
                entry.link.mime_type.clone().unwrap_or_default(),
            )
        };
        Some((path.1, std::fs::read(path.0).ok()?))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{ResourceStore, ResourceStoreLimits};
    use crate::caller::Identity;

    #[test]
    fn keeps_lists_reads_and_evicts_the_oldest() {
        let store = ResourceStore::new(ResourceStoreLimits {
            max_total_bytes: 10,
            ttl: Duration::from_secs(60),
        });
        let keeper = store.keeper(Identity::Only);
        let first = keeper
            .keep_bytes(b"123456", "a b.txt", "text/plain")
            .expect("kept");
        assert!(
            first.uri.starts_with("mcp-serve://outputs/"),
            "{}",
            first.uri
        );
        assert!(first.uri.ends_with("/a%20b%2Etxt"), "{}", first.uri);
        assert_eq!(
            store.read(&first.uri, &Identity::Only),
            Some(("text/plain".into(), b"123456".to_vec()))
        );
        let second = keeper.keep_bytes(b"7890", "b", "text/plain").expect("kept");
        let third = keeper.keep_bytes(b"xyz", "c", "text/plain").expect("kept");
        let uris: Vec<String> = store
            .list(&Identity::Only)
            .into_iter()
            .map(|link| link.uri)
            .collect();
        assert_eq!(uris, vec![second.uri, third.uri], "the oldest made room");
        assert_eq!(store.read(&first.uri, &Identity::Only), None);
        assert!(
            keeper
                .keep_bytes(&[0; 11], "big", "application/octet-stream")
                .is_none()
        );
    }

    #[test]
    fn entries_expire() {
        let store = ResourceStore::new(ResourceStoreLimits {
            max_total_bytes: 100,
            ttl: Duration::from_millis(1),
        });
        let link = store
            .keeper(Identity::Only)
            .keep_bytes(b"x", "x", "text/plain")
            .expect("kept");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(store.read(&link.uri, &Identity::Only), None);
        assert!(store.list(&Identity::Only).is_empty());
    }

    #[test]
    fn outputs_are_listed_to_their_caller_and_read_by_link() {
        let store = ResourceStore::new(ResourceStoreLimits::default());
        let alice = Identity::Session("alice".into());
        let bob = Identity::Session("bob".into());
        let hers = store
            .keeper(alice.clone())
            .keep_bytes(b"a", "a", "text/plain")
            .expect("kept");
        let anonymous = store
            .keeper(Identity::Anonymous)
            .keep_bytes(b"n", "n", "text/plain")
            .expect("kept");
        assert_eq!(store.list(&alice).len(), 1);
        assert!(
            store.list(&bob).is_empty(),
            "another session's output listed"
        );
        assert!(store.list(&Identity::Anonymous).is_empty());
        assert!(
            store.read(&hers.uri, &bob).is_none(),
            "another session read it"
        );
        assert!(store.read(&hers.uri, &Identity::Anonymous).is_none());
        assert!(store.read(&hers.uri, &alice).is_some());
        assert!(
            store.read(&anonymous.uri, &bob).is_some(),
            "links are capabilities"
        );
    }

    #[test]
    fn spools_are_removed_unless_kept_and_share_a_budget() {
        let store = ResourceStore::new(ResourceStoreLimits {
            max_total_bytes: super::SPOOL_LIMIT * 2,
            ttl: Duration::from_secs(60),
        });
        let first = store.spool().expect("a spool");
        let path = first.path().expect("path").to_owned();
        std::fs::write(&path, b"partial output").expect("write");
        let second = store.spool().expect("a second spool");
        assert!(
            store.spool().is_none(),
            "the budget for calls in flight is spent"
        );
        drop(first);
        assert!(!path.exists(), "a failed call's spool was left on disk");
        assert!(store.spool().is_some(), "the budget came back");
        drop(second);
    }
}
