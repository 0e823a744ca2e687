//! The 2026-07-28 era over stdio: no handshake, `_meta` on every request.

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta, repo_root, text};

fn request(server: &mut Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    server.request(method, params)
}

/// Without MCP Apps (or scopes) the list is the same for everyone: anyone may keep it.
#[test]
fn a_list_that_varies_with_no_request_is_public() {
    let workspace = crate::harness::Workspace::new(
        "[[tools]]\nname = \"noop\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"ok\" }]\n",
    );
    let mut server = workspace.serve();
    let response = request(&mut server, "tools/list", json!({}));
    assert_eq!(
        response["result"]["cacheScope"],
        json!("public"),
        "{response}"
    );
}

fn example() -> Server {
    Server::start(&repo_root().join("tools.example.toml"))
}

#[test]
fn server_discover_describes_the_server() {
    let mut server = example();
    let response = request(&mut server, "server/discover", json!({}));
    let result = &response["result"];
    assert_eq!(result["resultType"], json!("complete"));
    assert!(
        result["supportedVersions"]
            .as_array()
            .is_some_and(|versions| versions.contains(&json!("2026-07-28"))),
        "{result}"
    );
    assert_eq!(result["capabilities"]["tools"], json!({}));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        json!("catalog")
    );
    assert_eq!(
        result["instructions"],
        json!("Use `search` to find product names, then `product-details` for prices.")
    );
    assert!(result["ttlMs"].as_u64().is_some(), "{result}");
}

#[test]
fn tools_list_carries_cache_hints_result_type_and_server_info() {
    let mut server = example();
    let response = request(&mut server, "tools/list", json!({}));
    let result = &response["result"];
    assert_eq!(result["resultType"], json!("complete"));
    assert_eq!(result["ttlMs"], json!(60000));
    // The example's `product-card` has an MCP App: the list depends on what the request
    // declares, so only its caller may keep it.
    assert_eq!(result["cacheScope"], json!("private"));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        json!("1.0.0")
    );
    assert_eq!(result["tools"].as_array().map(Vec::len), Some(8));
}

#[test]
fn tools_call_works_without_a_handshake() {
    let mut server = example();
    let response = request(
        &mut server,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "mug"}}),
    );
    let result = &response["result"];
    assert_eq!(result["resultType"], json!("complete"));
    assert_eq!(text(result), "Travel mug\nMug rack");
    assert_eq!(result["isError"], json!(false));
    let response = request(
        &mut server,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "mug", "limit": 999}}),
    );
    assert_eq!(response["result"]["isError"], json!(true));
    assert_eq!(
        text(&response["result"]),
        "invalid arguments for tool `search`:\nlimit: 999 is greater than the maximum of 50"
    );
}

#[test]
fn missing_meta_and_unsupported_versions_are_rejected() {
    let mut server = example();
    let response = server.request("tools/list", json!({}));
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    let mut params = json!({});
    params["_meta"] = modern_meta();
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let response = server.request("tools/list", params);
    assert_eq!(response["error"]["code"], json!(-32022), "{response}");
    assert_eq!(response["error"]["data"]["requested"], json!("2099-01-01"));
    // The server keeps serving.
    let response = request(&mut server, "tools/list", json!({}));
    assert!(response["result"]["tools"].is_array());
}

#[test]
fn modern_clients_get_natural_structured_values() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "names"
output-schema = { type = "array", items = { type = "string" } }
[tools.command]
argv = ["printf", '["a","b"]']
"#,
    );
    let mut server = workspace.serve();
    let listed = request(&mut server, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][0]["outputSchema"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    let response = request(&mut server, "tools/call", json!({"name": "names"}));
    assert_eq!(response["result"]["structuredContent"], json!(["a", "b"]));
    assert_eq!(text(&response["result"]), "[\"a\",\"b\"]");
}
