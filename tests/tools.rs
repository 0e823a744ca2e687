//! The example manifest's tools, as a legacy (2025-11-25) client sees them.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Server, repo_root, text};

fn example() -> Server {
    Server::initialized(&repo_root().join("tools.example.toml"), "2025-11-25")
}

#[test]
fn tools_list_advertises_every_tool_in_manifest_order_with_its_schema() {
    let mut server = example();
    let response = server.request("tools/list", json!({}));
    let tools = response["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "search",
            "product-details",
            "product-card",
            "clear-catalog",
            "exchange-rates",
            "disk-free",
            "find-in-files",
            "list-files"
        ]
    );
    assert_eq!(
        tools[0],
        json!({
            "name": "search",
            "title": "Search products",
            "description": "Search the product catalog",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Substring to match against product names"},
                    "limit": {"type": "integer", "description": "Most names to return", "minimum": 1, "maximum": 50, "default": 10}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })
    );
    // Key order is the manifest's (serde_json preserve_order), not alphabetical.
    let raw = response["result"]["tools"][0]["inputSchema"].to_string();
    assert!(
        raw.starts_with(r#"{"type":"object","properties":{"query""#),
        "{raw}"
    );
    // A tool without arguments still advertises `properties`, which some converters read
    // unconditionally (smolagents loads no tool without it).
    assert_eq!(
        tools[3]["inputSchema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        tools[3]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false})
    );
    assert!(
        response["result"].get("resultType").is_none(),
        "legacy replies carry no resultType"
    );
    assert!(response["result"].get("ttlMs").is_none());
}

/// Past a thousand tools the answer is written in parts, on every core: it still holds
/// every tool once, in manifest order, each whole, in both eras' forms.
#[test]
fn a_list_of_thousands_of_tools_is_whole_and_in_manifest_order() {
    let mut manifest = String::from("[schemas]\nTag = { type = \"string\" }\n");
    for index in 0..2_500 {
        manifest.push_str(&format!(
            "[[tools]]\nname = \"t{index}\"\ninput-schema = '{{\"type\": \"object\", \"properties\": {{\"tag\": {{\"$ref\": \"#/$defs/Tag\"}}}}}}'\n[tools.static]\ncontent = [{{ type = \"text\", text = \"{index}\" }}]\n"
        ));
    }
    let workspace = crate::harness::Workspace::new(&manifest);
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    for _ in 0..2 {
        let list = server.request("tools/list", json!({}));
        let tools = list["result"]["tools"].as_array().expect("tools");
        let names: Vec<&str> = tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        let expected: Vec<String> = (0..2_500).map(|index| format!("t{index}")).collect();
        assert_eq!(names, expected);
        assert!(
            tools.iter().all(|tool| {
                tool["inputSchema"]["properties"]["tag"] == json!({"type": "string"})
            })
        );
    }
}

#[test]
fn search_matches_case_insensitive_substrings() {
    let mut server = example();
    let result = server.call("search", json!({"query": "mug"}));
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "Travel mug\nMug rack"}], "isError": false})
    );
    let result = server.call("search", json!({"query": "MUG", "limit": 1}));
    assert_eq!(text(&result), "Travel mug");
    let result = server.call("search", json!({"query": "teapot"}));
    assert_eq!(text(&result), "");
    assert_eq!(result["isError"], json!(false));
}

#[test]
fn search_rejects_a_limit_over_the_maximum_with_a_correctable_error() {
    let mut server = example();
    let result = server.call("search", json!({"query": "mug", "limit": 999}));
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "invalid arguments for tool `search`:\nlimit: 999 is greater than the maximum of 50"}],
            "isError": true
        })
    );
}

#[test]
fn every_argument_violation_is_named() {
    let mut server = example();
    let result = server.call("search", json!({"limit": "ten", "color": "red"}));
    assert_eq!(
        text(&result),
        "invalid arguments for tool `search`:\n\
         arguments: unexpected property `color`\n\
         limit: \"ten\" is not of type \"integer\"\n\
         query: required, but missing"
    );
}

#[test]
fn product_details_returns_structured_content_and_its_json_text() {
    let mut server = example();
    let result = server.call("product-details", json!({"name": "Mug rack"}));
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "{\"name\":\"Mug rack\",\"price\":36}"}],
            "structuredContent": {"name": "Mug rack", "price": 36},
            "isError": false
        })
    );
    let response = server.request("tools/list", json!({}));
    assert_eq!(
        response["result"]["tools"][1]["outputSchema"],
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "price": {"type": "number", "description": "Price in euros"}},
            "required": ["name", "price"]
        })
    );
}

