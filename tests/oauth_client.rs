//! The official TypeScript client's own OAuth flow against mcp-serve as a resource server,
//! in both eras: from the first `401` it finds the protected resource metadata, then the
//! issuer's metadata (the test's issuer: metadata, JWKS and a token endpoint granting
//! client credentials on 127.0.0.1), gets a token for this resource (RFC 8707 `resource`),
//! and on a tool's `403 insufficient_scope` steps up to the scope the challenge names.

use std::sync::{Arc, Mutex};

use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::JwkSet;
use serde_json::{Value, json};

use crate::harness::Workspace;
use crate::http_harness::HttpServer;
use crate::oauth::{AUDIENCE, make_key, manifest, now, sign};
use crate::upstream::{Reply, Upstream};

const CLIENT_ID: &str = "ts-client";
const CLIENT_SECRET: &str = "ts-s3cret";

/// The form fields of one token request.
type TokenRequest = Vec<(String, String)>;

/// An issuer that grants client credentials: the scopes asked for (of those it knows), for
/// the resource asked for.
fn issuer(dir: &std::path::Path) -> (Upstream, Arc<Mutex<Vec<TokenRequest>>>) {
    let key = make_key(dir, "ts-key", Algorithm::ES256);
    let jwks = serde_json::to_string(&JwkSet {
        keys: vec![key.jwk.clone()],
    })
    .expect("jwks");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{CLIENT_ID}:{CLIENT_SECRET}")
        )
    );
    let upstream = Upstream::start(move |request, port| {
        let issuer = format!("http://127.0.0.1:{port}");
        match request.path() {
            "/.well-known/oauth-authorization-server" => Reply::new(
                200,
                "application/json",
                json!({
                    "issuer": issuer,
                    "jwks_uri": format!("{issuer}/jwks"),
                    "token_endpoint": format!("{issuer}/token"),
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                    "scopes_supported": ["tickets:read", "tickets:write"],
                })
                .to_string(),
            ),
            "/jwks" => Reply::new(200, "application/json", jwks.clone()),
            "/token" => {
                let form: TokenRequest = form_urlencoded::parse(&request.body)
                    .map(|(name, value)| (name.into_owned(), value.into_owned()))
                    .collect();
                seen.lock().expect("requests").push(form.clone());
                let field = |name: &str| {
                    form.iter()
                        .find(|(key, _)| key == name)
                        .map(|(_, value)| value.clone())
                        .unwrap_or_default()
                };
                if request.header("authorization") != Some(basic.as_str())
                    || field("grant_type") != "client_credentials"
                {
                    return Reply::new(401, "application/json", r#"{"error":"invalid_client"}"#);
                }
                let scope = field("scope")
                    .split(' ')
                    .filter(|scope| matches!(*scope, "tickets:read" | "tickets:write"))
                    .collect::<Vec<_>>()
                    .join(" ");
                let token = sign(
                    &key,
                    json!({"iss": issuer, "aud": field("resource"), "sub": CLIENT_ID,
                           "scope": scope, "exp": now() + 600, "iat": now(),
                           "email": "robot@example.com"}),
                );
                Reply::new(
                    200,
                    "application/json",
                    json!({"access_token": token, "token_type": "Bearer",
                           "expires_in": 600, "scope": scope})
                    .to_string(),
                )
            }
            _ => Reply::new(404, "text/plain", "not here"),
        }
    });
    (upstream, requests)
}

/// A port nothing listens on now, for a manifest that must name the server's own URL.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

fn drive(mode: &str, url: &str, issuer: &str) -> Value {
    crate::interop::node_report(
        "oauth_client.mjs",
        &[mode, url, issuer, CLIENT_ID, CLIENT_SECRET],
    )
}

#[test]
fn the_typescript_clients_oauth_flow_discovers_gets_a_token_and_steps_up_in_both_eras() {
    for mode in ["legacy", "auto"] {
        let dir = tempfile::tempdir().expect("dir");
        let (issuer, requests) = issuer(dir.path());
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        // Every request needs `tickets:read`: the 401's challenge names it, so the client
        // asks for that first (not every scope the metadata lists).
        let workspace = Workspace::new(&manifest(&issuer.base()).replace(
            &format!("audience = \"{AUDIENCE}\""),
            &format!("audience = \"{resource}\"\nscopes = [\"tickets:read\"]"),
        ));
        let server = HttpServer::start_at(
            &format!("127.0.0.1:{port}"),
            &workspace.manifest(),
            &[],
            &[],
        );
        let report = drive(mode, &server.url, &issuer.base());
        assert!(
            report.get("failure").is_none(),
            "{mode}: {}",
            report["failure"]
        );
        eprintln!("{mode}: {report}");
        let expected_era = if mode == "legacy" { "legacy" } else { "modern" };
        assert_eq!(report["era"], json!(expected_era), "{report}");
        // The first token has what the client asked for; the list shows what it grants.
        assert_eq!(report["firstScope"], json!("tickets:read"));
        assert_eq!(report["tools"], json!(["whoami", "read-tickets"]));
        assert_eq!(report["whoami"], json!("ts-client robot@example.com hello"));
        assert_eq!(report["read"], json!("the tickets"));
        // The 403's challenge named the missing scope; the client stepped up and retried.
        assert_eq!(report["write"], json!("written"));
        assert_eq!(
            report["steppedUpScope"],
            json!("tickets:read tickets:write")
        );
        assert_eq!(
            report["toolsAfter"],
            json!(["whoami", "read-tickets", "write-ticket"]),
            "{mode}"
        );
        let requests = requests.lock().expect("requests").clone();
        assert_eq!(
            requests.len(),
            2,
            "one token, then the step-up: {requests:?}"
        );
        for request in &requests {
            assert!(
                request.contains(&("resource".to_owned(), resource.clone())),
                "the token is asked for this resource (RFC 8707): {request:?}"
            );
        }
    }
}
