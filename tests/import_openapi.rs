//! `mcp-serve import openapi` on real descriptions (tests/fixtures/openapi): the manifests
//! and summaries are snapshots, every import passes `check`, and filters say what they did.
//! `UPDATE_SNAPSHOTS=1` rewrites the snapshots; read their diff before committing.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::harness::{BINARY, repo_root, run};

pub(crate) use crate::harness::{github, openapi_fixtures as fixtures};

/// Runs `mcp-serve import openapi ARGS` in the fixtures folder, `input` on stdin.
pub(crate) fn import(args: &[&str], input: Option<&[u8]>) -> (i32, String, String) {
    let mut child = Command::new(BINARY)
        .args(["import", "openapi"])
        .args(args)
        .current_dir(fixtures())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-serve import");
    let mut stdin = child.stdin.take().expect("stdin");
    if let Some(input) = input {
        stdin.write_all(input).expect("write the description");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("import ends");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_snapshot(name: &str, actual: &str) {
    let path = repo_root().join("tests/snapshots/openapi").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let new = path.with_extension(format!(
            "{}.new",
            path.extension().and_then(|e| e.to_str()).unwrap_or("txt")
        ));
        std::fs::write(&new, actual).expect("write the new output");
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its snapshot from line {}: compare {} with {} (UPDATE_SNAPSHOTS=1 accepts it)",
            line + 1,
            path.display(),
            new.display()
        );
    }
}

/// Writes the manifest to a fresh folder and runs `check` on it with `env` set.
fn check(manifest: &str, env: &[(&str, &str)]) -> (i32, String) {
    check_with(manifest, env, &[])
}

fn check_with(manifest: &str, env: &[(&str, &str)], flags: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tools.toml");
    std::fs::write(&path, manifest).expect("write");
    let output = Command::new(BINARY)
        .args(["check", "--config"])
        .arg(&path)
        .args(flags)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .output()
        .expect("check runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn tools_in(manifest: &str) -> usize {
    manifest.lines().filter(|line| *line == "[[tools]]").count()
}

const PETSTORE_SECRETS: [(&str, &str); 2] = [
    ("SWAGGER_PETSTORE_PETSTORE_AUTH", "pet-token"),
    ("SWAGGER_PETSTORE_API_KEY", "special-key"),
];

#[test]
fn petstore_yaml_imports_as_its_snapshot_says_and_passes_check() {
    let (code, manifest, summary) = import(&["petstore.yaml"], None);
    assert_eq!(code, 0, "{summary}");
    assert_snapshot("petstore.toml", &manifest);
    assert_snapshot("petstore.summary", &summary);
    // All 20 operations: `uploadFile` sends its multipart body (the file as base64 content).
    assert_eq!(tools_in(&manifest), 20);
    assert!(!summary.contains("cannot be imported"), "{summary}");
    let (code, report) = check(&manifest, &PETSTORE_SECRETS);
    assert_eq!((code, report.trim_end()), (0, "0 errors, 0 warnings"));
    // Without its credentials, the manifest passes all the same, and says which variables
    // serving will need; `--strict` makes that an error.
    let (code, report) = check(&manifest, &[]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains(
            "warning: the environment variable `SWAGGER_PETSTORE_PETSTORE_AUTH` is not set"
        ) && report.contains("[unset-secret]")
            && report.ends_with("0 errors, 2 warnings\n"),
        "{report}"
    );
    let (code, report) = check_with(&manifest, &[], &["--strict"]);
    assert_eq!(code, 1, "{report}");
    assert!(report.ends_with("2 errors, 0 warnings\n"), "{report}");
}

/// A real description as its registry package ships it (tests/fixtures/openapi/README.md):
/// imported, checked without its secrets and with them, and listed.
struct Real<'a> {
    file: &'a str,
    kept: usize,
    skipped: usize,
    secrets: &'a [(&'a str, &'a str)],
    /// Warnings `check` has with the secrets set (titles a description does not give, a
    /// `tools/list` over the budget).
    warnings: usize,
}

