//! The commands for people, driven as a user would, comparing whole outputs.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::harness::{BINARY, Server, Workspace, repo_root, run};

fn example(args: &[&str]) -> (i32, String, String) {
    let mut full = vec!["--config", "tools.example.toml"];
    full.extend_from_slice(args);
    run(&full, &repo_root())
}

#[test]
fn checked_in_completions_match_the_binary() {
    for (shell, file) in [
        ("bash", "mcp-serve.bash"),
        ("zsh", "_mcp-serve"),
        ("fish", "mcp-serve.fish"),
        ("powershell", "_mcp-serve.ps1"),
        ("elvish", "mcp-serve.elv"),
    ] {
        let (code, generated, _) = run(&["completions", shell], &repo_root());
        assert_eq!(code, 0);
        let checked_in = std::fs::read_to_string(repo_root().join("completions").join(file))
            .expect("checked in");
        assert!(
            generated == checked_in,
            "completions/{file} is stale; regenerate with `mcp-serve completions {shell} > completions/{file}`"
        );
    }
}

#[test]
fn the_checked_in_schema_matches_the_manifest_types() {
    let (code, generated, _) = run(&["schema"], &repo_root());
    assert_eq!(code, 0);
    let checked_in =
        std::fs::read_to_string(repo_root().join("schema/tools.schema.json")).expect("checked in");
    assert!(
        generated == checked_in,
        "schema/tools.schema.json is stale; run scripts/regenerate"
    );
    let schema: Value = serde_json::from_str(&generated).expect("JSON");
    assert_eq!(schema["title"], json!("mcp-serve manifest"));
    assert!(
        schema
            .pointer("/$defs/ToolWire/properties/command")
            .is_some(),
        "{schema}"
    );
    let example = std::fs::read_to_string(repo_root().join("tools.example.toml")).expect("example");
    assert!(example.starts_with("#:schema ./schema/tools.schema.json\n"));
    // Editors validate with it: the example (and the conformance fixture) must pass.
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for manifest in ["tools.example.toml", "tests/fixtures/conformance.toml"] {
        let text = std::fs::read_to_string(repo_root().join(manifest)).expect("manifest");
        let document: Value =
            serde_json::to_value(toml::from_str::<toml::Value>(&text).expect("TOML"))
                .expect("JSON");
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "{manifest}: {errors:?}");
    }
}

#[test]
fn list_shows_a_table_or_the_exact_tools_list() {
    let (code, table, _) = example(&["list"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "TOOL             ARGUMENTS                   ABOUT"
    );
    assert_eq!(
        lines[1],
        "search           query limit?                Search products"
    );
    assert_eq!(
        lines[8],
        "list-files       path? all? sort?            List files"
    );
    assert!(
        table.contains(
            "\n\nPROMPT            ARGUMENTS     ABOUT\ncompare-products  first second  Compare two products\n\nRESOURCE  "
        ) && table.ends_with("catalog://products/{file}  -                          Product pictures and sounds\n"),
        "{table}"
    );

    let (code, listed, _) = example(&["list", "--json"]);
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&listed).expect("JSON");
    let mut server = Server::initialized(&repo_root().join("tools.example.toml"), "2025-11-25");
    let answered = server.request("tools/list", json!({}));
    assert_eq!(
        listed, answered["result"],
        "list --json is what a client gets"
    );
}

