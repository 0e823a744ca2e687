//! Files written for a person (`install`, `init`, `import -o`, `call`'s saved content) are
//! either as they were or as meant, never half of each, and `install` leaves other servers'
//! entries, and what they hold, alone. The writer is `src/userfile.rs`; the scan below fails
//! on any other place in `src/` that writes a file, so a new command cannot skip it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::harness::{BINARY, repo_root};

/// Places that write files which are not a person's, each with why.
const NOT_A_PERSONS: &[(&str, &str)] = &[
    ("src/userfile.rs", "the writer itself"),
    (
        "src/sandbox/namespace.rs",
        "a call's uid and gid maps under /proc",
    ),
    ("src/sandbox/cgroup.rs", "cgroup control files"),
    (
        "src/sandbox/init.rs",
        "the sandbox's init reopening its own pipe through /proc/self/fd",
    ),
    (
        "src/tasks/store/embedded.rs",
        "the task store's own database",
    ),
    ("src/backend/events_pipe.rs", "a call's event FIFO"),
    (
        "src/backend/capture.rs",
        "a call's output spool, in a private folder",
    ),
    (
        "src/results/store.rs",
        "kept outputs, in the server's own folder",
    ),
];

/// How a file gets written in Rust, as code in `src/` spells it.
const WRITES: &[&str] = &[
    "fs::write(",
    "File::create(",
    "OpenOptions::new(",
    "NamedTempFile",
    ".persist(",
    "fs::copy(",
    "File::options(",
];

fn scan(src: &Path) -> Vec<String> {
    crate::source_scan::lines(src)
        .into_iter()
        .filter(|line| !NOT_A_PERSONS.iter().any(|(file, _)| *file == line.file))
        .filter(|line| WRITES.iter().any(|write| line.code.contains(write)))
        .map(|line| line.to_string())
        .collect()
}

#[test]
fn every_file_written_for_a_person_goes_through_the_one_writer() {
    let found = scan(&repo_root().join("src"));
    assert!(
        found.is_empty(),
        "these write a file without `userfile::write` (use it, or add the file to \
         NOT_A_PERSONS with why it is not a person's):\n{}",
        found.join("\n")
    );
}

/// The control: the scan finds a plain write in a command, as the old `install` had.
#[test]
fn the_scan_finds_a_command_that_writes_by_itself() {
    let root = tempfile::tempdir().expect("root");
    let commands = root.path().join("src/commands");
    std::fs::create_dir_all(&commands).expect("commands");
    std::fs::write(
        commands.join("install.rs"),
        "fn f(path: &Path) {\n    std::fs::write(&path, text)\n}\n#[cfg(test)]\nmod tests {\n    fn g() { std::fs::write(\"x\", \"\"); }\n}\n",
    )
    .expect("fixture");
    assert_eq!(
        scan(&root.path().join("src")),
        ["src/commands/install.rs:2: std::fs::write(&path, text)"]
    );
}

fn install(home: &Path, shell: &str, args: &[&str]) -> Output {
    let mut words = vec![BINARY, "--config", "tools.example.toml", "install"];
    words.extend(args);
    let line: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!("{shell}exec {}", line.join(" ")))
        .current_dir(repo_root())
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .expect("run")
}

/// A host file as people have them: 60 servers and 60 projects, about 70 KiB.
fn big_config() -> Value {
    let servers: serde_json::Map<String, Value> = (0..60)
        .map(|index| {
            (
                format!("server-{index}"),
                json!({"command": "npx", "args": ["-y", format!("@acme/mcp-{index}")]}),
            )
        })
        .collect();
    let projects: serde_json::Map<String, Value> = (0..60)
        .map(|index| {
            (
                format!("/home/ada/project-{index}"),
                json!({"allowedTools": [], "history": ["x".repeat(900)]}),
            )
        })
        .collect();
    json!({"mcpServers": servers, "projects": projects})
}

