//! The issuer's signing keys: the JWKS named by its metadata (RFC 8414
//! `/.well-known/oauth-authorization-server`, else `OpenID` `/.well-known/openid-configuration`)
//! or given as a URL, fetched on first use and cached. A token whose key id the cache does
//! not know refetches the set, at most once per [`MIN_REFETCH`], so a stream of made-up key
//! ids cannot turn into a stream of requests to the issuer; the set is also refetched once it
//! is older than [`MAX_AGE`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use tokio::sync::Mutex;

/// The shortest time between two fetches of the key set.
pub const MIN_REFETCH: Duration = Duration::from_secs(5);
/// How long a fetched set is used before it is fetched again.
pub const MAX_AGE: Duration = Duration::from_secs(3600);
/// The largest metadata or key set accepted.
const MAX_BYTES: usize = 1024 * 1024;

/// How long a request to the issuer may take, connection to last byte.
const ISSUER_TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP client that asks the issuer could not be made (the TLS setup failed: no CA
/// certificates, a broken store). The server does not start without it: a client without
/// the timeout and the no-redirect rule is never used instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not make the HTTP client that {purpose}: {reason}")]
pub struct ClientError {
    /// What the client is for: "fetches the issuer's keys".
    pub purpose: &'static str,
    pub reason: String,
}

/// A client for the issuer: a 10-second timeout, no redirects (an answer from elsewhere is
/// not the issuer's), no proxy from the environment.
pub(super) fn issuer_client(purpose: &'static str) -> Result<reqwest::Client, ClientError> {
    // The same TLS provider as the HTTP backend's clients; installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(ISSUER_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|error| ClientError {
            purpose,
            reason: deepest_cause(&error),
        })
}

/// The innermost cause of `error` (reqwest's own text is only "builder error").
fn deepest_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut deepest = error;
    while let Some(cause) = deepest.source() {
        deepest = cause;
    }
    deepest.to_string()
}

/// Why the keys are not at hand.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the issuer's keys could not be fetched: {0}")]
pub struct Unavailable(pub String);

/// The cached key set of one issuer.
#[derive(Debug)]
pub struct Keys {
    client: reqwest::Client,
    issuer: String,
    jwks_url: Option<String>,
    /// The set and when it was fetched: read by every verification, never held across I/O.
    current: std::sync::RwLock<Current>,
    /// Held while fetching, so one fetch runs at a time.
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone)]
struct Current {
    set: Option<Arc<JwkSet>>,
    fetched: Option<Instant>,
    /// Why the last fetch failed, while no set is at hand.
    failure: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    /// The JWKS URL once discovered.
    url: Option<String>,
}

impl Keys {
    pub fn new(issuer: &str, jwks_url: Option<&str>) -> Result<Self, ClientError> {
        Ok(Self {
            client: issuer_client("fetches the issuer's keys")?,
            issuer: issuer.trim_end_matches('/').to_owned(),
            jwks_url: jwks_url.map(ToOwned::to_owned),
            current: std::sync::RwLock::new(Current::default()),
            state: Mutex::new(State::default()),
        })
    }

    fn current(&self) -> Current {
        self.current.read().map_or_else(
            |poisoned| poisoned.into_inner().clone(),
            |current| current.clone(),
        )
    }

    /// The key a token names (`kid`; with no `kid`, the set's only key), or `None` when the
    /// set, fetched again if it may have changed, has no such key. `Unavailable` when no set
    /// could be fetched: nobody can be judged then.
    pub async fn find(&self, kid: Option<&str>) -> Result<Option<Jwk>, Unavailable> {
        let current = self.current();
        let expired = current.fetched.is_none_or(|at| at.elapsed() > MAX_AGE);
        if !expired && let Some(key) = pick(current.set.as_deref(), kid) {
            return Ok(Some(key));
        }
        let may_refetch = current.fetched.is_none_or(|at| at.elapsed() >= MIN_REFETCH);
        if expired || may_refetch {
            let mut state = self.state.lock().await;
            // Another request may have fetched while this one waited.
            let again = self.current();
            if again.fetched == current.fetched {
                self.refetch(&mut state).await;
            }
        }
        let current = self.current();
        match (&current.set, &current.failure) {
            (None, Some(failure)) => Err(Unavailable(failure.clone())),
            (None, None) => Err(Unavailable("no key set yet".to_owned())),
            (Some(set), _) => Ok(pick(Some(set), kid)),
        }
    }