/// Lint cases: a manifest, `check` arguments, the whole stderr, the exit code.
#[test]
fn check_reports_lints_with_exit_codes_for_ci() {
    let cases: [(&str, &[&str], &str, i32); 5] = [
        (
            "[[tools]]\nname = \"run\"\n[tools.arguments.q]\ntype = \"string\"\n[tools.command]\nargv = [\"grep\", \"{q}\", \"file\"]\n",
            &[],
            "warning: tool `run` has no `description`; the model picks tools by it [missing-description]\n\
             warning: tool `run` has no `title`; hosts show the bare name [missing-title]\n\
             warning: tool `run` runs a command but declares no `annotations`; hosts assume it may destroy data [missing-annotations]\n\
             warning: tool `run` `{q}` fills an argv element of its own with no `--` before it; a value starting with `-` would read as an option [option-injection]\n\
             0 errors, 4 warnings\n",
            0,
        ),
        (
            "[[tools]]\nname = \"sh\"\ntitle = \"S\"\ndescription = \"d\"\nannotations = { read-only = true }\n[tools.command]\nscript = 'echo hi'\n",
            &[],
            "warning: tool `sh` runs a shell (`script`); arguments reach it only as $1…, but check the script quotes them [shell]\n0 errors, 1 warning\n",
            0,
        ),
        (
            "[[tools]]\nname = \"db.query\"\ntitle = \"Q\"\ndescription = \"d\"\ninput-schema = { type = \"object\", anyOf = [{ required = [\"a\"] }, { required = [\"b\"] }], properties = { a = { type = \"string\" }, b = { \"$ref\" = \"#/$defs/b\" } }, \"$defs\" = { b = { type = \"string\" } } }\n[tools.static]\ncontent = [{ type = \"text\", text = \"ok\" }]\n",
            &["--target", "claude-desktop", "--target", "gemini"],
            "error: tool `db.query` Claude Desktop accepts tool names of 1 to 64 letters, digits, `_` and `-` [target-tool-name]\n\
             error: tool `db.query` Claude Desktop rejects a top-level `anyOf` in `inputSchema` [target-top-level-composition]\n\
             error: tool `db.query` Gemini rejects a top-level `anyOf` in `inputSchema` [target-top-level-composition]\n\
             3 errors, 0 warnings\n",
            1,
        ),
        // The `$ref` above is inlined in what is advertised; a recursive one stays, and
        // what each converter does with the rest is said.
        (
            "[[tools]]\nname = \"tree\"\ntitle = \"T\"\ndescription = \"d\"\ninput-schema = '{\"type\":\"object\",\"properties\":{\"t\":{\"$ref\":\"#/$defs/n\"},\"u\":{\"type\":[\"string\",\"integer\"]},\"d\":{\"type\":\"string\",\"format\":\"date\"},\"m\":{\"type\":\"object\"}},\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}},\"required\":[\"c\"],\"additionalProperties\":false}},\"required\":[\"t\",\"u\",\"d\"],\"additionalProperties\":false}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"ok\" }]\n",
            &["--target", "openai", "--target", "gemini"],
            "warning: tool `tree` OpenAI's strict mode takes only closed objects, and the object at `/properties/m` takes undeclared properties: openai-agents sends the tool non-strict (declare its properties, or `additionalProperties = false`) [openai-strict-open-object]\n\
             warning: tool `tree` its `inputSchema` keeps a `$ref` (`#/$defs/n` recursive): openai-agents sends the tool non-strict [openai-strict-ref]\n\
             warning: tool `tree` OpenAI's strict mode makes every property required, so the model always sends `/properties/m`; let a type admit `null` where it should be able to say \"none\" (mcp-serve reads `null` for an optional argument as left out) [openai-strict-optional]\n\
             error: tool `tree` Gemini does not resolve `$ref`/`$defs` in `inputSchema` (`#/$defs/n` recursive); google-adk sends a recursive one as an empty object [target-ref]\n\
             error: tool `tree` Gemini rejects `type` lists in `inputSchema`: google-adk keeps only `string` of [\"string\",\"integer\"] at `/properties/u` [target-type-union]\n\
             warning: tool `tree` Gemini's schema cannot say `format = \"date\"` at `/properties/d`: google-adk drops it, so the model never sees it (the server still checks it); a dropped `allOf` takes its properties along, and a `const` alone becomes an object [gemini-dropped]\n\
             2 errors, 4 warnings\n",
            1,
        ),
        (
            "[[tools]]\nname = \"x\"\n[tools.comand]\n",
            &[],
            "error: unknown key `comand` in tool `x`\n --> tools.toml:3:8\n  |\n3 | [tools.comand]\n  |        ^^^^^^\n  = hint: did you mean `command`?\n\nerror: could not load `tools.toml` due to 1 previous error\n",
            2,
        ),
    ];
    for (manifest, args, expected, code) in cases {
        let workspace = Workspace::new(manifest);
        let mut full = vec!["check"];
        full.extend_from_slice(args);
        let (got_code, stdout, stderr) = run(&full, workspace.dir.path());
        assert_eq!(stderr, expected, "\n--- got ---\n{stderr}");
        assert_eq!((got_code, stdout.as_str()), (code, ""), "{manifest}");
    }
    let (code, clean, _) = example(&["check", "--target", "claude-desktop", "--format", "json"]);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&clean).expect("JSON");
    assert_eq!(
        (&report["valid"], &report["findings"]),
        (&json!(true), &json!([])),
        "{report}"
    );
    // Every command tool of the example is sandboxed, and the report says what is enforced.
    let sandboxed = report["sandbox"]["tools"]
        .as_object()
        .expect("sandbox report");
    assert_eq!(
        sandboxed.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "search",
            "product-details",
            "product-card",
            "clear-catalog",
            "disk-free",
            "find-in-files",
            "list-files"
        ]
    );
}

