//! MCP Apps (`[tools.app]`, the `io.modelcontextprotocol/ui` extension) on the wire: a
//! client that declares the extension gets a tool's `_meta.ui`, its page as a `ui://`
//! resource with the CSP it declares, and the tools only a page may call (through the
//! pipeline, with its policies); a client that does not sees what it saw before, over
//! stdio and HTTP, in both protocol eras. The page is read as declared files are. What a
//! manifest may say is checked at load. The page rendered in a real browser is
//! `tests/apps_browser.rs`.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, run};
use crate::http_harness::{HttpServer, message, open_session_with};

const PAGE: &str = "<!DOCTYPE html><html><body><p>card for tok-2718281828</p></body></html>\n";

/// The declaration of a host that renders pages.
fn renders_apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// A tool with a page, a tool only a page may call (at most one call an hour), and a plain
/// tool, the page naming a secret the manifest references.
fn workspace() -> Workspace {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "card"
title = "Card"
description = "Shows a card"
[tools.http]
url = "http://127.0.0.1:9/"
headers = { Authorization = "Bearer ${env:APPS_TEST_TOKEN}" }
[tools.app]
page = "page.html"
uri = "ui://shop/card"
prefers-border = true
permissions = ["clipboard-write"]
[tools.app.csp]
connect-domains = ["https://api.example.com"]
resource-domains = ["https://*.cdn.example.com"]

[[tools]]
name = "refresh"
title = "Refresh"
description = "Called by the card only"
rate = "1/h"
[tools.static]
content = [{ type = "text", text = "refreshed" }]
[tools.app]
visibility = ["app"]

[[tools]]
name = "plain"
title = "Plain"
description = "No app"
[tools.static]
content = [{ type = "text", text = "plain" }]
"#,
    );
    std::fs::write(workspace.path("page.html"), PAGE).expect("page");
    workspace
}

/// `check` on `workspace`'s manifest: its exit code and all it printed.
fn check(workspace: &Workspace, extra: &[&str]) -> (i32, String) {
    let manifest = workspace.manifest();
    let mut arguments = vec!["check", "--config", manifest.to_str().expect("path")];
    arguments.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&arguments, workspace.dir.path());
    (code, format!("{stdout}{stderr}"))
}

fn serve(workspace: &Workspace) -> Server {
    Server::start_with(
        &workspace.manifest(),
        &[],
        &[("APPS_TEST_TOKEN", "tok-2718281828")],
    )
}

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["name"].as_str().expect("name").to_owned())
        .collect()
}

/// What a client with these capabilities sees over stdio in 2025-11-25.
fn seen_over_stdio(capabilities: &Value) -> (Value, Value, Value, Value, Value, Value) {
    let workspace = workspace();
    let mut server = serve(&workspace);
    let mut params = crate::harness::initialize_params("2025-11-25");
    params["capabilities"] = capabilities.clone();
    let initialized = server.request("initialize", params);
    server.notify("notifications/initialized", None);
    let tools = server.request("tools/list", json!({}));
    let resources = server.request("resources/list", json!({}));
    let page = server.request("resources/read", json!({"uri": "ui://shop/card"}));
    let first = server.request("tools/call", json!({"name": "refresh", "arguments": {}}));
    let second = server.request("tools/call", json!({"name": "refresh", "arguments": {}}));
    (
        initialized["result"]["capabilities"].clone(),
        tools["result"].clone(),
        resources["result"]["resources"].clone(),
        page,
        first,
        second,
    )
}

