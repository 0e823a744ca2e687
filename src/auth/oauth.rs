//! `[server.auth]`: this server as an OAuth 2.1 resource server. An access token is a JWT
//! signed by the issuer with an allowed algorithm (never `none`; HMAC only with a shared
//! secret the manifest gives), issued by `issuer`, for `audience` (this server's URL, RFC
//! 8707), within its `exp`/`nbf` give or take `leeway`, with a `sub`.

use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::Principal;
use super::keys::{Keys, Unavailable};

/// The asymmetric algorithms accepted unless the manifest narrows them.
pub const DEFAULT_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::RS256,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::EdDSA,
];

/// What the manifest says about tokens.
#[derive(Clone)]
pub struct Settings {
    pub issuer: String,
    /// This server's URL as clients reach it: the `aud` tokens must carry, and the
    /// `resource` of its metadata.
    pub audience: String,
    pub jwks_url: Option<String>,
    pub algorithms: Vec<Algorithm>,
    /// A shared secret for HS256/HS384/HS512; without one, HMAC tokens are refused.
    pub hmac_secret: Option<Vec<u8>>,
    pub leeway: Duration,
    /// Scopes every request needs.
    pub required_scopes: Vec<String>,
    /// `scopes_supported` in the metadata: the required scopes and every tool's.
    pub scopes_supported: Vec<String>,
    /// Opaque tokens are checked by asking the issuer (RFC 7662), when given.
    pub introspection: Option<super::introspection::Endpoint>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Settings")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_url", &self.jwks_url)
            .field("algorithms", &self.algorithms)
            .field(
                "hmac_secret",
                &self.hmac_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

impl Settings {
    /// The metadata document (RFC 9728) clients fetch to find the issuer.
    pub fn metadata(&self) -> Value {
        serde_json::json!({
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }

    /// Where the metadata is served: the well-known segment between the host and the
    /// resource's path (RFC 9728 section 3.1), as an absolute URL and as this server's path.
    pub fn metadata_location(&self) -> (String, String) {
        let audience = self.audience.trim_end_matches('/');
        let after_scheme = audience.find("://").map_or(0, |index| index + 3);
        let split = audience[after_scheme..]
            .find('/')
            .map_or(audience.len(), |index| after_scheme + index);
        let path = format!(
            "/.well-known/oauth-protected-resource{}",
            &audience[split..]
        );
        (format!("{}{path}", &audience[..split]), path)
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Rejection {
    /// The token is not valid here: `401 invalid_token`, with this description.
    #[error("{0}")]
    Invalid(&'static str),
    /// The keys could not be fetched: nobody can be checked now (`503`).
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

impl Rejection {
    /// A short, fixed label for metrics (`mcp_serve_auth_failures_total{reason}`).
    pub fn reason(&self) -> &'static str {
        match self {
            Rejection::Unavailable(_) => "keys_unavailable",
            Rejection::Invalid(description) => match *description {
                "the token is not an access token" => "not_access_token",
                "the token has expired" => "expired",
                "the token is not valid yet" => "not_yet_valid",
                "the token is for another resource" => "audience",
                "the token is from another issuer" => "issuer",
                "the token's signature does not verify" => "signature",
                "the token names a key the issuer does not publish" => "unknown_key",
                "the token is not a JWT" => "malformed",
                "the token is not active" => "inactive",
                other if other.contains("algorithm") || other.starts_with("HMAC") => "algorithm",
                _ => "invalid",
            },
        }
    }
}

/// Checks tokens against the settings and the issuer's keys.
#[derive(Debug)]
pub struct Verifier {
    settings: Settings,
    keys: Keys,
    introspection: Option<super::introspection::Introspection>,
    /// Tokens already verified, by a SHA-256 of the token, until they expire: a signature
    /// check costs tens of microseconds, a hit a hash and a lookup.
    verified: super::verified::Verified,
}

impl Verifier {
    /// Makes the clients that ask the issuer; the server does not start without them.
    pub fn new(settings: Settings) -> Result<Self, super::keys::ClientError> {
        let keys = Keys::new(&settings.issuer, settings.jwks_url.as_deref())?;
        let introspection = settings
            .introspection
            .clone()
            .map(|endpoint| super::introspection::Introspection::new(endpoint, settings.leeway))
            .transpose()?;
        Ok(Self {
            settings,
            keys,
            introspection,
            verified: super::verified::Verified::default(),
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The caller a token names, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<std::sync::Arc<Principal>, Rejection> {
        let key = super::verified::Verified::key(token);
        if let Some(principal) = self.verified.get(&key) {
            return Ok(principal);
        }
        let principal = std::sync::Arc::new(self.check(token).await?);
        let exp = principal.claims.get("exp").and_then(Value::as_u64);
        self.verified.insert(key, principal.clone(), exp);
        Ok(principal)
    }

    async fn check(&self, token: &str) -> Result<Principal, Rejection> {
        let Ok(header) = decode_header(token) else {
            // Not a JWT: an opaque token, which only the issuer can judge.
            return match &self.introspection {
                Some(introspection) => {
                    introspection
                        .check(token, &self.settings.issuer, &self.settings.audience)
                        .await
                }
                None => Err(Rejection::Invalid("the token is not a JWT")),
            };
        };
        let hmac = matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        );
        let key = if hmac {
            let secret = self
                .settings
                .hmac_secret
                .as_ref()
                .ok_or(Rejection::Invalid("HMAC-signed tokens are not accepted"))?;
            DecodingKey::from_secret(secret)
                .map_err(|_| Rejection::Invalid("the shared secret is empty"))?
        } else {
            if !self.settings.algorithms.contains(&header.alg) {
                return Err(Rejection::Invalid("the token's algorithm is not accepted"));
            }
            let jwk = self
                .keys
                .find(header.kid.as_deref())
                .await?
                .ok_or(Rejection::Invalid(
                    "the token names a key the issuer does not publish",
                ))?;
            usable(&jwk, header.alg)?;
            DecodingKey::from_jwk(&jwk)
                .map_err(|_| Rejection::Invalid("the issuer's key is not usable"))?
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|error| Rejection::Invalid(describe(error.kind())))?
            .claims;
        principal(claims)
    }
}

/// A key may verify this token: a signing key (not `use: enc`) whose own `alg`, if it has
/// one, is the token's.
fn usable(jwk: &Jwk, alg: Algorithm) -> Result<(), Rejection> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return Err(Rejection::Invalid("the token names an encryption key"));
    }
    if let Some(key_alg) = jwk.common.key_algorithm
        && key_alg.to_string() != format!("{alg:?}")
    {
        return Err(Rejection::Invalid("the token's algorithm is not its key's"));
    }
    Ok(())
}

fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token is for another resource",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => {
            "the token lacks a required claim (exp, iss, aud, sub)"
        }
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm is not accepted"
        }
        _ => "the token is not valid",
    }
}

/// The principal of verified claims: `sub`, and the scopes from `scope` (space-separated)
/// or `scp` (a list or a string).
pub(super) fn principal(claims: Map<String, Value>) -> Result<Principal, Rejection> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|subject| !subject.is_empty())
        .ok_or(Rejection::Invalid("the token's `sub` is not a string"))?
        .to_owned();
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(text)) => text
            .split_ascii_whitespace()
            .map(ToOwned::to_owned)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(ToOwned::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(Principal {
        subject,
        scopes,
        claims,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_lives_under_the_well_known_segment() {
        let settings = Settings {
            issuer: "https://id.example.com".to_owned(),
            audience: "https://mcp.example.com/mcp".to_owned(),
            jwks_url: None,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            hmac_secret: Some(b"secret".to_vec()),
            leeway: Duration::from_secs(30),
            required_scopes: Vec::new(),
            scopes_supported: vec!["tickets:read".to_owned()],
            introspection: None,
        };
        assert_eq!(
            settings.metadata_location(),
            (
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp".to_owned(),
                "/.well-known/oauth-protected-resource/mcp".to_owned()
            )
        );
        assert_eq!(
            settings.metadata()["resource"],
            "https://mcp.example.com/mcp"
        );
        assert!(!format!("{settings:?}").contains("secret\""));
        let scopes = principal(
            serde_json::from_value(serde_json::json!({"sub": "a", "scp": ["x", "y"]}))
                .expect("map"),
        )
        .expect("principal")
        .scopes;
        assert_eq!(scopes, ["x", "y"]);
    }
}
