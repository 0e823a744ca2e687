//! The doors bytes leave the server by, read from the code: a new one that skips the
//! redactor fails here. Every MCP message leaves through `mcp::outgoing` (the stdio
//! transport's lines, the HTTP listener's bodies and events), every log line through
//! `logging`'s redacting writer. What else writes to stdout or stderr is listed below with
//! why it holds no secret; anything not listed fails the suite.

use crate::harness::repo_root;
use crate::source_scan::{Line, lines};

/// What writes to a process's own stdout or stderr, as code spells it.
const WRITES: &[&str] = &[
    "print!(",
    "println!(",
    "eprint!(",
    "eprintln!(",
    "io::stdout()",
    "io::stderr()",
    "stdio_pipes(",
];

/// Files that may write there, and why what they write holds no secret.
const DOORS: &[(&str, &str)] = &[
    (
        "src/logging.rs",
        "the redacting writer every log line goes through",
    ),
    (
        "src/mcp/stdio.rs",
        "the stdio transport: every line through mcp::outgoing",
    ),
    (
        "src/commands.rs",
        "`print` for the commands people run: results the pipeline redacted, manifests as declared",
    ),
    (
        "src/run.rs",
        "usage errors and the start-up lines (the address served, what a terminal user can do)",
    ),
    (
        "src/failure.rs",
        "a command's failure for a person: usage errors, manifest diagnostics (declarations, not resolved secrets), errors of the commands people run (tool results the pipeline redacted)",
    ),
    (
        "src/reload.rs",
        "a reloaded manifest's load error, as `check` renders it (declarations, not resolved secrets)",
    ),
    (
        "src/sandbox/trampoline.rs",
        "the trampoline's failure line, on the command's stderr, which the pipeline redacts",
    ),
    (
        "src/bin/mcp-serve-sandbox.rs",
        "the trampoline binary's usage line",
    ),
    (
        "src/results/project/worker.rs",
        "a projection worker's answers, on the pipe to the server that started it (a JSON value \
         redacted before it was sent, or why the program failed); never a client's stdout",
    ),
];

/// The commands people run print through `commands::print` and their own stderr lines:
/// each is a door of its own command, listed here so a new one is seen.
const COMMANDS: &str = "src/commands/";

fn undeclared(found: Vec<Line>) -> Vec<String> {
    found
        .into_iter()
        .filter(|line| WRITES.iter().any(|write| line.code.contains(write)))
        .filter(|line| !line.file.starts_with(COMMANDS))
        .filter(|line| !DOORS.iter().any(|(file, _)| *file == line.file))
        .map(|line| line.to_string())
        .collect()
}

#[test]
fn every_door_to_stdout_and_stderr_is_declared() {
    let found = undeclared(lines(&repo_root().join("src")));
    assert!(
        found.is_empty(),
        "these write to stdout or stderr outside the declared doors (send MCP messages through \
         mcp::outgoing and logs through tracing, or add the file to DOORS with why it holds no \
         secret):\n{}",
        found.join("\n")
    );
}

/// The list does not rot: each declared door still writes.
#[test]
fn each_declared_door_is_still_one() {
    let found = lines(&repo_root().join("src"));
    for (file, why) in DOORS {
        assert!(
            found
                .iter()
                .any(|line| line.file == *file
                    && WRITES.iter().any(|write| line.code.contains(write))),
            "`{file}` ({why}) writes to no stdout or stderr any more: take it off DOORS"
        );
    }
}

/// The control: a backend that prints what it got is found.
#[test]
fn the_scan_finds_a_new_door() {
    let root = tempfile::tempdir().expect("root");
    let backend = root.path().join("src/backend");
    std::fs::create_dir_all(&backend).expect("backend");
    std::fs::write(
        backend.join("leaky.rs"),
        "fn f(v: &str) {\n    eprintln!(\"got {v}\");\n}\n",
    )
    .expect("fixture");
    assert_eq!(
        undeclared(lines(&root.path().join("src"))),
        ["src/backend/leaky.rs:2: eprintln!(\"got {v}\");"]
    );
}
