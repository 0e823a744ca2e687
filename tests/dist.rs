//! The release artifacts as users install them. `scripts/dist --binary` packages the binary
//! this suite built (no second build), and each artifact is installed where nothing of this
//! checkout is on `PATH` (a fresh virtualenv, `uvx`, a fresh npm prefix, the unpacked
//! tarball), then the official Python SDK client (`tests/interop/client.py`) drives the
//! example manifest through it over stdio. The npm launcher is attacked apart: its link
//! replaced by the Node launcher (`--ignore-scripts`), it must pass the exit code, the
//! signals and the server's own death through untouched.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::harness::{BINARY, repo_root};
use crate::interop::assert_python_report;
use crate::upstream::{Reply, Upstream};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The system's folders only: nothing of this checkout (`target/`) is on it.
const CLEAN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What `scripts/dist --binary BINARY` wrote, once for the whole test binary.
fn artifacts() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dist");
        let output = Command::new(repo_root().join("scripts/dist"))
            .args(["--binary", BINARY, "--out"])
            .arg(&out)
            .output()
            .expect("run scripts/dist");
        assert!(
            output.status.success(),
            "scripts/dist failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        out
    })
}

fn artifact(name: &str) -> PathBuf {
    let path = artifacts().join(name);
    assert!(path.is_file(), "scripts/dist did not write {name}");
    path
}

fn wheel() -> PathBuf {
    let found = std::fs::read_dir(artifacts())
        .expect("the artifacts")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|extension| extension == "whl"));
    found.expect("scripts/dist wrote no wheel")
}

/// A command run as a user would: a clean environment, `PATH` without this checkout, its
/// own `HOME`.
fn user_command(program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_clear()
        .env("PATH", CLEAN_PATH)
        .env("HOME", home)
        .current_dir("/");
    command
}

fn run(command: &mut Command) {
    let output = command.output().expect("run");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Drives the example manifest with the official Python client through `server` (a
/// program and its arguments, to which `--config MANIFEST` is added), from a clean
/// environment, and checks what it saw: the interop test's own assertions.
fn drive(server: &[OsString], home: &Path) {
    drive_with_path(server, home, CLEAN_PATH);
}

fn drive_with_path(server: &[OsString], home: &Path, path: &str) {
    let python = repo_root().join("tests/interop/.venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK is not installed; run scripts/test (it creates tests/interop/.venv)"
    );
    let output = user_command(&python, home)
        .env("PATH", path)
        .arg(repo_root().join("tests/interop/client.py"))
        .args(["legacy", "stdio"])
        .args(server)
        .arg(repo_root().join("tools.example.toml"))
        .output()
        .expect("run the Python client");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    assert_python_report(&report, "2025-11-25");
}

fn os(parts: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    parts.iter().map(|part| part.as_ref().to_owned()).collect()
}

/// Whether `path` is a native executable (not a script a runtime interprets).
fn is_elf(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes.starts_with(b"\x7fELF"))
}

/// Every binary the package defines is installed beside the server, and the server finds
/// it: `check` names the sandbox trampoline it starts confined commands through.
fn assert_finds_the_trampoline(server: &Path, home: &Path) {
    let manifest = home.join("confined.toml");
    std::fs::write(
        &manifest,
        "[[tools]]\nname = \"confined\"\n[tools.command]\nargv = [\"/bin/true\"]\n[tools.sandbox]\nexecute = [\"/usr\"]\n",
    )
    .expect("write the manifest");
    let output = user_command(server, home)
        .args(["check", "--config"])
        .arg(&manifest)
        .output()
        .expect("run check");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let real = std::fs::canonicalize(server).expect("the installed binary");
    let trampoline = real.with_file_name("mcp-serve-sandbox");
    assert!(
        trampoline.is_file(),
        "no {} beside the server",
        trampoline.display()
    );
    assert!(
        said.contains(&format!("commands start through {}", trampoline.display())),
        "{said}"
    );
}

#[test]
fn the_clean_path_has_no_mcp_serve_of_its_own() {
    // The control for every test here: what serves is the installed artifact.
    let home = tempfile::tempdir().expect("home");
    let status = user_command("sh", home.path())
        .args(["-c", "command -v mcp-serve"])
        .stdout(Stdio::null())
        .status()
        .expect("run sh");
    assert!(!status.success(), "an mcp-serve is on {CLEAN_PATH}");
}

#[test]
fn the_tarball_unpacked_serves_the_example() {
    let home = tempfile::tempdir().expect("home");
    run(Command::new("sha256sum")
        .arg("--check")
        .arg("--quiet")
        .arg("SHA256SUMS")
        .current_dir(artifacts()));
    let archive = artifact(&format!("mcp-serve-{VERSION}-x86_64-linux.tar.gz"));
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(home.path()));
    let unpacked = home
        .path()
        .join(format!("mcp-serve-{VERSION}-x86_64-linux"));
    for file in [
        "mcp-serve",
        "mcp-serve-sandbox",
        "README.md",
        "LICENSE",
        "completions/mcp-serve.bash",
        "completions/_mcp-serve",
        "completions/mcp-serve.fish",
    ] {
        assert!(unpacked.join(file).is_file(), "the tarball has no {file}");
    }
    drive(&os(&[&unpacked.join("mcp-serve")]), home.path());
    assert_finds_the_trampoline(&unpacked.join("mcp-serve"), home.path());
}

