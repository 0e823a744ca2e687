//! `[[prompts]]` over stdio in both eras: listing, getting with arguments filled into text
//! only, completion, and every way a client can get a request wrong; broken prompt tables
//! in a manifest.

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta};

const PROMPTS: &str = r##"
[[tools]]
name = "noop"
static.content = [{ type = "text", text = "ok" }]

[[prompts]]
name = "review"
title = "Review code"
description = "Ask for a code review"
[prompts.arguments.code]
description = "The code"
[prompts.arguments.language]
description = "Its language"
optional = true
complete = ["rust", "ruby", "python", "go"]
[prompts.arguments.tone]
enum = ["gentle", "blunt"]
optional = true
[[prompts.messages]]
role = "user"
text = "Review this {language} code ({tone}):\n{code}"
[[prompts.messages]]
role = "assistant"
content = { type = "resource", uri = "guide://style", mime-type = "text/markdown", text = "# Style guide" }
"##;

fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("no result: {response}"))
}

fn error(response: &Value) -> (i64, String) {
    let error = response
        .get("error")
        .unwrap_or_else(|| panic!("no error: {response}"));
    (
        error["code"].as_i64().expect("code"),
        error["message"].as_str().expect("message").to_owned(),
    )
}

#[test]
fn prompts_are_listed_filled_and_completed_in_the_2025_era() {
    let workspace = Workspace::new(PROMPTS);
    let mut server = workspace.serve_legacy();
    let listed = server.request("prompts/list", json!({}));
    assert_eq!(
        result(&listed)["prompts"],
        json!([{
            "name": "review",
            "title": "Review code",
            "description": "Ask for a code review",
            "arguments": [
                {"name": "code", "description": "The code", "required": true},
                {"name": "language", "description": "Its language", "required": false},
                {"name": "tone", "required": false}
            ]
        }])
    );

    // Values reach text only, verbatim: braces and shell syntax are data.
    let code = "fn main() { let x = \"{tone}\"; } $(rm -rf /)";
    let got = server.request(
        "prompts/get",
        json!({"name": "review", "arguments": {"code": code, "language": "rust"}}),
    );
    assert_eq!(
        result(&got)["messages"],
        json!([
            {"role": "user", "content": {"type": "text", "text": format!("Review this rust code ():\n{code}")}},
            {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "guide://style", "mimeType": "text/markdown", "text": "# Style guide"}}}
        ])
    );
    assert_eq!(result(&got)["description"], json!("Ask for a code review"));

    let wrong = [
        (
            json!({"name": "review"}),
            "prompt `review` needs the argument `code`",
        ),
        (
            json!({"name": "review", "arguments": {"code": "x", "colour": "red"}}),
            "prompt `review` has no argument `colour`; it takes `code`, `language`, `tone`",
        ),
        (
            json!({"name": "review", "arguments": {"code": 42}}),
            "the argument `code` of prompt `review` is a string, not a number",
        ),
        (
            json!({"name": "review", "arguments": {"code": "x", "tone": "rude"}}),
            "the argument `tone` of prompt `review` is one of `gentle`, `blunt`, not `rude`",
        ),
        (
            json!({"name": "reveiw"}),
            "unknown prompt `reveiw`; did you mean `review`?",
        ),
    ];
    for (params, message) in wrong {
        let response = server.request("prompts/get", params.clone());
        assert_eq!(error(&response), (-32602, message.to_owned()), "{params}");
    }

    let complete = |server: &mut Server, argument: &str, value: &str| {
        server.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": argument, "value": value}}),
        )
    };
    let values = complete(&mut server, "language", "R");
    assert_eq!(
        result(&values)["completion"],
        json!({"values": ["rust", "ruby"], "total": 2, "hasMore": false})
    );
    let values = complete(&mut server, "tone", "");
    assert_eq!(
        result(&values)["completion"]["values"],
        json!(["gentle", "blunt"])
    );
    let values = complete(&mut server, "code", "fn");
    assert_eq!(result(&values)["completion"]["values"], json!([]));
    let response = complete(&mut server, "colour", "r");
    assert_eq!(error(&response).0, -32602);

    let initialize = server.stderr();
    assert!(!initialize.contains("panicked"), "{initialize}");
}

#[test]
fn prompts_work_in_the_2026_era_and_are_advertised() {
    let workspace = Workspace::new(PROMPTS);
    let mut server = Server::start(&workspace.manifest());
    let discover = server.request("server/discover", json!({"_meta": modern_meta()}));
    let capabilities = &result(&discover)["capabilities"];
    assert!(capabilities.get("prompts").is_some(), "{capabilities}");
    assert!(capabilities.get("completions").is_some(), "{capabilities}");
    let got = server.request(
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "x"}, "_meta": modern_meta()}),
    );
    assert_eq!(result(&got)["resultType"], json!("complete"), "{got}");
    assert_eq!(
        result(&got)["messages"][0]["content"]["text"],
        json!("Review this  code ():\nx")
    );

    // A manifest without prompts advertises none and answers none.
    let workspace = Workspace::new(
        "[[tools]]\nname = \"noop\"\nstatic.content = [{ type = \"text\", text = \"ok\" }]\n",
    );
    let mut server = workspace.serve_legacy();
    for method in ["prompts/list", "prompts/get"] {
        let response = server.request(method, json!({"name": "review"}));
        assert_eq!(error(&response).0, -32601, "{response}");
    }
}

#[test]
fn broken_prompt_tables_are_reported_at_once() {
    let workspace = Workspace::new(
        r#"
[[prompts]]
name = "a"
[prompts.arguments.x]
enum = ["1"]
complete = ["2"]
[[prompts.messages]]
role = "system"
text = "{y}"

[[prompts]]
name = "a"

[[prompts]]
name = "b"
[[prompts.messages]]
role = "user"
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "an argument has `enum` (the values allowed) or `complete` (values offered), not both",
        "unknown role `system`",
        "template refers to undeclared argument `y`",
        "duplicate prompt name `a`",
        "prompt `a` has no messages",
        "a message has `text` or a `content` block, one of them",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}
