//! `[[resources]]` and `[[resource-templates]]` through the real server: declared contents,
//! files read at each read, templates filled, and a hostile corpus of URIs that try to
//! leave a file template's folder.

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, modern_meta};

const MANIFEST: &str = r#"
[[resources]]
uri = "notes://readme"
name = "readme"
title = "Read me"
file = "notes/readme.md"

[[resources]]
uri = "data://answer"
name = "answer"
mime-type = "application/json"
text = '{"answer": 42}'

[[resource-templates]]
uri-template = "notes://pages/{page}"
name = "page"
description = "A page of the notes"
file = "notes/{page}"
mime-type = "text/markdown"
[resource-templates.variables.page]
complete = ["readme.md", "todo.md"]

[[resource-templates]]
uri-template = "greeting://{lang}/{who}"
name = "greeting"
text = "[{lang}] hello, {who}"
[resource-templates.variables.lang]
enum = ["en", "fr"]
"#;

fn workspace() -> Workspace {
    let workspace = Workspace::new(MANIFEST);
    std::fs::create_dir(workspace.path("notes")).expect("notes");
    std::fs::write(workspace.path("notes/readme.md"), "# Notes\n").expect("readme");
    std::fs::write(workspace.path("notes/todo.md"), "- buy milk\n").expect("todo");
    std::fs::write(workspace.path("secret.txt"), "the secret\n").expect("secret");
    std::os::unix::fs::symlink(
        workspace.path("secret.txt"),
        workspace.path("notes/leak.md"),
    )
    .expect("symlink");
    workspace
}

fn read(server: &mut Server, uri: &str) -> Value {
    server.request("resources/read", json!({"uri": uri}))
}

#[test]
fn declared_resources_and_templates_are_listed_and_read() {
    let workspace = workspace();
    let mut server = workspace.serve_legacy();
    let listed = server.request("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|resource| resource["uri"].as_str())
        .collect();
    assert_eq!(uris, ["notes://readme", "data://answer"]);
    assert_eq!(
        listed["result"]["resources"][0]["mimeType"],
        json!("text/markdown")
    );
    let templates = server.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0],
        json!({"uriTemplate": "notes://pages/{page}", "name": "page", "description": "A page of the notes", "mimeType": "text/markdown"})
    );

    let readme = read(&mut server, "notes://readme");
    assert_eq!(
        readme["result"]["contents"][0]["text"],
        json!("# Notes\n"),
        "{readme}"
    );
    // A file resource is read again at each read.
    std::fs::write(workspace.path("notes/readme.md"), "# Notes, edited\n").expect("edit");
    let readme = read(&mut server, "notes://readme");
    assert_eq!(
        readme["result"]["contents"][0]["text"],
        json!("# Notes, edited\n")
    );
    let answer = read(&mut server, "data://answer");
    assert_eq!(
        answer["result"]["contents"][0],
        json!({"uri": "data://answer", "mimeType": "application/json", "text": "{\"answer\": 42}"})
    );
    let page = read(&mut server, "notes://pages/todo.md");
    assert_eq!(page["result"]["contents"][0]["text"], json!("- buy milk\n"));
    let greeting = read(&mut server, "greeting://fr/Ada%20Lovelace");
    assert_eq!(
        greeting["result"]["contents"][0]["text"],
        json!("[fr] hello, Ada Lovelace")
    );
    let wrong = read(&mut server, "greeting://de/Ada");
    assert_eq!(wrong["error"]["code"], json!(-32002), "{wrong}");

    let completion = server.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "notes://pages/{page}"}, "argument": {"name": "page", "value": "T"}}),
    );
    assert_eq!(
        completion["result"]["completion"]["values"],
        json!(["todo.md"])
    );

    // The 2026 era says "not found" with -32602 (SEP-2164).
    let modern = server.request(
        "resources/read",
        json!({"uri": "notes://pages/missing.md", "_meta": modern_meta()}),
    );
    assert_eq!(modern["error"]["code"], json!(-32602), "{modern}");
}