#[test]
fn a_client_that_renders_apps_gets_pages_and_app_tools_through_the_pipeline() {
    let (capabilities, tools, resources, page, first, second) = seen_over_stdio(&renders_apps());
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/ui"],
        json!({})
    );
    assert_eq!(names(&tools), ["card", "refresh", "plain"]);
    assert_eq!(
        tools["tools"][0]["_meta"],
        json!({"ui": {"resourceUri": "ui://shop/card", "visibility": ["model", "app"]}, "ui/resourceUri": "ui://shop/card"})
    );
    assert_eq!(
        tools["tools"][1]["_meta"],
        json!({"ui": {"visibility": ["app"]}})
    );
    assert!(tools["tools"][2].get("_meta").is_none(), "{tools}");
    let ui = json!({
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": true
    });
    assert_eq!(
        resources,
        json!([{"uri": "ui://shop/card", "name": "card", "title": "Card", "mimeType": "text/html;profile=mcp-app", "_meta": {"ui": ui}}])
    );
    let contents = &page["result"]["contents"];
    assert_eq!(contents.as_array().map(Vec::len), Some(1), "{page}");
    assert_eq!(contents[0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents[0]["_meta"]["ui"], ui);
    // The page is redacted as every file served is.
    assert_eq!(
        contents[0]["text"],
        PAGE.replace("tok-2718281828", "[redacted]")
    );
    // The page's tool runs through the pipeline: its rate holds on the second call.
    assert_eq!(
        crate::harness::text(&first["result"]),
        "refreshed",
        "{first}"
    );
    assert_eq!(second["result"]["isError"], true, "{second}");
}

#[test]
fn a_client_that_renders_no_apps_sees_what_it_saw_before() {
    for capabilities in [
        json!({}),
        // The extension without the page type it must name is not rendering pages.
        json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
    ] {
        let (offered, tools, resources, page, first, _) = seen_over_stdio(&capabilities);
        assert!(offered.get("extensions").is_none(), "{offered}");
        assert_eq!(names(&tools), ["card", "plain"], "{capabilities}");
        assert!(
            tools["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .all(|tool| tool.get("_meta").is_none()),
            "{tools}"
        );
        assert_eq!(resources, json!([]));
        assert!(page.get("error").is_some(), "{page}");
        assert!(!page.to_string().contains("<html"), "{page}");
        // The app-only tool is unknown, as a tool outside the served sets is.
        assert_eq!(first["error"]["code"], -32602, "{first}");
        assert!(
            first["error"]["message"]
                .as_str()
                .is_some_and(|text| text.starts_with("unknown tool `refresh`")),
            "{first}"
        );
    }
}

/// A 2026-07-28 request whose client declares `capabilities`.
fn modern(
    server: &HttpServer,
    id: i64,
    method: &str,
    mut params: Value,
    capabilities: &Value,
) -> Value {
    let mut meta = crate::harness::modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities.clone();
    params["_meta"] = meta;
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    let name = params["name"]
        .as_str()
        .or_else(|| params["uri"].as_str())
        .map(str::to_owned);
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    let response = server.post(
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        &headers,
    );
    message(response, id)
}

#[test]
fn over_http_each_request_is_answered_for_what_its_client_declares() {
    let workspace = workspace();
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &["--sessions"],
        &[("APPS_TEST_TOKEN", "tok-2718281828")],
    );
    // 2026-07-28: capabilities travel with each request.
    for (capabilities, apps) in [(renders_apps(), true), (json!({}), false)] {
        let discovered = modern(&server, 1, "server/discover", json!({}), &capabilities);
        assert_eq!(
            discovered["result"]["capabilities"]["extensions"]
                .get("io.modelcontextprotocol/ui")
                .is_some(),
            apps,
            "{discovered}"
        );
        let tools = modern(&server, 2, "tools/list", json!({}), &capabilities);
        assert_eq!(
            names(&tools["result"]).contains(&"refresh".to_owned()),
            apps,
            "{tools}"
        );
        let page = modern(
            &server,
            3,
            "resources/read",
            json!({"uri": "ui://shop/card"}),
            &capabilities,
        );
        assert_eq!(page.get("error").is_none(), apps, "{page}");
        let call = modern(
            &server,
            4,
            "tools/call",
            json!({"name": "refresh", "arguments": {}}),
            &capabilities,
        );
        if apps {
            assert_eq!(crate::harness::text(&call["result"]), "refreshed", "{call}");
        } else {
            assert_eq!(call["error"]["code"], -32602, "{call}");
        }
    }
    // 2025-11-25: what the session's initialize declared.
    for (capabilities, apps) in [(renders_apps(), true), (json!({}), false)] {
        let session = open_session_with(&server, &capabilities);
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let tools = message(
            server.post(
                &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
                &headers,
            ),
            5,
        );
        assert_eq!(
            names(&tools["result"]).contains(&"refresh".to_owned()),
            apps,
            "{tools}"
        );
        let resources = message(
            server.post(
                &json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}),
                &headers,
            ),
            6,
        );
        assert_eq!(
            resources.to_string().contains("ui://shop/card"),
            apps,
            "{resources}"
        );
    }
}

