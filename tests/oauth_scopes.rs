//! Scopes on prompts, resources and resource templates, as on tools: a caller lists only
//! what its token grants; getting, completing, reading or subscribing to the rest is `403
//! insufficient_scope` over HTTP (naming the scope, so a client can step up); and the
//! metadata lists every scope the manifest names.

use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

use crate::harness::Workspace;
use crate::http_harness::{HttpServer, message};
use crate::oauth::{AUDIENCE, Issuer, call, challenge, make_key, sign};

fn manifest(issuer: &str) -> String {
    format!(
        r#"[server.auth]
issuer = "{issuer}"
audience = "{AUDIENCE}"

[[tools]]
name = "noop"
[tools.static]
content = [{{ type = "text", text = "ok" }}]

[[prompts]]
name = "open-prompt"
[[prompts.messages]]
role = "user"
text = "hello"

[[prompts]]
name = "report-prompt"
scopes = ["reports:read"]
[prompts.arguments.quarter]
complete = ["q1", "q2"]
[[prompts.messages]]
role = "user"
text = "summarise {{quarter}}"

[[resources]]
uri = "docs://public"
name = "public"
text = "for everyone"

[[resources]]
uri = "docs://board"
name = "board"
text = "for the board"
scopes = ["reports:read"]

[[resource-templates]]
uri-template = "docs://{{name}}"
name = "any-doc"
text = "a doc called {{name}}"

[[resource-templates]]
uri-template = "reports://{{id}}"
name = "report"
text = "report {{id}}"
scopes = ["reports:read"]
[resource-templates.variables.id]
complete = ["7", "8"]
"#
    )
}

fn names(answer: &Value, list: &str, key: &str) -> Vec<String> {
    answer["result"][list]
        .as_array()
        .unwrap_or_else(|| panic!("a {list} list: {answer}"))
        .iter()
        .map(|entry| entry[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The server, its issuer's key, and tokens without and with `reports:read`.
struct Setup {
    server: HttpServer,
    without: String,
    with: String,
    _issuer: Issuer,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("dir");
    let key = make_key(dir.path(), "k1", Algorithm::ES256);
    let issuer = Issuer::start(vec![key.jwk.clone()]);
    let workspace = Workspace::new(&manifest(&issuer.url()));
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let without = sign(&key, issuer.claims("ada", ""));
    let with = sign(&key, issuer.claims("grace", "reports:read"));
    Setup {
        server,
        without,
        with,
        _issuer: issuer,
        _dir: dir,
    }
}

fn answer(server: &HttpServer, token: &str, method: &str, params: Value) -> Value {
    let response = call(server, Some(token), method, params);
    assert_eq!(response.status(), 200, "{method}");
    message(response, 1)
}

#[test]
fn each_caller_lists_the_prompts_resources_and_templates_its_token_grants() {
    let Setup {
        server,
        without,
        with,
        ..
    } = setup();
    let answer = |token: &str, method: &str, params: Value| answer(&server, token, method, params);
    // Listing: each caller sees what its token grants.
    for (token, prompts, resources, templates) in [
        (
            &without,
            vec!["open-prompt"],
            vec!["docs://public"],
            vec!["docs://{name}"],
        ),
        (
            &with,
            vec!["open-prompt", "report-prompt"],
            vec!["docs://public", "docs://board"],
            vec!["docs://{name}", "reports://{id}"],
        ),
    ] {
        assert_eq!(
            names(&answer(token, "prompts/list", json!({})), "prompts", "name"),
            prompts
        );
        assert_eq!(
            names(
                &answer(token, "resources/list", json!({})),
                "resources",
                "uri"
            ),
            resources
        );
        assert_eq!(
            names(
                &answer(token, "resources/templates/list", json!({})),
                "resourceTemplates",
                "uriTemplate"
            ),
            templates
        );
    }
    // A 2026 request is cut the same way.
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": crate::harness::modern_meta()}}),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "prompts/list"),
            ("Authorization", &format!("Bearer {without}")),
        ],
    );
    assert_eq!(
        names(&message(response, 1), "prompts", "name"),
        ["open-prompt"]
    );
}

#[test]
fn getting_reading_subscribing_and_completing_need_the_scopes_and_a_403_names_them() {
    let Setup {
        server,
        without,
        with,
        ..
    } = setup();
    let answer = |token: &str, method: &str, params: Value| answer(&server, token, method, params);
    // Using: refused with 403 and the scope to ask for, then served to the right token.
    let refusals = [
        (
            "prompts/get",
            json!({"name": "report-prompt", "arguments": {"quarter": "q1"}}),
        ),
        ("resources/read", json!({"uri": "docs://board"})),
        ("resources/read", json!({"uri": "reports://7"})),
        // The scoped resource's URI percent-encoded: the unscoped template would match it.
        ("resources/read", json!({"uri": "docs://b%6Fard"})),
        ("resources/subscribe", json!({"uri": "docs://board"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "report-prompt"}, "argument": {"name": "quarter", "value": ""}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "reports://{id}"}, "argument": {"name": "id", "value": ""}}),
        ),
    ];
    for (method, params) in &refusals {
        let refused = call(&server, Some(&without), method, params.clone());
        assert_eq!(refused.status(), 403, "{method} {params}");
        let challenge = challenge(&refused);
        assert!(
            challenge.contains("error=\"insufficient_scope\"")
                && challenge.contains("scope=\"reports:read\""),
            "{method}: {challenge}"
        );
    }
    let got = answer(&with, "prompts/get", refusals[0].1.clone());
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "summarise q1",
        "{got}"
    );
    let read = answer(&with, "resources/read", json!({"uri": "reports://7"}));
    assert_eq!(read["result"]["contents"][0]["text"], "report 7", "{read}");
    let read = answer(&with, "resources/read", json!({"uri": "docs://public"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "for everyone",
        "{read}"
    );
    let read = answer(&without, "resources/read", json!({"uri": "docs://public"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "for everyone",
        "{read}"
    );

    // Completion for the right token; an unscoped template reads for anyone.
    for reference in [
        json!({"type": "ref/prompt", "name": "report-prompt"}),
        json!({"type": "ref/resource", "uri": "reports://{id}"}),
    ] {
        let argument = if reference["type"] == "ref/prompt" {
            "quarter"
        } else {
            "id"
        };
        let params = json!({"ref": reference, "argument": {"name": argument, "value": ""}});
        let shown = answer(&with, "completion/complete", params);
        assert_eq!(
            shown["result"]["completion"]["values"]
                .as_array()
                .map(Vec::len),
            Some(2),
            "{shown}"
        );
    }
    let read = answer(&without, "resources/read", json!({"uri": "docs://notes"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "a doc called notes",
        "{read}"
    );
    // The metadata names every scope the manifest uses.
    let metadata = reqwest::blocking::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.base
    ))
    .and_then(reqwest::blocking::Response::text)
    .expect("GET");
    let metadata: Value = serde_json::from_str(&metadata).expect("JSON");
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .expect("scopes")
            .contains(&json!("reports:read")),
        "{metadata}"
    );
}