#[test]
fn the_wheel_in_a_fresh_virtualenv_serves_the_example_with_no_python_between() {
    let home = tempfile::tempdir().expect("home");
    let venv = home.path().join("venv");
    run(user_command("python3", home.path())
        .args(["-m", "venv"])
        .arg(&venv));
    run(user_command(venv.join("bin/pip"), home.path())
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(wheel()));
    let entry = venv.join("bin/mcp-serve");
    // The entry point is the binary itself, not a Python script that starts it.
    assert!(is_elf(&entry), "{} is not the binary", entry.display());
    drive(&os(&[&entry]), home.path());
    assert_finds_the_trampoline(&entry, home.path());
}

#[test]
fn uvx_runs_the_wheel() {
    let uvx = repo_root().join("target/dist-tools/bin/uvx");
    assert!(
        uvx.is_file(),
        "uv is not installed; run `scripts/dist --tools` (scripts/test does)"
    );
    let home = tempfile::tempdir().expect("home");
    let cache = home.path().join("uv-cache");
    drive(
        &os(&[
            &uvx,
            &"--offline",
            &"--no-config",
            &"--no-python-downloads",
            &"--cache-dir",
            &cache,
            &"--from",
            &wheel(),
            &"mcp-serve",
        ]),
        home.path(),
    );
}

/// A fresh npm prefix with the launcher and its platform package installed from the packed
/// tarballs (`--offline`: nothing comes from the registry).
fn npm_prefix(home: &Path, scripts: bool) -> PathBuf {
    let prefix = home.join("prefix");
    let mut command = user_command("npm", home);
    command
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .arg("--prefix")
        .arg(&prefix)
        .arg(artifact(&format!("mcp-serve-linux-x64-{VERSION}.tgz")))
        .arg(artifact(&format!("mcp-serve-{VERSION}.tgz")));
    if !scripts {
        command.arg("--ignore-scripts");
    }
    run(&mut command);
    prefix
}

#[test]
fn the_npm_packages_serve_the_example_with_no_node_process_between() {
    let home = tempfile::tempdir().expect("home");
    let prefix = npm_prefix(home.path(), true);
    let bin = prefix.join("node_modules/.bin/mcp-serve");
    // The postinstall made the launcher a link to the platform package's binary.
    let target = std::fs::canonicalize(&bin).expect("the installed bin");
    assert_eq!(
        target,
        std::fs::canonicalize(prefix.join("node_modules/@mcp-serve/linux-x64/bin/mcp-serve"))
            .expect("the platform binary"),
    );
    assert!(is_elf(&target));
    drive(&os(&[&bin]), home.path());
    assert_finds_the_trampoline(&bin, home.path());
    // And as hosts write it: `npx`, which finds the installed package (its own Node process
    // stays the host's child while the server runs; docs/performance.md).
    drive(
        &os(&[&"npx", &"--offline", &"--prefix", &prefix, &"mcp-serve"]),
        home.path(),
    );
}

