//! The docs test themselves: every TOML snippet in the README and `docs/` parses, and every
//! snippet that is a manifest (it has `[[tools]]` or `[server]`) passes `mcp-serve check`,
//! but for what only the reader's machine can provide (a program, a file, a folder, an
//! environment variable).

use crate::harness::{repo_root, run};

/// Errors that depend on the reader's machine, not on the snippet.
const MACHINE: [&str; 5] = [
    "does not exist",
    "is not set",
    "could not read",
    "No such file or directory",
    "could not load",
];

fn snippets() -> Vec<(String, usize, String)> {
    let mut files = vec![repo_root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(repo_root().join("docs"))
        .expect("docs/")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a doc");
        let name = file
            .strip_prefix(repo_root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let mut rest = text.as_str();
        let mut index = 0;
        while let Some(start) = rest.find("```toml\n") {
            let body = &rest[start + "```toml\n".len()..];
            let end = body.find("```").expect("a closed block");
            found.push((name.clone(), index, body[..end].to_owned()));
            index += 1;
            rest = &body[end + 3..];
        }
    }
    found
}

#[test]
fn every_toml_snippet_parses_and_every_manifest_snippet_passes_check() {
    let snippets = snippets();
    let directory = tempfile::tempdir().expect("a directory");
    let (mut manifests, mut problems) = (0, Vec::new());
    for (file, index, snippet) in &snippets {
        if let Err(error) = snippet.parse::<toml::Table>() {
            problems.push(format!("{file} snippet {index} is not TOML: {error}"));
            continue;
        }
        if !(snippet.contains("[[tools]]") || snippet.contains("[server]")) {
            continue;
        }
        manifests += 1;
        let path = directory.path().join(format!("snippet-{manifests}.toml"));
        std::fs::write(&path, snippet).expect("write");
        let (code, _, stderr) = run(
            &["check", "--config", path.to_str().expect("utf-8")],
            directory.path(),
        );
        if code == 0 {
            continue;
        }
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("error:"))
            .filter(|line| !MACHINE.iter().any(|machine| line.contains(machine)))
            .collect();
        if !errors.is_empty() {
            problems.push(format!("{file} snippet {index}:\n{}", errors.join("\n")));
        }
    }
    eprintln!(
        "docs: {} TOML snippets parse; {manifests} manifests pass check",
        snippets.len()
    );
    assert!(
        snippets.len() >= 12 && manifests >= 6,
        "too few snippets found"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Where each table of the manifest is documented: a definition of the generated JSON
/// Schema (`schema/tools.schema.json`), the page, and the section's heading.
const TABLES: &[(&str, &str, &str)] = &[
    ("ServerWire", "manifest.md", "## `[server]`"),
    ("IconWire", "manifest.md", "## `[server]`"),
    ("AuthWire", "manifest.md", "## `[server.auth]`"),
    ("ToolWire", "manifest.md", "## `[[tools]]`"),
    ("ToolsetWire", "manifest.md", "## `[[toolsets]]`"),
    ("AnnotationsWire", "manifest.md", "## `[[tools]]`"),
    (
        "ArgumentWire",
        "manifest.md",
        "## Arguments, the concise form",
    ),
    ("CommandWire", "manifest.md", "## `[tools.command]`"),
    ("SandboxWire", "manifest.md", "## `[tools.sandbox]`"),
    ("HttpWire", "manifest.md", "## `[tools.http]`"),
    ("StaticWire", "manifest.md", "## `[tools.static]`"),
    ("BlockWire", "manifest.md", "## `[tools.static]`"),
    (
        "ContentAnnotationsWire",
        "manifest.md",
        "## `[tools.static]`",
    ),
    ("AskWire", "manifest.md", "## `confirm`"),
    ("SampleWire", "manifest.md", "## `confirm`"),
    ("PromptWire", "manifest.md", "## `[[prompts]]`"),
    ("PromptArgumentWire", "manifest.md", "## `[[prompts]]`"),
    ("MessageWire", "manifest.md", "## `[[prompts]]`"),
    ("ResourceWire", "manifest.md", "## `[[resources]]`"),
    ("ResourceTemplateWire", "manifest.md", "## `[[resources]]`"),
    ("AppWire", "manifest.md", "## `[tools.app]`"),
    ("CspWire", "manifest.md", "## `[tools.app]`"),
    ("SkillWire", "manifest.md", "## `[[skills]]`"),
    ("ExampleWire", "cli.md", "## Commands for people"),
    ("UpstreamWire", "cli.md", "## Commands for people"),
];

/// The manifest reference cannot drift from the manifest's types: every key of every table
/// of the generated JSON Schema is named, as code, in the section that documents that table;
/// a new table must be given its section here.
#[test]
fn every_manifest_key_is_in_its_tables_section() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schema/tools.schema.json")).expect("schema"),
    )
    .expect("JSON");
    let definitions = schema["$defs"].as_object().expect("$defs");
    let mut checked = 0;
    let mut problems = Vec::new();
    for (name, definition) in definitions {
        let Some(properties) = definition["properties"].as_object() else {
            continue;
        };
        let Some((_, page, heading)) = TABLES.iter().find(|(table, ..)| table == name) else {
            problems.push(format!("`{name}` has no section in tests/docs.rs TABLES"));
            continue;
        };
        let text = std::fs::read_to_string(repo_root().join("docs").join(page)).expect("a page");
        let Some(start) = text.find(heading) else {
            problems.push(format!("docs/{page} has no section `{heading}`"));
            continue;
        };
        let end = text[start + heading.len()..]
            .find("\n## ")
            .map_or(text.len(), |end| start + heading.len() + end);
        let code = code_of(&text[start..end]);
        for key in properties.keys() {
            checked += 1;
            if !mentions(&code, key) {
                problems.push(format!(
                    "`{key}` ({name}) is not named in docs/{page} {heading}"
                ));
            }
        }
    }
    eprintln!("docs: {checked} manifest keys, each in its table's section");
    assert!(checked > 100, "only {checked} keys found in the schema");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The TOML blocks and the inline code spans of a page.
fn code_of(page: &str) -> String {
    let mut code = String::new();
    for (index, part) in page.split("```").enumerate() {
        if index % 2 == 1 {
            if let Some(toml) = part.strip_prefix("toml\n") {
                code.push_str(toml);
                code.push('\n');
            }
        } else {
            for (span, text) in part.split('`').enumerate() {
                if span % 2 == 1 && !text.contains('\n') {
                    code.push_str(text);
                    code.push('\n');
                }
            }
        }
    }
    code
}

/// Whether `key` appears as a whole word (words hold letters, digits, `-` and `_`).
fn mentions(code: &str, key: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    code.match_indices(key).any(|(at, _)| {
        !code[..at].chars().next_back().is_some_and(word)
            && !code[at + key.len()..].chars().next().is_some_and(word)
    })
}

/// docs/import.md names every option `mcp-serve import openapi --help` lists.
#[test]
fn the_import_reference_names_every_option() {
    let (code, help, _) = crate::harness::run(&["import", "openapi", "--help"], &repo_root());
    assert_eq!(code, 0);
    let reference =
        std::fs::read_to_string(repo_root().join("docs/import.md")).expect("docs/import.md");
    let options: Vec<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .filter(|word| {
            !matches!(
                *word,
                "--help"
                    | "--config"
                    | "--toolsets"
                    | "--verbose"
                    | "--task-store"
                    | "--data-dir"
                    | "--task-lease"
                    | "--log-format"
            )
        })
        .collect();
    assert!(options.len() >= 12, "{options:?}");
    for option in options {
        assert!(
            reference.contains(&format!("`{option}")),
            "docs/import.md does not name {option}"
        );
    }
}
