//! The OAuth resource server: the test is the issuer. It makes its own keys (openssl),
//! serves its metadata and JWKS on 127.0.0.1, mints tokens, and tries every way a token
//! can be wrong; each gets `401` with a challenge that points at the metadata. Scopes decide
//! what a caller lists and calls (`403 insufficient_scope` names what to ask for), and the
//! caller's identity reaches the backend as `{auth.sub}` and `{auth.claims.NAME}`.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

use crate::harness::Workspace;
use crate::http_harness::HttpServer;
use crate::upstream::{Reply, Upstream};

pub(crate) const AUDIENCE: &str = "https://mcp.example.com/mcp";
const METADATA: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

/// A signing key made by openssl, and its public JWK.
pub(crate) struct Key {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    pub(crate) jwk: Jwk,
}

pub(crate) fn make_key(dir: &Path, kid: &str, alg: Algorithm) -> Key {
    let path = dir.join(format!("{kid}.pem"));
    let args: &[&str] = match alg {
        Algorithm::RS256 | Algorithm::PS256 => {
            &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        }
        Algorithm::ES256 => &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        _ => &["-algorithm", "ed25519"],
    };
    let status = Command::new("openssl")
        .arg("genpkey")
        .args(args)
        .arg("-out")
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl");
    assert!(status.success(), "openssl genpkey");
    let pem = std::fs::read(&path).expect("pem");
    let encoding = match alg {
        Algorithm::RS256 | Algorithm::PS256 => EncodingKey::from_rsa_pem(&pem),
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem),
        _ => EncodingKey::from_ed_pem(&pem),
    }
    .expect("a private key");
    let mut jwk = Jwk::from_encoding_key(&encoding, alg).expect("a JWK");
    jwk.common.key_id = Some(kid.to_owned());
    Key {
        kid: kid.to_owned(),
        alg,
        encoding,
        jwk,
    }
}

pub(crate) fn sign(key: &Key, claims: Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    encode(&header, &claims, &key.encoding).expect("sign")
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("time")
        .as_secs()
}

