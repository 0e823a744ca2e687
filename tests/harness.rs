//! Spawns `mcp-serve` on a manifest and speaks newline-delimited JSON-RPC to it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) const BINARY: &str = env!("CARGO_BIN_EXE_mcp-serve");
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// The repository root, where `tools.example.toml` lives.
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `OpenAPI` descriptions vendored for the tests.
pub(crate) fn openapi_fixtures() -> PathBuf {
    repo_root().join("tests/fixtures/openapi")
}

/// GitHub's description, unpacked (13 MB).
pub(crate) fn github() -> Vec<u8> {
    let output = Command::new("gzip")
        .args(["-dc", "github.json.gz"])
        .current_dir(openapi_fixtures())
        .output()
        .expect("gzip runs");
    assert!(output.status.success(), "gzip -dc github.json.gz");
    output.stdout
}

/// Held while the example's rates service runs on its fixed port, 8765.
static RATES_PORT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The example's stand-in rates service (`python3 -m http.server` on 127.0.0.1:8765), for
/// as long as the value lives; one at a time.
pub(crate) struct RatesService {
    child: Child,
    _port: std::sync::MutexGuard<'static, ()>,
}

impl RatesService {
    pub(crate) fn start() -> Self {
        let port = RATES_PORT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "8765",
                "--bind",
                "127.0.0.1",
                "--directory",
                "examples/api",
            ])
            .current_dir(repo_root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m http.server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect("127.0.0.1:8765").is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, _port: port }
    }
}

impl Drop for RatesService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A manifest written into a fresh temporary directory.
pub(crate) struct Workspace {
    pub(crate) dir: tempfile::TempDir,
}

impl Workspace {
    pub(crate) fn new(manifest: &str) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::write(dir.path().join("tools.toml"), manifest).expect("write manifest");
        Self { dir }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn manifest(&self) -> PathBuf {
        self.path("tools.toml")
    }

    pub(crate) fn serve(&self) -> Server {
        Server::start(&self.manifest())
    }

    /// Serves and completes a 2025-11-25 handshake.
    pub(crate) fn serve_legacy(&self) -> Server {
        Server::initialized(&self.manifest(), "2025-11-25")
    }

    /// `mcp-serve check` of the manifest, run in its folder: exit code and stderr.
    pub(crate) fn check(&self) -> (i32, String) {
        let manifest = self.manifest();
        let (code, _, err) = run(
            &[
                "check",
                "--config",
                manifest.to_str().expect("a UTF-8 path"),
            ],
            self.dir.path(),
        );
        (code, err)
    }
}

/// `count` static tools, `t0` to `t{count - 1}`, each described in a few words and
/// answering its number: a manifest big enough for the paths only big ones take.
pub(crate) fn many_tools(count: usize) -> String {
    use std::fmt::Write as _;
    let mut manifest = String::new();
    for index in 0..count {
        let _ = write!(
            manifest,
            "[[tools]]\nname = \"t{index}\"\ndescription = \"tool {index} of many, described in some words\"\n[tools.static]\ncontent = [{{ type = \"text\", text = \"{index}\" }}]\n"
        );
    }
    manifest
}

/// Tools that show process handling: `slow` writes its pid and its child's, then waits a
/// minute; `brief` takes a second; `fast` answers at once.
pub(crate) fn slow_tools() -> Workspace {
    Workspace::new(
        r#"
[[tools]]
name = "slow"
[tools.command]
script = 'echo $$ > main.pid; sleep 60 & echo $! > child.pid; wait'

[[tools]]
name = "brief"
[tools.command]
script = 'echo $$ > brief.pid; sleep 1; echo finished'

[[tools]]
name = "fast"
[tools.command]
argv = ["echo", "quick"]
"#,
    )
}