#[test]
fn an_unknown_product_is_a_tool_error_with_the_scripts_message() {
    let mut server = example();
    let result = server.call("product-details", json!({"name": "Teapot"}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "`./examples/catalog.sh` exited with status 1\n\nno product is named \"Teapot\""
    );
    assert!(result.get("structuredContent").is_none());
}

#[test]
fn clear_catalog_asks_first_then_empties_this_servers_copy_and_keeps_the_shipped_file() {
    let shipped =
        std::fs::read_to_string(repo_root().join("examples/catalog.tsv")).expect("catalog");
    let mut server = Server::start(&repo_root().join("tools.example.toml"));
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    server.notify("notifications/initialized", None);
    let clear = |server: &mut Server, action: &str| {
        let id = server.start_request("tools/call", json!({"name": "clear-catalog"}));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let message = server.next_message(deadline).expect("a message in time");
            if message["method"] == json!("elicitation/create") {
                assert_eq!(
                    message["params"]["message"],
                    json!("Remove every product from this server's catalog?")
                );
                server.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {"action": action, "content": {}}}));
            } else if message["id"] == json!(id) {
                return message["result"].clone();
            }
        }
    };
    let declined = clear(&mut server, "decline");
    assert_eq!(declined["isError"], json!(true), "{declined}");
    assert_eq!(
        text(&server.call("search", json!({"query": "mug"}))),
        "Travel mug\nMug rack",
        "declining kept the catalog"
    );
    let result = clear(&mut server, "accept");
    assert_eq!(text(&result), "Cleared 3 products from the catalog.");
    assert_eq!(text(&server.call("search", json!({"query": "mug"}))), "");
    // This server's copy is named after it (`MCP_SERVE_INSTANCE`: its id and a random part).
    let prefix = format!("catalog-{}-", server.pid());
    drop(server);
    let state = repo_root().join("examples/state");
    for entry in std::fs::read_dir(&state).expect("state").flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    assert_eq!(
        std::fs::read_to_string(repo_root().join("examples/catalog.tsv")).expect("catalog"),
        shipped
    );
    // A new server starts from the full catalog.
    let mut server = example();
    assert_eq!(
        text(&server.call("search", json!({"query": "mug"}))),
        "Travel mug\nMug rack"
    );
}

#[test]
fn find_in_files_expands_the_list_and_keeps_hostile_patterns_whole() {
    let mut server = example();
    let result = server.call(
        "find-in-files",
        json!({"pattern": "MUG", "files": ["examples/catalog.tsv", "./examples/catalog.tsv"], "ignore-case": true}),
    );
    assert_eq!(
        text(&result),
        "examples/catalog.tsv:2:Travel mug\t24\nexamples/catalog.tsv:3:Mug rack\t36\n\
         ./examples/catalog.tsv:2:Travel mug\t24\n./examples/catalog.tsv:3:Mug rack\t36"
    );
    let result = server.call(
        "find-in-files",
        json!({"pattern": "MUG", "files": ["examples/catalog.tsv"]}),
    );
    assert_eq!(text(&result), "", "without ignore-case there is no -i");
    // grep's exit code 1 ("no match") is declared a success.
    let result = server.call(
        "find-in-files",
        json!({"pattern": "--version; rm -rf /", "files": ["examples/catalog.tsv"]}),
    );
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": ""}], "isError": false})
    );
    // A missing file makes grep exit 2: a tool error carrying grep's own message.
    let result = server.call("find-in-files", json!({"pattern": "x", "files": ["-nope"]}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "`grep` exited with status 2\n\ngrep: -nope: No such file or directory"
    );
}

#[test]
fn list_files_uses_flags_and_optional_groups() {
    let mut server = example();
    let plain = server.call("list-files", json!({"path": "examples/products"}));
    assert_eq!(
        text(&plain),
        "espresso-cup.png\nespresso-cup.wav\nmug-rack.png\nmug-rack.wav\ntravel-mug.png\ntravel-mug.wav"
    );
    let result = server.call(
        "list-files",
        json!({"path": "examples/products", "sort": "size"}),
    );
    assert_eq!(
        text(&result),
        "espresso-cup.wav\ntravel-mug.wav\nmug-rack.wav\nespresso-cup.png\nmug-rack.png\ntravel-mug.png"
    );
    let result = server.call("list-files", json!({"path": "examples", "sort": "colour"}));
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(&result).contains("sort: \"colour\" is not one of"),
        "{}",
        text(&result)
    );
    let result = server.call("list-files", json!({"all": true}));
    assert!(
        text(&result).lines().any(|line| line == ".gitignore"),
        "{}",
        text(&result)
    );
    let result = server.call("list-files", json!({"all": false}));
    assert!(
        !text(&result).lines().any(|line| line == ".gitignore"),
        "{}",
        text(&result)
    );
}

