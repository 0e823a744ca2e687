//! `mcp-serve bundle`: the example, with a tool that needs a secret, becomes an MCP Bundle the
//! official `mcpb` CLI validates and unpacks; started as a host starts it (its `user_config`
//! filled into `mcp_config`, nothing of the checkout on `PATH`) it serves the example to the
//! official Python client and sends the secret where the manifest says, and the secret is in
//! no file of the bundle and no log. What would not work elsewhere refuses the bundle.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use sha2::Digest as _;

use crate::harness::{BINARY, repo_root};
use crate::upstream::{Recorded, Reply, Upstream};

const SECRET: &str = "catalog-token-7f3a9c21e4";
const CLEAN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn mcpb() -> PathBuf {
    let mcpb = repo_root().join("tests/interop/node_modules/.bin/mcpb");
    assert!(
        mcpb.is_file(),
        "the mcpb CLI is not installed; run scripts/test (npm ci in tests/interop)"
    );
    mcpb
}

/// Runs `command`, asserts it succeeded, and returns its stdout and stderr.
fn run(command: &mut Command) -> (String, String) {
    let output = command.output().expect("run");
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(output.status.success(), "{command:?} failed:\n{out}{err}");
    (out, err)
}

/// Copies `from` into `to`, recursively (no links in the example).
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from)
        .expect("read_dir")
        .map(Result::unwrap)
    {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The example manifest and its files in `dir`, with one more tool that sends
/// `${env:CATALOG_TOKEN}` to `upstream`.
fn example_with_a_secret(dir: &Path, upstream: &str) -> PathBuf {
    copy(&repo_root().join("examples"), &dir.join("examples"));
    let state = dir.join("examples/state");
    std::fs::remove_dir_all(&state).expect("clear the state folder");
    std::fs::create_dir(&state).expect("mkdir state");
    std::fs::write(state.join("leftover.tsv"), "a tool's earlier output\n").expect("write");
    let mut manifest =
        std::fs::read_to_string(repo_root().join("tools.example.toml")).expect("example");
    manifest.push_str(&format!(
        "\n[[tools]]\nname = \"stock-level\"\ndescription = \"How many are in stock\"\n[tools.http]\nurl = \"{upstream}/stock\"\nheaders = {{ Authorization = \"Bearer ${{env:CATALOG_TOKEN}}\" }}\n"
    ));
    let path = dir.join("tools.toml");
    std::fs::write(&path, manifest).expect("write the manifest");
    path
}

/// Every file beneath `dir`, with its bytes.
fn files(dir: &Path, found: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir)
        .expect("read_dir")
        .map(Result::unwrap)
    {
        if entry.file_type().expect("type").is_dir() {
            files(&entry.path(), found);
        } else {
            found.push((entry.path(), std::fs::read(entry.path()).expect("read")));
        }
    }
}

/// `text` with the host's substitutions: the bundle's folder and the user's answers.
fn substituted(text: &str, unpacked: &Path, answers: &[(&str, &str)]) -> String {
    let mut text = text.replace("${__dirname}", unpacked.to_str().expect("path"));
    for (key, value) in answers {
        text = text.replace(&format!("${{user_config.{key}}}"), value);
    }
    text
}