#[test]
fn call_runs_a_tool_the_way_the_server_does() {
    let (code, stdout, _) = example(&["call", "search", "query=MUG", "limit=1"]);
    assert_eq!((code, stdout.as_str()), (0, "Travel mug\n"));
    let (code, stdout, _) = example(&["call", "search", "query=mug", "limit=999"]);
    assert_eq!(code, 1, "a tool error is exit code 1");
    assert_eq!(
        stdout,
        "invalid arguments for tool `search`:\nlimit: 999 is greater than the maximum of 50\n"
    );
    let (code, _, stderr) = example(&["call", "search", "query=mug", "limit=ten"]);
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: `limit` takes a whole number, not `ten`\n")
    );
    let (code, _, stderr) = example(&["call", "serch"]);
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: unknown tool `serch`; did you mean `search`?\n")
    );
    let (code, stdout, _) = example(&[
        "call",
        "product-details",
        "--json",
        r#"{"name":"Mug rack"}"#,
        "--json-out",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).ok(),
        Some(json!({"name": "Mug rack", "price": 36}))
    );
    let (code, stdout, _) = example(&[
        "call",
        "find-in-files",
        "pattern=Mug",
        "files=examples/catalog.tsv",
        "files=examples/catalog.tsv",
    ]);
    assert_eq!(
        (code, stdout.lines().count()),
        (0, 2),
        "a repeated key builds a list"
    );
}

#[test]
fn call_saves_binary_blocks_and_shows_progress() {
    let out = tempfile::tempdir().expect("dir");
    let out_dir = out.path().to_str().expect("path");
    let (code, stdout, _) = example(&[
        "call",
        "product-card",
        "name=Mug rack",
        "--out-dir",
        out_dir,
    ]);
    assert_eq!(code, 0);
    let image = out.path().join("product-card-1.png");
    assert_eq!(
        stdout,
        format!(
            "[image/png saved to {}]\n[audio/wav saved to {}]\n[resource catalog://products/Mug%20rack]\n{{\"name\":\"Mug rack\",\"price\":36}}\n",
            image.display(),
            out.path().join("product-card-2.wav").display()
        )
    );
    assert_eq!(
        std::fs::read(image).ok(),
        std::fs::read(repo_root().join("examples/products/mug-rack.png")).ok()
    );

    let workspace = Workspace::new(
        "[[tools]]\nname = \"work\"\n[tools.command]\nscript = '''echo '{\"progress\": 1, \"total\": 2, \"message\": \"half\"}' > \"$MCP_SERVE_EVENTS\"; echo '{\"log\": \"warning\", \"message\": \"careful\"}' > \"$MCP_SERVE_EVENTS\"; echo ok'''\nevents = true\n",
    );
    let (code, stdout, stderr) = run(&["call", "work"], workspace.dir.path());
    assert_eq!((code, stdout.as_str()), (0, "ok\n"));
    assert_eq!(stderr, "progress:  50% half\nwarning: careful\n");
}

