//! Tokens already verified, so a client that sends the same token with every request pays
//! for its signature (or an introspection) once. Keyed by a SHA-256 of the token, never the
//! token; an entry lasts until the token's `exp` (at most five minutes, so a key the issuer
//! withdraws stops being trusted soon); at most 10,000 entries.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};

use super::Principal;

const MAX_KEEP: Duration = Duration::from_secs(300);
const MAX_ENTRIES: usize = 10_000;

/// A verified principal, and until when it is trusted.
type Entry = (Arc<Principal>, Instant);

#[derive(Debug, Default)]
pub struct Verified {
    entries: RwLock<HashMap<[u8; 32], Entry>>,
}

impl Verified {
    pub fn key(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    pub fn get(&self, key: &[u8; 32]) -> Option<Arc<Principal>> {
        let entries = self.entries.read().ok()?;
        let (principal, until) = entries.get(key)?;
        (Instant::now() < *until).then(|| principal.clone())
    }

    /// Keeps a verified principal until `exp` (seconds since the epoch), at most five minutes.
    pub fn insert(&self, key: [u8; 32], principal: Arc<Principal>, exp: Option<u64>) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let keep = exp.map_or(MAX_KEEP, |exp| {
            Duration::from_secs(exp.saturating_sub(now)).min(MAX_KEEP)
        });
        if keep.is_zero() {
            return;
        }
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        if entries.len() >= MAX_ENTRIES {
            let moment = Instant::now();
            entries.retain(|_, (_, until)| *until > moment);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (principal, Instant::now() + keep));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_last_until_the_token_expires_and_never_past_it() {
        let verified = Verified::default();
        let principal = Arc::new(Principal {
            subject: "ada".to_owned(),
            scopes: Vec::new(),
            claims: serde_json::Map::new(),
        });
        let key = Verified::key("token-a");
        assert_ne!(key, Verified::key("token-b"));
        verified.insert(key, principal.clone(), Some(1));
        assert!(verified.get(&key).is_none(), "an expired token is not kept");
        verified.insert(key, principal, None);
        assert_eq!(
            verified.get(&key).map(|found| found.subject.clone()),
            Some("ada".to_owned())
        );
    }
}
