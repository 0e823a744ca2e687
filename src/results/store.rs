//! The resource store: outputs too large for a result (the whole of a truncated stdout) and
//! files a tool links to, kept on disk for a while and served by `resources/read`.
//!
//! It is bounded in total size and in age; the oldest entries go first. Each server process
//! has its own store (replicas behind a load balancer do not share one).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use super::content::ResourceLink;

/// Limits of the store.
#[derive(Debug, Clone, Copy)]
pub struct StoreLimits {
    pub max_total_bytes: u64,
    pub ttl: Duration,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            max_total_bytes: 256 << 20,
            ttl: Duration::from_secs(3600),
        }
    }
}

#[derive(Debug)]
pub struct ResourceStore {
    limits: StoreLimits,
    /// Created on first use, removed with the store.
    dir: std::sync::OnceLock<Option<tempfile::TempDir>>,
    entries: Mutex<Entries>,
    next_id: AtomicU64,
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
}

impl ResourceStore {
    pub fn new(limits: StoreLimits) -> Self {
        Self {
            limits,
            dir: std::sync::OnceLock::new(),
            entries: Mutex::new(Entries::default()),
            next_id: AtomicU64::new(1),
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

    /// A fresh path inside the store for output to be written to before it is kept.
    pub fn spool_path(&self) -> Option<PathBuf> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        Some(self.dir()?.join(format!("spool-{id}")))
    }

    /// Keeps a file (moved into the store); `None` if it cannot be kept.
    pub fn keep_file(&self, path: &Path, name: &str, mime_type: &str) -> Option<ResourceLink> {
        let size = std::fs::metadata(path).ok()?.len();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let target = self.dir()?.join(format!("resource-{id}"));
        if std::fs::rename(path, &target).is_err() {
            let _ = std::fs::remove_file(path);
            return None;
        }
        self.register(id, target, size, name, mime_type)
    }

    /// Keeps bytes; `None` if they cannot be kept.
    pub fn keep_bytes(&self, bytes: &[u8], name: &str, mime_type: &str) -> Option<ResourceLink> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let target = self.dir()?.join(format!("resource-{id}"));
        std::fs::write(&target, bytes).ok()?;
        self.register(id, target, bytes.len() as u64, name, mime_type)
    }

    fn register(
        &self,
        id: u64,
        path: PathBuf,
        size: u64,
        name: &str,
        mime_type: &str,
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
        let link = ResourceLink {
            uri: format!("mcp-serve://outputs/{id}/{encoded}"),
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

    /// What the store holds now, oldest first.
    pub fn list(&self) -> Vec<ResourceLink> {
        let Ok(mut entries) = self.entries.lock() else {
            return Vec::new();
        };
        self.expire(&mut entries);
        entries
            .by_uri
            .values()
            .map(|entry| entry.link.clone())
            .collect()
    }

    /// The MIME type and bytes of a stored resource.
    pub fn read(&self, uri: &str) -> Option<(String, Vec<u8>)> {
        let path = {
            let mut entries = self.entries.lock().ok()?;
            self.expire(&mut entries);
            let entry = entries.by_uri.get(uri)?;
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

    use super::{ResourceStore, StoreLimits};

    #[test]
    fn keeps_lists_reads_and_evicts_the_oldest() {
        let store = ResourceStore::new(StoreLimits {
            max_total_bytes: 10,
            ttl: Duration::from_secs(60),
        });
        let first = store
            .keep_bytes(b"123456", "a b.txt", "text/plain")
            .expect("kept");
        assert_eq!(first.uri, "mcp-serve://outputs/1/a%20b%2Etxt");
        assert_eq!(
            store.read(&first.uri),
            Some(("text/plain".into(), b"123456".to_vec()))
        );
        let second = store.keep_bytes(b"7890", "b", "text/plain").expect("kept");
        let third = store.keep_bytes(b"xyz", "c", "text/plain").expect("kept");
        let uris: Vec<String> = store.list().into_iter().map(|link| link.uri).collect();
        assert_eq!(uris, vec![second.uri, third.uri], "the oldest made room");
        assert_eq!(store.read(&first.uri), None);
        assert!(
            store
                .keep_bytes(&[0; 11], "big", "application/octet-stream")
                .is_none()
        );
    }

    #[test]
    fn entries_expire() {
        let store = ResourceStore::new(StoreLimits {
            max_total_bytes: 100,
            ttl: Duration::from_millis(1),
        });
        let link = store.keep_bytes(b"x", "x", "text/plain").expect("kept");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(store.read(&link.uri), None);
        assert!(store.list().is_empty());
    }
}
