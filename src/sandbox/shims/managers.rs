//! The version managers and launchers developers run interpreters through, recognised by
//! where their files lie:
//!
//! - shims (`<root>/shims/NAME`): pyenv and rbenv (`<root>/libexec/pyenv`), asdf
//!   (`# asdf-plugin:` / `asdf exec`), mise (a link to the `mise` binary). The manager is
//!   asked which program the shim runs (`pyenv which NAME`, in the command's folder with its
//!   variables), so the version is the one the manager picks from its version files; those
//!   files are granted read (a new one written after load needs a reload);
//! - installs: `<root>/versions/V` (pyenv, rbenv), `<nvm>/versions/node/V`,
//!   `<data>/installs/TOOL/V` (asdf, mise), a Homebrew keg (`<prefix>/Cellar/F/V`: the
//!   prefix's `Cellar`, `opt`, `lib`, `bin` and `etc`, where kegs link each other; not its
//!   `var`, where services keep data), uv's `tools/NAME` and `python/INSTALL`, a Python
//!   virtual environment (`pyvenv.cfg`), the outermost `node_modules`, and an interpreter's
//!   own prefix (`X/bin/python3.12` beside `X/lib/python3.12/os.py`, node, ruby, java).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Context, Launch, is_system};

/// How long a version manager may take to say which program a shim runs.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

fn name(path: &Path) -> Option<&str> {
    path.file_name().and_then(|name| name.to_str())
}

/// Grants the install that `place` lies in, if it is one of the known kinds.
pub(super) fn prefix(place: &Path, context: &Context, launch: &mut Launch) {
    let home = context.home();
    let mut outermost_modules = None;
    for dir in place.ancestors().skip(1) {
        if dir.parent().is_none() || home.as_deref() == Some(dir) || is_system(dir) {
            break;
        }
        let parent = dir.parent().unwrap_or(dir);
        let grandparent = parent.parent().unwrap_or(parent);
        let version = name(dir).unwrap_or_default();
        if version == "libexec"
            && ["pyenv", "rbenv"]
                .iter()
                .any(|manager| dir.join(manager).is_file())
            && launch.execute(dir)
        {
            launch.found(format!("`{}`", dir.display()));
        }
        if name(parent) == Some("versions") {
            for manager in ["pyenv", "rbenv"] {
                if grandparent.join("libexec").join(manager).is_file() && launch.execute(dir) {
                    launch.found(format!("{manager} version `{version}`"));
                }
            }
        }
        if name(parent) == Some("node")
            && name(grandparent) == Some("versions")
            && grandparent
                .parent()
                .is_some_and(|nvm| nvm.join("nvm.sh").is_file())
            && launch.execute(dir)
        {
            launch.found(format!("nvm node `{version}`"));
        }
        if name(grandparent) == Some("installs")
            && grandparent
                .parent()
                .is_some_and(|data| data.join("shims").is_dir())
            && launch.execute(dir)
        {
            launch.found(format!(
                "install `{} {version}` of asdf or mise",
                name(parent).unwrap_or_default()
            ));
        }
        if name(grandparent) == Some("Cellar")
            && let Some(brew) = grandparent.parent()
            && brew.join("bin/brew").is_file()
            && ["Cellar", "opt", "lib", "bin", "etc"]
                .into_iter()
                .map(|folder| launch.execute(&brew.join(folder)))
                .filter(|new| *new)
                .count()
                > 0
        {
            launch.found(format!(
                "Homebrew keg `{} {version}` in `{}`",
                name(parent).unwrap_or_default(),
                brew.display()
            ));
        }
        if matches!(name(parent), Some("tools" | "python"))
            && name(grandparent) == Some("uv")
            && launch.execute(dir)
        {
            launch.found(format!(
                "uv {} `{version}`",
                name(parent).unwrap_or_default()
            ));
        }
        if dir.join("pyvenv.cfg").is_file() && launch.execute(dir) {
            launch.found(format!("Python virtual environment `{}`", dir.display()));
        }
        if version == "node_modules" {
            outermost_modules = Some(dir);
        }
    }
    if let Some(modules) = outermost_modules
        && launch.execute(modules)
    {
        launch.found(format!("packages in `{}`", modules.display()));
    }
    if let Some(root) = interpreter_prefix(place)
        && home.as_deref() != Some(root.as_path())
        && launch.execute(&root)
    {
        launch.found(format!(
            "`{}` installed in `{}`",
            name(place).unwrap_or_default(),
            root.display()
        ));
    }
}

/// `X` for `X/bin/python3.12` beside its standard library, and the like.
fn interpreter_prefix(place: &Path) -> Option<PathBuf> {
    let bin = place.parent()?;
    if name(bin) != Some("bin") {
        return None;
    }
    let root = bin.parent()?;
    if is_system(root) {
        return None;
    }
    let program = name(place)?;
    let has = |relative: &str| root.join(relative).exists();
    let library = if program.starts_with("python") {
        std::fs::read_dir(root.join("lib"))
            .ok()?
            .flatten()
            .any(|entry| {
                entry.file_name().to_string_lossy().starts_with("python")
                    && entry.path().join("os.py").is_file()
            })
    } else {
        match program {
            "node" => has("include/node/node.h") || has("lib/node_modules/npm"),
            "ruby" => has("lib/ruby"),
            "java" => has("lib/modules"),
            _ => false,
        }
    };
    library.then(|| root.to_path_buf())
}

