//! An OAuth issuer for the auth rows: an ES256 key made with openssl, its JWKS served by
//! the local upstream (with the issuer's metadata), and one access token for the load.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};

/// The audience the auth manifest names and every token carries.
pub(crate) const AUDIENCE: &str = "http://bench.invalid/mcp";

/// A signing key and the JWKS that publishes it.
pub(crate) struct Issuer {
    key: EncodingKey,
    pub(crate) jwks: String,
}

impl Issuer {
    pub(crate) fn new(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("issuer.pem");
        let status = Command::new("openssl")
            .args([
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
            ])
            .arg(&path)
            .stderr(Stdio::null())
            .status()
            .context("openssl")?;
        if !status.success() {
            bail!("openssl genpkey failed");
        }
        let key = EncodingKey::from_ec_pem(&std::fs::read(&path)?)?;
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)?;
        jwk.common.key_id = Some("bench".to_owned());
        let jwks = serde_json::to_string(&JwkSet { keys: vec![jwk] })?;
        Ok(Self { key, jwks })
    }

    /// A token for `issuer`, valid for an hour.
    pub(crate) fn token(&self, issuer: &str) -> anyhow::Result<String> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("bench".to_owned());
        let claims = serde_json::json!({
            "iss": issuer, "aud": AUDIENCE, "sub": "bench", "scope": "bench",
            "iat": now, "exp": now + 3600,
        });
        Ok(encode(&header, &claims, &self.key)?)
    }
}