/// `ulimit -f 48` (KiB) on a 70 KiB file: the old `std::fs::write` left 48 KiB of broken
/// JSON. Now the write is refused whole, the file is as it was and nothing is left beside it.
/// The control writes the same bytes with `cp` under the same limit and breaks the file, so a
/// pass shows the writer, not the limit, kept it.
#[test]
fn a_write_that_cannot_finish_leaves_the_host_file_as_it_was() {
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join(".claude.json");
    let before = serde_json::to_string_pretty(&big_config()).expect("json");
    assert!(before.len() > 60 * 1024, "{}", before.len());
    std::fs::write(&config, &before).expect("config");

    let output = install(home.path(), "ulimit -f 48; ", &["claude-code"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ulimit -f") && stderr.contains("left as it was"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&config).expect("config"), before);
    let names: Vec<_> = std::fs::read_dir(home.path())
        .expect("home")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert_eq!(names, [".claude.json"], "nothing is left beside it");

    // Without the limit the same install adds the server and keeps all 120 other entries.
    let output = install(home.path(), "", &["claude-code"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("JSON");
    assert_eq!(
        after["mcpServers"].as_object().map(serde_json::Map::len),
        Some(61)
    );
    assert_eq!(after["projects"], big_config()["projects"]);

    let control = home.path().join("control.json");
    std::fs::write(&control, &before).expect("control");
    let copied = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 48; cp .claude.json control.json")
        .current_dir(home.path())
        .output()
        .expect("cp");
    assert!(!copied.status.success());
    let broken = std::fs::read_to_string(&control).expect("control");
    assert!(
        serde_json::from_str::<Value>(&broken).is_err(),
        "the control breaks the file"
    );
}

/// An entry under the same name that is not mcp-serve's (here `npx @acme/mcp` with a token
/// in its `env`) is left alone, and nothing of it is printed; `--force` replaces it, still
/// without printing it. An entry mcp-serve wrote is updated, keeping what the person added.
#[test]
fn install_leaves_another_servers_entry_alone_and_never_prints_it() {
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join(".claude.json");
    let token = "acme-token-6f1d9a";
    let foreign =
        json!({"command": "npx", "args": ["-y", "@acme/mcp"], "env": {"ACME_TOKEN": token}});
    let before = json!({"mcpServers": {"catalog": foreign}});
    std::fs::write(&config, before.to_string()).expect("config");

    let output = install(home.path(), "", &["claude-code"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("another server's entry") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(token) && !stderr.contains("acme"),
        "{stderr}"
    );
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("c")).expect("j");
    assert_eq!(now, before);

    // Beside it, under another name.
    let output = install(home.path(), "", &["claude-code", "--name", "shop"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("c")).expect("j");
    assert_eq!(now["mcpServers"]["catalog"], foreign);

    // Ours, with an `env` the person added: updating it (a new manifest path) keeps the env.
    let mut ours = now["mcpServers"]["shop"].clone();
    ours["env"] = json!({"SHOP_TOKEN": "kept"});
    ours["args"] = json!(["--config", "/old/tools.toml"]);
    let mut edited = now.clone();
    edited["mcpServers"]["shop"] = ours;
    std::fs::write(&config, edited.to_string()).expect("edited");
    let output = install(home.path(), "", &["claude-code", "--name", "shop"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.starts_with("updated `shop`"), "{stderr}");
    assert!(
        !stderr.contains("kept") && !stderr.contains("/old/"),
        "{stderr}"
    );
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("c")).expect("j");
    assert_eq!(
        now["mcpServers"]["shop"]["env"],
        json!({"SHOP_TOKEN": "kept"})
    );
    assert_ne!(now["mcpServers"]["shop"]["args"][1], "/old/tools.toml");

    let output = install(home.path(), "", &["claude-code", "--force"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains(token) && !stderr.contains("acme"),
        "{stderr}"
    );
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("c")).expect("j");
    assert!(now["mcpServers"]["catalog"].get("env").is_none());
    assert_eq!(now["mcpServers"]["catalog"]["args"][0], "--config");
}