fn real(case: &Real<'_>) -> (String, String) {
    let (code, manifest, summary) = if Path::new(case.file)
        .extension()
        .is_some_and(|extension| extension == "gz")
    {
        let output = Command::new("gzip")
            .args(["-dc", case.file])
            .current_dir(fixtures())
            .output()
            .expect("gzip runs");
        import(&["-"], Some(&output.stdout))
    } else {
        import(&[case.file], None)
    };
    assert_eq!(code, 0, "{summary}");
    let name = case.file.split('.').next().unwrap_or_default();
    assert_snapshot(&format!("{name}.summary"), &summary);
    let skipped = summary
        .split_once("cannot be imported (")
        .map_or(0, |(_, rest)| {
            rest.split(')')
                .next()
                .unwrap_or_default()
                .parse()
                .unwrap_or(0)
        });
    assert_eq!(
        (tools_in(&manifest), skipped),
        (case.kept, case.skipped),
        "{}: kept and skipped operations\n{summary}",
        case.file
    );
    // Without the secrets: no error, a warning for each variable serving needs.
    let (code, report) = check(&manifest, &[]);
    assert_eq!(code, 0, "{}: {report}", case.file);
    assert_eq!(
        report.matches("[unset-secret]").count(),
        case.secrets.len(),
        "{}: {report}",
        case.file
    );
    let (code, report) = check(&manifest, case.secrets);
    let line = report.lines().last().unwrap_or_default().to_owned();
    assert_eq!(
        (code, line.as_str()),
        (
            0,
            format!(
                "0 errors, {} warning{}",
                case.warnings,
                if case.warnings == 1 { "" } else { "s" }
            )
            .as_str()
        ),
        "{}: {report}",
        case.file
    );
    // Listed as a client gets it, secrets unset, every tool there.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tools.toml");
    std::fs::write(&path, &manifest).expect("write");
    let output = Command::new(BINARY)
        .args(["list", "--json", "--config"])
        .arg(&path)
        .env("NO_COLOR", "1")
        .output()
        .expect("list runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(listed["tools"].as_array().map(Vec::len), Some(case.kept));
    eprintln!(
        "import: {}: {} operations kept, {} skipped; check passes without its {} secrets (warned) and with them; {} tools listed",
        case.file,
        case.kept,
        case.skipped,
        case.secrets.len(),
        case.kept
    );
    (manifest, summary)
}

#[test]
fn scalar_galaxy_imports_whole_with_its_dynamic_references_bound() {
    let (manifest, summary) = real(&Real {
        file: "galaxy.yaml",
        kept: 10,
        skipped: 0,
        secrets: &[
            ("SCALAR_GALAXY_BEARERAUTH", "galaxy-token"),
            ("SCALAR_GALAXY_BASICAUTH", "dXNlcjpwYXNz"),
        ],
        // Its 10 tools list in about 21,800 tokens, under `check`'s budget (a recursive
        // schema carries only the definitions its references reach).
        warnings: 0,
    });
    assert_snapshot("galaxy.toml", &manifest);
    // `PaginatedResource`'s items are `$dynamicRef: "#itemType"`; the response binds the
    // anchor to `Planet`, so the output schema says planets, with no dynamic reference left.
    assert!(!manifest.contains("\"$dynamicRef\":"), "{manifest}");
    let tools: toml::Table = toml::from_str(&manifest).expect("TOML");
    let all = tools["tools"].as_array().expect("tools");
    let get_all = all
        .iter()
        .find(|tool| tool["name"].as_str() == Some("getAllData"))
        .expect("getAllData");
    let output: serde_json::Value =
        serde_json::from_str(get_all["output-schema"].as_str().expect("output")).expect("JSON");
    // The page is shared: the output schema names it, in `[schemas]`.
    assert_eq!(
        output,
        serde_json::json!({"type": "object", "$ref": "#/$defs/PaginatedResource"})
    );
    let page: serde_json::Value = serde_json::from_str(
        tools["schemas"]["PaginatedResource"]
            .as_str()
            .expect("a shared schema"),
    )
    .expect("JSON");
    assert_eq!(
        page["properties"]["data"]["items"],
        serde_json::json!({"$ref": "#/$defs/Planet"})
    );
    // The image upload is a multipart body with the file as base64 content.
    assert!(
        manifest.contains(
            "[tools.http.multipart]\nimage = { base64 = \"{image}\", filename = \"image\", content-type = \"application/octet-stream\" }"
        ),
        "{manifest}"
    );
    assert!(!summary.contains("cannot be imported"), "{summary}");
}

#[test]
fn blockfrost_and_rclone_import_as_their_packages_ship_them() {
    real(&Real {
        file: "blockfrost.yaml.gz",
        kept: 126,
        skipped: 3,
        secrets: &[("BLOCKFROST_IO_API_DOCUMENTATION_PROJECT_ID", "mainnet-key")],
        warnings: 1,
    });
    let (manifest, _) = real(&Real {
        file: "rclone.yaml.gz",
        kept: 101,
        skipped: 0,
        secrets: &[],
        warnings: 23,
    });
    // rclone's `options/set` takes each option group as a `deepObject` query parameter.
    assert!(
        manifest.contains("style = \"deepObject\", explode = true }"),
        "{manifest}"
    );
}

#[test]
fn an_openapi_3_1_description_imports_as_its_snapshot_says_and_passes_check() {
    let (code, manifest, summary) = import(&["readme.json"], None);
    assert_eq!(code, 0, "{summary}");
    assert_snapshot("readme.toml", &manifest);
    assert_snapshot("readme.summary", &summary);
    let (code, report) = check(&manifest, &[("README_API_BEARER", "rdme_token")]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.starts_with("warning: tools/list is 54 tools, ")
            && report.ends_with("[list-size]\n0 errors, 1 warning\n"),
        "only the list's size: {report}"
    );
}

#[test]
fn githubs_1223_operations_import_from_stdin_and_pass_check() {
    let description = github();
    let (code, manifest, summary) = import(&["-"], Some(&description));
    assert_eq!(code, 0, "{summary}");
    assert_snapshot("github.summary", &summary);
    let tools = tools_in(&manifest);
    eprintln!(
        "github: 1223 operations, {tools} tools, {} bytes of manifest",
        manifest.len()
    );
    assert_eq!(tools, 1221);
    let (code, report) = check(&manifest, &[]);
    // The whole API is far over the list budget; its tags are toolsets to serve apart.
    assert_eq!(code, 0, "{report}");
    assert!(
        report.ends_with("[list-size]\n0 errors, 1 warning\n"),
        "{report}"
    );
    assert!(
        report.contains("tools/list is 1221 tools, ")
            && report.contains("over it alone: ")
            && report.contains(" repos,"),
        "{report}"
    );
    let (code, report) = check_with(&manifest, &[], &["--toolsets", "issues"]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains("tools/list is 58 tools, "),
        "issues alone: {report}"
    );
    let (code, report) = check_with(&manifest, &[], &["--toolsets", "meta,licenses"]);
    assert_eq!((code, report.trim_end()), (0, "0 errors, 0 warnings"));
    let (code, issues, summary) = import(
        &["-", "--include", "issues/*", "--method", "get"],
        Some(&description),
    );
    assert_eq!(code, 0, "{summary}");
    assert_snapshot("github-issues-get.toml", &issues);
    assert_snapshot("github-issues-get.summary", &summary);
}

#[test]
fn filters_keep_what_they_select_and_say_why_the_rest_was_dropped() {
    let (code, manifest, summary) = import(
        &[
            "petstore.yaml",
            "--tag",
            "pet",
            "--method",
            "GET",
            "--exclude",
            "*ByTags",
        ],
        None,
    );
    assert_eq!(code, 0, "{summary}");
    let names: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("name = \""))
        .map(|name| name.trim_end_matches('"'))
        .collect();
    assert_eq!(
        names,
        ["swagger-petstore", "pet", "findPetsByStatus", "getPetById"],
        "the server, the one tag's toolset, the tools"
    );
    assert!(
        summary.contains("findPetsByTags (GET /pet/findByTags): --exclude `*ByTags`"),
        "{summary}"
    );
    assert!(
        summary.contains("addPet (POST /pet): another method (--method)"),
        "{summary}"
    );
    assert!(
        summary.contains("getInventory (GET /store/inventory): tagged store (--tag)"),
        "{summary}"
    );
    let (_, manifest, _) = import(
        &["petstore.yaml", "--path", "/store/*", "--include", "get*"],
        None,
    );
    let names: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("name = \""))
        .collect();
    assert_eq!(
        names,
        [
            "swagger-petstore\"",
            "store\"",
            "getInventory\"",
            "getOrderById\""
        ]
    );
}

