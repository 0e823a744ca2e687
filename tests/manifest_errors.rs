//! Broken manifests: every problem reported at once, pointing into the file, exit code 2.

use crate::harness::{Workspace, run};

/// Loads `manifest` with the real binary and returns (exit code, stderr).
fn load(manifest: &str) -> (i32, String) {
    let workspace = Workspace::new(manifest);
    let (code, stdout, stderr) = run(&["--config", "tools.toml"], workspace.dir.path());
    assert_eq!(stdout, "", "nothing may reach stdout");
    (code, stderr)
}

fn assert_rejected(manifest: &str, expected: &str) {
    let (code, stderr) = load(manifest);
    assert_eq!(stderr, expected, "\n--- got ---\n{stderr}");
    assert_eq!(code, 2);
}

#[test]
fn misspelt_keys_get_a_suggestion() {
    assert_rejected(
        "[[tools]]\nname = \"search\"\n[tools.command]\nargvv = [\"ls\"]\n",
        "\
error: unknown key `argvv` in tool `search`
 --> tools.toml:4:1
  |
4 | argvv = [\"ls\"]
  | ^^^^^
  = hint: did you mean `argv`?

error: could not load `tools.toml` due to 1 previous error
",
    );
}

#[test]
fn every_problem_is_reported_at_once_in_file_order() {
    assert_rejected(
        r#"[server]
name = "demo"
colour = "blue"

[[tools]]
name = "bad name"
[tools.command]
argv = ["echo", "{qurey}"]
[tools.arguments.query]
type = "strng"

[[tools]]
name = "ok"
[tools.arguments.limit]
type = "integer"
optional = true
[tools.command]
argv = ["echo", "{limit}"]
"#,
        r#"error: unknown key `colour` in `[server]`
 --> tools.toml:3:1
  |
3 | colour = "blue"
  | ^^^^^^
  = hint: expected one of `name`, `version`, `title`, `description`, `instructions`, `website-url`, `icons`, `sandbox`, `task`, `task-ttl`, `task-poll-interval`, `rate`, `burst`, `auth`, `inline-refs`, `discovery`, `toolsets`

error: tool name `bad name` contains ` `
 --> tools.toml:6:8
  |
6 | name = "bad name"
  |        ^^^^^^^^^^
  = hint: tool names use letters, digits, `_`, `-` and `.`, e.g. `product-details`

error: template refers to undeclared argument `qurey`
 --> tools.toml:8:17
  |
8 | argv = ["echo", "{qurey}"]
  |                 ^^^^^^^^^
  = hint: did you mean `query`?

error: unknown argument type `strng`
  --> tools.toml:10:8
   |
10 | type = "strng"
   |        ^^^^^^^
   = hint: did you mean `string`?
   = hint: types are `string`, `integer`, `number`, `boolean`, `array`, `object`

error: argument `limit` is optional, so it cannot fill a plain element
  --> tools.toml:18:17
   |
18 | argv = ["echo", "{limit}"]
   |                 ^^^^^^^^^
   = hint: put it in a group that is left out when `limit` is absent, e.g. ["--limit", "{limit}"]

error: could not load `tools.toml` due to 5 previous errors
"#,
    );
}

#[test]
fn toml_syntax_errors_point_at_the_spot() {
    assert_rejected(
        "[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"ls\"\n",
        "\
error: invalid TOML: unclosed array, expected `]`
 --> tools.toml:4:13
  |
4 | argv = [\"ls\"
  |             ^

error: could not load `tools.toml` due to 1 previous error
",
    );
}

#[test]
fn schemas_that_do_not_compile_point_at_their_key() {
    assert_rejected(
        r#"[[tools]]
name = "x"
input-schema = { "$schema" = "http://json-schema.org/draft-04/schema#", type = "object" }
[tools.command]
argv = ["true"]
"#,
        r#"error: the input schema of `x` is unusable: unsupported JSON Schema dialect `http://json-schema.org/draft-04/schema#`; use 2020-12 (the default), 2019-09 or draft-07
 --> tools.toml:3:16
  |
3 | input-schema = { "$schema" = "http://json-schema.org/draft-04/schema#", type = "object" }
  |                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

error: could not load `tools.toml` due to 1 previous error
"#,
    );
}

/// A boolean schema is a JSON Schema, but MCP lists `outputSchema` as an object: `true`
/// was accepted and then listed to some protocol revisions and not others.
#[test]
fn an_output_schema_must_be_an_object() {
    assert_rejected(
        r#"[[tools]]
name = "x"
output-schema = 'true'
[tools.command]
argv = ["true"]
"#,
        r"error: an output schema must be a JSON object
 --> tools.toml:3:17
  |
3 | output-schema = 'true'
  |                 ^^^^^^
  = hint: MCP lists `outputSchema` as an object; `{}` accepts any value

error: could not load `tools.toml` due to 1 previous error
",
    );
}

#[test]
fn defaults_must_fit_their_argument_and_the_program_must_be_fixed() {
    assert_rejected(
        r#"[[tools]]
name = "x"
[tools.arguments.limit]
type = "integer"
maximum = 50
default = 99
[tools.arguments.program]
type = "string"
[tools.command]
argv = ["{program}", "--limit", "{limit}"]
"#,
        r#"error: the default does not fit the argument: default: 99 is greater than the maximum of 50
 --> tools.toml:6:11
  |
6 | default = 99
  |           ^^

error: the program (the first element of `argv`) must be a plain string
  --> tools.toml:10:9
   |
10 | argv = ["{program}", "--limit", "{limit}"]
   |         ^^^^^^^^^^^
   = hint: arguments can never choose the program; put placeholders in later elements

error: could not load `tools.toml` due to 2 previous errors
"#,
    );
}

#[test]
fn duplicate_names_and_missing_backends_are_errors() {
    assert_rejected(
        r#"[[tools]]
name = "a"
[tools.command]
argv = ["true"]

[[tools]]
name = "a"
"#,
        r#"error: duplicate tool name `a`
 --> tools.toml:7:8
  |
7 | name = "a"
  |        ^^^
  = hint: tool #1 already uses this name; tool names must be unique

error: tool `a` has no backend
 --> tools.toml:7:8
  |
7 | name = "a"
  |        ^^^
  = hint: add a `[tools.command]` table with `argv` (or `[tools.http]` with a `url`, or `[tools.static]` with a declared result)

error: could not load `tools.toml` due to 2 previous errors
"#,
    );
}

#[test]
fn a_missing_manifest_explains_where_it_looked() {
    let workspace = Workspace::new("");
    std::fs::remove_file(workspace.manifest()).expect("remove");
    let (code, stdout, stderr) = run(&[], workspace.dir.path());
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        "error: no manifest given and there is no `tools.toml` in the current directory\n\n\
         hint: pass one with `mcp-serve --config path/to/tools.toml`; hosts often start servers in `/`, \
         so give an absolute path in their configuration\n"
    );
    let (code, _, stderr) = run(&["--config", "nope.toml"], workspace.dir.path());
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: could not read `nope.toml`: No such file or directory (os error 2)\n"
    );
}