/// When `path` is a version manager's shim: grants what the manager needs and returns the
/// program it runs (asked of the manager).
pub(super) fn shim(
    path: &Path,
    canonical: &Path,
    context: &Context,
    launch: &mut Launch,
) -> Option<PathBuf> {
    let shims = path.parent()?;
    if name(shims) != Some("shims") {
        return None;
    }
    let root = shims.parent()?;
    let program = name(path)?;
    for (manager, file) in [("pyenv", ".python-version"), ("rbenv", ".ruby-version")] {
        let binary = root.join("libexec").join(manager);
        if binary.is_file() {
            let _ = launch.execute(&root.join("libexec"));
            for found in version_files(context, &[file], false) {
                launch.read(&found);
            }
            launch.read(&root.join("version"));
            // The shim exports its root, whatever the environment said.
            let root_variable = format!("{}_ROOT", manager.to_uppercase());
            let context = Context {
                env: context
                    .env
                    .iter()
                    .filter(|(key, _)| *key != root_variable.as_str())
                    .cloned()
                    .chain([(root_variable.clone().into(), root.as_os_str().to_owned())])
                    .collect(),
                ..context.clone()
            };
            return ask(manager, &binary, program, &context, &[], launch);
        }
    }
    if name(canonical) == Some("mise") {
        launch.read(root);
        if let Some(home) = context.home() {
            launch.read(&home.join(".config/mise"));
        }
        let files = [
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".tool-versions",
        ];
        for found in version_files(context, &files, true) {
            launch.read(&found);
        }
        return ask("mise", canonical, program, context, &[], launch);
    }
    let text = std::fs::read_to_string(canonical).unwrap_or_default();
    if !text.contains("asdf exec") && !root.join("bin/asdf").is_file() {
        return None;
    }
    let binary = if root.join("bin/asdf").is_file() {
        let _ = launch.execute(&root.join("bin"));
        let _ = launch.execute(&root.join("lib"));
        root.join("bin/asdf")
    } else {
        let binary = context.which("asdf")?;
        let _ = launch.execute(&binary);
        binary
    };
    if let Some(plugin) = text
        .lines()
        .find_map(|line| line.strip_prefix("# asdf-plugin: "))
        .and_then(|rest| rest.split_whitespace().next())
    {
        let _ = launch.execute(&root.join("plugins").join(plugin));
    }
    for found in version_files(context, &[".tool-versions"], true) {
        launch.read(&found);
    }
    if let Some(home) = context.home() {
        launch.read(&home.join(".tool-versions"));
        launch.read(&home.join(".asdfrc"));
    }
    ask(
        "asdf",
        &binary,
        program,
        context,
        &[("ASDF_DATA_DIR", root)],
        launch,
    )
}

/// The version files a manager would read, from the command's folder up (`all`: every one,
/// as asdf merges them; otherwise the nearest, as pyenv stops there).
fn version_files(context: &Context, names: &[&str], all: bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in context.cwd.ancestors() {
        let here: Vec<PathBuf> = names
            .iter()
            .map(|name| dir.join(name))
            .filter(|path| path.is_file())
            .collect();
        let stop = !all && !here.is_empty();
        found.extend(here);
        if stop {
            break;
        }
    }
    found
}

/// Asks `manager which program` where the command will run; `None` (and a problem for
/// `check`) when it cannot say.
fn ask(
    manager: &str,
    binary: &Path,
    program: &str,
    context: &Context,
    defaults: &[(&str, &Path)],
    launch: &mut Launch,
) -> Option<PathBuf> {
    let asked = format!("`{manager} which {program}`");
    if let Err(problem) = trusted(binary) {
        launch.problems.push(format!(
            "its program is a {manager} shim, and {asked} was not asked: {problem}; the version it runs is not granted"
        ));
        return None;
    }
    let mut command = Command::new(binary);
    command
        .args(["which", program])
        .current_dir(&context.cwd)
        .env_clear()
        .envs(context.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = &context.path {
        command.env("PATH", path);
    }
    for (key, value) in defaults {
        if context.var(key).is_none() {
            command.env(key, value);
        }
    }
    let answer = command
        .spawn()
        .and_then(|child| wait(child, ASK_TIMEOUT))
        .map_err(|error| error.to_string())
        .and_then(|output| {
            let stdout = String::from_utf8_lossy(&output.stdout);
            let first = stdout.lines().next().unwrap_or_default().trim();
            if output.status.success() && first.starts_with('/') {
                Ok(PathBuf::from(first))
            } else {
                let stderr = String::from_utf8_lossy(&output.stderr);
                Err(stderr
                    .lines()
                    .find(|line| !line.trim().is_empty())
                    .unwrap_or("it said nothing")
                    .trim()
                    .to_owned())
            }
        });
    match answer {
        Ok(target) => {
            launch.found(format!(
                "{manager} shim `{program}`: {asked} is `{}`",
                target.display()
            ));
            Some(target)
        }
        Err(problem) => {
            launch.problems.push(format!(
                "its program is a {manager} shim, and {asked} failed ({problem}): the version it runs is not granted"
            ));
            None
        }
    }
}

/// The manager runs unconfined, at load: only when it and its folder belong to the
/// server's user or root and no one else may write them (as `ssh` checks its files).
fn trusted(binary: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let user = nix::unistd::geteuid().as_raw();
    let canonical = std::fs::canonicalize(binary).map_err(|error| error.to_string())?;
    for path in [Some(canonical.as_path()), canonical.parent()]
        .into_iter()
        .flatten()
    {
        let meta = std::fs::metadata(path).map_err(|error| error.to_string())?;
        if meta.uid() != user && meta.uid() != 0 {
            return Err(format!("`{}` belongs to another user", path.display()));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!("others may write `{}`", path.display()));
        }
    }
    Ok(())
}

/// Waits for `child`, killing it after `timeout`.
fn wait(
    mut child: std::process::Child,
    timeout: Duration,
) -> std::io::Result<std::process::Output> {
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            return child.wait_with_output();
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!(
                "no answer in {}s",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