#[test]
fn a_page_swapped_for_a_link_after_load_is_not_read_through_it() {
    let workspace = workspace();
    std::fs::write(
        workspace.path("outside.html"),
        "<p>outside the manifest's page</p>",
    )
    .expect("outside");
    let mut server = serve(&workspace);
    let mut params = crate::harness::initialize_params("2025-11-25");
    params["capabilities"] = renders_apps();
    server.request("initialize", params);
    server.notify("notifications/initialized", None);
    // The control: the page reads.
    let read = server.request("resources/read", json!({"uri": "ui://shop/card"}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("card for")),
        "{read}"
    );
    std::fs::remove_file(workspace.path("page.html")).expect("rm");
    symlink(workspace.path("outside.html"), workspace.path("page.html")).expect("link");
    let read = server.request("resources/read", json!({"uri": "ui://shop/card"}));
    assert!(read.get("error").is_some(), "{read}");
    assert!(!read.to_string().contains("outside the manifest"), "{read}");
}

#[test]
fn check_refuses_what_a_host_would_refuse_or_a_policy_could_be_bent_by() {
    let base = workspace();
    let (code, output) = check(&base, &[]);
    assert_eq!(code, 0, "{output}");
    let manifest = std::fs::read_to_string(base.manifest()).expect("manifest");
    for (from, to, said) in [
        (
            r#"connect-domains = ["https://api.example.com"]"#,
            r#"connect-domains = ["https://api.example.com; script-src *"]"#,
            "is not an origin",
        ),
        (
            r#"connect-domains = ["https://api.example.com"]"#,
            r#"connect-domains = ["'unsafe-eval'"]"#,
            "is not an origin",
        ),
        (
            r#"resource-domains = ["https://*.cdn.example.com"]"#,
            r#"resource-domains = ["https://cdn.example.com/lib.js"]"#,
            "is not an origin",
        ),
        (
            r#"uri = "ui://shop/card""#,
            r#"uri = "https://shop/card""#,
            "is not a page URI",
        ),
        (
            r#"visibility = ["app"]"#,
            r#"visibility = ["agent"]"#,
            "unknown visibility `agent`",
        ),
        (
            r#"visibility = ["app"]"#,
            "visibility = []",
            "no one could call this tool",
        ),
        (
            r#"permissions = ["clipboard-write"]"#,
            r#"permissions = ["usb"]"#,
            "unknown permission `usb`",
        ),
        (
            r#"page = "page.html""#,
            r#"page = "missing.html""#,
            "missing.html",
        ),
        (
            r#"rate = "1/h""#,
            "rate = \"1/h\"\n_meta = { ui = {} }",
            "which `[tools.app]` writes",
        ),
        (
            "[tools.app]\nvisibility = [\"app\"]",
            "[tools.app]\nvisibility = [\"app\"]\nuri = \"ui://x\"",
            "has no `page`",
        ),
    ] {
        assert!(manifest.contains(from), "{from}");
        let broken = Workspace::new(&manifest.replacen(from, to, 1));
        std::fs::write(broken.path("page.html"), PAGE).expect("page");
        let (code, output) = check(&broken, &[]);
        assert_ne!(code, 0, "{to}: {output}");
        assert!(output.contains(said), "{to}: {output}");
    }
    // A page reached through a link is refused at load, as a declared file is.
    let linked = workspace();
    std::fs::rename(linked.path("page.html"), linked.path("real.html")).expect("move");
    symlink(linked.path("real.html"), linked.path("page.html")).expect("link");
    let (code, output) = check(&linked, &[]);
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("symbolic link"), "{output}");
}

