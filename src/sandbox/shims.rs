//! What a sandboxed program needs to start, found at load: the files its `#!` lines name
//! (`#!/usr/bin/env NAME` resolved on the command's `PATH`), followed to the end, and what
//! the version managers' shims and launchers need ([`managers`]). Everything found is
//! granted read and execute, never write, as canonical paths; `shims = false` turns it off
//! and `check` then says what to add instead.

mod managers;

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::SYSTEM_EXECUTE;

/// The most files a chain may pass through (shim → manager → interpreter …).
const MOST_HOPS: usize = 16;

/// Where and how the command will run, for following its program.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The `PATH` the command gets (`None`: unset, so `exec` searches `/bin:/usr/bin`).
    pub path: Option<OsString>,
    /// The command's working directory (version managers look for their files from there).
    pub cwd: PathBuf,
    /// The command's variables a version manager reads (`HOME`, `PYENV_*`, `ASDF_*`…).
    pub env: Vec<(OsString, OsString)>,
}

impl Context {
    /// `name` found the way `execvp` finds it on the command's `PATH`.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') {
            let path = Path::new(name);
            return Some(if path.is_absolute() {
                path.to_path_buf()
            } else {
                self.cwd.join(path)
            });
        }
        let search = self.path.clone().unwrap_or_else(|| "/bin:/usr/bin".into());
        std::env::split_paths(&search)
            .map(|dir| dir.join(name))
            .find(|path| is_executable_file(path))
    }

    fn var(&self, name: &str) -> Option<&OsString> {
        self.env
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }
}

/// What one program needs to start, beyond the system's paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Every file the program starts through, in order, canonical (the program first).
    pub chain: Vec<PathBuf>,
    /// Read and execute beneath these (files and folders, canonical).
    pub execute: Vec<PathBuf>,
    /// Read these (a version manager's version files).
    pub read: Vec<PathBuf>,
    /// What was recognised, for `check` (the manager and the version it picked).
    pub found: Vec<String>,
    /// What could not be followed, said by `check`.
    pub problems: Vec<String>,
}

impl Launch {
    /// Grants `path` read and execute; whether that granted anything new.
    fn execute(&mut self, path: &Path) -> bool {
        match std::fs::canonicalize(path) {
            Ok(path)
                if !is_system(&path)
                    && !self.execute.iter().any(|granted| path.starts_with(granted)) =>
            {
                self.execute.retain(|granted| !granted.starts_with(&path));
                self.execute.push(path);
                true
            }
            _ => false,
        }
    }

    fn read(&mut self, path: &Path) {
        if let Ok(path) = std::fs::canonicalize(path)
            && !self.read.contains(&path)
        {
            self.read.push(path);
        }
    }

    fn found(&mut self, what: String) {
        if !self.found.contains(&what) {
            self.found.push(what);
        }
    }