/// A bundle's `mcp_config` as a host fills it in: its command, arguments and environment.
fn as_a_host_starts_it(
    config: &Value,
    unpacked: &Path,
) -> (String, Vec<String>, serde_json::Map<String, Value>) {
    let answers = [("CATALOG_TOKEN", SECRET)];
    let command = substituted(
        config["command"].as_str().expect("command"),
        unpacked,
        &answers,
    );
    let args: Vec<String> = config["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| substituted(arg.as_str().expect("arg"), unpacked, &answers))
        .collect();
    let env = config["env"]
        .as_object()
        .expect("env")
        .iter()
        .map(|(key, value)| {
            let value = substituted(value.as_str().expect("value"), unpacked, &answers);
            (key.clone(), json!(value))
        })
        .collect();
    (command, args, env)
}

/// Unpacks and validates `bundle` with the official CLI, as a host installs it, into
/// `unpacked`; checks what is there and that no file holds the secret.
fn unpack_as_a_host(bundle: &Path, unpacked: &Path) {
    run(Command::new(mcpb()).arg("unpack").arg(bundle).arg(unpacked));
    let (validated, _) = run(Command::new(mcpb()).arg("validate").arg(unpacked));
    assert!(validated.contains("validation passes"), "{validated}");
    run(Command::new(mcpb()).arg("info").arg(bundle));
    let mut unpacked_files = Vec::new();
    files(unpacked, &mut unpacked_files);
    for (path, bytes) in unpacked_files {
        assert!(
            !bytes
                .windows(SECRET.len())
                .any(|window| window == SECRET.as_bytes()),
            "{} holds the secret",
            path.display()
        );
    }
    // What the manifest names is there; what a tool writes at run time is not.
    for file in [
        "server/tools.toml",
        "server/examples/catalog.sh",
        "server/examples/catalog.tsv",
        "server/examples/products/mug-rack.png",
        "bin/mcp-serve",
    ] {
        assert!(unpacked.join(file).is_file(), "no {file}");
    }
    assert!(unpacked.join("server/examples/state").is_dir());
    assert!(unpacked.join("server/examples/state/.keep").is_file());
}

/// The upstream the secret tool calls: 200 for the secret, 401 for anything else.
fn stock_service() -> Upstream {
    Upstream::start(|request: &Recorded, _| {
        let authorized =
            request.header("authorization") == Some(format!("Bearer {SECRET}").as_str());
        let body = if authorized {
            r#"{"in_stock": 12}"#
        } else {
            r#"{"error": "who are you"}"#
        };
        Reply::new(if authorized { 200 } else { 401 }, "application/json", body)
    })
}

#[test]
fn the_example_bundled_installs_and_serves_as_a_host_starts_it() {
    let upstream = stock_service();
    let home = tempfile::tempdir().expect("home");
    let source = home.path().join("source");
    let manifest = example_with_a_secret(&source, &upstream.base());
    let out = home.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    let bundle = out.join("catalog.mcpb");
    // The author's own secret is set where the bundle is made: it must not go in.
    let (_, said) = run(Command::new(BINARY)
        .args(["bundle", "--config"])
        .arg(&manifest)
        .arg("-o")
        .arg(&bundle)
        .args([
            "--author",
            "The catalog team",
            "--registry-name",
            "io.github.mcp-serve/catalog",
        ])
        .args([
            "--url",
            "https://github.com/mcp-serve/catalog/releases/download/v1.0.0/catalog.mcpb",
        ])
        .env("CATALOG_TOKEN", SECRET));
    assert!(
        said.contains("the host asks its user for: CATALOG_TOKEN"),
        "{said}"
    );
    assert!(!said.contains(SECRET), "{said}");

    let unpacked = home.path().join("installed");
    unpack_as_a_host(&bundle, &unpacked);
    assert!(!unpacked.join("server/examples/state/leftover.tsv").exists());

    let described: Value = serde_json::from_slice(
        &std::fs::read(unpacked.join("manifest.json")).expect("manifest.json"),
    )
    .expect("JSON");
    assert_eq!(described["server"]["type"], "binary");
    assert_eq!(
        described["user_config"]["CATALOG_TOKEN"]["sensitive"],
        json!(true)
    );
    assert_eq!(
        described["user_config"]["CATALOG_TOKEN"]["required"],
        json!(true)
    );
    let (listed, _) = run(Command::new(BINARY)
        .args(["list", "--json", "--config"])
        .arg(&manifest));
    let listed: Value = serde_json::from_str(&listed).expect("JSON");
    let names = |tools: &Value| -> Vec<String> {
        tools
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(names(&described["tools"]), names(&listed["tools"]));

    // Started as a host starts it: mcp_config with `${__dirname}` and the user's answer.
    let (command, args, env) = as_a_host_starts_it(&described["server"]["mcp_config"], &unpacked);
    assert_eq!(args[0], "--config");
    assert_eq!(env["CATALOG_TOKEN"], json!(SECRET));
    let python = repo_root().join("tests/interop/.venv/bin/python");
    let (report, _) = run(Command::new(&python)
        .env_clear()
        .env("PATH", CLEAN_PATH)
        .env("HOME", home.path())
        .env("SERVER_ENV", Value::Object(env.clone()).to_string())
        .current_dir("/")
        .arg(repo_root().join("tests/interop/client.py"))
        .args(["legacy", "stdio", &command, &args[1]]));
    let report: Value = serde_json::from_str(&report).expect("a JSON report");
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    crate::interop::assert_python_report(&report, "2025-11-25");

    // The secret reaches the upstream as the manifest says, and no output or log line.
    let (called, log) = run(Command::new(&command)
        .env_clear()
        .env("PATH", CLEAN_PATH)
        .env("HOME", home.path())
        .env("CATALOG_TOKEN", SECRET)
        .current_dir("/")
        .args(["-v", "call", "stock-level"])
        .args(&args[..2]));
    assert!(called.contains("12"), "{called}");
    assert_eq!(
        upstream.last().header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert!(
        !called.contains(SECRET) && !log.contains(SECRET),
        "{called}{log}"
    );

    assert_server_json(&out.join("server.json"), &bundle);
}

/// `server` fits the MCP Registry's `server.json` schema (vendored, 2025-12-11).
pub(crate) fn assert_fits_the_registry(server: &Value) {
    let schema: Value = serde_json::from_slice(
        &std::fs::read(repo_root().join("tests/fixtures/registry/server.schema.json"))
            .expect("schema"),
    )
    .expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("the registry's schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(server)
        .map(|error| error.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}\n{server:#}");
}

/// `server.json` fits the registry's schema, names this bundle's bytes and asks for the
/// secret as one, without its value.
fn assert_server_json(path: &Path, bundle: &Path) {
    let server: Value =
        serde_json::from_slice(&std::fs::read(path).expect("server.json")).expect("JSON");
    assert_fits_the_registry(&server);
    let digest = mcp_serve::hex::lower(&sha2::Sha256::digest(
        std::fs::read(bundle).expect("bundle"),
    ));
    let package = &server["packages"][0];
    assert_eq!(package["fileSha256"], json!(digest));
    assert_eq!(package["registryType"], "mcpb");
    assert_eq!(package["environmentVariables"][0]["name"], "CATALOG_TOKEN");
    assert_eq!(package["environmentVariables"][0]["isSecret"], json!(true));
    assert!(!server.to_string().contains(SECRET));
}

/// A manifest in `dir` whose single tool is `tool` (TOML after `[[tools]]`).
fn manifest_with(dir: &Path, tool: &str) -> PathBuf {
    let path = dir.join("tools.toml");
    std::fs::write(
        &path,
        format!("[server]\nname = \"odd\"\n\n[[tools]]\nname = \"odd\"\n{tool}"),
    )
    .expect("write");
    path
}

#[test]
fn a_manifest_that_would_not_work_elsewhere_is_refused_and_nothing_written() {
    let home = tempfile::tempdir().expect("home");
    let inside = home.path().join("inside");
    std::fs::create_dir_all(inside.join("data")).expect("mkdir");
    std::fs::write(home.path().join("outside.sh"), "#!/bin/sh\necho out\n").expect("write");
    std::fs::write(home.path().join("token"), "a-secret-on-disk").expect("write");
    std::fs::write(inside.join("token"), "a-secret-on-disk").expect("write");
    std::os::unix::fs::symlink("/etc/hostname", inside.join("data/host")).expect("symlink");
    std::fs::create_dir_all(inside.join("notes")).expect("mkdir");
    std::fs::write(
        inside.join("notes/leak.txt"),
        "the token is value-in-the-notes-1234\n",
    )
    .expect("write");
    std::fs::create_dir_all(inside.join("real")).expect("mkdir");
    std::fs::write(inside.join("real/schema.json"), r#"{"type": "object"}"#).expect("write");
    std::os::unix::fs::symlink("real/schema.json", inside.join("linked.json")).expect("symlink");
    let bundle = home.path().join("odd.mcpb");
    let static_tool = "[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n";
    let cases = [
        (
            "[tools.command]\nargv = [\"../outside.sh\"]\n",
            "outside the manifest's folder",
        ),
        (
            "[tools.command]\nargv = [\"sh\", \"../outside.sh\"]\n",
            "outside the manifest's folder",
        ),
        (
            "[tools.http]\nurl = \"https://api.example.com/\"\nheaders = { Authorization = \"${file:./token}\" }\n",
            "secret file",
        ),
        // The same, its `$` written as a TOML escape.
        (
            "[tools.http]\nurl = \"https://api.example.com/\"\nheaders = { Authorization = \"\\u0024{file:./token}\" }\n",
            "secret file",
        ),
        // A data file that holds the value of a secret the author has set.
        (
            "[tools.http]\nurl = \"https://api.example.com/\"\nheaders = { Authorization = \"${env:NOTES_TOKEN}\" }\n\n[[tools]]\nname = \"notes\"\n[tools.command]\nargv = [\"ls\"]\n[tools.sandbox]\nread = [\"./notes\"]\n",
            "holds the value of a secret",
        ),
        // A schema named through a link inside the folder: the manifest would not find it.
        (
            &format!("input-schema-file = \"linked.json\"\n{static_tool}"),
            "symbolic link",
        ),
        (
            "[tools.command]\nargv = [\"ls\"]\n[tools.sandbox]\nread = [\"./data\"]\n",
            "symbolic link",
        ),
    ];
    for (tool, said) in cases {
        let manifest = manifest_with(&inside, tool);
        let output = Command::new(BINARY)
            .args(["bundle", "--author", "x", "--config"])
            .arg(&manifest)
            .arg("-o")
            .arg(&bundle)
            .env("NOTES_TOKEN", "value-in-the-notes-1234")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{tool}: {err}");
        assert!(err.contains(said), "{tool}: {err}");
        assert!(
            !bundle.exists() && !home.path().join("server.json").exists(),
            "{tool}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(home.path())
            .expect("read_dir")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(
            leftovers.len(),
            3,
            "a temporary file left behind: {leftovers:?}"
        );
    }
}

/// `mcp-serve bundle` of `manifest` with `flags`, run in `dir` with the tests' secrets set,
/// which must refuse (exit 2): what it said.
fn refused(manifest: &Path, flags: &[&str], dir: &Path) -> String {
    let output = Command::new(BINARY)
        .args(["bundle", "--author", "x", "--config"])
        .arg(manifest)
        .args(flags)
        .env("NAME_TOKEN", "value-in-a-name-5678")
        .current_dir(dir)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{flags:?}: {err}");
    err
}

#[test]
fn the_outputs_are_checked_and_what_tools_wrote_stays_out() {
    let home = tempfile::tempdir().expect("home");
    let inside = home.path().join("inside");
    std::fs::create_dir_all(inside.join("data")).expect("mkdir");
    let bundle = home.path().join("odd.mcpb");
    let static_tool = "[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n";
    // Outputs: the registry entry's name, a bad registry name, a dangling link.
    let manifest = manifest_with(&inside, static_tool);
    std::os::unix::fs::symlink(home.path().join("elsewhere/new.mcpb"), &bundle).expect("link");
    // A folder where server.json goes: refused before anything is written.
    std::fs::create_dir_all(home.path().join("folder/server.json")).expect("mkdir");
    for (flags, said) in [
        (vec!["-o", "server.json"], "cannot be called server.json"),
        (
            vec!["--registry-name", "bad name/x", "-o", "x.mcpb"],
            "is not a registry name",
        ),
        (
            vec!["--url", "ftp://example.com/x.mcpb", "-o", "x.mcpb"],
            "is not an https:// address",
        ),
        (
            vec!["-o", bundle.to_str().expect("path")],
            "is a symbolic link",
        ),
        (
            vec!["--force", "-o", bundle.to_str().expect("path")],
            "is a symbolic link",
        ),
        (vec!["-o", "folder/x.mcpb"], "is a folder"),
    ] {
        let err = refused(&manifest, &flags, home.path());
        assert!(err.contains(said), "{flags:?}: {err}");
        assert!(
            !home.path().join("elsewhere").exists(),
            "written through the link"
        );
        assert!(!home.path().join("folder/x.mcpb").exists(), "{flags:?}");
    }
    // A version the registry would not take, and a file whose name is a set secret.
    let latest = inside.join("latest.toml");
    std::fs::write(&latest, format!("[server]\nname = \"odd\"\nversion = \"latest\"\n\n[[tools]]\nname = \"odd\"\n{static_tool}")).expect("write");
    std::fs::write(inside.join("data/value-in-a-name-5678"), "").expect("write");
    let named = manifest_with(
        &inside,
        "[tools.http]\nurl = \"https://api.example.com/\"\nheaders = { Authorization = \"${env:NAME_TOKEN}\" }\n\n[[tools]]\nname = \"ls\"\n[tools.command]\nargv = [\"ls\"]\n[tools.sandbox]\nread = [\"./data\"]\n",
    );
    for (manifest, said) in [(&latest, "is not one version"), (&named, "the name of")] {
        let err = refused(manifest, &["-o", "y.mcpb"], home.path());
        assert!(err.contains(said), "{err}");
        assert!(!home.path().join("y.mcpb").exists());
    }
    std::fs::remove_file(inside.join("data/value-in-a-name-5678")).expect("rm");
    std::fs::remove_file(&bundle).expect("rm the link");
    // The control: the same folder without the link bundles; what a tool wrote into its
    // write folder stays out, even where a read path inside that folder names it.
    std::fs::create_dir_all(inside.join("w/sub")).expect("mkdir");
    std::fs::write(inside.join("w/sub/written.txt"), "a tool wrote this").expect("write");
    std::fs::write(inside.join("data/kept.txt"), "shipped").expect("write");
    let manifest = manifest_with(
        &inside,
        "[tools.command]\nargv = [\"ls\"]\n[tools.sandbox]\nread = [\"./data\", \"./w/sub\"]\nwrite = [\"./w\"]\n",
    );
    run(Command::new(BINARY)
        .args(["bundle", "--author", "x", "--config"])
        .arg(&manifest)
        .arg("-o")
        .arg(&bundle));
    assert!(bundle.is_file());
    let listed = run(Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(&bundle))
    .0;
    assert!(
        listed.lines().any(|name| name == "server/data/kept.txt"),
        "{listed}"
    );
    assert!(
        listed
            .lines()
            .any(|name| name.starts_with("server/w/") && name.rsplit('/').next() == Some(".keep")),
        "{listed}"
    );
    assert!(!listed.contains("written.txt"), "{listed}");
    // And a second time only with --force.
    let again = Command::new(BINARY)
        .args(["bundle", "--author", "x", "--config"])
        .arg(&manifest)
        .arg("-o")
        .arg(&bundle)
        .output()
        .expect("run");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}