#[test]
fn a_stateless_2025_client_is_not_offered_what_its_next_request_would_not_get() {
    let workspace = workspace();
    let server = HttpServer::start_with_env(
        &workspace.manifest(),
        &[],
        &[("APPS_TEST_TOKEN", "tok-2718281828")],
    );
    let mut initialize = crate::harness::initialize_request();
    initialize["params"]["capabilities"] = renders_apps();
    let answered = message(server.post(&initialize, &[]), 1);
    assert!(
        answered["result"]["capabilities"]
            .get("extensions")
            .is_none(),
        "{answered}"
    );
    // Its next request declares nothing: no page, no app-only tool, consistently; nor does
    // a 2025 request's own `_meta` count as a declaration.
    let tools = server.legacy(2, "tools/list", json!({}));
    assert_eq!(names(&tools["result"]), ["card", "plain"], "{tools}");
    let claimed = server.legacy(
        3,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": renders_apps()}}),
    );
    assert_eq!(names(&claimed["result"]), ["card", "plain"], "{claimed}");
}

/// A manifest whose only tool with a page is joined by an app-only tool that names a scope
/// and takes an argument in a header, in discovery mode when `discovery`.
fn guarded(issuer: Option<&str>, discovery: bool) -> Workspace {
    let auth = issuer.map_or_else(String::new, |issuer| {
        format!(
            "[server.auth]\nissuer = \"{issuer}\"\naudience = \"{}\"\n",
            crate::oauth::AUDIENCE
        )
    });
    let scopes = if issuer.is_some() {
        "scopes = [\"admin:purge\"]"
    } else {
        ""
    };
    let workspace = Workspace::new(&format!(
        r#"[server]
discovery = {discovery}
{auth}
[[tools]]
name = "card"
description = "Shows a card"
[tools.static]
content = [{{ type = "text", text = "card" }}]
[tools.app]
page = "page.html"

[[tools]]
name = "purge"
description = "Purges an account, for the card's admin button"
{scopes}
arguments.account = {{ type = "string", header = "Account" }}
[tools.static]
content = [{{ type = "text", text = "purged" }}]
[tools.app]
visibility = ["app"]

[[tools]]
name = "audit"
description = "A tool the model may call, with the same scope"
{scopes}
[tools.static]
content = [{{ type = "text", text = "audited" }}]
"#
    ));
    std::fs::write(workspace.path("page.html"), PAGE).expect("page");
    workspace
}

#[test]
fn neither_the_http_gate_nor_the_header_check_tells_a_client_without_apps_of_an_app_only_tool() {
    let dir = tempfile::tempdir().expect("dir");
    let key = crate::oauth::make_key(dir.path(), "k1", jsonwebtoken::Algorithm::ES256);
    let issuer = crate::oauth::Issuer::start(vec![key.jwk.clone()]);
    let workspace = guarded(Some(&issuer.url()), false);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    let token = crate::oauth::sign(&key, issuer.claims("ada", ""));
    // The control: a tool the model may call, without its scope, is a step-up naming it.
    let visible = crate::oauth::call(
        &server,
        Some(&token),
        "tools/call",
        json!({"name": "audit", "arguments": {}}),
    );
    assert_eq!(visible.status(), 403);
    assert!(crate::oauth::challenge(&visible).contains("admin:purge"));
    // The app-only tool is unknown to this client, as a name that is no tool is.
    let hidden = crate::oauth::call(
        &server,
        Some(&token),
        "tools/call",
        json!({"name": "purge", "arguments": {"account": "x"}}),
    );
    assert_eq!(hidden.status(), 200);
    assert!(!crate::oauth::challenge(&hidden).contains("admin:purge"));
    let answer = message(hidden, 1);
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("unknown tool `purge`")),
        "{answer}"
    );
    assert!(!answer.to_string().contains("admin:purge"), "{answer}");
}

#[test]
fn a_2026_request_without_apps_is_told_of_no_app_only_tool_by_its_headers() {
    let workspace = guarded(None, false);
    let server = HttpServer::start(&workspace.manifest(), &[]);
    // No `Mcp-Param-Account`: for a tool this client may see, the header check refuses it.
    let (status, answer) = server.modern(
        1,
        "tools/call",
        json!({"name": "purge", "arguments": {"account": "x"}}),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("unknown tool `purge`")),
        "{answer}"
    );
}