#[test]
fn dry_run_shows_what_would_run_with_secrets_redacted() {
    let (code, stdout, _) = example(&[
        "call",
        "find-in-files",
        "pattern=-x",
        "files=a b",
        "ignore-case=true",
        "--dry-run",
    ]);
    assert_eq!(code, 0);
    let root = repo_root().display().to_string();
    assert!(
        stdout.starts_with(&format!(
            "argv: [\"grep\",\"-n\",\"-H\",\"-i\",\"-e\",\"-x\",\"--\",\"a b\"]\ncwd: {root}\nenvironment: inherited, plus:\nstdin: nothing\nsandbox:\n  files: read {root}; write nothing; runs `"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("\n  network: none"), "{stdout}");
    let workspace = Workspace::new(
        "[[tools]]\nname = \"api\"\n[tools.arguments.q]\ntype = \"string\"\n[tools.http]\nmethod = \"POST\"\nurl = \"https://api.example.com/search\"\nquery = { q = \"{q}\" }\nheaders = { Authorization = \"Bearer ${env:DRY_RUN_TOKEN}\" }\nbody = \"arguments\"\n",
    );
    let output = Command::new(BINARY)
        .args(["call", "api", "q=a&b", "--dry-run"])
        .current_dir(workspace.dir.path())
        .env("DRY_RUN_TOKEN", "tok-123456")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "POST https://api.example.com/search?q=a%26b\nauthorization: Bearer [redacted]\ncontent-type: application/json\n\n{\"q\":\"a&b\"}\n"
    );
}

/// A fresh clone: nothing else is started, and every example passes (the HTTP tool's
/// examples run against the stand-in their `upstream` declares).
#[test]
fn test_runs_every_example_in_the_example_manifest() {
    let (code, stdout, _) = example(&["test"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.ends_with("\n12 passed, 0 failed\n"), "{stdout}");
    assert!(
        stdout.contains("PASS exchange-rates :: euro rates\n"),
        "{stdout}"
    );
    assert!(
        stdout.starts_with("PASS search :: finds mugs in any case\n"),
        "{stdout}"
    );
}

#[test]
fn an_http_example_runs_against_its_stand_in_and_checks_the_request() {
    // The host does not exist: only the stand-in can answer.
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "item"
description = "An item"
arguments.id = { type = "integer" }
[tools.http]
method = "POST"
url = "https://api.example.invalid/v1/items/{id}"
query = { verbose = "yes" }

[[tools.examples]]
name = "right"
arguments = { id = 8 }
structured = { name = "mug" }
[tools.examples.upstream]
method = "POST"
path = "/v1/items/8?verbose=yes"
body = { name = "mug" }

[[tools.examples]]
name = "wrong path on purpose"
arguments = { id = 9 }
[tools.examples.upstream]
path = "/v1/items/8"
body = { name = "mug" }

[[tools.examples]]
name = "wrong method on purpose"
arguments = { id = 8 }
[tools.examples.upstream]
method = "GET"
body = "plain"

[[tools.examples]]
name = "a redirect is not followed"
arguments = { id = 8 }
is-error = true
text-contains = "HTTP 302"
[tools.examples.upstream]
status = 302
headers = { location = "http://localhost:9/escaped" }
"#,
    );
    // A proxy in the environment is not used: the request goes to the stand-in only.
    let output = Command::new(BINARY)
        .arg("test")
        .current_dir(workspace.dir.path())
        .env_remove("MCP_SERVE_CONFIG")
        .env("http_proxy", "http://127.0.0.1:9")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("ALL_PROXY", "http://127.0.0.1:9")
        .output()
        .expect("run mcp-serve test");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout,
        "PASS item :: right\nFAIL item :: wrong path on purpose\n     the upstream was asked for /v1/items/9, expected /v1/items/8\nFAIL item :: wrong method on purpose\n     the upstream was called with POST, expected GET\nPASS item :: a redirect is not followed\n\n2 passed, 2 failed\n"
    );
    // Only HTTP tools have an upstream.
    let broken = Workspace::new(
        "[[tools]]\nname = \"s\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n[[tools.examples]]\n[tools.examples.upstream]\nbody = \"x\"\n",
    );
    let (code, _, stderr) = run(&["check"], broken.dir.path());
    assert_ne!(code, 0);
    assert!(stderr.contains("`upstream` is for HTTP tools"), "{stderr}");
}

#[test]
fn test_reports_failures_and_exits_1() {
    let workspace = Workspace::new(
        "[[tools]]\nname = \"echo\"\n[tools.arguments.word]\ntype = \"string\"\n[tools.command]\nargv = [\"echo\", \"{word}\"]\n\n[[tools.examples]]\nname = \"says it\"\narguments = { word = \"hi\" }\ntext = \"hi\"\n\n[[tools.examples]]\nname = \"wrong on purpose\"\narguments = { word = \"hi\" }\ntext = \"bye\"\n",
    );
    let (code, stdout, _) = run(&["test"], workspace.dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "PASS echo :: says it\nFAIL echo :: wrong on purpose\n     expected the text \"bye\", got \"hi\"\n\n1 passed, 1 failed\n"
    );
}

