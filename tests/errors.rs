//! Errors are typed (`thiserror` enums that keep their sources), read from the code: a
//! `Result<_, String>` is allowed only where a message for a person is the value, in the
//! files listed below with why. A new one elsewhere, or one more in a listed file, fails
//! the suite; a listed file with fewer fails too, so its count is lowered as it shrinks.

use std::collections::BTreeMap;

use crate::harness::repo_root;
use crate::source_scan::lines;

const TRAMPOLINE: &str =
    "a step of the sandbox's trampoline: its failure crosses to the server as a line of text";
const IMPORT: &str = "`import openapi`'s report: why an operation or a schema was left out";
const JQ: &str = "a jq program's own error: the text of the call's result";
const TERMINAL: &str = "`mcp-serve call`'s messages to the person at the terminal";

/// Files that keep `Result<_, String>`, how many, and why the text is the value.
const MESSAGES: &[(&str, usize, &str)] = &[
    (
        "src/ask.rs",
        1,
        "the tool error a model reads when the user's answer does not fit",
    ),
    (
        "src/backend/http.rs",
        1,
        "`call --dry-run`'s text, redacted here where the secrets are known",
    ),
    ("src/backend/projector.rs", 1, JQ),
    (
        "src/cli.rs",
        3,
        "clap's value parsers: clap prints the text as the usage error",
    ),
    ("src/commands/answer.rs", 3, TERMINAL),
    ("src/commands/call.rs", 3, TERMINAL),
    (
        "src/discovery/meta.rs",
        2,
        "why a meta tool's arguments do not fit: a tool error the model acts on",
    ),
    (
        "src/manifest/sandbox.rs",
        1,
        "why an entry is no endpoint, said at its place in the manifest",
    ),
    (
        "src/mcp/elicit.rs",
        1,
        "why asking the client failed: the call's tool error",
    ),
    (
        "src/mcp/state.rs",
        1,
        "why a toolset's handler could not be made, kept and said to each request for it",
    ),
    ("src/openapi/document.rs", 1, IMPORT),
    ("src/openapi/filter.rs", 1, IMPORT),
    ("src/openapi/schema.rs", 9, IMPORT),
    ("src/openapi/security.rs", 2, IMPORT),
    ("src/openapi/tool.rs", 3, IMPORT),
    ("src/openapi/tool/body.rs", 2, IMPORT),
    ("src/openapi/tool/parameters.rs", 5, IMPORT),
    (
        "src/rate.rs",
        1,
        "why a rate is not one, said by the manifest's check and the command line",
    ),
    (
        "src/resource.rs",
        1,
        "why a URI template is not one, said at its place in the manifest",
    ),
    ("src/results/project.rs", 1, JQ),
    ("src/results/project/worker.rs", 1, JQ),
    ("src/sandbox/cgroup.rs", 1, TRAMPOLINE),
    ("src/sandbox/init.rs", 3, TRAMPOLINE),
    ("src/sandbox/limits.rs", 1, TRAMPOLINE),
    ("src/sandbox/namespace.rs", 3, TRAMPOLINE),
    ("src/sandbox/netns.rs", 2, TRAMPOLINE),
    (
        "src/sandbox/policy.rs",
        1,
        "why a sandbox's seccomp filter does not compile, said at load",
    ),
    ("src/sandbox/ruleset.rs", 2, TRAMPOLINE),
    ("src/sandbox/seccomp.rs", 5, TRAMPOLINE),
    (
        "src/sandbox/shims/managers.rs",
        1,
        "why a package manager is not trusted, said at load",
    ),
    ("src/sandbox/trampoline.rs", 5, TRAMPOLINE),
];

#[test]
fn errors_are_typed_but_where_a_message_for_a_person_is_the_value() {
    let pattern = regex::Regex::new(r"Result<.*,\s*String>").expect("pattern");
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines(&repo_root().join("src")) {
        if pattern.is_match(&line.code) {
            found
                .entry(line.file.clone())
                .or_default()
                .push(line.to_string());
        }
    }
    let mut wrong = Vec::new();
    for (file, sites) in &found {
        match MESSAGES.iter().find(|(listed, ..)| listed == file) {
            None => wrong.push(format!(
                "{file} returns a String error, and is not listed:\n  {}",
                sites.join("\n  ")
            )),
            Some((_, allowed, _)) if sites.len() > *allowed => wrong.push(format!(
                "{file} has {} String errors, {allowed} listed:\n  {}",
                sites.len(),
                sites.join("\n  ")
            )),
            Some(_) => {}
        }
    }
    for (file, allowed, _) in MESSAGES {
        let left = found.get(*file).map_or(0, Vec::len);
        if left < *allowed {
            wrong.push(format!(
                "{file} has {left} String errors, {allowed} listed: lower the count"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "a typed error (thiserror, its source kept) or a listed reason:\n{}",
        wrong.join("\n")
    );
}
