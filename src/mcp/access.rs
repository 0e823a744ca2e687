//! Who may see and use what: a caller's token scopes against what a tool, prompt, resource
//! or template needs. A caller without a token (stdio, a static bearer token) is not
//! limited: scopes need `[server.auth]`, where every HTTP request carries one.

use rmcp::ErrorData;

use crate::auth::Principal;

/// Whether `principal` may see and use something that needs `needed`.
pub(super) fn allowed(principal: Option<&Principal>, needed: &[String]) -> bool {
    principal.is_none_or(|principal| principal.grants(needed))
}

/// The error for something the caller's token does not grant (the HTTP layer answers
/// `403 insufficient_scope` first; this holds where it cannot look, a batch).
pub(super) fn require(
    what: impl FnOnce() -> String,
    principal: Option<&Principal>,
    needed: &[String],
) -> Result<(), ErrorData> {
    match principal {
        Some(principal) if !principal.grants(needed) => Err(ErrorData::invalid_request(
            format!(
                "{} needs the scope {}",
                what(),
                principal.missing(needed).join(" ")
            ),
            None,
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(scopes: &[&str]) -> Principal {
        Principal {
            subject: "ada".into(),
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            claims: serde_json::Map::new(),
        }
    }

    #[test]
    fn a_token_needs_every_scope_and_no_token_is_not_limited() {
        let needed = vec!["a".to_owned(), "b".to_owned()];
        assert!(allowed(None, &needed));
        assert!(allowed(Some(&principal(&["a", "b", "c"])), &needed));
        assert!(!allowed(Some(&principal(&["a"])), &needed));
        assert!(allowed(Some(&principal(&[])), &[]));
        let refused = require(|| "prompt `p`".into(), Some(&principal(&["a"])), &needed)
            .expect_err("b is missing");
        assert_eq!(refused.message, "prompt `p` needs the scope b");
        assert!(require(|| unreachable!(), None, &needed).is_ok());
    }
}