/// The issuer: metadata and a JWKS it can change, counting key fetches.
pub(crate) struct Issuer {
    upstream: Upstream,
    introspections: Arc<AtomicUsize>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    pub(crate) fn start(keys: Vec<Jwk>) -> Self {
        let keys = Arc::new(Mutex::new(keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let introspections = Arc::new(AtomicUsize::new(0));
        let (served, counted, introspected) =
            (keys.clone(), fetches.clone(), introspections.clone());
        let upstream = Upstream::start(move |request, port| {
            let issuer = format!("http://127.0.0.1:{port}");
            match request.path() {
                "/.well-known/oauth-authorization-server" => Reply::new(
                    200,
                    "application/json",
                    json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"), "response_types_supported": ["code"]}).to_string(),
                ),
                "/introspect" => {
                    introspected.fetch_add(1, Ordering::SeqCst);
                    // Basic mcp:s3cret-client (RFC 7662 callers authenticate).
                    if request.header("authorization") != Some("Basic bWNwOnMzY3JldC1jbGllbnQ=") {
                        return Reply::new(401, "application/json", "{}");
                    }
                    let body = String::from_utf8_lossy(&request.body).into_owned();
                    let token = body.split('&').find_map(|pair| pair.strip_prefix("token=")).unwrap_or_default().to_owned();
                    let (active, exp, aud) = match token.as_str() {
                        "opaque-good" => (true, now() + 600, AUDIENCE),
                        "opaque-expired" => (true, now() - 60, AUDIENCE),
                        "opaque-elsewhere" => (true, now() + 600, "https://other.example.com/mcp"),
                        _ => (false, 0, ""),
                    };
                    let answer = if active {
                        json!({"active": true, "sub": "opaque-user", "scope": "tickets:read", "aud": aud, "exp": exp, "iss": issuer})
                    } else {
                        json!({"active": false})
                    };
                    Reply::new(200, "application/json", answer.to_string())
                }
                "/jwks" => {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let set = JwkSet { keys: served.lock().expect("keys").clone() };
                    Reply::new(200, "application/json", serde_json::to_string(&set).expect("jwks"))
                }
                _ => Reply::new(404, "text/plain", "not here"),
            }
        });
        Self {
            upstream,
            introspections,
            fetches,
        }
    }

    pub(crate) fn url(&self) -> String {
        self.upstream.base()
    }

    pub(crate) fn claims(&self, sub: &str, scope: &str) -> Value {
        json!({"iss": self.url(), "aud": AUDIENCE, "sub": sub, "scope": scope, "exp": now() + 600, "iat": now(), "email": format!("{sub}@example.com")})
    }
}

pub(crate) fn manifest(issuer: &str) -> String {
    format!(
        r#"[server.auth]
issuer = "{issuer}"
audience = "{AUDIENCE}"

[[tools]]
name = "whoami"
[tools.command]
argv = ["sh", "-c", "echo \"$WHO $EMAIL $ARGS\"", "sh"]
env = {{ WHO = "{{auth.sub}}", EMAIL = "{{auth.claims.email}}", ARGS = "{{note}}" }}
[tools.arguments.note]
optional = true

[[tools]]
name = "read-tickets"
scopes = ["tickets:read"]
[tools.static]
content = [{{ type = "text", text = "the tickets" }}]

[[tools]]
name = "write-ticket"
scopes = ["tickets:read", "tickets:write"]
[tools.static]
content = [{{ type = "text", text = "written" }}]
"#
    )
}

pub(crate) fn call(
    server: &HttpServer,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> reqwest::blocking::Response {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
    if let Some(value) = &authorization {
        headers.push(("Authorization", value));
    }
    server.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        &headers,
    )
}

pub(crate) fn challenge(response: &reqwest::blocking::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn tokens_are_checked_and_every_wrong_one_gets_a_401_that_points_at_the_metadata() {
    let dir = tempfile::tempdir().expect("dir");
    let rsa = make_key(dir.path(), "rsa-1", Algorithm::RS256);
    let ec = make_key(dir.path(), "ec-1", Algorithm::ES256);
    let ed = make_key(dir.path(), "ed-1", Algorithm::EdDSA);
    let stranger = make_key(dir.path(), "rsa-1-forged", Algorithm::RS256);
    let issuer = Issuer::start(vec![rsa.jwk.clone(), ec.jwk.clone(), ed.jwk.clone()]);
    let workspace = Workspace::new(&manifest(&issuer.url()));
    let server = HttpServer::start(&workspace.manifest(), &[]);

    // The metadata, where the challenge says it is.
    let metadata: Value = server
        .client
        .get(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            server.base
        ))
        .send()
        .expect("GET")
        .text()
        .map(|text| serde_json::from_str(&text).expect("JSON"))
        .expect("body");
    assert_eq!(metadata["resource"], AUDIENCE);
    assert_eq!(metadata["authorization_servers"], json!([issuer.url()]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["tickets:read", "tickets:write"])
    );
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));

    // Valid tokens, one per algorithm family.
    for key in [&rsa, &ec, &ed] {
        let token = sign(key, issuer.claims("ada", ""));
        let response = call(
            &server,
            Some(&token),
            "tools/call",
            json!({"name": "whoami", "arguments": {"note": "hi"}}),
        );
        assert_eq!(response.status(), 200, "{:?}", key.alg);
        let text = crate::http_harness::message(response, 1)["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(text.trim(), "ada ada@example.com hi", "{:?}", key.alg);
    }

    // No token: a challenge without an error, naming the metadata.
    let response = call(&server, None, "tools/list", json!({}));
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge(&response),
        format!("Bearer resource_metadata=\"{METADATA}\"")
    );

    let cases = wrong_tokens(&issuer, &rsa, stranger, dir.path());
    for (name, token) in &cases {
        let response = call(&server, Some(token), "tools/list", json!({}));
        assert_eq!(response.status(), 401, "{name}");
        let challenge = challenge(&response);
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\", error_description=\""),
            "{name}: {challenge}"
        );
        assert!(
            challenge.ends_with(&format!("resource_metadata=\"{METADATA}\"")),
            "{name}: {challenge}"
        );
    }
    eprintln!(
        "oauth: 3 valid tokens accepted, {} wrong ones refused with 401",
        cases.len()
    );
    // Unknown key ids refetch the key set, at most once per few seconds, however many come.
    assert!(
        issuer.fetches.load(Ordering::SeqCst) <= 2,
        "{} fetches",
        issuer.fetches.load(Ordering::SeqCst)
    );
    let log = server.log();
    for (_, token) in &cases {
        assert!(!log.contains(token.as_str()), "a token reached the log");
    }
}