/// A running server.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    pub(crate) fn start(manifest: &Path) -> Self {
        Self::start_with(manifest, &[], &[])
    }

    /// Starts with extra arguments and environment; stderr is collected.
    pub(crate) fn start_with(manifest: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_command(
            Command::new(BINARY)
                .arg("--config")
                .arg(manifest)
                .args(extra)
                .envs(env.iter().copied()),
        )
    }

    /// Starts a prepared command line (another binary path, a wrapper such as `setpriv`).
    pub(crate) fn start_command(command: &mut Command) -> Self {
        keep_tasks_here(command);
        let mut child = command
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp-serve");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        let errors = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(errors).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut log) = sink.lock() {
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
            stderr,
        }
    }

    /// Completes the legacy handshake at `version`.
    pub(crate) fn handshake(&mut self, version: &str) {
        let response = self.request("initialize", initialize_params(version));
        assert_eq!(
            response["result"]["protocolVersion"],
            json!(version),
            "{response}"
        );
        self.notify("notifications/initialized", None);
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }

    /// A server that has completed the legacy handshake at `version`.
    pub(crate) fn initialized(manifest: &Path, version: &str) -> Self {
        let mut server = Self::start(manifest);
        let response = server.request("initialize", initialize_params(version));
        assert_eq!(
            response["result"]["protocolVersion"],
            json!(version),
            "{response}"
        );
        server.notify("notifications/initialized", None);
        server
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    pub(crate) fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(&message);
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.response(id)
    }

    /// Waits for the response to `id`, skipping notifications and other responses.
    pub(crate) fn response(&mut self, id: i64) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self
                .next_message(deadline)
                .unwrap_or_else(|| panic!("no response to request {id}"));
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    /// The next line on stdout, parsed; every line must be a JSON-RPC message.
    pub(crate) fn next_message(&mut self, deadline: Instant) -> Option<Value> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|_| panic!("stdout line is not JSON: {line:?}"));
                assert_eq!(message["jsonrpc"], json!("2.0"), "not JSON-RPC: {line}");
                Some(message)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next line on stdout as the server wrote it.
    pub(crate) fn next_line(&mut self, deadline: Instant) -> Option<String> {
        self.lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .ok()
    }

    /// Asserts nothing arrives on stdout for `quiet`.
    pub(crate) fn expect_silence(&mut self, quiet: Duration) {
        if let Some(message) = self.next_message(Instant::now() + quiet) {
            panic!("expected no message, got {message}");
        }
    }

    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("no result: {response}"))
    }

    /// Closes stdin and waits for the process to exit.
    pub(crate) fn close(mut self) -> (ExitStatus, Duration) {
        let started = Instant::now();
        drop(self.stdin.take());
        let status =
            wait_with_timeout(&mut self.child, TIMEOUT).expect("server exits after stdin closes");
        (status, started.elapsed())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

pub(crate) fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "mcp-serve-tests", "version": "1.0.0"}
    })
}

/// A 2025-11-25 `initialize` request with id 1.
pub(crate) fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")})
}

/// `_meta` for a 2026-07-28 request.
pub(crate) fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-serve-tests", "version": "1.0.0"}
    })
}

/// The text of a result's first content block.
pub(crate) fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {result}"))
}

/// The task store of every server a test starts, unless the test chose one: never the
/// user's own state directory.
pub(crate) fn keep_tasks_here(command: &mut Command) {
    static DATA: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let chosen = command
        .get_envs()
        .any(|(name, _)| name == "MCP_SERVE_DATA_DIR");
    if !chosen {
        let data = DATA.get_or_init(|| tempfile::tempdir().expect("a data directory for tasks"));
        command.env("MCP_SERVE_DATA_DIR", data.path());
    }
    // Traces are on only where a test turns them on: not for a developer's or CI's own
    // collector, and no server inherits the runner's trace context.
    let chosen: Vec<std::ffi::OsString> = command
        .get_envs()
        .map(|(name, _)| name.to_owned())
        .collect();
    for (name, _) in std::env::vars_os() {
        let ambient = name.to_str().is_some_and(|name| {
            name.starts_with("OTEL_") || name == "TRACEPARENT" || name == "TRACESTATE"
        });
        if ambient && !chosen.contains(&name) {
            command.env_remove(name);
        }
    }
}

/// Runs `mcp-serve` with `args` to completion, returning (exit code, stdout, stderr).
pub(crate) fn run(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let mut command = Command::new(BINARY);
    keep_tasks_here(&mut command);
    let output = command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env_remove("MCP_SERVE_CONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run mcp-serve");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether a process is still alive (zombies count as gone).
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Processes whose command line is `sleep <seconds>`.
pub(crate) fn sleepers(seconds: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline == format!("sleep\0{seconds}\0").as_bytes())
                && alive(*pid)
        })
        .collect()
}

