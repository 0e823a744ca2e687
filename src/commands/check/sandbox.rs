//! What `check` says about sandboxes: this kernel's support, what each tool's sandbox
//! enforces here, and the lints (what is not enforced; a program its sandbox cannot start).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Finding;
use crate::registry::Registry;
use crate::sandbox::shims::{self, Interpreter};
use crate::sandbox::{SYSTEM_EXECUTE, Sandbox};

/// The lints for every sandboxed tool.
pub(super) fn lint(registry: &Registry, findings: &mut Vec<Finding>) {
    for (tool, sandbox) in registry.sandboxes() {
        let missing = sandbox.enforcement().missing;
        if !missing.is_empty() && !sandbox.required {
            findings.push(Finding::warning(
                "sandbox-not-enforced",
                tool,
                format!(
                    "runs with less than its sandbox declares on this kernel: {}",
                    missing.join("; ")
                ),
            ));
        }
        if let Some(problem) = unstartable(sandbox) {
            findings.push(Finding::warning("sandbox-program", tool, problem));
        }
        for problem in launch_problems(sandbox) {
            findings.push(Finding::warning("sandbox-program", tool, problem));
        }
    }
}

/// The report: the kernel's support and, per tool, what is and is not enforced.
pub(super) fn report(registry: &Registry) -> Option<Value> {
    let mut kernel = None;
    let mut tools = serde_json::Map::new();
    for (tool, sandbox) in registry.sandboxes() {
        kernel.get_or_insert(sandbox.kernel);
        let enforcement = sandbox.enforcement();
        tools.insert(
            tool.to_owned(),
            json!({"enforced": enforcement.enforced, "not_enforced": enforcement.missing}),
        );
    }
    let kernel = kernel?;
    Some(json!({
        "kernel": kernel.summary(),
        "landlock_abi": kernel.landlock_abi,
        "launcher": crate::sandbox::launcher::launcher().describe(),
        "cgroups": kernel.cgroups,
        "cgroups_text": kernel.cgroups_text(),
        "tools": tools,
    }))
}

/// The report for a terminal.
pub(super) fn render(report: &Value) -> String {
    let mut out = format!(
        "sandbox: {}\n  commands start through {}\n",
        report["kernel"].as_str().unwrap_or_default(),
        report["launcher"].as_str().unwrap_or_default()
    );
    for (tool, lines) in report["tools"].as_object().into_iter().flatten() {
        out.push_str(&format!("  tool `{tool}`\n"));
        for line in lines["enforced"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "    enforced: {}\n",
                line.as_str().unwrap_or_default()
            ));
        }
        for line in lines["not_enforced"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "    NOT enforced: {}\n",
                line.as_str().unwrap_or_default()
            ));
        }
    }
    out
}

/// Without the system's paths, a program still needs its interpreter: the dynamic loader
/// named in an ELF file, or the `#!` line of a script.
fn unstartable(sandbox: &Sandbox) -> Option<String> {
    let program = sandbox.program.as_ref()?;
    let interpreter = interpreter(program)?;
    let executable = |path: &Path| {
        sandbox.execute.iter().any(|dir| path.starts_with(dir))
            || (sandbox.shims
                && sandbox
                    .launch
                    .execute
                    .iter()
                    .any(|dir| path.starts_with(dir)))
            || (sandbox.system
                && SYSTEM_EXECUTE
                    .iter()
                    .any(|dir| path.starts_with(Path::new(dir))))
    };
    let resolved = std::fs::canonicalize(&interpreter).unwrap_or(interpreter.clone());
    (!executable(&interpreter) && !executable(&resolved)).then(|| {
        format!(
            "its program `{}` needs `{}`, which its sandbox cannot execute: add its folder to `execute` (with the libraries' folders in `read`), or keep `system = true`",
            program.display(),
            interpreter.display()
        )
    })
}

/// What following the program found wrong, or (with `shims = false`) what it would have
/// granted: the exact lines to add.
fn launch_problems(sandbox: &Sandbox) -> Vec<String> {
    let launch = &sandbox.launch;
    let mut problems = launch.problems.clone();
    if !sandbox.shims {
        let mut needed = launch.clone();
        needed.execute.retain(|path| {
            Some(path) != sandbox.program.as_ref()
                && !sandbox.execute.iter().any(|dir| path.starts_with(dir))
        });
        needed.read.retain(|path| {
            !sandbox
                .read
                .iter()
                .chain(&sandbox.execute)
                .any(|dir| path.starts_with(dir))
        });
        let lines = needed.lines();
        if !lines.is_empty() {
            let chain: Vec<String> = launch
                .chain
                .iter()
                .map(|path| format!("`{}`", path.display()))
                .collect();
            problems.push(format!(
                "its program starts through {}, which `shims = false` does not let it run: add `{}` to `[tools.sandbox]`",
                chain.join(" → "),
                lines.join("` and `")
            ));
        }
    }
    problems
}

fn interpreter(program: &Path) -> Option<PathBuf> {
    match shims::interpreter(program)? {
        Interpreter::Path(path) | Interpreter::Loader(path) => Some(path),
        Interpreter::Env(_) => Some(PathBuf::from("/usr/bin/env")),
    }
}