/// A token's scopes, the tools it lists, and what each call answers.
type Row = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, u16)],
);

#[test]
fn scopes_decide_what_a_caller_lists_and_calls_and_a_missing_one_can_be_stepped_up_to() {
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", Algorithm::ES256);
    let issuer = Issuer::start(vec![key.jwk.clone()]);
    let workspace = Workspace::new(&manifest(&issuer.url()));
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let matrix: [Row; 3] = [
        (
            "",
            &["whoami"],
            &[
                ("whoami", 200),
                ("read-tickets", 403),
                ("write-ticket", 403),
            ],
        ),
        (
            "tickets:read",
            &["whoami", "read-tickets"],
            &[("read-tickets", 200), ("write-ticket", 403)],
        ),
        (
            "tickets:read tickets:write",
            &["whoami", "read-tickets", "write-ticket"],
            &[("read-tickets", 200), ("write-ticket", 200)],
        ),
    ];
    for (scope, listed, calls) in matrix {
        let token = sign(&key, issuer.claims("grace", scope));
        let response = call(&server, Some(&token), "tools/list", json!({}));
        assert_eq!(response.status(), 200);
        let names: Vec<String> = crate::http_harness::message(response, 1)["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, listed, "scope `{scope}`");
        for (tool, status) in calls {
            let response = call(
                &server,
                Some(&token),
                "tools/call",
                json!({"name": tool, "arguments": {}}),
            );
            assert_eq!(
                response.status().as_u16(),
                *status,
                "scope `{scope}`, {tool}"
            );
            if *status == 403 {
                let challenge = challenge(&response);
                assert!(
                    challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\""),
                    "{challenge}"
                );
                // What to ask for: what the token has and what the tool needs.
                let asked = challenge
                    .split("scope=\"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .unwrap_or_default();
                for needed in if *tool == "write-ticket" {
                    vec!["tickets:read", "tickets:write"]
                } else {
                    vec!["tickets:read"]
                } {
                    assert!(asked.split(' ').any(|scope| scope == needed), "{asked}");
                }
                assert!(
                    challenge.contains(&format!("resource_metadata=\"{METADATA}\"")),
                    "{challenge}"
                );
            }
        }
    }
    // 2026 clients: the list varies by caller, so it is private.
    let token = sign(&key, issuer.claims("grace", "tickets:read"));
    let authorization = format!("Bearer {token}");
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": crate::harness::modern_meta()}}),
        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list"), ("Authorization", &authorization)],
    );
    assert_eq!(response.status(), 200);
    let result = crate::http_harness::message(response, 1)["result"].clone();
    assert_eq!(result["cacheScope"], "private", "{result}");
    // And not kept: after a step-up the same caller sees more.
    assert_eq!(result["ttlMs"], 0, "{result}");
}

#[test]
fn the_issuer_being_down_is_a_503_not_a_verdict_on_the_token() {
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", Algorithm::ES256);
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let issuer = format!("http://127.0.0.1:{closed}");
    let workspace = Workspace::new(&manifest(&issuer));
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".into());
    let claims = json!({"iss": issuer, "aud": AUDIENCE, "sub": "ada", "exp": now() + 600});
    let token = encode(&header, &claims, &key.encoding).expect("sign");
    let response = call(&server, Some(&token), "tools/list", json!({}));
    assert_eq!(response.status(), 503);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("5")
    );
    // Again at once (no new fetch for 5 s): still 503, not a verdict on the token.
    assert_eq!(
        call(&server, Some(&token), "tools/list", json!({})).status(),
        503
    );
}