/// Waits until `path` holds a pid, and returns it.
pub(crate) fn read_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + TIMEOUT;
    while Instant::now() < deadline {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid written to {}", path.display());
}

/// Waits until `pid` is gone.
pub(crate) fn wait_gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Whether these tests run as root.
pub(crate) fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(2) == Some("0"))
    })
}

/// A command line that starts mcp-serve as an unprivileged user: as root, through
/// `setpriv` as `nobody` with a copy of the binary that user can reach (the workspace is
/// opened to it); otherwise, the binary itself.
pub(crate) fn unprivileged(workspace: &Workspace) -> Command {
    if !is_root() {
        return Command::new(BINARY);
    }
    let setpriv = Path::new("/usr/bin/setpriv");
    assert!(
        setpriv.exists(),
        "setpriv (util-linux) is needed to drop root here"
    );
    set_mode(workspace.dir.path(), 0o755);
    set_mode(&workspace.manifest(), 0o644);
    let binary = workspace.path("mcp-serve");
    if !binary.exists() && std::fs::hard_link(BINARY, &binary).is_err() {
        std::fs::copy(BINARY, &binary).expect("copy the binary");
        set_mode(&binary, 0o755);
    }
    let mut command = Command::new(setpriv);
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&binary);
    command
}

pub(crate) fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The Python these tests run, as its real executable and the folder it lives in: version
/// managers (pyenv here) put it outside the system's folders, where a sandbox must be told.
pub(crate) fn python() -> (String, String) {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys; print(sys.executable); print(sys.base_prefix)",
        ])
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = text.lines();
    let executable = lines.next().expect("sys.executable").to_owned();
    let prefix = lines.next().expect("sys.base_prefix").to_owned();
    (executable, prefix)
}

/// A kernel or machine feature a test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Feature {
    /// Landlock at this ABI or newer.
    Landlock(i64),
    UserNamespaces,
    /// A cgroup v2 delegated to the server, with the memory and pids controllers.
    Cgroups,
    Root,
}

/// Whether `MCP_SERVE_TEST_FEATURES` (set by `.ci/run` from `scripts/features`, which finds
/// each by other means than the server's probe) says this machine has `feature`.
fn declared(feature: Feature, features: &str) -> bool {
    features
        .split_whitespace()
        .any(|word| match (feature, word) {
            (Feature::Landlock(needed), word) => word
                .strip_prefix("landlock=")
                .and_then(|abi| abi.parse::<i64>().ok())
                .is_some_and(|abi| abi >= needed),
            (Feature::UserNamespaces, "userns")
            | (Feature::Cgroups, "cgroups")
            | (Feature::Root, "root") => true,
            _ => false,
        })
}

/// A test that cannot run here says so and passes, unless the machine is known to have what
/// it found missing: then the server's probe is what is wrong, and the test fails.
pub(crate) fn skip(feature: Feature, why: &str) {
    let features = std::env::var("MCP_SERVE_TEST_FEATURES").unwrap_or_default();
    assert!(
        !declared(feature, &features),
        "not skipped: {why}, but this machine has {feature:?} (MCP_SERVE_TEST_FEATURES={features:?})"
    );
    eprintln!("SKIPPED: {why}");
}

#[test]
fn a_skip_fails_where_the_machine_has_the_feature() {
    assert!(declared(Feature::Landlock(4), "userns landlock=6 root"));
    assert!(!declared(Feature::Landlock(7), "landlock=6"));
    assert!(declared(Feature::UserNamespaces, "landlock=6 userns"));
    assert!(!declared(Feature::Cgroups, "landlock=6 userns root"));
    assert!(!declared(Feature::Root, ""));
}

/// A manifest that knows `secret` (a `${env:…}` or `${file:…}` reference) as a secret: one
/// HTTP tool, `api`, never called, sends it in a header; then `tools`.
pub(crate) fn holding_secret(secret: &str, tools: &str) -> String {
    format!(
        "[[tools]]\nname = \"api\"\ninput-schema = '{{\"type\": \"object\"}}'\n[tools.http]\n\
         url = \"http://127.0.0.1:9/x\"\nheaders = {{ Authorization = \"Bearer {secret}\" }}\n\n{tools}"
    )
}
