//! Opaque access tokens, checked by asking the issuer (RFC 7662 token introspection): the
//! server posts the token with its own client credentials and accepts it only if the answer
//! says `active`, names this resource in `aud` when it names any, this issuer in `iss` when it
//! names one, and has not expired. Answers are cached by a SHA-256 of the token (never the
//! token itself) until the token's `exp`, at most five minutes; a refusal for 30 seconds.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use super::Principal;
use super::keys::{ClientError, Unavailable};
use super::oauth::Rejection;

/// The longest an active answer is kept.
const KEEP_ACTIVE: Duration = Duration::from_secs(300);
/// How long a refusal is kept: a bad token retried in a loop does not reach the issuer.
const KEEP_REFUSED: Duration = Duration::from_secs(30);
/// Cached answers at most; beyond, expired ones are dropped, then refusals, then all.
const MAX_CACHED: usize = 10_000;
/// The issuer is asked at most this often: a stream of made-up tokens cannot become a
/// stream of requests that gets this server's client throttled. Beyond, `503`.
const MAX_QUESTIONS_PER_SECOND: u32 = 20;

/// Where and as whom to ask.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    pub client_id: String,
    pub client_secret: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Endpoint")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

type Judged = Result<Principal, Rejection>;

/// Asks the issuer, with a cache.
#[derive(Debug)]
pub struct Introspection {
    endpoint: Endpoint,
    client: reqwest::Client,
    cache: Mutex<HashMap<[u8; 32], (Judged, Instant)>>,
    questions: governor::DefaultDirectRateLimiter,
    leeway: Duration,
}

impl Introspection {
    pub fn new(endpoint: Endpoint, leeway: Duration) -> Result<Self, ClientError> {
        let client = super::keys::issuer_client("asks the issuer about opaque tokens")?;
        let per_second = std::num::NonZeroU32::new(MAX_QUESTIONS_PER_SECOND)
            .unwrap_or(std::num::NonZeroU32::MIN);
        Ok(Self {
            endpoint,
            client,
            cache: Mutex::new(HashMap::new()),
            questions: governor::RateLimiter::direct(governor::Quota::per_second(per_second)),
            leeway,
        })
    }

    pub async fn check(&self, token: &str, issuer: &str, audience: &str) -> Judged {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((answer, until)) = self.cache.lock().await.get(&key)
            && Instant::now() < *until
        {
            return answer.clone();
        }
        if self.questions.check().is_err() {
            return Err(Rejection::Unavailable(Unavailable(
                "too many unknown tokens: the issuer is asked at most 20 times a second".to_owned(),
            )));
        }
        let answer = match self.ask(token).await {
            Ok(claims) => judge(claims, issuer, audience, self.leeway.as_secs()),
            Err(unavailable) => return Err(Rejection::Unavailable(unavailable)),
        };
        let keep = match &answer {
            Ok(principal) => principal
                .claims
                .get("exp")
                .and_then(Value::as_u64)
                .map_or(KEEP_ACTIVE, |exp| {
                    Duration::from_secs(exp.saturating_sub(now())).min(KEEP_ACTIVE)
                }),
            Err(_) => KEEP_REFUSED,
        };
        let mut cache = self.cache.lock().await;
        if cache.len() >= MAX_CACHED {
            let moment = Instant::now();
            cache.retain(|_, (_, until)| *until > moment);
            if cache.len() >= MAX_CACHED {
                cache.retain(|_, (answer, _)| answer.is_ok());
            }
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(key, (answer.clone(), Instant::now() + keep));
        answer
    }

    async fn ask(&self, token: &str) -> Result<Map<String, Value>, Unavailable> {
        let url = &self.endpoint.url;
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let response = self
            .client
            .post(url)
            // RFC 6749 section 2.3.1: each part form-encoded before Basic encoding.
            .basic_auth(
                form_encoded(&self.endpoint.client_id),
                Some(form_encoded(&self.endpoint.client_secret)),
            )
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|error| Unavailable(format!("{url}: {}", error.without_url())))?;
        if !response.status().is_success() {
            return Err(Unavailable(format!("{url}: HTTP {}", response.status())));
        }
        let body = response
            .bytes()
            .await
            .map_err(|error| Unavailable(format!("{url}: {}", error.without_url())))?;
        serde_json::from_slice(&body)
            .map_err(|_| Unavailable(format!("{url} did not answer with a JSON object")))
    }
}

fn form_encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The issuer's answer, judged as a JWT's claims would be: active, an access token, for
/// this resource (`aud` is required: a token for another API on the same issuer is not
/// ours), from this issuer, within `exp` and `nbf` give or take `leeway` seconds.
fn judge(claims: Map<String, Value>, issuer: &str, audience: &str, leeway: u64) -> Judged {
    if claims.get("active") != Some(&Value::Bool(true)) {
        return Err(Rejection::Invalid("the token is not active"));
    }
    if let Some(kind) = claims.get("token_type").and_then(Value::as_str)
        && !(kind.eq_ignore_ascii_case("access_token") || kind.eq_ignore_ascii_case("bearer"))
    {
        return Err(Rejection::Invalid("the token is not an access token"));
    }
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_some_and(|exp| exp + leeway <= now())
    {
        return Err(Rejection::Invalid("the token has expired"));
    }
    if claims
        .get("nbf")
        .and_then(Value::as_u64)
        .is_some_and(|nbf| nbf > now() + leeway)
    {
        return Err(Rejection::Invalid("the token is not valid yet"));
    }
    if let Some(iss) = claims.get("iss").and_then(Value::as_str)
        && iss != issuer
    {
        return Err(Rejection::Invalid("the token is from another issuer"));
    }
    let for_us = match claims.get("aud") {
        Some(Value::String(aud)) => aud == audience,
        Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(audience)),
        _ => false,
    };
    if !for_us {
        return Err(Rejection::Invalid("the token is for another resource"));
    }
    super::oauth::principal(claims)
}