#[test]
fn no_template_value_reads_outside_its_folder() {
    let workspace = workspace();
    let mut server = workspace.serve_legacy();
    let dir = workspace.dir.path().display().to_string();
    let attacks = [
        "notes://pages/..%2Fsecret.txt".to_owned(),
        "notes://pages/..%2fsecret.txt".to_owned(),
        "notes://pages/%2E%2E%2Fsecret.txt".to_owned(),
        "notes://pages/..".to_owned(),
        "notes://pages/.".to_owned(),
        "notes://pages/leak.md".to_owned(),
        format!("notes://pages/{}", dir.replace('/', "%2F")),
        format!(
            "notes://pages/%2F{}%2Fsecret.txt",
            dir.trim_start_matches('/').replace('/', "%2F")
        ),
        "notes://pages/readme.md%00.txt".to_owned(),
        "notes://pages/..\\secret.txt".to_owned(),
        "notes://pages/../secret.txt".to_owned(),
        "notes://pages/".to_owned(),
        format!("notes://pages/{}", "a".repeat(300)),
    ];
    for uri in &attacks {
        let response = read(&mut server, uri);
        assert!(
            response["error"]["message"]
                .as_str()
                .is_some_and(|message| message.starts_with("no resource")),
            "{uri}: {response}"
        );
        assert!(
            !response.to_string().contains("the secret"),
            "{uri}: {response}"
        );
    }
    eprintln!(
        "resource templates: {} hostile URIs, none read outside the folder",
        attacks.len()
    );
}

#[test]
fn broken_resource_tables_are_reported() {
    let workspace = Workspace::new(
        r#"
[[resources]]
uri = "no-scheme"
name = "a"
text = "x"

[[resources]]
uri = "x://b"
name = "b"
text = "x"
blob = "eA=="

[[resources]]
uri = "x://c"
name = "c"
file = "missing.txt"

[[resource-templates]]
uri-template = "x://{a}{b}"
name = "d"
text = "x"

[[resource-templates]]
uri-template = "x://f/{p}"
name = "f"
file = "{p}"

[[resource-templates]]
uri-template = "x://{a}"
name = "e"
text = "{b}"
[resource-templates.variables.z]
complete = ["1"]
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    for expected in [
        "`no-scheme` is not a URI (it has no scheme)",
        "a resource has one of `text`, `blob` (base64) and `file`",
        "could not read",
        "two variables need literal text between them",
        "template refers to undeclared argument `b`",
        "`z` is not a variable of `x://{a}`",
        "a file template cannot serve the manifest's folder",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}

/// Waits for a message that `matches`, failing after ten seconds.
fn wait_for(server: &mut Server, matches: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let message = server
            .next_message(deadline)
            .expect("the awaited message arrives in time");
        if matches(&message) {
            return message;
        }
    }
}

#[test]
fn subscribers_hear_when_a_file_resource_changes_and_stop_after_unsubscribing() {
    let workspace = workspace();
    let mut server = Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    let init = server.request(
        "initialize",
        crate::harness::initialize_params("2025-11-25"),
    );
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"],
        json!(true),
        "{init}"
    );
    server.notify("notifications/initialized", None);
    let subscribed = server.request("resources/subscribe", json!({"uri": "notes://readme"}));
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    let unknown = server.request("resources/subscribe", json!({"uri": "notes://nope"}));
    assert_eq!(unknown["error"]["code"], json!(-32002), "{unknown}");
    // Text never changes; template URIs are not watched.
    for uri in ["data://answer", "notes://pages/todo.md"] {
        let refused = server.request("resources/subscribe", json!({"uri": uri}));
        assert!(refused.get("error").is_some(), "{uri}: {refused}");
    }

    std::fs::write(workspace.path("notes/readme.md"), "# Notes, changed\n").expect("edit");
    let updated = wait_for(&mut server, |message| {
        message["method"] == json!("notifications/resources/updated")
    });
    assert_eq!(updated["params"]["uri"], json!("notes://readme"));

    let done = server.request("resources/unsubscribe", json!({"uri": "notes://readme"}));
    assert_eq!(done["result"], json!({}));
    std::fs::write(
        workspace.path("notes/readme.md"),
        "# Notes, changed again\n",
    )
    .expect("edit");
    // A ping answered after two watch rounds, with no update before it.
    std::thread::sleep(std::time::Duration::from_millis(800));
    let id = server.start_request("ping", json!({}));
    let reply = wait_for(&mut server, |message| {
        message["method"] == json!("notifications/resources/updated") || message["id"] == json!(id)
    });
    assert_eq!(
        reply["id"],
        json!(id),
        "no update after unsubscribing: {reply}"
    );
}

