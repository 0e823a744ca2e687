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
