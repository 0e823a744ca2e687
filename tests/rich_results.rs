//! Rich results from data: content documents, binary output, files, static results,
//! truncation with the whole output kept as a resource, and downgrades for old clients.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::harness::{Server, Workspace, repo_root, text};

fn shipped(name: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("examples/products").join(name)).expect("asset")
}

fn decode(value: &Value) -> Vec<u8> {
    BASE64
        .decode(value.as_str().unwrap_or_default())
        .expect("base64")
}

#[test]
fn product_card_returns_an_image_audio_and_the_record() {
    let mut server = Server::initialized(&repo_root().join("tools.example.toml"), "2025-11-25");
    let result = server.call("product-card", json!({"name": "Travel mug"}));
    assert_eq!(result["isError"], json!(false));
    let content = &result["content"];
    assert_eq!(content.as_array().map(Vec::len), Some(3));
    assert_eq!(
        (content[0]["type"].clone(), content[0]["mimeType"].clone()),
        (json!("image"), json!("image/png"))
    );
    assert_eq!(decode(&content[0]["data"]), shipped("travel-mug.png"));
    assert_eq!(
        (content[1]["type"].clone(), content[1]["mimeType"].clone()),
        (json!("audio"), json!("audio/wav"))
    );
    assert_eq!(decode(&content[1]["data"]), shipped("travel-mug.wav"));
    assert_eq!(
        content[2],
        json!({"type": "resource", "resource": {
            "uri": "catalog://products/Travel%20mug",
            "mimeType": "application/json",
            "text": "{\"name\":\"Travel mug\",\"price\":24}"
        }})
    );
    let missing = server.call("product-card", json!({"name": "Teapot"}));
    assert_eq!(missing["isError"], json!(true));
}

#[test]
fn clients_before_audio_get_it_as_an_embedded_resource() {
    let mut server = Server::initialized(&repo_root().join("tools.example.toml"), "2024-11-05");
    let result = server.call("product-card", json!({"name": "Mug rack"}));
    let audio = &result["content"][1];
    assert_eq!(audio["type"], json!("resource"));
    assert_eq!(audio["resource"]["mimeType"], json!("audio/wav"));
    assert_eq!(decode(&audio["resource"]["blob"]), shipped("mug-rack.wav"));
}

fn rich_workspace() -> Workspace {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "greet"
[tools.arguments.name]
type = "string"
[tools.arguments.title]
type = "string"
optional = true
[tools.static]
content = [
  { type = "text", text = "Hello, {title} {name}!", annotations = { audience = ["user"], priority = 0.9 } },
  { type = "resource_link", uri = "https://example.com/docs", name = "docs", mime-type = "text/html" },
]

[[tools]]
name = "weather"
[tools.output.temperature]
type = "number"
[tools.static]
structured-content = { temperature = 21.5 }

[[tools]]
name = "bad-document"
[tools.command]
argv = ["printf", '{{"content":[{{"type":"image","data":"@@@","mimeType":"image/png"}}]}}']
output = "content"

[[tools]]
name = "picture"
[tools.command]
argv = ["cat", "pixel.png"]
output = "image"

[[tools]]
name = "report"
[tools.command]
script = 'printf "chart and data attached"; cp pixel.png "$MCP_SERVE_OUTPUT_DIR/chart.png"; printf "a,b\n1,2\n" > "$MCP_SERVE_OUTPUT_DIR/data.csv"'
files = "embed"

[[tools]]
name = "archive"
[tools.command]
script = 'printf "x,y\n" > "$MCP_SERVE_OUTPUT_DIR/table.csv"'
files = "link"

[[tools]]
name = "chatty"
[tools.command]
script = 'i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done'
max-output = "1KiB"
keep-output = true
"#,
    );
    std::fs::copy(
        repo_root().join("tests/fixtures/red-pixel.png"),
        workspace.path("pixel.png"),
    )
    .expect("copy");
    workspace
}

