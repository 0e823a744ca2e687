//! `[server.auth]` and a tool's `scopes`: the resource server's settings, checked at load.

use std::time::Duration;

use jsonwebtoken::Algorithm;
use toml::Spanned;

use super::Checker;
use super::wire::{AuthWire, ToolWire};
use crate::auth::introspection::Endpoint;
use crate::auth::oauth::{DEFAULT_ALGORITHMS, Settings};
use crate::units::parse_duration;

const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
const MAX_LEEWAY: Duration = Duration::from_secs(300);

const ALGORITHMS: [(&str, Algorithm); 9] = [
    ("RS256", Algorithm::RS256),
    ("RS384", Algorithm::RS384),
    ("RS512", Algorithm::RS512),
    ("PS256", Algorithm::PS256),
    ("PS384", Algorithm::PS384),
    ("PS512", Algorithm::PS512),
    ("ES256", Algorithm::ES256),
    ("ES384", Algorithm::ES384),
    ("EdDSA", Algorithm::EdDSA),
];

pub(super) fn settings(
    wire: &Spanned<AuthWire>,
    tools: &[ToolWire],
    checker: &mut Checker,
) -> Option<Settings> {
    let errors_before = checker.diagnostics.len();
    let wire_span = wire.span();
    let wire = wire.get_ref();
    for url in [&wire.issuer, &wire.audience]
        .into_iter()
        .chain(wire.jwks_url.as_ref())
    {
        let text = url.get_ref();
        if !(text.starts_with("https://") || text.starts_with("http://"))
            || text.contains(char::is_whitespace)
        {
            checker
                .error(format!("`{text}` is not an http(s) URL"), url.span())
                .hint("the issuer and the audience are URLs, e.g. `https://id.example.com` and `https://mcp.example.com/mcp`");
        }
    }
    let algorithms = match &wire.algorithms {
        None => DEFAULT_ALGORITHMS.to_vec(),
        Some(names) => names
            .get_ref()
            .iter()
            .filter_map(|name| {
                let found = ALGORITHMS.iter().find(|(known, _)| known == name).map(|(_, alg)| *alg);
                if found.is_none() {
                    let hint = if name.eq_ignore_ascii_case("none") {
                        "unsigned tokens are never accepted"
                    } else if name.starts_with("HS") {
                        "HMAC algorithms are enabled by `hmac-secret`, a secret shared with the issuer"
                    } else {
                        "accepted: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA"
                    };
                    checker.error(format!("unknown or refused algorithm `{name}`"), names.span()).hint(hint);
                }
                found
            })
            .collect(),
    };
    let hmac_secret = wire.hmac_secret.as_ref().and_then(|secret| {
        match checker.secret(secret.get_ref(), &secret.span(), ToOwned::to_owned) {
            Ok((value, used)) if value.len() >= 32 => {
                checker.withheld_env.extend(used.variables);
                Some(value.into_bytes())
            }
            Ok(_) => {
                checker
                    .error("`hmac-secret` is shorter than 32 bytes", secret.span())
                    .hint("give it as `${env:NAME}` or `${file:PATH}`, at least 32 random bytes");
                None
            }
            Err(error) => {
                checker.error(error.to_string(), secret.span());
                None
            }
        }
    });
    let leeway = wire.leeway.as_ref().map_or(DEFAULT_LEEWAY, |value| {
        match parse_duration(value.get_ref()) {
            Ok(leeway) if leeway <= MAX_LEEWAY => leeway,
            Ok(_) => {
                checker.error("`leeway` is at most 5m", value.span());
                DEFAULT_LEEWAY
            }
            Err(problem) => {
                checker.error(format!("invalid `leeway`: {problem}"), value.span());
                DEFAULT_LEEWAY
            }
        }
    });
    let introspection = introspection(wire, checker);
    let required_scopes = wire.scopes.clone().unwrap_or_default();
    for scope in &required_scopes {
        if !is_scope(scope) {
            checker
                .error(format!("`{scope}` is not a scope"), wire_span.clone())
                .hint("a scope is printable ASCII without spaces, `\"` or `\\`, e.g. `mcp:tools`");
        }
    }
    let mut scopes_supported = required_scopes.clone();
    for tool in tools {
        for scope in tool.scopes.iter().flat_map(Spanned::get_ref) {
            if !scopes_supported.contains(scope) {
                scopes_supported.push(scope.clone());
            }
        }
    }
    (checker.diagnostics.len() == errors_before).then(|| Settings {
        // Exactly as written: `iss` is compared as a string (Auth0's ends with `/`).
        issuer: wire.issuer.get_ref().clone(),
        audience: wire.audience.get_ref().clone(),
        jwks_url: wire.jwks_url.as_ref().map(|url| url.get_ref().clone()),
        algorithms,
        hmac_secret,
        leeway,
        required_scopes,
        scopes_supported,
        introspection,
    })
}

/// `introspection-url` with `client-id` and `client-secret`, all three or none.
fn introspection(wire: &AuthWire, checker: &mut Checker) -> Option<Endpoint> {
    let (url, id, secret) = match (
        &wire.introspection_url,
        &wire.client_id,
        &wire.client_secret,
    ) {
        (None, None, None) => return None,
        (Some(url), Some(id), Some(secret)) => (url, id, secret),
        (Some(url), _, _) => {
            checker
                .error(
                    "`introspection-url` needs `client-id` and `client-secret`",
                    url.span(),
                )
                .hint("the issuer answers introspection requests from a client it knows");
            return None;
        }
        (None, Some(part), _) | (None, None, Some(part)) => {
            checker.error(
                "`client-id` and `client-secret` are for `introspection-url`",
                part.span(),
            );
            return None;
        }
    };
    if !(url.get_ref().starts_with("https://") || url.get_ref().starts_with("http://")) {
        checker.error(
            format!("`{}` is not an http(s) URL", url.get_ref()),
            url.span(),
        );
        return None;
    }
    match checker.secret(secret.get_ref(), &secret.span(), ToOwned::to_owned) {
        Ok((value, used)) => {
            checker.withheld_env.extend(used.variables);
            Some(Endpoint {
                url: url.get_ref().clone(),
                client_id: id.get_ref().clone(),
                client_secret: value,
            })
        }
        Err(error) => {
            checker.error(error.to_string(), secret.span());
            None
        }
    }
}

/// A tool's, prompt's or resource's `scopes`: each an RFC 6749 scope token (printable ASCII,
/// no space, `"` or `\`).
pub(super) fn scopes(wire: Option<&Spanned<Vec<String>>>, checker: &mut Checker) -> Vec<String> {
    let Some(wire) = wire else {
        return Vec::new();
    };
    if !checker.oauth && !wire.get_ref().is_empty() {
        checker
            .error("`scopes` need `[server.auth]`", wire.span())
            .hint("scopes come from OAuth access tokens; without `[server.auth]` nobody has any, and nothing would be protected");
    }
    for scope in wire.get_ref() {
        if !is_scope(scope) {
            checker
                .error(format!("`{scope}` is not a scope"), wire.span())
                .hint(
                    "a scope is printable ASCII without spaces, `\"` or `\\`, e.g. `tickets:write`",
                );
        }
    }
    wire.get_ref().clone()
}

/// An RFC 6749 scope token: printable ASCII, no space, `"` or `\`.
fn is_scope(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\')
}