#[test]
fn init_writes_a_starter_that_passes_check() {
    for flags in [
        &[][..],
        &["--http-tool"][..],
        &["--command-tool", "--http-tool"][..],
        &["--app"][..],
        &["--app", "--http-tool"][..],
    ] {
        let dir = tempfile::tempdir().expect("dir");
        let mut args = vec!["init"];
        args.extend_from_slice(flags);
        let (code, _, stderr) = run(&args, dir.path());
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.starts_with("wrote `tools.toml` and `tools.schema.json`"),
            "{stderr}"
        );
        let manifest = std::fs::read_to_string(dir.path().join("tools.toml")).expect("written");
        assert!(manifest.starts_with("#:schema ./tools.schema.json\n"));
        // `--app` gives greet a page, written beside; nothing else writes one.
        let app = flags.contains(&"--app");
        assert_eq!(manifest.contains("[tools.app]"), app, "{flags:?}");
        assert_eq!(dir.path().join("greet.html").exists(), app, "{flags:?}");
        let (code, _, stderr) = run(&["check", "--target", "claude-desktop"], dir.path());
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        assert!(
            stderr.ends_with("0 errors, 0 warnings\n"),
            "{flags:?}: {stderr}"
        );
        // The starter's command tool is sandboxed, and `check` says what is enforced.
        assert_eq!(
            stderr.contains("  tool `greet`\n    enforced: files: read nothing; write nothing"),
            flags != ["--http-tool"],
            "{flags:?}: {stderr}"
        );
        let (code, _, stderr) = run(&["init"], dir.path());
        assert_eq!(
            (code, stderr.as_str()),
            (
                2,
                "error: `tools.toml` already exists\n\nhint: pass `--force` to replace it\n"
            )
        );
    }
    let dir = tempfile::tempdir().expect("dir");
    run(&["init"], dir.path());
    let (code, stdout, _) = run(&["test"], dir.path());
    assert_eq!(
        (code, stdout.as_str()),
        (0, "PASS greet :: example 1\n\n1 passed, 0 failed\n")
    );
}

#[test]
fn install_adds_the_server_with_absolute_paths_and_keeps_the_rest() {
    let home = tempfile::tempdir().expect("home");
    let config = home
        .path()
        .join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &config,
        r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}}"#,
    )
    .expect("write");
    let install = |args: &[&str]| {
        let output = Command::new(BINARY)
            .args(["--config", "tools.example.toml", "install"])
            .args(args)
            .current_dir(repo_root())
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .output()
            .expect("run");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let manifest = std::fs::canonicalize(repo_root().join("tools.example.toml")).expect("absolute");
    let binary = std::fs::canonicalize(BINARY).expect("absolute");
    let expected_entry = json!({"command": binary.display().to_string(), "args": ["--config", manifest.display().to_string()]});

    let (code, stdout, stderr) = install(&["claude-desktop"]);
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
    assert!(
        stderr.starts_with(&format!("added `catalog` in `{}`:", config.display())),
        "{stderr}"
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("JSON");
    assert_eq!(
        written,
        json!({"theme": "dark", "mcpServers": {"other": {"command": "x"}, "catalog": expected_entry}})
    );
    let (_, _, stderr) = install(&["claude-desktop"]);
    assert!(stderr.contains("nothing changed"), "{stderr}");

    let (code, stdout, _) = install(&["vscode", "--name", "shop", "--dry-run"]);
    assert_eq!(code, Some(0));
    let mut vscode_entry = expected_entry.clone();
    vscode_entry["type"] = json!("stdio");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).ok(),
        Some(json!({"servers": {"shop": vscode_entry}}))
    );
    assert!(
        !home.path().join(".config/Code").exists(),
        "a dry run writes nothing"
    );

    std::fs::write(home.path().join(".claude.json"), "{ not json").expect("write");
    let (code, _, stderr) = install(&["claude-code"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("is not valid JSON") && stderr.contains("left as it is"),
        "{stderr}"
    );
}

/// `--via uvx|npx` writes the package, pinned to this build's name and version, with the
/// manifest's absolute path; `--via path` (the default) this binary's absolute path.
#[test]
fn install_via_a_package_runner_pins_the_package() {
    let home = tempfile::tempdir().expect("home");
    let manifest = std::fs::canonicalize(repo_root().join("tools.example.toml")).expect("absolute");
    let manifest = manifest.display().to_string();
    let snippet = |args: &[&str]| {
        let output = Command::new(BINARY)
            .args(["--config", "tools.example.toml", "install"])
            .args(args)
            .arg("--dry-run")
            .current_dir(repo_root())
            .env("HOME", home.path())
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        serde_json::from_slice::<Value>(&output.stdout).expect("JSON")
    };
    let pinned = format!("mcp-serve@{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        snippet(&["claude-desktop", "--via", "uvx"]),
        json!({"mcpServers": {"catalog": {"command": "uvx", "args": [pinned, "--config", manifest]}}})
    );
    assert_eq!(
        snippet(&["vscode", "--via", "npx"]),
        json!({"servers": {"catalog": {"type": "stdio", "command": "npx", "args": ["-y", pinned, "--config", manifest]}}})
    );
    let binary = std::fs::canonicalize(BINARY).expect("absolute");
    let by_path = json!({"mcpServers": {"catalog": {"command": binary.display().to_string(), "args": ["--config", manifest]}}});
    assert_eq!(snippet(&["cursor", "--via", "path"]), by_path);
    assert_eq!(snippet(&["cursor"]), by_path);
}

