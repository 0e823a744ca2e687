//! Sandboxed programs that start through version managers' shims and `#!` lines: fake
//! pyenv, asdf, mise, nvm and Homebrew trees in a temporary home, laid out as the real ones
//! are (shell-script shims with a `#!/usr/bin/env bash` line that exec the manager, which
//! execs the selected version: a real ELF program, a copy of `/bin/sh`, or the real
//! `python3`). Each tool runs with `shims` on (granted: the call succeeds, `check` says what
//! was granted) and off (the control: the call fails, and the error names the denied path and
//! the `[tools.sandbox]` line that allows it).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::Feature;
use crate::harness::{BINARY, Server, Workspace, python, set_mode, text};

/// A copy of the system's `sh` (an ELF program) at `path`: an interpreter outside the
/// system's folders, as a version manager installs one.
fn real_program(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let sh = std::fs::canonicalize("/bin/sh").expect("/bin/sh");
    std::fs::copy(sh, path).expect("copy sh");
}

/// A script at `path`, executable.
fn script(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    std::fs::write(path, text).expect("script");
    set_mode(path, 0o755);
}

/// The fake trees, beneath `root` (a canonical folder).
struct Trees {
    home: PathBuf,
    pyenv: PathBuf,
    asdf: PathBuf,
    mise: PathBuf,
    nvm_version: PathBuf,
    brew: PathBuf,
    path: String,
}