#[test]
fn the_example_serves_its_catalog_and_product_media() {
    let mut server = Server::initialized(
        &crate::harness::repo_root().join("tools.example.toml"),
        "2025-11-25",
    );
    let catalog = read(&mut server, "catalog://catalog.tsv");
    let contents = &catalog["result"]["contents"][0];
    assert_eq!(
        contents["mimeType"],
        json!("text/tab-separated-values"),
        "{catalog}"
    );
    assert!(
        contents["text"]
            .as_str()
            .is_some_and(|text| text.contains("Mug rack")),
        "{catalog}"
    );
    let picture = read(&mut server, "catalog://products/mug-rack.png");
    let contents = &picture["result"]["contents"][0];
    assert_eq!(contents["mimeType"], json!("image/png"), "{picture}");
    assert!(
        contents["blob"]
            .as_str()
            .is_some_and(|blob| blob.starts_with("iVBOR")),
        "{picture}"
    );
    for escape in [
        "catalog://products/..%2Fcatalog.sh",
        "catalog://products/.gitignore",
    ] {
        let response = read(&mut server, escape);
        assert_eq!(
            response["error"]["code"],
            json!(-32002),
            "{escape}: {response}"
        );
    }
}

/// Reads each URI in `uris`, up to `window` requests in flight at once (answers may come in
/// any order); the responses in request order.
fn read_many(server: &mut Server, uris: &[String], window: usize) -> Vec<Value> {
    let mut responses = Vec::with_capacity(uris.len());
    for chunk in uris.chunks(window.max(1)) {
        let ids: Vec<i64> = chunk
            .iter()
            .map(|uri| server.start_request("resources/read", json!({"uri": uri})))
            .collect();
        let mut answers = std::collections::HashMap::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while answers.len() < ids.len() {
            let message = server
                .next_message(deadline)
                .expect("every read is answered");
            if let Some(id) = message["id"].as_i64().filter(|id| ids.contains(id)) {
                answers.insert(id, message);
            }
        }
        responses.extend(ids.iter().filter_map(|id| answers.remove(id)));
    }
    responses
}

const PLANTED: &str = r#"
# A tool that writes where the declared files live, as a sandboxed tool with
# `write = ["./notes", "./deep"]` may: it swaps a file, then a folder, for a link out.
[[tools]]
name = "plant"
[tools.command]
script = 'ln -sfn ../secret.txt notes/readme.md && rm -r deep/inner && ln -s ../outside deep/inner && echo planted'

[[resources]]
uri = "notes://readme"
name = "readme"
file = "notes/readme.md"

[[resources]]
uri = "deep://readme"
name = "deep"
file = "deep/inner/readme.md"

[[resources]]
uri = "notes://todo"
name = "todo"
file = "notes/todo.md"
"#;

#[test]
fn a_declared_file_swapped_for_a_symlink_is_never_read_through_it() {
    let workspace = Workspace::new(PLANTED);
    for folder in ["notes", "deep/inner", "outside"] {
        std::fs::create_dir_all(workspace.path(folder)).expect("folder");
    }
    std::fs::write(workspace.path("notes/readme.md"), "# Notes\n").expect("readme");
    std::fs::write(workspace.path("notes/todo.md"), "- buy milk\n").expect("todo");
    std::fs::write(workspace.path("deep/inner/readme.md"), "# Deep\n").expect("deep");
    std::fs::write(workspace.path("secret.txt"), "the secret\n").expect("secret");
    std::fs::write(workspace.path("outside/readme.md"), "the outside secret\n").expect("out");
    let mut server = workspace.serve_legacy();
    for (uri, expected) in [
        ("notes://readme", "# Notes\n"),
        ("deep://readme", "# Deep\n"),
    ] {
        let before = read(&mut server, uri);
        assert_eq!(
            before["result"]["contents"][0]["text"],
            json!(expected),
            "{before}"
        );
    }

    let planted = server.call("plant", json!({}));
    assert_eq!(crate::harness::text(&planted), "planted", "{planted}");
    // The control: through the links, the secrets are there to be read.
    assert_eq!(
        std::fs::read_to_string(workspace.path("notes/readme.md")).expect("follows"),
        "the secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.path("deep/inner/readme.md")).expect("follows"),
        "the outside secret\n"
    );
    for uri in ["notes://readme", "deep://readme"] {
        let response = read(&mut server, uri);
        assert!(
            !response.to_string().contains("secret"),
            "{uri} was read through the link: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("symbolic link"),
            "{uri}: a clear resource error: {response}"
        );
    }
    // The file beside them that nobody swapped still reads.
    let todo = read(&mut server, "notes://todo");
    assert_eq!(
        todo["result"]["contents"][0]["text"],
        json!("- buy milk\n"),
        "{todo}"
    );

    // Nor does a server started on the planted folder follow them.
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`notes/readme.md` is a symbolic link")
            && stderr.contains("`deep/inner/readme.md` is a symbolic link"),
        "{stderr}"
    );
    assert!(stderr.contains("/tools.toml:12:8\n"), "{stderr}");
}