#[test]
fn the_node_launcher_passes_stdio_and_the_exit_code_through() {
    let home = tempfile::tempdir().expect("home");
    let prefix = npm_prefix(home.path(), false);
    let bin = prefix.join("node_modules/.bin/mcp-serve");
    assert!(
        !is_elf(&bin),
        "without scripts, the launcher stays the Node script"
    );
    drive(&os(&[&bin]), home.path());
    // A manifest error exits 2, as the binary does; Node's own failures exit 1.
    let broken = home.path().join("broken.toml");
    std::fs::write(&broken, "[[tools]]\nname = 3\n").expect("write the manifest");
    let exit = |program: &Path| {
        user_command(program, home.path())
            .args(["check", "--config"])
            .arg(&broken)
            .output()
            .expect("run check")
    };
    let through = exit(&bin);
    let bare = exit(Path::new(BINARY));
    assert_eq!(bare.status.code(), Some(2));
    assert_eq!(through.status.code(), bare.status.code());
    assert_eq!(
        through.stderr, bare.stderr,
        "stderr passes through untouched"
    );
}

/// The launcher's one child, the server, once it answers `initialize` through the launcher.
struct Launched {
    launcher: std::process::Child,
    server: i32,
    /// Kept open: the server serves until it is signalled, not because stdin closed.
    _stdin: std::process::ChildStdin,
}