#[test]
fn static_results_interpolate_arguments_into_text_only() {
    let workspace = rich_workspace();
    let mut server = workspace.serve_legacy();
    let result = server.call("greet", json!({"name": "Ada"}));
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Hello,  Ada!", "annotations": {"audience": ["user"], "priority": 0.9}},
            {"type": "resource_link", "uri": "https://example.com/docs", "name": "docs", "mimeType": "text/html"}
        ])
    );
    let result = server.call("weather", json!({}));
    assert_eq!(result["structuredContent"], json!({"temperature": 21.5}));
    assert_eq!(text(&result), "{\"temperature\":21.5}");

    // Before 2025-06-18 a resource link becomes a description.
    let mut old = Server::initialized(&workspace.manifest(), "2025-03-26");
    let result = old.call("greet", json!({"name": "Ada", "title": "Dr."}));
    assert_eq!(result["content"][0]["text"], json!("Hello, Dr. Ada!"));
    assert_eq!(
        result["content"][1],
        json!({"type": "text", "text": "Resource: docs <https://example.com/docs> (text/html)"})
    );
}

#[test]
fn malformed_content_documents_are_tool_errors() {
    let workspace = rich_workspace();
    let mut server = workspace.serve_legacy();
    let result = server.call("bad-document", json!({}));
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        text(&result),
        "the tool's output is not a valid content document: content[0]: `data` is not valid base64: Invalid symbol 64, offset 0."
    );
}

#[test]
fn binary_stdout_and_output_files_become_blocks() {
    let workspace = rich_workspace();
    let mut server = workspace.serve_legacy();
    let pixel = std::fs::read(workspace.path("pixel.png")).expect("pixel");
    let result = server.call("picture", json!({}));
    assert_eq!(result["content"][0]["mimeType"], json!("image/png"));
    assert_eq!(decode(&result["content"][0]["data"]), pixel);

    let result = server.call("report", json!({}));
    let content = &result["content"];
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "chart and data attached"})
    );
    assert_eq!(decode(&content[1]["data"]), pixel);
    assert_eq!(
        content[2],
        json!({"type": "resource", "resource": {"uri": "mcp-serve://output/report/data%2Ecsv", "mimeType": "text/csv", "text": "a,b\n1,2\n"}})
    );
}

#[test]
fn linked_files_and_kept_outputs_are_served_as_resources() {
    let workspace = rich_workspace();
    let mut server = workspace.serve_legacy();
    let result = server.call("archive", json!({}));
    let link = &result["content"][0];
    assert_eq!(link["type"], json!("resource_link"));
    assert_eq!(
        (
            link["name"].clone(),
            link["mimeType"].clone(),
            link["size"].clone()
        ),
        (json!("table.csv"), json!("text/csv"), json!(4))
    );
    let read = server.request("resources/read", json!({"uri": link["uri"]}));
    assert_eq!(read["result"]["contents"][0]["text"], json!("x,y\n"));

    let result = server.call("chatty", json!({}));
    let shown = text(&result);
    assert!(shown.starts_with("line 0\nline 1\n"), "{shown}");
    assert!(
        shown.contains("bytes left out: the output was 208890 bytes, more than this tool's limit"),
        "{shown}"
    );
    assert!(
        shown.contains("line 19999\n\n[the whole output is the resource mcp-serve://outputs/"),
        "{shown}"
    );
    assert!(shown.len() < 1400, "{} bytes shown", shown.len());
    let kept = &result["content"][1];
    assert_eq!(kept["type"], json!("resource_link"));
    let read = server.request("resources/read", json!({"uri": kept["uri"]}));
    let whole = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(whole.len(), 208_890);
    assert!(whole.ends_with("line 19999\n"));

    let listed = server.request("resources/list", json!({}));
    let uris: Vec<&Value> = listed["result"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| &r["uri"])
        .collect();
    assert_eq!(uris, vec![&link["uri"], &kept["uri"]]);
    let missing = server.request(
        "resources/read",
        json!({"uri": "mcp-serve://outputs/999/none"}),
    );
    assert_eq!(missing["error"]["code"], json!(-32002));
}

