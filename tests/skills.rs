//! Skills (`[[skills]]`, the `io.modelcontextprotocol/skills` extension): listed and got
//! with every file's digest and size, read back byte for byte, by raw JSON-RPC and by the
//! official TypeScript client's `SkillsClient` (which verifies each file) over stdio and
//! HTTP in both protocol eras; refused at load past the bounds, through a link or without a
//! proper `SKILL.md`; never read outside the folder; kept current by `--watch`; redacted.

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::harness::{BINARY, Server, Workspace, repo_root, run};
use crate::http_harness::HttpServer;

const SKILL: &str = "---\nname: howto\ndescription: How to use these tools\nlicense: MIT\n---\n# How to\nCall `echo` first.\n";

/// A manifest with one tool holding a secret (so it is redacted from skills) and one skill.
fn workspace(extra: &str) -> Workspace {
    let workspace = Workspace::new(&format!(
        r#"
[[tools]]
name = "echo"
title = "Echo"
description = "Says hello"
[tools.http]
url = "http://127.0.0.1:9/"
headers = {{ Authorization = "Bearer ${{env:SKILLS_TEST_TOKEN}}" }}

[[skills]]
path = "skills/howto"
{extra}"#
    ));
    let folder = workspace.path("skills/howto/refs/deep");
    std::fs::create_dir_all(&folder).expect("folders");
    std::fs::write(workspace.path("skills/howto/SKILL.md"), SKILL).expect("SKILL.md");
    std::fs::write(workspace.path("skills/howto/refs/notes.txt"), "notes\n").expect("notes");
    std::fs::write(folder.join("tone.bin"), [0u8, 159, 146, 150, 255]).expect("binary");
    std::fs::write(workspace.path("skills/howto/.cache"), "hidden").expect("dotfile");
    workspace
}

fn serve(workspace: &Workspace, extra: &[&str]) -> Server {
    let mut server = Server::start_with(
        &workspace.manifest(),
        extra,
        &[("SKILLS_TEST_TOKEN", "tok-3141592653")],
    );
    server.handshake("2025-11-25");
    server
}

/// The bytes a `resources/read` returned.
fn bytes_of(read: &Value) -> Vec<u8> {
    let contents = &read["result"]["contents"][0];
    contents["text"].as_str().map_or_else(
        || {
            base64::engine::general_purpose::STANDARD
                .decode(contents["blob"].as_str().expect("text or blob"))
                .expect("base64")
        },
        |text| text.as_bytes().to_vec(),
    )
}

fn digest(bytes: &[u8]) -> String {
    format!(
        "sha256:{}",
        mcp_serve::hex::lower(&sha2::Sha256::digest(bytes))
    )
}