    /// The `[tools.sandbox]` lines that grant what this launch needs.
    pub fn lines(&self) -> Vec<String> {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|path| format!("{:?}", path.display().to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut lines = Vec::new();
        if !self.execute.is_empty() {
            lines.push(format!("execute = [{}]", list(&self.execute)));
        }
        if !self.read.is_empty() {
            lines.push(format!("read = [{}]", list(&self.read)));
        }
        lines
    }
}

/// Follows `program` (as found on `PATH`, before symlinks are resolved: a shim is known by
/// where it lies) through its `#!` lines and the shims it passes.
pub fn follow(program: &Path, context: &Context) -> Launch {
    let mut launch = Launch::default();
    let mut seen = HashSet::new();
    let mut pending = vec![program.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(canonical) = std::fs::canonicalize(&path) else {
            launch.problems.push(format!(
                "its program starts through `{}`, which does not exist",
                path.display()
            ));
            continue;
        };
        if !seen.insert(canonical.clone()) {
            continue;
        }
        if seen.len() > MOST_HOPS {
            launch.problems.push(format!(
                "`{}` starts through more than {MOST_HOPS} files; the rest was not followed",
                program.display()
            ));
            break;
        }
        launch.chain.push(canonical.clone());
        let _ = launch.execute(&canonical);
        for place in [&path, &canonical] {
            managers::prefix(place, context, &mut launch);
        }
        if let Some(target) = managers::shim(&path, &canonical, context, &mut launch) {
            pending.push(target);
        }
        match interpreter(&canonical) {
            Some(Interpreter::Path(interpreter)) => pending.push(interpreter),
            // The system's loader needs nothing more; another (Homebrew's) is followed.
            Some(Interpreter::Loader(loader)) if !is_system(&loader) => pending.push(loader),
            Some(Interpreter::Env(name)) => match context.which(&name) {
                Some(found) => pending.push(found),
                None => launch.problems.push(format!(
                    "`{}` runs `{name}` through `env`, which is not on the command's PATH",
                    canonical.display()
                )),
            },
            Some(Interpreter::Loader(_)) | None => {}
        }
    }
    launch
}

/// The program a script's `#!` line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interpreter {
    /// `#!/bin/sh`, `#!/usr/bin/python3 -u`.
    Path(PathBuf),
    /// `#!/usr/bin/env bash`, `#!/usr/bin/env -S node --flag`: found on `PATH`.
    Env(String),
    /// A dynamic ELF program's loader (`/lib64/ld-linux-x86-64.so.2`).
    Loader(PathBuf),
}

/// The interpreter of a script, or the loader of a dynamic ELF program (`None` for
/// anything else, or a file that cannot be read).
pub fn interpreter(file: &Path) -> Option<Interpreter> {
    use std::io::Read as _;
    let mut head = vec![0; 4096];
    let read = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    head.truncate(read);
    if !head.starts_with(b"\x7fELF") {
        return parse_shebang(&head);
    }
    // PT_INTERP's string sits near the start of a dynamic executable.
    head.split(|byte| *byte == 0)
        .map(String::from_utf8_lossy)
        .find(|text| text.starts_with('/') && text.contains("/ld-"))
        .map(|text| Interpreter::Loader(PathBuf::from(text.as_ref())))
}

/// Parses `#!interpreter [argument]` as the kernel does: the first word is the
/// interpreter, the rest one argument; `env` looks its first operand up on `PATH`.
pub fn parse_shebang(head: &[u8]) -> Option<Interpreter> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|byte| *byte == b'\n').next()?;
    let text = String::from_utf8_lossy(line);
    let mut words = text.split_whitespace();
    let interpreter = PathBuf::from(words.next()?);
    if interpreter.file_name().is_some_and(|name| name == "env") {
        // `env [-S] [-i] [NAME=value]… program`: the first word that is neither.
        let program = words.find(|word| !word.starts_with('-') && !word.contains('='))?;
        return Some(Interpreter::Env(program.to_owned()));
    }
    Some(Interpreter::Path(interpreter))
}

/// Beneath the system's programs and libraries (granted with `system = true`).
pub fn is_system(path: &Path) -> bool {
    SYSTEM_EXECUTE
        .iter()
        .any(|dir| path.starts_with(Path::new(dir)))
}

/// A file whose mode lets someone execute it.
pub fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The narrowest `[tools.sandbox]` line that would let the sandbox execute `denied`: the
/// install it belongs to when it is a version manager's or a package's, else the file.
pub fn grant_for(denied: &Path) -> String {
    let context = Context {
        env: std::env::var_os("HOME")
            .map(|home| ("HOME".into(), home))
            .into_iter()
            .collect(),
        ..Context::default()
    };
    let mut launch = Launch::default();
    managers::prefix(denied, &context, &mut launch);
    if let Ok(canonical) = std::fs::canonicalize(denied) {
        managers::prefix(&canonical, &context, &mut launch);
    }
    let mut wanted = launch.execute;
    if wanted.is_empty() {
        wanted.push(std::fs::canonicalize(denied).unwrap_or_else(|_| denied.to_path_buf()));
    }
    Launch {
        execute: wanted,
        ..Launch::default()
    }
    .lines()
    .join(" ")
}

#[cfg(test)]
mod tests;