#[test]
fn resources_are_offered_only_when_a_tool_keeps_outputs() {
    let plain = crate::harness::Workspace::new(
        "[[tools]]\nname = \"noop\"\nstatic.content = [{ type = \"text\", text = \"ok\" }]\n",
    );
    let mut server = Server::start(&plain.manifest());
    let init = server.request(
        "initialize",
        crate::harness::initialize_params("2025-11-25"),
    );
    assert!(
        init["result"]["capabilities"].get("resources").is_none(),
        "{init}"
    );
    let workspace = rich_workspace();
    let mut server = Server::start(&workspace.manifest());
    let init = server.request(
        "initialize",
        crate::harness::initialize_params("2025-11-25"),
    );
    assert!(
        init["result"]["capabilities"]["resources"].is_object(),
        "{init}"
    );
}

/// A tool that leaves `count` empty files in its output directory, kept as `files` says,
/// with `extra` lines in its `[tools.command]` table.
fn littering(name: &str, count: usize, files: &str, extra: &str) -> String {
    format!(
        r#"
[[tools]]
name = "{name}"
[tools.command]
script = 'i=0; while [ $i -lt {count} ]; do : > "$MCP_SERVE_OUTPUT_DIR/f$i.txt"; i=$((i+1)); done; echo done'
files = "{files}"
{extra}
"#
    )
}

/// The blocks of a result that are not text.
fn file_blocks(result: &Value) -> usize {
    result["content"].as_array().map_or(0, |blocks| {
        blocks
            .iter()
            .filter(|block| block["type"] != json!("text"))
            .count()
    })
}

#[test]
fn output_files_are_bounded_in_number_and_the_result_says_so() {
    let manifest = [
        littering("embed-3000", 3_000, "embed", "max-output = \"16KiB\""),
        littering("embed-100", 100, "embed", ""),
    ]
    .concat();
    let workspace = Workspace::new(&manifest);
    let mut server = workspace.serve_legacy();

    let result = server.call("embed-3000", json!({}));
    let blocks = result["content"].as_array().map_or(0, Vec::len);
    eprintln!("output files: 3,000 empty files embedded as {blocks} blocks");
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(file_blocks(&result), 100, "the default of 100 files");
    let note = result["content"]
        .as_array()
        .and_then(|blocks| blocks.last())
        .and_then(|block| block["text"].as_str())
        .unwrap_or_default();
    assert!(
        note.contains("more files left out: this tool takes at most 100 files")
            && note.contains("`max-files`"),
        "{note}"
    );
    // The control: exactly as many files as the limit are all kept, with no note.
    let result = server.call("embed-100", json!({}));
    assert_eq!(file_blocks(&result), 100);
    assert!(
        !result.to_string().contains("left out"),
        "{}",
        text(&result)
    );
}

#[test]
fn max_files_caps_linked_files_and_is_checked() {
    let workspace = Workspace::new(&littering("link-20000", 20_000, "link", "max-files = 5"));
    let mut server = workspace.serve_legacy();
    let result = server.call("link-20000", json!({}));
    assert_eq!(file_blocks(&result), 5, "{result}");
    assert!(
        result
            .to_string()
            .contains("this tool takes at most 5 files"),
        "{result}"
    );
    let listed = server.request("resources/list", json!({}));
    assert_eq!(
        listed["result"]["resources"].as_array().map(Vec::len),
        Some(5),
        "only the files taken are kept: {listed}"
    );

    let broken = Workspace::new(
        &[
            littering("zero", 1, "embed", "max-files = 0"),
            littering("huge", 1, "embed", "max-files = 10001"),
            r#"
[[tools]]
name = "no-files"
[tools.command]
argv = ["true"]
max-files = 3
"#
            .to_owned(),
        ]
        .concat(),
    );
    let (code, _, stderr) = crate::harness::run(
        &[
            "check",
            "--config",
            broken.manifest().to_str().expect("path"),
        ],
        broken.dir.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr
            .matches("`max-files` is a number of files from 1 to 10000")
            .count(),
        2,
        "{stderr}"
    );
    assert!(
        stderr.contains("`max-files` applies with `files`"),
        "{stderr}"
    );
}
