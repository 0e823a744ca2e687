//! Who is calling, over HTTP: an OAuth 2.1 resource server (RFC 9728 metadata, JWT access
//! tokens checked against the issuer's keys, RFC 8707 audience) and the [`Principal`] it
//! yields, which scopes what a caller may list and call and fills `{auth.sub}` and
//! `{auth.claims.NAME}` placeholders. The static `--auth-token-*` mode stays in
//! `mcp::http::auth`; stdio has no principal (its one client is the user who started it).
//!
//! `oauth` holds the settings and verifies a token; `introspection` asks the issuer about
//! an opaque one (RFC 7662); `keys` fetches and caches the issuer's
//! JWKS (discovered from its metadata), refetching for an unknown key id at most every few
//! seconds.

pub mod introspection;
pub mod keys;
pub mod oauth;
pub mod verified;

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The caller a valid access token names.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// `sub`.
    pub subject: String,
    /// `scope` (space-separated) or `scp`.
    pub scopes: Vec<String>,
    /// Every claim, for `{auth.claims.NAME}` (string claims only).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Whether the token grants every one of `needed`.
    pub fn grants(&self, needed: &[String]) -> bool {
        needed.iter().all(|scope| self.scopes.contains(scope))
    }

    /// The scopes of `needed` the token lacks.
    pub fn missing<'a>(&self, needed: &'a [String]) -> Vec<&'a str> {
        needed
            .iter()
            .filter(|scope| !self.scopes.contains(scope))
            .map(String::as_str)
            .collect()
    }
}

/// A principal as the owner of kept outputs and tasks: equal when the subject is.
#[derive(Debug, Clone)]
pub struct Subject(pub std::sync::Arc<Principal>);

impl PartialEq for Subject {
    fn eq(&self, other: &Self) -> bool {
        self.0.subject == other.0.subject
    }
}

impl Eq for Subject {}

/// The placeholder prefix for the caller's identity.
pub const PLACEHOLDER_PREFIX: &str = "auth.";

/// Whether a placeholder names the caller: `auth.sub` or `auth.claims.NAME`.
pub fn is_placeholder(name: &str) -> bool {
    name == "auth.sub"
        || name.strip_prefix("auth.claims.").is_some_and(|claim| {
            !claim.is_empty()
                && claim
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// The arguments a backend renders from: never a client's own `auth.…` keys (a full schema
/// could let a client send one), and the caller's identity when there is one. Borrowed
/// unchanged when there is nothing to add or remove.
pub fn attach<'a>(
    arguments: &'a Map<String, Value>,
    principal: Option<&Principal>,
) -> Cow<'a, Map<String, Value>> {
    let spoofed = arguments
        .keys()
        .any(|key| key.starts_with(PLACEHOLDER_PREFIX));
    if principal.is_none() && !spoofed {
        return Cow::Borrowed(arguments);
    }
    let mut out: Map<String, Value> = arguments
        .iter()
        .filter(|(key, _)| !key.starts_with(PLACEHOLDER_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if let Some(principal) = principal {
        out.insert(
            "auth.sub".to_owned(),
            Value::String(principal.subject.clone()),
        );
        for (name, value) in &principal.claims {
            if value.is_string() {
                out.insert(format!("auth.claims.{name}"), value.clone());
            }
        }
    }
    Cow::Owned(out)
}

/// Every argument but the caller's identity: what `body = "arguments"` and `stdin` send.
pub fn without_identity(arguments: &Map<String, Value>) -> Cow<'_, Map<String, Value>> {
    if arguments
        .keys()
        .any(|key| key.starts_with(PLACEHOLDER_PREFIX))
    {
        Cow::Owned(
            arguments
                .iter()
                .filter(|(key, _)| !key.starts_with(PLACEHOLDER_PREFIX))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        )
    } else {
        Cow::Borrowed(arguments)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn identity_comes_from_the_token_never_from_the_client() {
        let arguments: Map<String, Value> =
            serde_json::from_value(json!({"q": "x", "auth.sub": "admin"})).expect("map");
        let anonymous = attach(&arguments, None);
        assert_eq!(anonymous.get("auth.sub"), None);
        let principal = Principal {
            subject: "ada".to_owned(),
            scopes: vec!["a".to_owned()],
            claims: serde_json::from_value(json!({"email": "ada@example.com", "groups": ["x"]}))
                .expect("map"),
        };
        let attached = attach(&arguments, Some(&principal));
        assert_eq!(attached["auth.sub"], "ada");
        assert_eq!(attached["auth.claims.email"], "ada@example.com");
        assert_eq!(attached.get("auth.claims.groups"), None);
        assert_eq!(
            without_identity(&attached).keys().collect::<Vec<_>>(),
            ["q"]
        );
        assert!(
            is_placeholder("auth.claims.email")
                && !is_placeholder("auth.claims.")
                && !is_placeholder("auth.token")
        );
        assert!(principal.grants(&["a".to_owned()]) && !principal.grants(&["b".to_owned()]));
    }
}
