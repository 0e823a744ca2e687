//! Who owns a task, as the store keeps it: never the caller's own name (a live
//! `Mcp-Session-Id`, a token's subject), only its HMAC-SHA256 under a key kept in the store
//! itself. Every process sharing the store reads the same key, so a caller is the same owner
//! on every replica, and neither the store nor `mcp-serve tasks` ever shows who it is.

use hmac::{KeyInit as _, Mac as _};

use super::TaskStoreError;

/// The key owners are hashed with: 64 hex digits of OS randomness, made once per store.
#[derive(Clone, PartialEq, Eq)]
pub struct OwnerKey(String);

impl std::fmt::Debug for OwnerKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("OwnerKey([redacted])")
    }
}

impl OwnerKey {
    /// A new random key, for a store that has none yet.
    pub fn generate() -> Result<Self, TaskStoreError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|source| TaskStoreError::Random {
            what: "the owner key",
            source,
        })?;
        Ok(Self(hex(&bytes)))
    }

    /// The key as the store keeps it.
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    pub fn as_stored(&self) -> &str {
        &self.0
    }

    /// The owner's tag: HMAC-SHA256 of `owner` under this key, as 64 lowercase hex digits.
    pub fn tag(&self, owner: &str) -> String {
        // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
        let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(self.0.as_bytes()) else {
            return String::new();
        };
        mac.update(owner.as_bytes());
        hex(&mac.finalize().into_bytes())
    }
}

/// Whether `text` has the shape of a tag (a record written before owners were hashed holds
/// the caller's own name instead, which is never shown).
pub fn is_tag(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

use crate::hex::lower as hex;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_keyed_hashes_that_show_nothing_of_the_owner() {
        let key = OwnerKey::generate().expect("a key");
        let other = OwnerKey::generate().expect("another key");
        assert_ne!(key, other);
        assert!(is_tag(key.as_stored()));
        let session = "88ff02fd-0fea-445b-9280-60ba41842930";
        let tag = key.tag(session);
        assert!(is_tag(&tag), "{tag}");
        assert_eq!(tag, key.tag(session), "the same owner, the same tag");
        assert_eq!(
            tag,
            OwnerKey::from_stored(key.as_stored().to_owned()).tag(session),
            "another process reading the same key agrees"
        );
        assert_ne!(tag, other.tag(session), "another store's key, another tag");
        assert_ne!(tag, key.tag("sub:alice"));
        assert!(!tag.contains("88ff02fd"));
        assert!(!format!("{key:?}").contains(key.as_stored()));
        // RFC 4231, test case 2.
        assert_eq!(
            OwnerKey::from_stored("Jefe".into()).tag("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        for shown in [session, "sub:alice", "", &tag[..63], &tag.to_uppercase()] {
            assert!(!is_tag(shown), "{shown}");
        }
    }
}
