//! Naming what the sandbox denied when a program could not start: the trampoline's own
//! `exec` failing (it walks the `#!` chain, confined, to the first file it cannot open), or a
//! shell in the sandbox answering 126 (`…: /path: Permission denied`). The tool error then
//! names the path and the `[tools.sandbox]` line that would allow it.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::shims::{self, Context, Interpreter};
use super::{FAILURE_PREFIX, Sandbox};

/// How the trampoline names a denied file: `mcp-serve sandbox: denied `PATH`: reason`.
const DENIED: &str = "denied `";

/// The trampoline's message and exit status when `exec` of `program` failed: 127 when it
/// does not exist, 126 otherwise, naming the file in its chain that the sandbox refused.
pub(super) fn exec_failure(program: &OsStr, error: &std::io::Error) -> (u8, String) {
    let status = if error.kind() == ErrorKind::NotFound {
        127
    } else {
        126
    };
    let context = Context {
        path: std::env::var_os("PATH"),
        ..Context::default()
    };
    let name = program.to_string_lossy();
    let Some(found) = context.which(&name) else {
        return (status, format!("`{name}` is not on the command's PATH"));
    };
    match blocked(&found, &context) {
        Some((path, reason)) => (status, format!("{DENIED}{}`: {reason}", path.display())),
        None => (status, format!("`{}`: {error}", found.display())),
    }
}

/// The first file of the chain from `program` that cannot be opened, or the last one (which
/// opened but did not run).
fn blocked(program: &Path, context: &Context) -> Option<(PathBuf, String)> {
    let mut file = program.to_path_buf();
    for _ in 0..16 {
        if let Err(error) = std::fs::File::open(&file) {
            return Some((file, error.to_string()));
        }
        let next = match shims::interpreter(&file) {
            Some(Interpreter::Path(path) | Interpreter::Loader(path)) => path,
            Some(Interpreter::Env(name)) => match context.which(&name) {
                Some(path) => path,
                None => return Some((PathBuf::from(name), "not on the command's PATH".into())),
            },
            None => return Some((file, "it can be read but not executed here".into())),
        };
        file = next;
    }
    None
}

/// Why a sandboxed program did not start, naming the denied path and the line that allows
/// it: from the trampoline's `denied` line, or a shell's `…: /path: Permission denied` (exit
/// 126) for a path the sandbox does not let run.
pub fn explain(sandbox: &Sandbox, code: Option<i32>, stderr: &str) -> Option<String> {
    let from_trampoline = stderr.lines().find_map(|line| {
        let rest = line.strip_prefix(FAILURE_PREFIX)?.strip_prefix(DENIED)?;
        let (path, reason) = rest.split_once("`: ")?;
        Some((PathBuf::from(path), reason.to_owned()))
    });
    let denied = from_trampoline.or_else(|| {
        if code != Some(126) {
            return None;
        }
        stderr.lines().rev().find_map(|line| {
            let before = line.strip_suffix(": Permission denied")?;
            let quotes: &[char] = &['\'', '"', '‘', '’', '`'];
            let named = before.rsplit(": ").next()?.trim_matches(quotes);
            // `env: ‘node’: Permission denied` names a program: the one the chain found.
            let path = if named.starts_with('/') {
                PathBuf::from(named)
            } else {
                sandbox
                    .launch
                    .chain
                    .iter()
                    .find(|path| path.file_name().is_some_and(|name| name == named))?
                    .clone()
            };
            // A file its mode keeps from running would be refused anywhere: not ours.
            (shims::is_executable_file(&path) && !runs_in(sandbox, &path))
                .then(|| (path, "Permission denied".to_owned()))
        })
    })?;
    let (path, reason) = denied;
    if !path.is_absolute() {
        return Some(format!("`{}` is {reason}", path.display()));
    }
    if !path.exists() {
        return Some(format!("`{}` does not exist ({reason})", path.display()));
    }
    let line = if shims::is_system(&path) && !sandbox.system {
        "system = true".to_owned()
    } else {
        shims::grant_for(&path)
    };
    Some(format!(
        "it denied `{}` ({reason}); add `{line}` to `[tools.sandbox]`",
        path.display()
    ))
}

/// Whether the sandbox lets `path` run (as far as the server can tell).
fn runs_in(sandbox: &Sandbox, path: &Path) -> bool {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let launch = sandbox.shims.then_some(&sandbox.launch.execute);
    sandbox
        .execute
        .iter()
        .chain(launch.into_iter().flatten())
        .chain(&sandbox.program)
        .any(|granted| path.starts_with(granted))
        || (sandbox.system && shims::is_system(&path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Limits, Network, Support};

    fn sandbox(execute: Vec<PathBuf>) -> Sandbox {
        Sandbox {
            read: vec![],
            write: vec![],
            execute,
            program: None,
            shims: true,
            launch: shims::Launch::default(),
            system: true,
            temp_dir: false,
            network: Network::Any,
            limits: Limits::default(),
            seccomp: true,
            required: false,
            kernel: Support::EVERYTHING,
            filters: std::sync::Arc::default(),
        }
    }

    #[test]
    fn only_a_refusal_the_sandbox_made_is_blamed_on_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let runnable = root.join("tool");
        let plain = root.join("notes.txt");
        for (path, mode) in [(&runnable, 0o755), (&plain, 0o644)] {
            std::fs::write(path, "").expect("file");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("mode");
        }
        let shell = |path: &Path| format!("sh: 1: {}: Permission denied\n", path.display());
        let outside = sandbox(vec![]);
        assert_eq!(
            explain(&outside, Some(126), &shell(&runnable)),
            Some(format!(
                "it denied `{0}` (Permission denied); add `execute = [\"{0}\"]` to `[tools.sandbox]`",
                runnable.display()
            ))
        );
        // Its mode keeps it from running anywhere; another status is not a refused start; a
        // file the sandbox lets run was refused by something else.
        assert_eq!(explain(&outside, Some(126), &shell(&plain)), None);
        assert_eq!(explain(&outside, Some(1), &shell(&runnable)), None);
        assert_eq!(
            explain(&sandbox(vec![root.clone()]), Some(126), &shell(&runnable)),
            None
        );
        // The trampoline's own line, whatever the status.
        let line = format!(
            "{FAILURE_PREFIX}{DENIED}{}`: Permission denied (os error 13)\n",
            runnable.display()
        );
        assert!(
            explain(&outside, Some(126), &line).is_some_and(
                |said| said.starts_with(&format!("it denied `{}`", runnable.display()))
            )
        );
    }
}
