use serde_json::json;

use super::store::{ResourceStore, ResourceStoreLimits};
use super::{
    BinaryKind, Captured, Content, FilesMode, FilesSpec, OutputFile, OutputFiles, OutputMode,
    OutputSpec, Stopped, ToolResult,
};
use crate::caller::Identity;
use crate::revision::Revision;
use crate::schema::CompiledSchema;

fn spec(mode: OutputMode) -> OutputSpec {
    OutputSpec {
        tool: "t".into(),
        mode,
        files: None,
        keep_full_output: false,
        shape: super::project::Shape::default(),
    }
}

fn run(stdout: &[u8], mode: OutputMode, schema: Option<&CompiledSchema>) -> ToolResult {
    let store = ResourceStore::new(ResourceStoreLimits::default());
    ToolResult::from_command(
        Captured::complete(stdout.to_vec()),
        OutputFiles::default(),
        &spec(mode),
        schema,
        &store.keeper(Identity::Only),
    )
}

fn texts(result: &ToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            Content::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn text_output_loses_only_trailing_newlines() {
    let result = run(b"Travel mug\nMug rack\n\n", OutputMode::Text, None);
    assert_eq!(texts(&result), vec!["Travel mug\nMug rack"]);
    assert!(!result.is_error);
}

#[test]
fn truncated_text_keeps_head_and_tail_and_says_how_much_is_missing() {
    let store = ResourceStore::new(ResourceStoreLimits::default());
    let stdout = Captured {
        head: b"first".to_vec(),
        tail: b"last\n".to_vec(),
        total: 1000,
        kept: None,
        stopped_early: false,
    };
    let result = ToolResult::from_command(
        stdout,
        OutputFiles::default(),
        &spec(OutputMode::Text),
        None,
        &store.keeper(Identity::Only),
    );
    assert_eq!(
        texts(&result),
        vec![
            "first\n\n[… 990 bytes left out: the output was 1000 bytes, more than this tool's limit …]\n\nlast"
        ]
    );
}

#[test]
fn json_output_is_structured_with_a_text_copy() {
    let result = run(br#"{"name":"Mug rack","price":36}"#, OutputMode::Json, None);
    assert_eq!(
        result.structured,
        Some(json!({"name": "Mug rack", "price": 36}))
    );
    assert_eq!(texts(&result), vec![r#"{"name":"Mug rack","price":36}"#]);
}

#[test]
fn invalid_json_and_schema_violations_are_tool_errors() {
    assert!(run(b"not json", OutputMode::Json, None).is_error);
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"price": {"type": "number"}},
        "required": ["price"]
    }))
    .expect("compiles");
    let result = run(br#"{"price":"cheap"}"#, OutputMode::Json, Some(&schema));
    assert!(result.is_error);
    assert_eq!(
        texts(&result),
        vec![
            "the tool's output does not match its output schema:\nprice: \"cheap\" is not of type \"number\""
        ]
    );
    assert_eq!(result.structured, None);
}

#[test]
fn content_documents_give_the_whole_result_and_are_checked() {
    let result = run(
        br#"{"content":[{"type":"text","text":"hi"},{"type":"image","data":"iVBORw0K","mimeType":"image/png"}],"structuredContent":[1,2]}"#,
        OutputMode::Content,
        None,
    );
    assert!(!result.is_error);
    assert_eq!(result.content.len(), 2);
    assert_eq!(result.structured, Some(json!([1, 2])));
    let result = run(
        br#"{"content":[{"type":"image","data":"%%%","mimeType":"image/png"}]}"#,
        OutputMode::Content,
        None,
    );
    assert_eq!(
        texts(&result),
        vec![
            "the tool's output is not a valid content document: content[0]: `data` is not valid base64: Invalid symbol 37, offset 0."
        ]
    );
    let result = run(br#"{"content":[],"extra":1}"#, OutputMode::Content, None);
    assert!(result.is_error);
    assert!(
        texts(&result)[0].contains("unknown field `extra`"),
        "{result:?}"
    );
    let result = run(
        br#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
        OutputMode::Content,
        None,
    );
    assert!(result.is_error);
    assert_eq!(texts(&result), vec!["boom"]);
}

#[test]
fn binary_output_becomes_one_block_of_its_kind() {
    let png = b"\x89PNG\r\n\x1a\nrest";
    let result = run(
        png,
        OutputMode::Binary {
            kind: BinaryKind::Image,
            mime_type: None,
        },
        None,
    );
    assert_eq!(result.content, vec![Content::media(png, "image/png")]);
    let result = run(
        b"plain",
        OutputMode::Binary {
            kind: BinaryKind::Image,
            mime_type: None,
        },
        None,
    );
    assert_eq!(
        texts(&result),
        vec!["the tool's output is `application/octet-stream`, not an image"]
    );
    let result = run(
        b"a,b\n",
        OutputMode::Binary {
            kind: BinaryKind::Resource,
            mime_type: Some("text/csv".into()),
        },
        None,
    );
    assert_eq!(
        serde_json::to_value(&result.content[0]).ok(),
        Some(
            json!({"type": "resource", "resource": {"uri": "mcp-serve://output/t", "mimeType": "text/csv", "text": "a,b\n"}})
        )
    );
}

#[test]
fn files_are_embedded_or_linked_after_stdout() {
    let store = ResourceStore::new(ResourceStoreLimits::default());
    let files = || OutputFiles {
        files: vec![
            OutputFile {
                name: "chart.png".into(),
                bytes: b"\x89PNG\r\n\x1a\n".to_vec(),
            },
            OutputFile {
                name: "data.json".into(),
                bytes: b"{}".to_vec(),
            },
        ],
        ..OutputFiles::default()
    };
    let mut embed = spec(OutputMode::Text);
    embed.files = Some(FilesSpec {
        mode: FilesMode::Embed,
        max: 100,
    });
    let result = ToolResult::from_command(
        Captured::complete(b"done\n".to_vec()),
        files(),
        &embed,
        None,
        &store.keeper(Identity::Only),
    );
    let kinds: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| {
            serde_json::to_value(block)
                .ok()
                .and_then(|v| v["type"].as_str().map(str::to_owned))
        })
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let mut link = spec(OutputMode::Text);
    link.files = Some(FilesSpec {
        mode: FilesMode::Link,
        max: 100,
    });
    let result = ToolResult::from_command(
        Captured::complete(Vec::new()),
        files(),
        &link,
        None,
        &store.keeper(Identity::Only),
    );
    assert_eq!(result.content.len(), 2, "empty stdout adds no block");
    let Content::ResourceLink(first) = &result.content[0] else {
        panic!("{result:?}")
    };
    assert_eq!(
        store
            .read(&first.uri, &Identity::Only)
            .map(|(mime, _)| mime),
        Some("image/png".into())
    );
}

#[test]
fn files_left_out_are_said_after_the_files_taken() {
    let store = ResourceStore::new(ResourceStoreLimits::default());
    let mut embed = spec(OutputMode::Text);
    embed.files = Some(FilesSpec {
        mode: FilesMode::Embed,
        max: 1,
    });
    for (stopped, expected) in [
        (
            Stopped::Files { most: 1 },
            "[… more files left out: this tool takes at most 1 file from its output directory (`max-files`) …]",
        ),
        (
            Stopped::Others { most: 1 },
            "[… the output directory was read no further: more than 1 of its entries are links or folders, which are never taken (`max-files`) …]",
        ),
    ] {
        let files = OutputFiles {
            files: vec![OutputFile {
                name: "a.txt".into(),
                bytes: b"a".to_vec(),
            }],
            stopped: Some(stopped),
            examined: 3,
        };
        let result = ToolResult::from_command(
            Captured::complete(Vec::new()),
            files,
            &embed,
            None,
            &store.keeper(Identity::Only),
        );
        assert_eq!(result.content.len(), 2, "{result:?}");
        assert!(
            matches!(&result.content[0], Content::Resource { .. }),
            "{result:?}"
        );
        assert_eq!(result.content[1], Content::text(expected));
    }
}

#[test]
fn eras_shape_structured_output() {
    let array = ToolResult::structured(json!(["a", "b"]), None);
    assert_eq!(
        array
            .clone()
            .for_revision(Revision::V2026_07, true)
            .structured,
        Some(json!(["a", "b"]))
    );
    assert_eq!(
        array
            .clone()
            .for_revision(Revision::V2025_06, true)
            .structured,
        Some(json!({"result": ["a", "b"]}))
    );
    assert_eq!(
        array
            .clone()
            .for_revision(Revision::V2025_03, true)
            .structured,
        None
    );
    assert_eq!(
        array.for_revision(Revision::V2025_03, true).content.len(),
        1
    );
    let object = ToolResult::structured(json!({"a": 1}), None);
    assert_eq!(
        object
            .clone()
            .for_revision(Revision::V2025_06, false)
            .structured,
        Some(json!({"a": 1}))
    );
    assert_eq!(
        object.for_revision(Revision::V2025_06, true).structured,
        Some(json!({"result": {"a": 1}}))
    );
}