#[test]
fn exchange_rates_calls_the_local_rates_service() {
    let service = crate::harness::RatesService::start();
    let mut server = example();
    let result = server.call("exchange-rates", json!({"currency": "EUR"}));
    drop(service);
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(result["structuredContent"]["base"], json!("EUR"));
    assert_eq!(result["structuredContent"]["rates"]["USD"], json!(1.0612));
    let result = server.call("exchange-rates", json!({"currency": "CHF"}));
    assert_eq!(
        result["isError"],
        json!(true),
        "not in the enum: rejected before any request"
    );
}

/// The stdio transport answers `tools/list` from bytes serialized once per registry; with
/// traces on, every request goes through rmcp instead. Both must write the same line, byte
/// for byte, in every era, for any request id; a request with a cursor, or a list sent
/// before the handshake ends, is still rmcp's to answer.
#[cfg(feature = "otlp")]
#[test]
fn serialized_tools_list_answers_are_the_bytes_rmcp_writes() {
    let workspace = crate::harness::Workspace::new(
        r#"
[server]
name = "lists"
version = "2.0.0"

[[tools]]
name = "weather"
title = "Weather"
description = "The weather in a city."
annotations = { read-only = true }
[tools.arguments.city]
type = "string"
description = "The city."
[tools.output-schema]
type = "object"
properties = { temperature = { type = "number" } }
[tools.static]
structured-content = { temperature = 21.5 }

[[tools]]
name = "plain"
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    let transcript = |traced: bool, era: &str| {
        let extra: &[&str] = if traced {
            &["--otlp-endpoint", "http://127.0.0.1:9"]
        } else {
            &[]
        };
        let mut server = Server::start_with(&workspace.manifest(), extra, &[]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut lines = Vec::new();
        let list = |id: Value, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        if era == "2026-07-28" {
            let meta = json!({"_meta": crate::harness::modern_meta()});
            server.send(&list(json!(7), meta.clone()));
            server.send(&list(json!("seven"), meta));
            server.send(&list(
                json!(8),
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            ));
        } else {
            server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": crate::harness::initialize_params(era)}));
            lines.push(server.next_line(deadline).expect("initialize"));
            server.notify("notifications/initialized", None);
            server.send(&list(json!(7), json!({})));
            server.send(&list(
                json!("seven"),
                json!({"_meta": {"progressToken": 3}}),
            ));
            server.send(&list(json!(8), json!({"cursor": "abc"})));
        }
        for _ in 0..3 {
            lines.push(server.next_line(deadline).expect("an answer"));
        }
        // Answers may come in any order: sort by id.
        lines.sort();
        lines
    };
    for era in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let served = transcript(false, era);
        let through_rmcp = transcript(true, era);
        assert_eq!(served, through_rmcp, "{era}");
        let tools: Vec<&str> = served
            .iter()
            .filter(|line| line.contains(r#""tools":["#))
            .map(String::as_str)
            .collect();
        assert_eq!(tools.len(), 2, "{era}: {served:?}");
        assert!(tools[0].contains(r#""name":"weather""#), "{era}: {tools:?}");
        assert_eq!(
            tools[0].contains("outputSchema"),
            era >= "2025-06-18",
            "{era}: {tools:?}"
        );
        assert_eq!(
            tools[0].contains(r#""ttlMs":60000"#),
            era == "2026-07-28",
            "{era}"
        );
    }
}

/// The request that begins a 2026-07-28 session over stdio must reach rmcp even when it is a
/// `tools/list`: else rmcp still waits for a first request, and the next notification ends
/// the session. Likewise a list that ends input gets written before the server exits.
#[test]
fn a_session_begun_by_a_list_goes_on() {
    let workspace = crate::harness::Workspace::new(
        "[[tools]]\nname = \"plain\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"ok\" }]\n",
    );
    let mut server = Server::start(&workspace.manifest());
    let meta = json!({"_meta": crate::harness::modern_meta()});
    let listed = server.request("tools/list", meta.clone());
    assert_eq!(
        listed["result"]["tools"][0]["name"],
        json!("plain"),
        "{listed}"
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99, "_meta": crate::harness::modern_meta()}}));
    let listed = server.request("tools/list", meta.clone());
    assert_eq!(
        listed["result"]["tools"][0]["name"],
        json!("plain"),
        "{listed}"
    );
    let called = server.request(
        "tools/call",
        json!({"name": "plain", "arguments": {}, "_meta": crate::harness::modern_meta()}),
    );
    assert_eq!(text(&called["result"]), "ok", "{called}");

    // `printf … | mcp-serve`: every answer is written before the process exits.
    let mut input = String::new();
    input.push_str(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": crate::harness::initialize_params("2025-11-25")}).to_string());
    input.push('\n');
    input.push_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    input.push('\n');
    for id in 2..12 {
        input.push_str(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string());
        input.push('\n');
    }
    let mut child = std::process::Command::new(crate::harness::BINARY)
        .args(["--config"])
        .arg(workspace.manifest())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), input.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("output");
    let lists = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(r#""tools":["#))
        .count();
    assert_eq!(lists, 10, "{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn null_for_an_optional_argument_is_leaving_it_out_and_a_required_one_refuses_it() {
    let mut server = Server::initialized(
        &crate::harness::repo_root().join("tools.example.toml"),
        "2025-11-25",
    );
    // `all` is optional and takes no null: as if it were left out, so `path` gets its default.
    let listed = server.call("list-files", json!({"all": null, "path": null}));
    assert_eq!(listed["isError"], json!(false), "{listed}");
    let plain = server.call("list-files", json!({}));
    assert_eq!(listed["content"], plain["content"]);
    // `query` is required: null is still a value that does not fit.
    let refused = server.call("search", json!({"query": null}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(
        crate::harness::text(&refused).contains("query"),
        "{refused}"
    );
}

#[test]
fn an_authors_object_schema_without_properties_is_advertised_with_empty_ones() {
    let workspace = crate::harness::Workspace::new(
        r#"
[[tools]]
name = "open"
description = "Takes any object"
input-schema = '{ "type": "object", "additionalProperties": true }'
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    let mut server = Server::initialized(&workspace.manifest(), "2025-11-25");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"],
        json!({"type": "object", "additionalProperties": true, "properties": {}}),
        "{listed}"
    );
    // What it accepts is unchanged.
    let called = server.call("open", json!({"anything": [1, 2]}));
    assert_eq!(called["isError"], json!(false), "{called}");
}

const REFERENCES: &str = r##"
[[tools]]
name = "tag"
description = "Tags items"
input-schema = '''
{ "type": "object",
  "properties": {
    "ids": { "type": "array", "items": { "$ref": "#/$defs/id" } },
    "tree": { "$ref": "#/$defs/node" } },
  "$defs": {
    "id": { "type": "string", "pattern": "^[a-z]+$" },
    "node": { "type": "object", "additionalProperties": false,
              "properties": { "name": { "$ref": "#/$defs/id" },
                              "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
  "required": ["ids"],
  "additionalProperties": false }
'''
output-schema = '''
{ "type": "array", "items": { "$ref": "#/$defs/id" }, "$defs": { "id": { "type": "string" } } }
'''
[tools.static]
content = [{ type = "text", text = "[\"a\"]" }]
structured-content = ["a"]
"##;

#[test]
fn local_references_are_inlined_in_what_is_advertised_and_recursive_ones_kept() {
    let workspace = crate::harness::Workspace::new(REFERENCES);
    let mut server = Server::initialized(&workspace.manifest(), "2025-06-18");
    let listed = server.request("tools/list", json!({}));
    let tool = &listed["result"]["tools"][0];
    let input = &tool["inputSchema"];
    assert_eq!(
        input["properties"]["ids"]["items"],
        json!({"type": "string", "pattern": "^[a-z]+$"}),
        "{input}"
    );
    // The recursive `node` stays a reference, with the definitions it needs.
    assert_eq!(
        input["properties"]["tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/node"})
    );
    assert_eq!(
        input["$defs"]["node"]["properties"]["name"],
        json!({"type": "string", "pattern": "^[a-z]+$"})
    );
    // A 2025-06 client sees the array output wrapped, inlined inside.
    assert_eq!(
        tool["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "string"}}}, "required": ["result"]})
    );
    // Validation is the written schema's.
    let refused = server.call("tag", json!({"ids": ["A"]}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(
        crate::harness::text(&refused).contains("ids[0]"),
        "{refused}"
    );
    let deep = server.call(
        "tag",
        json!({"ids": ["a"], "tree": {"name": "x", "children": [{"name": "Y"}]}}),
    );
    assert_eq!(deep["isError"], json!(true), "{deep}");
    let fine = server.call("tag", json!({"ids": ["a"], "tree": {"children": []}}));
    assert_eq!(fine["isError"], json!(false), "{fine}");

    // `inline-refs = false` advertises the schemas as written.
    let written =
        crate::harness::Workspace::new(&format!("[server]\ninline-refs = false\n{REFERENCES}"));
    let mut server = Server::initialized(&written.manifest(), "2025-11-25");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["properties"]["ids"]["items"],
        json!({"$ref": "#/$defs/id"})
    );
}