/// Started by hand on a terminal, the server says once what it waits for and how to try a
/// tool instead; started by a host (pipes), it says nothing of the kind.
#[test]
fn a_person_at_a_terminal_is_told_what_the_server_waits_for() {
    let script = std::path::Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "`script` (util-linux) gives the server a terminal here"
    );
    let manifest = repo_root().join("tools.example.toml");
    let line = format!("'{BINARY}' --config '{}'", manifest.display());
    let mut child = Command::new(script)
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script");
    let mut stdout = child.stdout.take().expect("stdout");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Read as _;
        let mut seen = String::new();
        let mut buffer = [0u8; 1024];
        while let Ok(read) = stdout.read(&mut buffer) {
            if read == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
            if seen.contains("Ctrl-C stops.") {
                break;
            }
        }
        let _ = sender.send(seen);
    });
    let seen = receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        seen.matches("to try a tool from here, run `mcp-serve call TOOL key=value`")
            .count(),
        1,
        "{seen}"
    );
    assert!(
        seen.contains("serving 8 tools to an MCP client on stdin"),
        "{seen}"
    );

    let mut server = Server::initialized(&manifest, "2025-11-25");
    let _ = server.request("tools/list", json!({}));
    assert!(!server.stderr().contains("to try a tool from here"));
}

/// What `script` (util-linux) prints of a command run on a terminal of its own.
fn on_a_terminal(args: &[&str], cwd: &std::path::Path, no_color: bool) -> String {
    let command_line: Vec<String> = std::iter::once(BINARY)
        .chain(args.iter().copied())
        .map(|word| format!("'{word}'"))
        .collect();
    let mut script = Command::new("script");
    script
        .args(["-qec", &command_line.join(" "), "/dev/null"])
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    if no_color {
        script.env("NO_COLOR", "1");
    }
    let output = script.output().expect("script (util-linux) runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every way a command for people fails is rendered in one place: `error:` and `hint:` in
/// colour on a terminal, plain with `NO_COLOR` and through a pipe (the controls).
#[test]
fn failures_are_coloured_on_a_terminal_and_plain_elsewhere() {
    let workspace = Workspace::new("[[tools]]\nname = \"t\"\ncommand.argv = [\"true\"]\n");
    std::fs::write(workspace.path("bad.toml"), "[[tools]]\nnmae = \"x\"\n").expect("bad");
    let bad = workspace.path("bad.toml");
    let manifest = workspace.manifest();
    let cases: [(&[&str], &str); 4] = [
        // No manifest: the serving edge, with a hint.
        (&[], "no manifest given"),
        // A manifest with a mistake: its diagnostics.
        (
            &["--config", bad.to_str().expect("path")],
            "unknown key `nmae`",
        ),
        // A command's own failure.
        (
            &["call", "--config", manifest.to_str().expect("path"), "nope"],
            "`nope`",
        ),
        (
            &[
                "--http",
                "0.0.0.0:0",
                "--config",
                manifest.to_str().expect("path"),
            ],
            "refusing",
        ),
    ];
    let red = "\u{1b}[1;31merror\u{1b}[0m:";
    let cyan = "\u{1b}[1;36mhint\u{1b}[0m:";
    let empty = tempfile::tempdir().expect("dir");
    for (index, (args, says)) in cases.iter().enumerate() {
        let coloured = on_a_terminal(args, empty.path(), false);
        assert!(coloured.contains(red), "{args:?}: {coloured:?}");
        assert!(coloured.contains(says), "{args:?}: {coloured:?}");
        if index == 0 || index == 3 {
            assert!(coloured.contains(cyan), "{args:?}: {coloured:?}");
        }
        let plain = on_a_terminal(args, empty.path(), true);
        assert!(!plain.contains('\u{1b}'), "NO_COLOR: {plain:?}");
        assert!(plain.contains("error: "), "{plain:?}");
        let (code, _, piped) = run(args, empty.path());
        assert_eq!(code, 2, "{args:?}: {piped}");
        assert!(
            !piped.contains('\u{1b}') && piped.contains("error: "),
            "{piped:?}"
        );
    }
}