#[test]
fn a_filter_that_matches_nothing_or_keeps_nothing_is_an_error() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--tag", "pets"],
            "--tag `pets` matches no operation (did you mean `pet`?)",
        ),
        (
            &["--include", "getPetByID"],
            "--include `getPetByID` matches no operation (did you mean `getPetById`?)",
        ),
        (
            &["--exclude", "nothing*"],
            "--exclude `nothing*` matches no operation",
        ),
        (
            &["--method", "PATCH"],
            "--method `PATCH` matches no operation",
        ),
        (
            &["--path", "/pets/*"],
            "--path `/pets/*` matches no operation",
        ),
        (
            &["--tag", "store", "--method", "PUT"],
            "no operation is left to import",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["petstore.yaml"];
        all.extend_from_slice(args);
        let (code, manifest, summary) = import(&all, None);
        assert_eq!(code, 2, "{args:?}: {summary}");
        assert!(manifest.is_empty(), "{args:?} wrote a manifest");
        assert!(summary.contains(message), "{args:?}: {summary}");
    }
    let (code, _, summary) = import(&["petstore.yaml", "--include", "[oops"], None);
    assert_eq!(code, 2);
    assert!(
        summary.contains("--include `[oops` is not a valid pattern"),
        "{summary}"
    );
}