#[test]
fn discovery_never_finds_or_calls_an_app_only_tool_even_for_a_client_that_renders_pages() {
    let workspace = guarded(None, true);
    let mut server = serve(&workspace);
    let mut params = crate::harness::initialize_params("2025-11-25");
    params["capabilities"] = renders_apps();
    server.request("initialize", params);
    server.notify("notifications/initialized", None);
    let found = server.request(
        "tools/call",
        json!({"name": "find_tools", "arguments": {"query": "purge an account"}}),
    );
    assert!(!found.to_string().contains("\"purge\""), "{found}");
    let called = server.request(
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "purge", "arguments": {"account": "x"}}}),
    );
    assert!(!called.to_string().contains("purged"), "{called}");
    // The control: the page calls it by its own name, and it runs.
    let direct = server.request(
        "tools/call",
        json!({"name": "purge", "arguments": {"account": "x"}}),
    );
    assert_eq!(
        crate::harness::text(&direct["result"]),
        "purged",
        "{direct}"
    );
}

#[test]
fn a_manifest_whose_only_resources_are_pages_offers_no_resources_to_a_client_without_apps() {
    let workspace = guarded(None, false);
    for (capabilities, resources) in [(json!({}), false), (renders_apps(), true)] {
        let mut server = serve(&workspace);
        let mut params = crate::harness::initialize_params("2025-11-25");
        params["capabilities"] = capabilities;
        let answer = server.request("initialize", params);
        assert_eq!(
            answer["result"]["capabilities"].get("resources").is_some(),
            resources,
            "{answer}"
        );
    }
}

#[test]
fn a_page_shared_with_another_policy_or_under_a_templates_uri_is_refused() {
    let checked = |manifest: &str| {
        let workspace = Workspace::new(manifest);
        std::fs::write(workspace.path("page.html"), PAGE).expect("page");
        check(&workspace, &[])
    };
    let tool = |name: &str, csp: &str| {
        format!(
            "[[tools]]\nname = \"{name}\"\ndescription = \"d\"\n[tools.static]\ncontent = [{{ type = \"text\", text = \"t\" }}]\n[tools.app]\npage = \"page.html\"\nuri = \"ui://shared\"\n[tools.app.csp]\nconnect-domains = [\"{csp}\"]\n"
        )
    };
    // The control: two tools share one page with one policy.
    let same = format!(
        "{}{}",
        tool("a", "https://a.example"),
        tool("b", "https://a.example")
    );
    let (code, output) = checked(&same);
    assert_eq!(code, 0, "{output}");
    let other = format!(
        "{}{}",
        tool("a", "https://a.example"),
        tool("b", "https://b.example")
    );
    let (code, output) = checked(&other);
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("different `csp`"), "{output}");
    // A second tool's policy is checked too, not dropped.
    let bent = format!(
        "{}{}",
        tool("a", "https://a.example"),
        tool("b", "https://a.example; script-src *")
    );
    let (code, output) = checked(&bent);
    assert!(code != 0 && output.contains("is not an origin"), "{output}");
    let templated = format!(
        "{}[[resource-templates]]\nuri-template = \"ui://{{name}}\"\nname = \"any\"\ntext = \"{{name}}\"\n",
        tool("a", "https://a.example")
    );
    let (code, output) = checked(&templated);
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("a template's URI"), "{output}");
}

#[test]
fn check_target_says_which_hosts_render_no_pages() {
    let workspace = workspace();
    let target = |host: &str| {
        let (code, output) = check(&workspace, &["--target", host]);
        assert_eq!(code, 0, "{output}");
        output
    };
    for host in ["claude-code", "openai", "gemini"] {
        let said = target(host);
        assert!(
            said.contains("tool `card`") && said.contains("without its page"),
            "{host}: {said}"
        );
        assert!(
            said.contains("tool `refresh`") && said.contains("never offered there"),
            "{host}: {said}"
        );
    }
    // The control: hosts that render pages get no such warning.
    for host in ["claude-desktop", "vscode", "cursor"] {
        assert!(!target(host).contains("target-apps"), "{host}");
    }
}