    async fn refetch(&self, state: &mut State) {
        let result = self.fetch(state).await;
        let Ok(mut current) = self.current.write() else {
            return;
        };
        // A failed fetch counts too: an issuer that is down is not asked again at once.
        current.fetched = Some(Instant::now());
        match result {
            Ok(set) => {
                current.set = Some(Arc::new(set));
                current.failure = None;
            }
            // An old set keeps working while the issuer is unreachable.
            Err(error) => current.failure = Some(error.0),
        }
    }

    async fn fetch(&self, state: &mut State) -> Result<JwkSet, Unavailable> {
        let url = match (&self.jwks_url, &state.url) {
            (Some(url), _) | (None, Some(url)) => url.clone(),
            (None, None) => {
                let url = self.discover().await?;
                state.url = Some(url.clone());
                url
            }
        };
        let body = self.get(&url).await?;
        serde_json::from_slice(&body)
            .map_err(|error| Unavailable(format!("{url} is not a JWK set: {error}")))
    }

    /// `jwks_uri` from the issuer's metadata.
    async fn discover(&self) -> Result<String, Unavailable> {
        let mut last = String::new();
        for url in metadata_urls(&self.issuer) {
            match self.get(&url).await {
                Ok(body) => {
                    let metadata: serde_json::Value = serde_json::from_slice(&body)
                        .map_err(|error| Unavailable(format!("{url}: {error}")))?;
                    if metadata
                        .get("issuer")
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|issuer| issuer.trim_end_matches('/') != self.issuer)
                    {
                        return Err(Unavailable(format!("{url} names another issuer")));
                    }
                    return metadata
                        .get("jwks_uri")
                        .and_then(serde_json::Value::as_str)
                        .map(ToOwned::to_owned)
                        .ok_or_else(|| Unavailable(format!("{url} has no `jwks_uri`")));
                }
                Err(error) => last = error.0,
            }
        }
        Err(Unavailable(last))
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, Unavailable> {
        let response = self
            .client
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|error| Unavailable(format!("{url}: {error}")))?;
        if !response.status().is_success() {
            return Err(Unavailable(format!("{url}: HTTP {}", response.status())));
        }
        let body = response
            .bytes()
            .await
            .map_err(|error| Unavailable(format!("{url}: {error}")))?;
        if body.len() > MAX_BYTES {
            return Err(Unavailable(format!("{url}: larger than 1 MiB")));
        }
        Ok(body.to_vec())
    }
}

/// RFC 8414 section 3.1: the well-known segment goes between the host and the issuer's path;
/// then the `OpenID` form, appended.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let (origin, path) = match issuer.find("://").and_then(|scheme| {
        issuer[scheme + 3..]
            .find('/')
            .map(|slash| scheme + 3 + slash)
    }) {
        Some(split) => (&issuer[..split], &issuer[split..]),
        None => (issuer, ""),
    };
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ]
}

fn pick(set: Option<&JwkSet>, kid: Option<&str>) -> Option<Jwk> {
    let set = set?;
    match kid {
        Some(kid) => set.find(kid).cloned(),
        None if set.keys.len() == 1 => set.keys.first().cloned(),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{ClientError, deepest_cause, metadata_urls};

    #[test]
    fn a_client_error_names_what_the_client_is_for_and_the_innermost_cause() {
        let inner = std::io::Error::other("No CA certificates were loaded from the system");
        let outer = std::io::Error::other(inner);
        let error = ClientError {
            purpose: "fetches the issuer's keys",
            reason: deepest_cause(&outer),
        };
        assert_eq!(
            error.to_string(),
            "could not make the HTTP client that fetches the issuer's keys: No CA certificates were loaded from the system"
        );
    }

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_put_it() {
        assert_eq!(
            metadata_urls("https://id.example.com/realms/x"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server/realms/x",
                "https://id.example.com/realms/x/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://id.example.com"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server",
                "https://id.example.com/.well-known/openid-configuration"
            ]
        );
    }
}
