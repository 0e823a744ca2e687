use super::*;

#[test]
fn a_shebang_names_its_interpreter_as_the_kernel_and_env_read_it() {
    let parse = |text: &str| parse_shebang(text.as_bytes());
    assert_eq!(
        parse("#!/bin/sh\necho"),
        Some(Interpreter::Path("/bin/sh".into()))
    );
    assert_eq!(
        parse("#! /usr/bin/python3 -u\n"),
        Some(Interpreter::Path("/usr/bin/python3".into()))
    );
    assert_eq!(
        parse("#!/usr/bin/env bash\nset -e\n"),
        Some(Interpreter::Env("bash".into()))
    );
    assert_eq!(
        parse("#!/usr/bin/env -S node --no-warnings\n"),
        Some(Interpreter::Env("node".into()))
    );
    assert_eq!(
        parse("#!/usr/bin/env -i LANG=C python3\n"),
        Some(Interpreter::Env("python3".into()))
    );
    assert_eq!(parse("\x7fELF\x02\x01"), None);
    assert_eq!(parse("echo no shebang\n"), None);
    assert_eq!(parse("#!\n"), None);
}

#[test]
fn a_denied_file_is_granted_by_its_install_or_by_itself() {
    let dir = tempfile::tempdir().expect("temp");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    for manager in ["pyenv", "rbenv"] {
        let base = root.join(manager);
        std::fs::create_dir_all(base.join("libexec")).expect("libexec");
        std::fs::write(base.join("libexec").join(manager), "").expect("manager");
        std::fs::create_dir_all(base.join("versions/3.1/bin")).expect("version");
        std::fs::write(base.join("versions/3.1/bin/tool"), "").expect("tool");
        assert_eq!(
            grant_for(&base.join("versions/3.1/bin/tool")),
            format!("execute = [\"{}/versions/3.1\"]", base.display())
        );
        assert_eq!(
            grant_for(&base.join("libexec").join(manager)),
            format!("execute = [\"{}/libexec\"]", base.display())
        );
    }
    let plain = root.join("opt/interp");
    std::fs::create_dir_all(root.join("opt")).expect("opt");
    std::fs::write(&plain, "").expect("interp");
    assert_eq!(
        grant_for(&plain),
        format!("execute = [\"{}\"]", plain.display())
    );
}

#[test]
fn a_chain_is_followed_once_and_the_system_is_never_granted() {
    let dir = tempfile::tempdir().expect("temp");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    // Two scripts that name each other: followed once each, then stopped.
    std::fs::write(root.join("a"), format!("#!{}/b\n", root.display())).expect("a");
    std::fs::write(root.join("b"), format!("#!{}/a\n", root.display())).expect("b");
    let launch = follow(&root.join("a"), &Context::default());
    assert_eq!(launch.chain, [root.join("a"), root.join("b")]);
    assert_eq!(launch.execute, [root.join("a"), root.join("b")]);
    // `#!/usr/bin/env sh`: env and sh are the system's, followed but not granted.
    std::fs::write(root.join("c"), "#!/usr/bin/env sh\n").expect("c");
    let launch = follow(
        &root.join("c"),
        &Context {
            path: Some("/usr/bin:/bin".into()),
            ..Context::default()
        },
    );
    assert_eq!(launch.execute, [root.join("c")]);
    assert!(launch.chain.len() >= 2, "{launch:?}");
    // An interpreter that is not there is a problem `check` reports.
    std::fs::write(root.join("d"), "#!/nowhere/sh\n").expect("d");
    let launch = follow(&root.join("d"), &Context::default());
    assert_eq!(
        launch.problems,
        ["its program starts through `/nowhere/sh`, which does not exist"]
    );
}