#[test]
fn a_folder_page_is_served_as_one_document_with_its_files_inline() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "chart"
description = "Draws a chart"
[tools.static]
content = [{ type = "text", text = "chart" }]
[tools.app]
page = "chart"
"#,
    );
    let folder = workspace.path("chart");
    std::fs::create_dir_all(folder.join("js")).expect("folder");
    std::fs::write(
        folder.join("index.html"),
        "<html><head><link rel=\"stylesheet\" href=\"style.css\"><script src=\"js/app.js\"></script></head><body><img src=\"dot.png\"></body></html>",
    )
    .expect("index");
    std::fs::write(folder.join("style.css"), "p { color: teal }").expect("css");
    std::fs::write(folder.join("js/app.js"), "draw('tok-2718281828')").expect("js");
    std::fs::copy(
        crate::harness::repo_root().join("tests/fixtures/red-pixel.png"),
        folder.join("dot.png"),
    )
    .expect("png");
    let mut server = Server::start_with(
        &workspace.manifest(),
        &[],
        &[("APPS_TEST_TOKEN", "tok-2718281828")],
    );
    let mut params = crate::harness::initialize_params("2025-11-25");
    params["capabilities"] = renders_apps();
    server.request("initialize", params);
    server.notify("notifications/initialized", None);
    let read = server.request("resources/read", json!({"uri": "ui://chart"}));
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{read}"));
    assert!(text.contains("<style>p { color: teal }</style>"), "{text}");
    assert!(
        text.contains("<script>draw('tok-2718281828')</script>"),
        "{text}"
    );
    assert!(text.contains("<img src=\"data:image/png;base64,"), "{text}");
    // A reference the folder lacks, or one through a link, is a load error.
    std::fs::write(
        folder.join("index.html"),
        "<script src=\"gone.js\"></script>",
    )
    .expect("index");
    let (code, output) = check(&workspace, &[]);
    assert_ne!(code, 0, "{output}");
    assert!(
        output.contains("`gone.js` is not a file beneath the page's folder"),
        "{output}"
    );
    std::os::unix::fs::symlink("/etc/hostname", folder.join("gone.js")).expect("link");
    let (code, output) = check(&workspace, &[]);
    assert_ne!(code, 0, "{output}");
}

#[test]
fn watch_makes_a_folder_page_again_when_its_files_change() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"chart\"\ndescription = \"d\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"c\" }]\n[tools.app]\npage = \"chart\"\n",
    );
    std::fs::create_dir(workspace.path("chart")).expect("folder");
    std::fs::write(
        workspace.path("chart/index.html"),
        "<script src=\"app.js\"></script>",
    )
    .expect("index");
    std::fs::write(workspace.path("chart/app.js"), "first()").expect("js");
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    let mut params = crate::harness::initialize_params("2025-11-25");
    params["capabilities"] = renders_apps();
    server.request("initialize", params);
    server.notify("notifications/initialized", None);
    let mut read = || {
        let answer = server.request("resources/read", json!({"uri": "ui://chart"}));
        answer["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(read(), "<script>first()</script>");
    std::fs::write(workspace.path("chart/app.js"), "second()").expect("js");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while read() != "<script>second()</script>" {
        assert!(
            std::time::Instant::now() < deadline,
            "the page was not made again"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn list_json_shows_either_clients_list() {
    let workspace = workspace();
    let manifest = workspace.manifest();
    let list = |extra: &[&str]| {
        let mut arguments = vec![
            "list",
            "--config",
            manifest.to_str().expect("path"),
            "--json",
        ];
        arguments.extend_from_slice(extra);
        let (code, stdout, stderr) = run(&arguments, workspace.dir.path());
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).expect("JSON")
    };
    let plain = list(&[]);
    assert_eq!(names(&plain), ["card", "plain"]);
    assert!(plain["tools"][0].get("_meta").is_none(), "{plain}");
    let apps = list(&["--apps"]);
    assert_eq!(names(&apps), ["card", "refresh", "plain"]);
    assert_eq!(
        apps["tools"][0]["_meta"]["ui"]["resourceUri"],
        "ui://shop/card"
    );
}