#[test]
fn a_template_read_racing_a_symlink_swap_never_serves_the_outside_file() {
    const READS: usize = 6_000;
    let workspace = workspace();
    std::fs::write(workspace.path("notes/race.md"), "public\n").expect("race");
    std::os::unix::fs::symlink(workspace.path("secret.txt"), workspace.path("notes/.other"))
        .expect("link");
    let mut server = workspace.serve_legacy();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = std::sync::Arc::clone(&stop);
        let notes = workspace.path("notes");
        std::thread::spawn(move || {
            // `race.md` and `.other` trade places in one step (`RENAME_EXCHANGE`): one is the
            // file, the other a link to the secret outside the folder.
            let mut swaps = 0_u64;
            // Bounded: a few million swaps at most, however slow the reads are.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && swaps < 20_000_000 {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    notes.join(".other"),
                    rustix::fs::CWD,
                    notes.join("race.md"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("swap");
                swaps += 1;
            }
            swaps
        })
    };
    let uris = vec!["notes://pages/race.md".to_owned(); READS];
    let (mut responses, mut followed, mut controls) = (Vec::with_capacity(READS), 0, 0);
    for chunk in uris.chunks(64) {
        responses.extend(read_many(&mut server, chunk, 64));
        // The control, spread over the same time: a reader that follows links gets the
        // secret through the same swap.
        for _ in 0..10 {
            controls += 1;
            if std::fs::read_to_string(workspace.path("notes/race.md"))
                .is_ok_and(|text| text.contains("the secret"))
            {
                followed += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = writer.join().expect("writer");
    let leaked = responses
        .iter()
        .filter(|response| response.to_string().contains("the secret"))
        .count();
    let public = responses
        .iter()
        .filter(|response| response["result"]["contents"][0]["text"] == json!("public\n"))
        .count();
    let refused = responses
        .iter()
        .filter(|response| response.get("error").is_some())
        .count();
    eprintln!(
        "template race: {READS} reads over {swaps} swaps: {public} served the file, {refused} refused, {leaked} leaked; {followed} of {controls} reads that follow links got the secret"
    );
    assert_eq!(leaked, 0, "reads served the file outside the folder");
    assert_eq!(public + refused, READS);
    assert!(public > 0 && refused > 0, "the swap was seen both ways");
    assert!(
        followed > 0,
        "the race is real: a reader that follows links leaks"
    );
}

/// `check`'s exit code and stderr for a manifest with one file template of `file`.
fn check_template(workspace: &Workspace, file: &str) -> (i32, String) {
    std::fs::write(
        workspace.manifest(),
        format!(
            "[[tools]]\nname = \"api\"\n[tools.http]\nurl = \"https://api.example.com/v1\"\nheaders = {{ Authorization = \"Bearer ${{file:secrets/token}}\" }}\n\n[[resource-templates]]\nuri-template = \"x://{{a}}/{{b}}\"\nname = \"t\"\nfile = '{file}'\n"
        ),
    )
    .expect("manifest");
    let (code, stderr) = workspace.check();
    (code, stderr)
}

#[test]
fn a_file_template_never_serves_the_root_the_manifest_folder_or_its_secrets() {
    let workspace = Workspace::new("");
    std::fs::create_dir_all(workspace.path("notes/sub")).expect("notes");
    std::fs::create_dir(workspace.path("secrets")).expect("secrets");
    std::fs::write(workspace.path("secrets/token"), "s3cr3t\n").expect("token");
    std::os::unix::fs::symlink(workspace.dir.path(), workspace.path("notes/home")).expect("link");
    std::os::unix::fs::symlink(workspace.path("notes"), workspace.path("notes-link"))
        .expect("link");
    let here = workspace.dir.path().display().to_string();
    let parent = workspace
        .dir
        .path()
        .parent()
        .expect("parent")
        .display()
        .to_string();
    let refused = [
        "///{a}/{b}".to_owned(),
        "//{a}/{b}".to_owned(),
        "/./{a}/{b}".to_owned(),
        "/{a}/{b}".to_owned(),
        "./{a}/{b}".to_owned(),
        ".//./{a}/{b}".to_owned(),
        format!("{here}/{{a}}/{{b}}"),
        format!("{here}//{{a}}/{{b}}"),
        format!("{here}/./{{a}}/{{b}}"),
        format!("{here}///{{a}}/{{b}}"),
        format!("{parent}/{{a}}/{{b}}"),
        "notes/home/{a}/{b}".to_owned(),
        "secrets/{a}/{b}".to_owned(),
        "./secrets//{a}/{b}".to_owned(),
        format!("{here}/secrets/{{a}}/{{b}}"),
        "notes-link/{a}/{b}".to_owned(),
    ];
    for file in &refused {
        let (code, stderr) = check_template(&workspace, file);
        assert_eq!(code, 2, "`{file}` loaded: {stderr}");
        assert!(
            stderr.contains("a file template cannot serve")
                || stderr.contains("is a symbolic link"),
            "`{file}`: {stderr}"
        );
        assert!(stderr.contains("/tools.toml:10:8\n"), "`{file}`: {stderr}");
    }
    // The control: a folder of its own, however written, loads.
    let allowed = [
        "notes/{a}/{b}".to_owned(),
        "./notes/{a}/{b}".to_owned(),
        "notes//{a}/{b}".to_owned(),
        "notes/./sub/{a}/{b}".to_owned(),
        format!("{here}/notes/{{a}}/{{b}}"),
        format!("{here}//notes///{{a}}/{{b}}"),
    ];
    for file in &allowed {
        let (code, stderr) = check_template(&workspace, file);
        assert_eq!(code, 0, "`{file}`: {stderr}");
    }
    eprintln!(
        "template folders: {} spellings refused, {} allowed",
        refused.len(),
        allowed.len()
    );
}

const JSON_TEMPLATES: &str = r#"
[[resource-templates]]
uri-template = "j://{v}"
name = "j"
mime-type = "application/json"
text = '{{"v": "{v}", "admin": false}}'

[[resource-templates]]
uri-template = "ld://{v}"
name = "ld"
mime-type = "application/ld+json; charset=utf-8"
text = '{{"@id": "x:{v}", "admin": false}}'

[[resource-templates]]
uri-template = "plain://{v}"
name = "plain"
text = '{{"v": "{v}", "admin": false}}'
"#;

#[test]
fn json_text_templates_encode_each_value_as_json_string_text() {
    let workspace = Workspace::new(JSON_TEMPLATES);
    let mut server = workspace.serve_legacy();
    let hostile = r#"a", "admin": true, "x": ""#;
    let encoded = "a%22%2C%20%22admin%22%3A%20true%2C%20%22x%22%3A%20%22";
    for (uri, key, prefix) in [("j://", "v", ""), ("ld://", "@id", "x:")] {
        let response = read(&mut server, &format!("{uri}{encoded}"));
        let text = response["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{response}"));
        let document: Value = serde_json::from_str(text).expect("still JSON");
        assert_eq!(
            document,
            json!({key: format!("{prefix}{hostile}"), "admin": false}),
            "{uri}: {text}"
        );
    }
    // The control: the same value in a text/plain template arrives as it was sent.
    let response = read(&mut server, &format!("plain://{encoded}"));
    assert_eq!(
        response["result"]["contents"][0]["text"],
        json!(format!(r#"{{"v": "{hostile}", "admin": false}}"#)),
        "{response}"
    );
}

#[test]
fn a_json_text_template_with_a_placeholder_outside_a_string_does_not_load() {
    let workspace = Workspace::new(
        r#"
[[resource-templates]]
uri-template = "n://{n}"
name = "n"
mime-type = "application/json"
text = '{{"n": {n}}}'

[[resource-templates]]
uri-template = "b://{n}"
name = "b"
mime-type = "application/vnd.api+json"
text = '{{"n": "{n}"'
"#,
    );
    let (code, stderr) = workspace.check();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr
            .matches("a JSON text template is JSON with each placeholder inside a string")
            .count(),
        2,
        "{stderr}"
    );
}