#[test]
fn the_default_manifest_is_tools_toml_in_the_current_directory() {
    let workspace =
        Workspace::new("[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"true\"]\nbogus = 1\n");
    let (code, _, stderr) = run(&[], workspace.dir.path());
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: unknown key `bogus` in tool `x`\n --> tools.toml:5:1\n"),
        "{stderr}"
    );
}

#[test]
fn header_arguments_must_be_unique_primitive_tokens() {
    let (code, stderr) = load(
        r#"[[tools]]
name = "t"
arguments.a = { type = "string", header = "Region" }
arguments.b = { type = "integer", header = "region" }
arguments.c = { type = "array", items = { type = "string" }, header = "C" }
arguments.d = { type = "string", header = "Bad Name" }
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "two arguments travel in the header `Mcp-Param-region`",
        "only a string, integer or boolean argument can travel in a header",
        "`Bad Name` cannot be an HTTP header name",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
    assert!(stderr.contains("due to 3 previous errors"), "{stderr}");
    // A full schema is held to the same rules, across nesting levels and under `items`.
    let (code, stderr) = load(
        r#"[[tools]]
name = "t"
[tools.input-schema]
type = "object"
properties.a = { type = "string", x-mcp-header = "Region" }
properties.n = { type = "number", x-mcp-header = "N" }
properties.o = { type = "object", properties = { b = { type = "string", x-mcp-header = "REGION" } } }
properties.l = { type = "array", items = { type = "string", x-mcp-header = "L" } }
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "only a string, integer or boolean argument can travel in a header",
        "two arguments travel in the header `Mcp-Param-REGION`",
        "`x-mcp-header` is allowed only on properties reached through `properties`",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}

#[test]
fn a_static_blocks_priority_is_between_0_and_1_whatever_its_kind() {
    let manifest = |kind_and_fields: &str, priority: &str| {
        format!(
            "[[tools]]\nname = \"x\"\n[tools.static]\ncontent = [\n  {{ {kind_and_fields}, annotations = {{ priority = {priority} }} }},\n]\n"
        )
    };
    for block in [
        r#"type = "text", text = "hi""#,
        r#"type = "image", data = "iVBORw0K", mime-type = "image/png""#,
    ] {
        let (code, stderr) = load(&manifest(block, "2.0"));
        assert_eq!(code, 2, "{block}: {stderr}");
        assert_eq!(
            stderr
                .matches("an annotation's `priority` is between 0 and 1, not 2")
                .count(),
            1,
            "{block}: {stderr}"
        );
        // The control: a priority inside the range loads.
        let workspace = Workspace::new(&manifest(block, "0.5"));
        let (code, _, stderr) = run(&["check", "--config", "tools.toml"], workspace.dir.path());
        assert_eq!(code, 0, "{block}: {stderr}");
    }
}