#[test]
fn a_manifest_and_a_static_token_cannot_both_say_how_clients_authenticate() {
    let workspace = Workspace::new(&manifest("http://127.0.0.1:9"));
    let (code, _, stderr) = crate::harness::run(
        &[
            "--config",
            workspace.manifest().to_str().expect("utf-8"),
            "--http",
            "127.0.0.1:0",
            "--auth-token-env",
            "HOME",
        ],
        Path::new("/"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[server.auth] and --auth-token-* both say how clients authenticate"),
        "{stderr}"
    );
    let broken = "[server.auth]\nissuer = \"id.example.com\"\naudience = \"https://mcp.example.com/mcp\"\nalgorithms = [\"none\"]\n";
    let workspace = Workspace::new(broken);
    let (code, _, stderr) = crate::harness::run(
        &[
            "check",
            "--config",
            workspace.manifest().to_str().expect("utf-8"),
        ],
        Path::new("/"),
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("`id.example.com` is not an http(s) URL"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unsigned tokens are never accepted"),
        "{stderr}"
    );
}

/// Tokens that must be refused, each with what is wrong with it.
fn wrong_tokens(issuer: &Issuer, rsa: &Key, stranger: Key, dir: &Path) -> Vec<(String, String)> {
    let with = |name: &str, claims: Value| (name.to_owned(), sign(rsa, claims));
    let base = issuer.claims("ada", "");
    let patched = |patch: Value| {
        let mut claims = base.clone();
        for (key, value) in patch.as_object().expect("object") {
            if value.is_null() {
                claims.as_object_mut().expect("object").remove(key);
            } else {
                claims[key] = value.clone();
            }
        }
        claims
    };
    let mut cases = vec![
        with("expired", patched(json!({"exp": now() - 120}))),
        with("not yet valid", patched(json!({"nbf": now() + 600}))),
        with(
            "another audience",
            patched(json!({"aud": "https://other.example.com/mcp"})),
        ),
        with(
            "another issuer",
            patched(json!({"iss": "http://127.0.0.1:1"})),
        ),
        with("no exp", patched(json!({"exp": null}))),
        with("no sub", patched(json!({"sub": null}))),
    ];
    let header_none = base64url(br#"{"alg":"none","typ":"JWT","kid":"rsa-1"}"#);
    let payload = base64url(base.to_string().as_bytes());
    cases.push(("alg none".into(), format!("{header_none}.{payload}.")));
    // HS256 signed with the public key's bytes as the secret: the classic confusion attack.
    let public_as_secret = serde_json::to_vec(&rsa.jwk).expect("jwk");
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some("rsa-1".into());
    cases.push((
        "HS256 with the public key".into(),
        encode(
            &hs,
            &base,
            &EncodingKey::from_secret(&public_as_secret).expect("key"),
        )
        .expect("sign"),
    ));
    // Three made-up key ids: together they may refetch the issuer's keys once.
    for kid in ["nobody", "nobody-2", "nobody-3"] {
        let unknown = Key {
            kid: kid.into(),
            ..make_key(dir, kid, Algorithm::RS256)
        };
        cases.push((format!("unknown kid {kid}"), sign(&unknown, base.clone())));
    }
    // Signed by another key under a kid the issuer does publish.
    let forged = Key {
        kid: "rsa-1".into(),
        ..stranger
    };
    cases.push(("bad signature".into(), sign(&forged, base.clone())));
    cases.push(("garbage".into(), "not-a-jwt".into()));
    let valid = sign(rsa, base.clone());
    let (head, rest) = valid.split_once('.').expect("jwt");
    cases.push((
        "payload swapped".into(),
        format!(
            "{head}.{}.{}",
            base64url(patched(json!({"sub": "root"})).to_string().as_bytes()),
            rest.split_once('.').expect("jwt").1
        ),
    ));
    cases
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let value = chunk.iter().enumerate().fold(0u32, |acc, (index, byte)| {
            acc | (u32::from(*byte) << (16 - 8 * index))
        });
        for index in 0..=chunk.len() {
            out.push(char::from(
                ALPHABET[((value >> (18 - 6 * index)) & 63) as usize],
            ));
        }
    }
    out
}

#[test]
fn opaque_tokens_are_checked_at_the_issuer_and_its_answer_is_cached() {
    let issuer = Issuer::start(Vec::new());
    let text = manifest(&issuer.url()).replacen(
        &format!("audience = \"{AUDIENCE}\"\n"),
        &format!("audience = \"{AUDIENCE}\"\nintrospection-url = \"{}/introspect\"\nclient-id = \"mcp\"\nclient-secret = \"${{env:INTROSPECT_SECRET}}\"\n", issuer.url()),
        1,
    );
    let workspace = Workspace::new(&text);
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &[],
        &[("INTROSPECT_SECRET", "s3cret-client")],
    );
    for _ in 0..3 {
        let response = call(
            &server,
            Some("opaque-good"),
            "tools/call",
            json!({"name": "whoami", "arguments": {}}),
        );
        assert_eq!(response.status(), 200);
        let text = crate::http_harness::message(response, 1)["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(text.starts_with("opaque-user "), "{text}");
    }
    assert_eq!(
        issuer.introspections.load(Ordering::SeqCst),
        1,
        "one question for three calls"
    );
    // The scope came from the issuer's answer.
    let response = call(
        &server,
        Some("opaque-good"),
        "tools/call",
        json!({"name": "read-tickets", "arguments": {}}),
    );
    assert_eq!(response.status(), 200);
    for (token, description) in [
        ("opaque-expired", "the token has expired"),
        ("opaque-elsewhere", "the token is for another resource"),
        ("opaque-unknown", "the token is not active"),
    ] {
        let response = call(&server, Some(token), "tools/list", json!({}));
        assert_eq!(response.status(), 401, "{token}");
        assert!(
            challenge(&response).contains(&format!("error_description=\"{description}\"")),
            "{token}: {}",
            challenge(&response)
        );
    }
    // A refusal is remembered too: asking again does not reach the issuer.
    let before = issuer.introspections.load(Ordering::SeqCst);
    assert_eq!(
        call(&server, Some("opaque-unknown"), "tools/list", json!({})).status(),
        401
    );
    assert_eq!(issuer.introspections.load(Ordering::SeqCst), before);
    assert!(!server.log().contains("s3cret-client"));
}

#[test]
fn scopes_and_the_callers_identity_need_the_resource_server() {
    let text = "[[tools]]\nname = \"mine\"\nscopes = [\"files:read\"]\n[tools.command]\nargv = [\"ls\"]\n\n[[tools]]\nname = \"theirs\"\n[tools.command]\nargv = [\"ls\", \"--owner={auth.sub}\"]\n";
    let workspace = Workspace::new(text);
    let (code, _, stderr) = crate::harness::run(
        &[
            "check",
            "--config",
            workspace.manifest().to_str().expect("utf-8"),
        ],
        Path::new("/"),
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("`scopes` need `[server.auth]`"), "{stderr}");
    assert!(
        stderr.contains("`{auth.sub}` needs `[server.auth]`"),
        "{stderr}"
    );
}

#[test]
fn a_client_cannot_name_itself_and_a_stateless_caller_is_never_asked_a_question() {
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", Algorithm::ES256);
    let issuer = Issuer::start(vec![key.jwk.clone()]);
    let text = format!(
        r#"[server.auth]
issuer = "{}"
audience = "{AUDIENCE}"

[[tools]]
name = "who"
input-schema = '{{"type": "object"}}'
[tools.command]
argv = ["sh", "-c", "echo \"[$WHO]\"", "sh"]
env = {{ WHO = "{{auth.sub}}" }}

[[tools]]
name = "careful"
confirm = "Really?"
[tools.static]
content = [{{ type = "text", text = "done" }}]
"#,
        issuer.url()
    );
    let workspace = Workspace::new(&text);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let token = sign(&key, issuer.claims("ada", ""));
    // The schema allows any argument, so a client can send `auth.sub`: it is dropped.
    let response = call(
        &server,
        Some(&token),
        "tools/call",
        json!({"name": "who", "arguments": {"auth.sub": "root"}}),
    );
    let text = crate::http_harness::message(response, 1)["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(text.trim(), "[ada]");
    // A stateless request has no connection to ask on, token or not: a clear refusal, at once.
    let response = call(
        &server,
        Some(&token),
        "tools/call",
        json!({"name": "careful", "arguments": {}}),
    );
    let result = crate::http_harness::message(response, 1)["result"].clone();
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .ends_with("so it did not run"),
        "{result}"
    );
}