#[test]
fn what_is_not_an_openapi_3_description_gets_a_clear_error() {
    let cases: [(&[u8], &str); 5] = [
        (
            b"swagger: '2.0'\ninfo: {title: old}\n",
            "this is a Swagger 2.0 description; convert it to OpenAPI 3 first",
        ),
        (
            b"openapi: 4.0.0\n",
            "`openapi: 4.0.0` is not a version this importer reads",
        ),
        (
            b"{\"openapi\": \"3.1.0\", ",
            "the description is not valid JSON",
        ),
        (
            b"openapi: [3.1\n  bad: indent",
            "the description is not valid YAML",
        ),
        (
            b"openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n",
            "the description has no operations",
        ),
    ];
    for (input, message) in cases {
        let (code, manifest, summary) = import(&["-"], Some(input));
        assert_eq!(code, 2, "{summary}");
        assert!(manifest.is_empty());
        assert!(
            summary.contains(message),
            "{}: {summary}",
            String::from_utf8_lossy(input)
        );
    }
    let (code, _, summary) = import(&["missing.yaml"], None);
    assert_eq!(code, 2);
    assert!(
        summary.contains("could not read `missing.yaml`"),
        "{summary}"
    );
    let (code, _, summary) = import(&["petstore.yaml", "--base-url", "ftp://x"], None);
    assert_eq!(code, 2);
    assert!(
        summary.contains("--base-url `ftp://x` is not an http:// or https:// URL"),
        "{summary}"
    );
}