fn launch(bin: &Path, home: &Path) -> Launched {
    let mut launcher = user_command(bin, home)
        .arg("--config")
        .arg(repo_root().join("tools.example.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the launcher");
    let mut stdin = launcher.stdin.take().expect("stdin");
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#,
        )
        .expect("write initialize");
    let mut line = String::new();
    BufReader::new(launcher.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the answer");
    assert!(
        line.contains(r#""id":1"#),
        "no answer through the launcher: {line}"
    );
    let pid = launcher.id();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .expect("the launcher's children");
    let server: Vec<i32> = children
        .split_whitespace()
        .map(|child| child.parse().expect("a pid"))
        .collect();
    assert_eq!(
        server.len(),
        1,
        "the launcher runs the server and nothing else"
    );
    let exe = std::fs::read_link(format!("/proc/{}/exe", server[0])).expect("the server's exe");
    assert!(is_elf(&exe) && !exe.ends_with("node"), "{}", exe.display());
    Launched {
        launcher,
        server: server[0],
        _stdin: stdin,
    }
}

fn signal(pid: i32, signal: i32) {
    run(Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string()));
}

fn wait(launched: &mut Launched) -> ExitStatus {
    let status = launched.launcher.wait().expect("wait for the launcher");
    assert!(
        !Path::new(&format!("/proc/{}", launched.server)).exists(),
        "the server outlived its launcher"
    );
    status
}

#[test]
fn the_node_launcher_forwards_signals_and_ends_as_the_server_ended() {
    let home = tempfile::tempdir().expect("home");
    let prefix = npm_prefix(home.path(), false);
    let bin = prefix.join("node_modules/.bin/mcp-serve");
    // SIGTERM to the launcher reaches the server, which shuts down and exits 0; a launcher
    // that did not forward it would die of it itself and leave the server running.
    let mut launched = launch(&bin, home.path());
    signal(launched.launcher.id().cast_signed(), 15);
    let status = wait(&mut launched);
    assert_eq!(status.code(), Some(0), "{status:?}");
    // A server killed by a signal: the launcher ends by the same signal.
    let mut launched = launch(&bin, home.path());
    signal(launched.server, 9);
    let status = wait(&mut launched);
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

/// An npm registry on 127.0.0.1 that serves the two packed packages: each packument holds
/// the package.json packed in its tarball, and the tarball's address.
fn registry() -> Upstream {
    let packages: Vec<(String, Value, Vec<u8>)> = [
        format!("mcp-serve-{VERSION}.tgz"),
        format!("mcp-serve-linux-x64-{VERSION}.tgz"),
    ]
    .iter()
    .map(|file| {
        let tarball = std::fs::read(artifact(file)).expect("the tarball");
        let output = Command::new("tar")
            .args(["-xzOf"])
            .arg(artifact(file))
            .arg("package/package.json")
            .output()
            .expect("run tar");
        let manifest: Value = serde_json::from_slice(&output.stdout).expect("package.json");
        (file.clone(), manifest, tarball)
    })
    .collect();
    Upstream::start(move |request, port| {
        let path = request.path().replace("%2f", "/").replace("%2F", "/");
        for (file, manifest, tarball) in &packages {
            let name = manifest["name"].as_str().expect("a name");
            if path == format!("/{name}") {
                let mut version = manifest.clone();
                version["dist"] = serde_json::json!({"tarball": format!("http://127.0.0.1:{port}/tarballs/{file}")});
                let packument = serde_json::json!({
                    "name": name,
                    "dist-tags": {"latest": VERSION},
                    "versions": {VERSION: version},
                });
                return Reply::new(200, "application/json", packument.to_string());
            }
            if path == format!("/tarballs/{file}") {
                return Reply::new(200, "application/octet-stream", tarball.clone());
            }
        }
        Reply::new(404, "application/json", "{}")
    })
}

/// The entries `mcp-serve install --via uvx|npx` writes start the server as written: the
/// package runners find the pinned package where this test's configuration points them
/// (a folder holding the wheel for uv, a registry on 127.0.0.1 for npm), and the official
/// client drives it.
#[test]
fn the_entries_install_writes_start_the_server_as_written() {
    let home = tempfile::tempdir().expect("home");
    let uv = repo_root().join("target/dist-tools/bin");
    assert!(
        uv.join("uvx").is_file(),
        "uv is not installed; run `scripts/dist --tools` (scripts/test does)"
    );
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    for tool in ["uv", "uvx"] {
        std::os::unix::fs::symlink(uv.join(tool), bin.join(tool)).expect("link uv");
    }
    let path = format!("{}:{CLEAN_PATH}", bin.display());
    std::fs::create_dir_all(home.path().join(".config/uv")).expect("mkdir");
    std::fs::write(
        home.path().join(".config/uv/uv.toml"),
        format!(
            "no-index = true\nfind-links = [{:?}]\npython-downloads = \"never\"\n",
            artifacts().display().to_string()
        ),
    )
    .expect("uv.toml");
    let npm = registry();
    std::fs::write(
        home.path().join(".npmrc"),
        format!("registry={}/\n", npm.base()),
    )
    .expect(".npmrc");
    for via in ["uvx", "npx"] {
        let output = Command::new(BINARY)
            .args([
                "--config",
                "tools.example.toml",
                "install",
                "claude-desktop",
            ])
            .args(["--via", via, "--dry-run"])
            .current_dir(repo_root())
            .env("HOME", home.path())
            .output()
            .expect("run install");
        let snippet: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let entry = &snippet["mcpServers"]["catalog"];
        let mut command = vec![OsString::from(entry["command"].as_str().expect("command"))];
        let args: Vec<&str> = entry["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|arg| arg.as_str().expect("a string"))
            .collect();
        // The client adds `--config MANIFEST` itself.
        assert_eq!(args[args.len() - 2], "--config", "{entry}");
        command.extend(args[..args.len() - 2].iter().map(OsString::from));
        drive_with_path(&command, home.path(), &path);
    }
    assert!(
        npm.recorded().iter().any(|request| request
            .path()
            .ends_with(&format!("mcp-serve-linux-x64-{VERSION}.tgz"))),
        "npx did not fetch the platform package from the registry"
    );
}

#[test]
fn server_json_lists_the_packages_and_each_names_it_back() {
    let server: Value =
        serde_json::from_slice(&std::fs::read(artifact("server.json")).expect("read"))
            .expect("JSON");
    crate::bundle::assert_fits_the_registry(&server);
    let name = server["name"].as_str().expect("name");
    assert_eq!(server["version"], VERSION);
    let registries: Vec<&str> = server["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|package| package["registryType"].as_str())
        .collect();
    assert_eq!(registries, ["npm", "pypi"]);
    // npm: `mcpName` in the launcher's package.json.
    let home = tempfile::tempdir().expect("dir");
    run(Command::new("tar")
        .arg("-xzf")
        .arg(artifact(&format!("mcp-serve-{VERSION}.tgz")))
        .arg("-C")
        .arg(home.path()));
    let package: Value = serde_json::from_slice(
        &std::fs::read(home.path().join("package/package.json")).expect("package.json"),
    )
    .expect("JSON");
    assert_eq!(package["mcpName"], json!(name));
    // PyPI: `mcp-name: NAME` in the README the wheel's metadata carries, then a boundary.
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
             print(next(z.read(n).decode() for n in z.namelist() if n.endswith('/METADATA')))",
        ])
        .arg(wheel())
        .output()
        .expect("python3");
    let metadata = String::from_utf8_lossy(&output.stdout);
    assert!(
        metadata.contains(&format!("<!-- mcp-name: {name} -->")),
        "{}",
        &metadata[metadata.len().saturating_sub(300)..]
    );
}