#[test]
fn every_file_reads_back_as_its_digest_and_size_promise() {
    let workspace = workspace("");
    let mut server = serve(&workspace, &[]);
    let listed = server.request("skills/list", json!({}));
    let skills = listed["result"]["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 1, "{listed}");
    let entry = &skills[0];
    assert_eq!(entry["uri"], "skill://howto/SKILL.md");
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "howto", "description": "How to use these tools", "license": "MIT"})
    );
    let files = entry["resources"].as_array().expect("resources");
    let uris: Vec<&str> = files
        .iter()
        .map(|file| file["uri"].as_str().expect("uri"))
        .collect();
    // Every file once, the dotfile left out; SKILL.md first.
    assert_eq!(
        uris,
        [
            "skill://howto/SKILL.md",
            "skill://howto/refs/deep/tone.bin",
            "skill://howto/refs/notes.txt"
        ]
    );
    for file in files {
        let read = server.request("resources/read", json!({"uri": file["uri"]}));
        let bytes = bytes_of(&read);
        assert_eq!(file["size"], json!(bytes.len()), "{read}");
        assert_eq!(file["digest"], json!(digest(&bytes)), "{read}");
    }
    assert_eq!(
        bytes_of(&server.request(
            "resources/read",
            json!({"uri": "skill://howto/refs/deep/tone.bin"})
        )),
        [0u8, 159, 146, 150, 255]
    );
    // skills/get is the same entry; an unknown or non-SKILL.md URI is -32602.
    let got = server.request("skills/get", json!({"uri": "skill://howto/SKILL.md"}));
    assert_eq!(&got["result"]["skill"], entry);
    for uri in ["skill://nothing/SKILL.md", "skill://howto/refs/notes.txt"] {
        let refused = server.request("skills/get", json!({"uri": uri}));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    // The folder and a folder beneath it, direct children only.
    let root = server.request("resources/directory/read", json!({"uri": "skill://howto"}));
    assert_eq!(
        root["result"]["resources"],
        json!([
            {"uri": "skill://howto/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": SKILL.len()},
            {"uri": "skill://howto/refs", "name": "refs", "mimeType": "inode/directory"}
        ])
    );
    let refs = server.request(
        "resources/directory/read",
        json!({"uri": "skill://howto/refs"}),
    );
    let names: Vec<&str> = refs["result"]["resources"]
        .as_array()
        .expect("children")
        .iter()
        .map(|child| child["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["deep", "notes.txt"]);
    let file = server.request(
        "resources/directory/read",
        json!({"uri": "skill://howto/SKILL.md"}),
    );
    assert_eq!(file["error"]["code"], -32602, "{file}");
    // The SKILL.md is an ordinary resource too, described by its frontmatter.
    let resources = server.request("resources/list", json!({}));
    assert_eq!(
        resources["result"]["resources"][0],
        json!({"uri": "skill://howto/SKILL.md", "name": "howto", "description": "How to use these tools", "mimeType": "text/markdown", "size": SKILL.len()})
    );
}

#[test]
fn nothing_outside_the_skill_and_nothing_hidden_is_read() {
    let workspace = workspace("");
    std::fs::write(workspace.path("skills/secret.txt"), "outside the skill").expect("outside");
    let mut server = serve(&workspace, &[]);
    // The control: a listed file reads.
    let listed = server.request(
        "resources/read",
        json!({"uri": "skill://howto/refs/notes.txt"}),
    );
    assert_eq!(bytes_of(&listed), b"notes\n");
    for uri in [
        "skill://howto/../secret.txt",
        "skill://howto/refs/../../secret.txt",
        "skill://howto/%2e%2e/secret.txt",
        "skill://howto/.cache",
        "skill://howto/refs",
        "skill://howto//refs/notes.txt",
        "skill://howto/refs/notes.txt/",
        "skill://HOWTO/SKILL.md",
    ] {
        let read = server.request("resources/read", json!({"uri": uri}));
        assert!(read.get("error").is_some(), "{uri}: {read}");
        assert!(
            !read.to_string().contains("outside the skill"),
            "{uri}: {read}"
        );
        if uri != "skill://howto/refs" {
            let folder = server.request("resources/directory/read", json!({"uri": uri}));
            assert!(folder.get("error").is_some(), "{uri}: {folder}");
        }
    }
}

#[test]
fn a_secret_in_a_skill_is_redacted_before_it_is_digested() {
    let workspace = workspace("");
    std::fs::write(
        workspace.path("skills/howto/refs/notes.txt"),
        "the token is tok-3141592653\n",
    )
    .expect("notes");
    let mut server = serve(&workspace, &[]);
    let read = server.request(
        "resources/read",
        json!({"uri": "skill://howto/refs/notes.txt"}),
    );
    let bytes = bytes_of(&read);
    assert!(
        !String::from_utf8_lossy(&bytes).contains("tok-3141592653"),
        "{read}"
    );
    let entry = server.request("skills/get", json!({"uri": "skill://howto/SKILL.md"}));
    let notes = entry["result"]["skill"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|file| file["uri"] == "skill://howto/refs/notes.txt")
        .expect("notes")
        .clone();
    assert_eq!(notes["digest"], json!(digest(&bytes)));
    assert_eq!(notes["size"], json!(bytes.len()));
}

/// Something done to a good skill's folder that must fail its load.
type Spoil = fn(&Workspace);

/// `check` on the workspace: its exit code and what it printed.
#[test]
fn a_skill_past_the_bounds_through_a_link_or_without_its_frontmatter_is_refused_at_load() {
    // The control: the workspace as made loads.
    let (code, output) = workspace("").check();
    assert_eq!(code, 0, "{output}");
    let cases: [(&str, Spoil, &str); 10] = [
        (
            "a link",
            |w| symlink("/etc/passwd", w.path("skills/howto/refs/passwd")).expect("link"),
            "is a symbolic link",
        ),
        (
            "a linked folder",
            |w| symlink("/etc", w.path("skills/howto/etc")).expect("link"),
            "is a symbolic link",
        ),
        (
            "a FIFO",
            |w| {
                nix::unistd::mkfifo(&w.path("skills/howto/pipe"), nix::sys::stat::Mode::S_IRWXU)
                    .expect("fifo");
            },
            "neither a file nor a folder",
        ),
        (
            "513 files",
            |w| {
                for index in 0..512 {
                    std::fs::write(w.path(&format!("skills/howto/refs/deep/{index}.txt")), "x")
                        .expect("file");
                }
            },
            "more than 512 files",
        ),
        (
            "17 MiB",
            |w| {
                std::fs::write(w.path("skills/howto/big.bin"), vec![7u8; 17 << 20]).expect("big");
            },
            "more than 16777216 bytes",
        ),
        (
            "no SKILL.md",
            |w| std::fs::remove_file(w.path("skills/howto/SKILL.md")).expect("rm"),
            "no `SKILL.md`",
        ),
        (
            "no frontmatter",
            |w| std::fs::write(w.path("skills/howto/SKILL.md"), "# How to\n").expect("md"),
            "frontmatter",
        ),
        (
            "another name",
            |w| {
                std::fs::write(
                    w.path("skills/howto/SKILL.md"),
                    "---\nname: other\ndescription: d\n---\n",
                )
                .expect("md");
            },
            "not its folder's name",
        ),
        (
            "a bad name",
            |w| {
                std::fs::write(
                    w.path("skills/howto/SKILL.md"),
                    "---\nname: How-To\ndescription: d\n---\n",
                )
                .expect("md");
            },
            "is not a skill name",
        ),
        (
            "a reserved key",
            |w| {
                std::fs::write(
                w.path("skills/howto/SKILL.md"),
                "---\nname: howto\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: 1\n---\n",
            )
            .expect("md");
            },
            "reserved",
        ),
    ];
    for (case, spoil, said) in cases {
        let workspace = workspace("");
        spoil(&workspace);
        let (code, output) = workspace.check();
        assert_ne!(code, 0, "{case}: {output}");
        assert!(output.contains("skill `skills/howto`"), "{case}: {output}");
        assert!(output.contains(said), "{case}: {output}");
    }
    // The folder itself reached through a link is refused too.
    let linked = workspace("");
    std::fs::rename(linked.path("skills/howto"), linked.path("real")).expect("move");
    std::fs::create_dir_all(linked.path("skills")).expect("skills");
    symlink(linked.path("real"), linked.path("skills/howto")).expect("link");
    let (code, output) = linked.check();
    assert_ne!(code, 0, "{output}");
}

#[test]
fn watch_serves_a_changed_skill_and_keeps_the_last_good_one_when_a_link_appears() {
    let workspace = workspace("");
    let mut server = serve(&workspace, &["--watch"]);
    let uri = json!({"uri": "skill://howto/refs/notes.txt"});
    assert_eq!(
        bytes_of(&server.request("resources/read", uri.clone())),
        b"notes\n"
    );
    std::fs::write(
        workspace.path("skills/howto/refs/notes.txt"),
        "changed notes\n",
    )
    .expect("write");
    let reads = |server: &mut Server, want: &[u8]| {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let bytes = bytes_of(&server.request("resources/read", uri.clone()));
            if bytes == want || Instant::now() > deadline {
                return bytes;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    assert_eq!(reads(&mut server, b"changed notes\n"), b"changed notes\n");
    let entry = server.request("skills/get", json!({"uri": "skill://howto/SKILL.md"}));
    assert!(
        entry.to_string().contains(&digest(b"changed notes\n")),
        "{entry}"
    );
    // A file swapped for a link to a file outside: the reload fails, the last good skill
    // stays, and the link's target is never served.
    std::fs::write(workspace.path("outside.txt"), "outside the skill").expect("outside");
    std::fs::remove_file(workspace.path("skills/howto/refs/notes.txt")).expect("rm");
    symlink(
        workspace.path("outside.txt"),
        workspace.path("skills/howto/refs/notes.txt"),
    )
    .expect("link");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(reads(&mut server, b"changed notes\n"), b"changed notes\n");
    assert!(
        server.stderr().contains("is a symbolic link"),
        "{}",
        server.stderr()
    );
}

/// Drives `tests/interop/skills_client.mjs` (the official TypeScript `SkillsClient`).
fn official(mode: &str, transport: &[&str]) -> Value {
    crate::interop::node_report("skills_client.mjs", &[&[mode], transport].concat())
}

#[test]
fn the_official_typescript_client_verifies_every_file_over_stdio_and_http_in_both_eras() {
    let manifest = repo_root().join("tools.example.toml");
    let stdio = |mode| official(mode, &["stdio", BINARY, manifest.to_str().expect("path")]);
    let legacy_http = HttpServer::start(&manifest, &["--sessions"]);
    let modern_http = HttpServer::start(&manifest, &[]);
    for (how, report, version) in [
        ("stdio legacy", stdio("legacy"), "2025-11-25"),
        ("stdio auto", stdio("auto"), "2026-07-28"),
        (
            "http legacy",
            official("legacy", &["http", &legacy_http.url]),
            "2025-11-25",
        ),
        (
            "http auto",
            official("auto", &["http", &modern_http.url]),
            "2026-07-28",
        ),
    ] {
        assert_eq!(report["errors"], json!([]), "{how}: {report}");
        assert_eq!(report["protocolVersion"], version, "{how}: {report}");
        assert_eq!(report["supported"], true, "{how}");
        assert_eq!(report["directoryRead"], true, "{how}");
        let skill = &report["skills"][0];
        assert_eq!(skill["uri"], "skill://catalog/SKILL.md", "{how}: {report}");
        let files = skill["files"].as_array().expect("files");
        assert!(files.len() >= 2, "{how}: {report}");
        assert!(
            files.iter().all(|file| file["verified"] == true),
            "{how}: {report}"
        );
        assert_eq!(skill["gotSame"], true, "{how}");
        assert!(
            skill["folder"]
                .as_array()
                .expect("folder")
                .iter()
                .any(|child| child["mimeType"] == "inode/directory"),
            "{how}: {report}"
        );
        assert_eq!(report["unlisted"], "SkillVerificationError", "{how}");
    }
}

#[test]
fn names_that_look_alike_or_like_dots_are_distinct_uris_each_read_as_announced() {
    let workspace = workspace("");
    for name in ["aA", "a%41", "a b.txt", "é.md"] {
        std::fs::write(workspace.path(&format!("skills/howto/{name}")), name).expect("file");
    }
    std::fs::create_dir(workspace.path("skills/howto/%2e%2e")).expect("folder");
    std::fs::write(workspace.path("skills/howto/%2e%2e/x"), "inside").expect("file");
    let mut server = serve(&workspace, &[]);
    let listed = server.request("skills/list", json!({}));
    let files = listed["result"]["skills"][0]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    let uris: Vec<&str> = files
        .iter()
        .map(|file| file["uri"].as_str().expect("uri"))
        .collect();
    for uri in [
        "skill://howto/aA",
        "skill://howto/a%2541",
        "skill://howto/a%20b.txt",
        "skill://howto/%C3%A9.md",
        "skill://howto/%252e%252e/x",
    ] {
        assert!(uris.contains(&uri), "{uri} in {uris:?}");
    }
    for file in &files {
        let read = server.request("resources/read", json!({"uri": file["uri"]}));
        let bytes = bytes_of(&read);
        assert_eq!(file["digest"], json!(digest(&bytes)), "{read}");
    }
    // The names as written on disk are no URIs of the skill.
    for uri in [
        "skill://howto/a%41",
        "skill://howto/%2e%2e/x",
        "skill://howto/a b.txt",
    ] {
        let read = server.request("resources/read", json!({"uri": uri}));
        assert!(read.get("error").is_some(), "{uri}: {read}");
    }
    let folder = server.request(
        "resources/directory/read",
        json!({"uri": "skill://howto/%252e%252e"}),
    );
    assert_eq!(
        folder["result"]["resources"][0]["uri"], "skill://howto/%252e%252e/x",
        "{folder}"
    );
}

#[test]
fn a_name_that_is_not_utf8_or_too_many_folders_fail_the_load() {
    use std::os::unix::ffi::OsStrExt as _;
    let workspace = workspace("");
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.txt");
    std::fs::write(workspace.path("skills/howto").join(name), "x").expect("file");
    let (code, output) = workspace.check();
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("is not a UTF-8 name"), "{output}");
    let workspace = workspace_with_folders(513);
    let (code, output) = workspace.check();
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("more than 512 folders"), "{output}");
    // The control: 500 folders load.
    let (code, output) = workspace_with_folders(500).check();
    assert_eq!(code, 0, "{output}");
}

fn workspace_with_folders(count: usize) -> Workspace {
    let workspace = workspace("");
    for index in 0..count {
        std::fs::create_dir(workspace.path(&format!("skills/howto/refs/deep/f{index}")))
            .expect("folder");
    }
    workspace
}

#[test]
fn the_skill_command_drafts_a_skill_that_loads_and_keeps_an_edited_one() {
    let workspace = workspace("");
    let manifest = workspace.manifest();
    let config = manifest.to_str().expect("path");
    let args = [
        "skill",
        "--config",
        config,
        "--name",
        "echo-howto",
        "--output",
        "drafts",
    ];
    let (code, _, stderr) = run(&args, workspace.dir.path());
    assert_eq!(code, 0, "{stderr}");
    let written = workspace.path("drafts/echo-howto/SKILL.md");
    let draft = std::fs::read_to_string(&written).expect("written");
    assert!(
        draft.starts_with("---\nname: echo-howto\ndescription: "),
        "{draft}"
    );
    assert!(draft.contains("### `echo`: Echo"), "{draft}");
    // What it wrote is a skill the server loads.
    let mut manifest_text = std::fs::read_to_string(&manifest).expect("manifest");
    manifest_text.push_str("\n[[skills]]\npath = \"drafts/echo-howto\"\n");
    std::fs::write(&manifest, manifest_text).expect("manifest");
    let (code, output) = workspace.check();
    assert_eq!(code, 0, "{output}");
    // An edited draft is kept unless --force.
    std::fs::write(
        &written,
        "---\nname: echo-howto\ndescription: edited\n---\n",
    )
    .expect("edit");
    let (code, _, stderr) = run(&args, workspace.dir.path());
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
    assert!(
        std::fs::read_to_string(&written)
            .expect("kept")
            .contains("edited")
    );
    let (code, _, stderr) = run(&[&args[..], &["--force"]].concat(), workspace.dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !std::fs::read_to_string(&written)
            .expect("rewritten")
            .contains("edited")
    );
    // A name that is no skill name is refused before anything is written.
    let (code, _, stderr) = run(
        &[
            "skill", "--config", config, "--name", "Bad Name", "--output", "drafts",
        ],
        workspace.dir.path(),
    );
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("is not a skill name"), "{stderr}");
    assert!(!workspace.path("drafts/Bad Name").exists());
}