#[test]
fn output_goes_to_a_file_with_its_schema_and_is_never_overwritten_by_surprise() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("pets.toml");
    let target = path.to_str().expect("utf-8");
    let (code, stdout, summary) = import(&["petstore.yaml", "-o", target, "--tag", "store"], None);
    assert_eq!(code, 0, "{summary}");
    assert!(stdout.is_empty());
    assert!(dir.path().join("tools.schema.json").exists());
    assert!(
        summary.contains(&format!("next: `mcp-serve check --config {target}`")),
        "{summary}"
    );
    let written = std::fs::read_to_string(&path).expect("written");
    assert!(written.starts_with("#:schema ./tools.schema.json\n"));
    let (code, _, summary) = import(&["petstore.yaml", "-o", target], None);
    assert_eq!(code, 2);
    assert!(summary.contains("already exists"), "{summary}");
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), written);
    let (code, _, _) = import(&["petstore.yaml", "-o", target, "--force"], None);
    assert_eq!(code, 0);
    let (code, _, stderr) = run(&["check", "--config", target], Path::new("/"));
    assert_eq!(code, 0, "credentials unset, a warning: {stderr}");
    assert!(stderr.contains("[unset-secret]"), "{stderr}");
    // Serving is what needs them.
    let (code, _, stderr) = run(&["--config", target], Path::new("/"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not set"), "{stderr}");
}

/// Microsoft Graph beta, the biggest description in the public directory, cut to its
/// `/users` paths (2,914 tools; the whole is measured in `benches/big_api.py`): the import
/// writes what operations share once (components, and the `$orderby`/`$select` enums every
/// operation of an entity repeats), and a server answers its whole inlined `tools/list`
/// within a wide memory bound. Today that is about 0.15 GiB and a 6 MB manifest; when each
/// tool had its own copy of the schemas it used, the whole API's manifest was 141 MB and its
/// server peaked at 17 GiB, so a return to copies fails here.
#[test]
fn graph_beta_imports_shared_and_serves_its_list_within_a_wide_memory_bound() {
    let workspace = crate::harness::Workspace::new("");
    let description = workspace.path("graph-beta.json");
    let unpacked = Command::new("gzip")
        .args(["-dc", "graph-beta.json.gz"])
        .current_dir(fixtures())
        .output()
        .expect("gzip runs");
    assert!(unpacked.status.success());
    std::fs::write(&description, &unpacked.stdout).expect("write");
    let (code, manifest, summary) = import(
        &[description.to_str().expect("path"), "--path", "/users*"],
        None,
    );
    assert_eq!(code, 0, "{summary}");
    let tools = tools_in(&manifest);
    assert!(tools > 2_500, "{tools} tools");
    assert!(manifest.len() < 9_000_000, "{} bytes", manifest.len());
    // Shared arguments: each used by reference, written once.
    let argument_entries = manifest
        .lines()
        .filter(|line| line.starts_with("\"users.") && line.contains(".orderby\" = "))
        .count();
    assert!(argument_entries > 20, "{argument_entries}");
    std::fs::write(workspace.manifest(), &manifest).expect("write");
    let mut server = crate::harness::Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let list = server.request("tools/list", serde_json::json!({}));
    let listed = list["result"]["tools"].as_array().expect("tools");
    assert_eq!(listed.len(), tools);
    // Inlined: the shared enums are in each tool whole.
    let orderby = listed
        .iter()
        .filter_map(|tool| tool["inputSchema"]["properties"]["orderby"]["items"]["enum"].as_array())
        .count();
    assert!(orderby > 500, "{orderby} tools list an inlined orderby");
    let peak = peak_mib(server.pid());
    assert!(
        peak < 512,
        "a server of {tools} Graph tools peaked at {peak} MiB answering tools/list"
    );
    // Over HTTP, the same answer, sent from the same pieces: rmcp's own path (each tool a
    // value, the answer one buffer), which a request in a session still takes, peaks at
    // about 600 MiB here for one list.
    // Four at once, each naming a session this stateless server does not have: still the
    // pieces, not rmcp's path once each.
    let server = crate::http_harness::HttpServer::start(&workspace.manifest(), &[]);
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", "made-up"),
    ];
    std::thread::scope(|scope| {
        let lists: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| crate::http_harness::message(server.post(&request, &headers), 2))
            })
            .collect();
        for list in lists {
            let list = list.join().expect("a list");
            assert_eq!(
                list["result"]["tools"].as_array().map(Vec::len),
                Some(tools)
            );
        }
    });
    let peak = peak_mib(u32::try_from(server.pid()).expect("pid"));
    assert!(
        peak < 320,
        "over HTTP, a server of {tools} Graph tools peaked at {peak} MiB answering tools/list"
    );
}

/// The most memory process `pid` has held so far (`VmHWM`), in MiB.
fn peak_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    peak_kib / 1024
}