fn build(root: &Path) -> Trees {
    let home = root.join("home");
    let pyenv = pyenv(&home);
    let asdf = asdf(&home);
    let mise = mise(&home);
    let nvm_version = nvm(&home);
    let brew = brew(root);
    let path = [
        pyenv.join("shims"),
        asdf.join("shims"),
        mise.join("shims"),
        nvm_version.join("bin"),
        brew.join("bin"),
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
    ]
    .iter()
    .map(|dir| dir.display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    Trees {
        home,
        pyenv,
        asdf,
        mise,
        nvm_version,
        brew,
        path,
    }
}

fn pyenv(home: &Path) -> PathBuf {
    // pyenv: shims/NAME → libexec/pyenv exec NAME → versions/$(cat version)/bin/NAME.
    let pyenv = home.join(".pyenv");
    let shim = format!(
        "#!/usr/bin/env bash\nset -e\nprogram=\"${{0##*/}}\"\nexport PYENV_ROOT=\"{root}\"\nexec \"{root}/libexec/pyenv\" exec \"$program\" \"$@\"\n",
        root = pyenv.display()
    );
    for name in ["pysh", "python3"] {
        script(&pyenv.join("shims").join(name), &shim);
    }
    script(
        &pyenv.join("libexec/pyenv"),
        "#!/usr/bin/env bash\nset -e\nversion=\"${PYENV_VERSION:-$(cat \"$PYENV_ROOT/version\")}\"\n[ -f .python-version ] && version=\"$(cat .python-version)\"\ncommand=\"$1\"; shift\ncase \"$command\" in\n  which) echo \"$PYENV_ROOT/versions/$version/bin/$1\" ;;\n  exec) program=\"$1\"; shift; export PATH=\"$PYENV_ROOT/versions/$version/bin:$PATH\"; exec \"$PYENV_ROOT/versions/$version/bin/$program\" \"$@\" ;;\nesac\n",
    );
    std::fs::write(pyenv.join("version"), "1.0\n").expect("version");
    real_program(&pyenv.join("versions/1.0/bin/pysh"));
    let (real_python, _) = python();
    symlink(&real_python, pyenv.join("versions/1.0/bin/python3")).expect("python3");
    pyenv
}

fn asdf(home: &Path) -> PathBuf {
    // asdf: shims/NAME (with its plugin) → bin/asdf (sourcing lib/) → the plugin's
    // exec-env → installs/PLUGIN/VERSION/bin/NAME, the version from ~/.tool-versions.
    let asdf = home.join(".asdf");
    script(
        &asdf.join("shims/asdfsh"),
        &format!(
            "#!/usr/bin/env bash\n# asdf-plugin: asdfsh 2.0\nexec {}/bin/asdf exec \"asdfsh\" \"$@\"\n",
            asdf.display()
        ),
    );
    script(
        &asdf.join("bin/asdf"),
        &format!(
            "#!/usr/bin/env bash\nset -e\nroot={root}\n. \"$root/lib/utils.bash\"\nversion=\"$(version_of \"$2\")\"\ncase \"$1\" in\n  which) echo \"$root/installs/$2/$version/bin/$2\" ;;\n  exec) \"$root/plugins/$2/bin/exec-env\"; program=\"$2\"; shift 2; exec \"$root/installs/$program/$version/bin/$program\" \"$@\" ;;\nesac\n",
            root = asdf.display()
        ),
    );
    script(
        &asdf.join("lib/utils.bash"),
        "version_of() { while read -r name version; do [ \"$name\" = \"$1\" ] && echo \"$version\"; done < \"$HOME/.tool-versions\"; }\n",
    );
    script(&asdf.join("plugins/asdfsh/bin/exec-env"), "#!/bin/sh\n:\n");
    real_program(&asdf.join("installs/asdfsh/2.0/bin/asdfsh"));
    std::fs::write(home.join(".tool-versions"), "asdfsh 2.0\n").expect("tool-versions");
    asdf
}

fn mise(home: &Path) -> PathBuf {
    // mise: shims are links to the mise binary, which runs the tool its name says.
    let mise = home.join(".local/share/mise");
    let mise_binary = home.join(".local/bin/mise");
    script(
        &mise_binary,
        &format!(
            "#!/usr/bin/env bash\nname=\"${{0##*/}}\"\ninstall={data}/installs/misesh/3.0/bin\nif [ \"$name\" = mise ]; then [ \"$1\" = which ] && echo \"$install/$2\"; exit; fi\nexec \"$install/$name\" \"$@\"\n",
            data = mise.display()
        ),
    );
    std::fs::create_dir_all(mise.join("shims")).expect("mise shims");
    symlink(&mise_binary, mise.join("shims/misesh")).expect("mise shim");
    real_program(&mise.join("installs/misesh/3.0/bin/misesh"));
    mise
}

fn nvm(home: &Path) -> PathBuf {
    // nvm: node in versions/node/V/bin; npx links to a `#!/usr/bin/env node` script in
    // the version's node_modules.
    let nvm = home.join(".nvm");
    std::fs::create_dir_all(&nvm).expect("nvm");
    std::fs::write(nvm.join("nvm.sh"), "").expect("nvm.sh");
    let nvm_version = nvm.join("versions/node/v9.0.0");
    real_program(&nvm_version.join("bin/node"));
    script(
        &nvm_version.join("lib/node_modules/npm/bin/npx-cli.js"),
        "#!/usr/bin/env node\necho npx ran\n",
    );
    symlink(
        "../lib/node_modules/npm/bin/npx-cli.js",
        nvm_version.join("bin/npx"),
    )
    .expect("npx");
    nvm_version
}

fn brew(root: &Path) -> PathBuf {
    // Homebrew: bin/NAME links into its keg in Cellar; a script there names its
    // interpreter through another keg's opt/ link.
    let brew = root.join("linuxbrew/.linuxbrew");
    script(&brew.join("bin/brew"), "#!/bin/sh\n");
    real_program(&brew.join("Cellar/brewsh/1.0/bin/brewsh"));
    std::fs::create_dir_all(brew.join("opt")).expect("opt");
    symlink("../Cellar/brewsh/1.0", brew.join("opt/brewsh")).expect("opt link");
    script(
        &brew.join("Cellar/brewtool/1.0/bin/brewtool"),
        &format!(
            "#!{}/opt/brewsh/bin/brewsh\necho brew ran\n",
            brew.display()
        ),
    );
    symlink(
        "../Cellar/brewtool/1.0/bin/brewtool",
        brew.join("bin/brewtool"),
    )
    .expect("brew link");
    brew
}

/// One tool per launcher, with `shims` on, and the same with `shims = false`. npx gets
/// nvm's folder alone on its `PATH`: with the system's folders there too, `env` passes over
/// the node it may not run and runs the system's, if there is one.
fn manifest(trees: &Trees) -> String {
    let npx = format!(
        "[\"npx\"]\ncommand.env = {{ PATH = \"{}/bin\" }}",
        trees.nvm_version.display()
    );
    let tools = [
        ("pyenv", r#"["pysh", "-c", "echo pyenv ran"]"#),
        (
            "pyenv-python",
            r#"["python3", "-c", "import sys; print('python', sys.version_info[0])"]"#,
        ),
        ("asdf", r#"["asdfsh", "-c", "echo asdf ran"]"#),
        ("mise", r#"["misesh", "-c", "echo mise ran"]"#),
        ("nvm-npx", npx.as_str()),
        ("brew", r#"["brewtool"]"#),
    ];
    let mut out = String::new();
    for (name, argv) in tools {
        for (suffix, shims) in [("", "true"), ("-off", "false")] {
            out.push_str(&format!(
                "[[tools]]\nname = \"{name}{suffix}\"\ncommand.argv = {argv}\n[tools.sandbox]\nread = []\nnetwork = false\nshims = {shims}\n\n"
            ));
        }
    }
    out
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

#[test]
fn shims_and_interpreters_are_granted_read_and_execute_and_the_control_names_what_it_denied() {
    if crate::sandbox::landlock_abi() < 1 {
        crate::harness::skip(Feature::Landlock(1), "this kernel has no Landlock");
        return;
    }
    let workspace = Workspace::new("");
    let root = std::fs::canonicalize(workspace.dir.path()).expect("canonical");
    let trees = build(&root);
    std::fs::write(workspace.manifest(), manifest(&trees)).expect("manifest");
    let env = [
        ("HOME", trees.home.to_str().expect("home")),
        ("PATH", trees.path.as_str()),
    ];

    // The fake trees alone: none of this machine's own version managers' variables.
    let command = |args: &[&str]| {
        let mut command = std::process::Command::new(BINARY);
        command.args(args).arg("--config").arg(workspace.manifest());
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if ["PYENV", "RBENV", "ASDF", "MISE", "NVM"]
                .iter()
                .any(|manager| name.starts_with(manager))
            {
                command.env_remove(name.as_ref());
            }
        }
        command.envs(env);
        command
    };
    let output = command(&["check"]).output().expect("check");
    let check = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{check}");
    check_says_what_is_granted(&check, &trees);

    let mut server = Server::start_command(&mut command(&[]));
    server.handshake("2025-11-25");
    let mut granted = 0;
    for (tool, answer) in [
        ("pyenv", "pyenv ran"),
        ("pyenv-python", "python 3"),
        ("asdf", "asdf ran"),
        ("mise", "mise ran"),
        ("nvm-npx", "npx ran"),
        ("brew", "brew ran"),
    ] {
        let result = server.call(tool, json!({}));
        assert_eq!(text(&result), answer, "{tool}: {result}");
        granted += 1;
    }
    let denied = the_controls_name_what_was_denied(&mut server, &trees);
    eprintln!(
        "shims: {granted} launchers granted and ran; {denied} controls denied, each naming the path and the line to add"
    );
}

fn check_says_what_is_granted(check: &str, trees: &Trees) {
    let (pyenv, asdf, mise) = (
        trees.pyenv.display(),
        trees.asdf.display(),
        trees.mise.display(),
    );
    for expected in [
        format!(
            "starts through: {pyenv}/shims/pysh → {bash} → {pyenv}/versions/1.0/bin/pysh; read and execute {pyenv}/libexec, {pyenv}/versions/1.0; read {pyenv}/version (pyenv shim `pysh`: `pyenv which pysh` is `{pyenv}/versions/1.0/bin/pysh`",
            bash = std::fs::canonicalize("/usr/bin/bash")
                .or_else(|_| std::fs::canonicalize("/bin/bash"))
                .expect("bash")
                .display()
        ),
        format!(
            "read and execute {asdf}/bin, {asdf}/lib, {asdf}/plugins/asdfsh, {asdf}/installs/asdfsh/2.0; read {home}/.tool-versions",
            home = trees.home.display()
        ),
        format!("read and execute {mise}/installs/misesh/3.0; read {mise}"),
        format!(
            "starts through: {nvm}/lib/node_modules/npm/bin/npx-cli.js → {nvm}/bin/node; read and execute {nvm} (nvm node `v9.0.0`)",
            nvm = trees.nvm_version.display()
        ),
        format!(
            "read and execute {brew}/Cellar, {brew}/opt, {brew}/bin (Homebrew keg `brewtool 1.0` in `{brew}`)",
            brew = trees.brew.display()
        ),
        // With `shims = false`, the exact lines to add.
        format!("warning: tool `pyenv-off` its program starts through `{pyenv}/shims/pysh` → "),
        format!(
            "which `shims = false` does not let it run: add `execute = [\"{pyenv}/libexec\", \"{pyenv}/versions/1.0\"]` and `read = [\"{pyenv}/version\"]` to `[tools.sandbox]`"
        ),
    ] {
        assert!(
            check.contains(&expected),
            "missing {expected:?} in:\n{check}"
        );
    }
}

/// Without the grants each fails, naming the path it was denied and the line that allows it.
fn the_controls_name_what_was_denied(server: &mut Server, trees: &Trees) -> usize {
    let (pyenv, asdf, mise) = (
        trees.pyenv.display(),
        trees.asdf.display(),
        trees.mise.display(),
    );
    let nvm = trees.nvm_version.display();
    let brew = trees.brew.display();
    let mut denied = 0;
    for (tool, named) in [
        (
            "pyenv-off",
            format!(
                "`pysh` could not start in its sandbox: it denied `{pyenv}/libexec/pyenv` (Permission denied); add `execute = [\"{pyenv}/libexec\"]` to `[tools.sandbox]`"
            ),
        ),
        (
            "asdf-off",
            format!(
                "`asdfsh` could not start in its sandbox: it denied `{asdf}/bin/asdf` (Permission denied); add `execute = [\"{asdf}/bin/asdf\"]` to `[tools.sandbox]`"
            ),
        ),
        (
            "nvm-npx-off",
            format!(
                "`npx` could not start in its sandbox: it denied `{nvm}/bin/node` (Permission denied); add `execute = [\"{nvm}\"]` to `[tools.sandbox]`"
            ),
        ),
        (
            "brew-off",
            format!(
                "`brewtool` could not start in its sandbox: it denied `{brew}/opt/brewsh/bin/brewsh` (Permission denied (os error 13)); add `execute = [\"{brew}/Cellar\", \"{brew}/opt\", \"{brew}/bin\"]` to `[tools.sandbox]`"
            ),
        ),
        (
            "mise-off",
            format!("it denied `{mise}/installs/misesh/3.0/bin/misesh`"),
        ),
    ] {
        let result = server.call(tool, json!({}));
        assert!(is_error(&result), "{tool}: {result}");
        assert!(
            text(&result).contains(&named),
            "{tool}: expected {named:?} in {result}"
        );
        denied += 1;
    }
    let result = server.call("pyenv-python-off", json!({}));
    assert!(is_error(&result), "{result}");
    denied + 1
}

#[test]
fn a_script_whose_interpreter_is_outside_the_sandbox_names_it_and_a_missing_program_says_so() {
    if crate::sandbox::landlock_abi() < 1 {
        crate::harness::skip(Feature::Landlock(1), "this kernel has no Landlock");
        return;
    }
    let workspace = Workspace::new(
        "[[tools]]\nname = \"script\"\ncommand.argv = [\"./run.sh\"]\nsandbox = { read = [] }\n\n\
         [[tools]]\nname = \"script-off\"\ncommand.argv = [\"./run.sh\"]\nsandbox = { read = [], shims = false }\n\n\
         [[tools]]\nname = \"missing\"\ncommand.argv = [\"./gone.sh\"]\nsandbox = { read = [] }\n",
    );
    let root = std::fs::canonicalize(workspace.dir.path()).expect("canonical");
    let interpreter = root.join("opt/odd/bin/oddsh");
    real_program(&interpreter);
    script(
        &root.join("run.sh"),
        &format!("#!{}\necho ran by oddsh\n", interpreter.display()),
    );
    script(&root.join("gone.sh"), "#!/nowhere/sh\necho never\n");
    let mut server = workspace.serve_legacy();
    let result = server.call("script", json!({}));
    assert_eq!(text(&result), "ran by oddsh", "{result}");
    // The trampoline's own exec fails (EACCES on the interpreter): it names it.
    let result = server.call("script-off", json!({}));
    assert!(is_error(&result), "{result}");
    assert_eq!(
        text(&result),
        format!(
            "`./run.sh` could not start in its sandbox: it denied `{0}` (Permission denied (os error 13)); add `execute = [\"{0}\"]` to `[tools.sandbox]`",
            interpreter.display()
        ),
        "{result}"
    );
    let result = server.call("missing", json!({}));
    assert!(is_error(&result), "{result}");
    assert_eq!(
        text(&result),
        "`./gone.sh` could not start in its sandbox: `/nowhere/sh` does not exist (No such file or directory (os error 2))",
        "{result}"
    );
}

#[test]
fn a_shim_grant_reads_and_runs_but_never_writes_and_an_untrusted_manager_is_not_asked() {
    if crate::sandbox::landlock_abi() < 1 {
        crate::harness::skip(Feature::Landlock(1), "this kernel has no Landlock");
        return;
    }
    let workspace = Workspace::new("");
    let root = std::fs::canonicalize(workspace.dir.path()).expect("canonical");
    let trees = build(&root);
    std::fs::write(trees.home.join("secret.txt"), "the secret\n").expect("secret");
    let pyenv = trees.pyenv.display();
    // Plants a file in the granted install, reads the manager's file (granted) and a
    // secret in the same home (not granted).
    let attack = format!(
        r#"["pysh", "-c", "echo planted > \"$0\" && echo wrote; cat \"$1\" | head -c 11; echo; cat \"$2\"; true", "{pyenv}/versions/1.0/planted", "{pyenv}/libexec/pyenv", "{home}/secret.txt"]"#,
        home = trees.home.display()
    );
    std::fs::write(
        workspace.manifest(),
        format!(
            "[[tools]]\nname = \"attack\"\ncommand.argv = {attack}\nsandbox = {{ read = [] }}\n\n\
             [[tools]]\nname = \"attack-unconfined\"\ncommand.argv = {attack}\n"
        ),
    )
    .expect("manifest");
    let env = [
        ("HOME", trees.home.to_str().expect("home")),
        ("PATH", trees.path.as_str()),
        ("PYENV_VERSION", "1.0"),
    ];
    let mut server = Server::start_with(&workspace.manifest(), &[], &env);
    server.handshake("2025-11-25");
    let result = server.call("attack", json!({}));
    let said = text(&result);
    assert!(!said.contains("wrote"), "{result}");
    assert!(!said.contains("the secret"), "{result}");
    assert!(
        said.contains("#!/usr/bin/"),
        "the manager is readable: {result}"
    );
    assert!(!trees.pyenv.join("versions/1.0/planted").exists());
    let control = server.call("attack-unconfined", json!({}));
    assert!(
        text(&control).contains("wrote") && text(&control).contains("the secret"),
        "{control}"
    );
    std::fs::remove_file(trees.pyenv.join("versions/1.0/planted")).expect("planted");
    drop(server);

    // A manager others may write is never run at load: the version it would pick is not
    // granted, `check` says why, and the call names what it was refused.
    set_mode(&trees.pyenv.join("libexec/pyenv"), 0o777);
    let output = std::process::Command::new(BINARY)
        .args(["check", "--config"])
        .arg(workspace.manifest())
        .envs(env)
        .output()
        .expect("check");
    let check = String::from_utf8_lossy(&output.stderr);
    assert!(
        check.contains(&format!(
            "its program is a pyenv shim, and `pyenv which pysh` was not asked: others may write `{pyenv}/libexec/pyenv`"
        )),
        "{check}"
    );
    let mut server = Server::start_with(&workspace.manifest(), &[], &env);
    server.handshake("2025-11-25");
    let result = server.call("attack", json!({}));
    assert!(
        text(&result).contains(&format!(
            "it denied `{pyenv}/versions/1.0/bin/pysh` (Permission denied); add `execute = [\"{pyenv}/versions/1.0\"]`"
        )),
        "{result}"
    );
}
