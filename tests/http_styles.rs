//! The HTTP backend's newer sinks, attacked: query styles (`form` unexploded,
//! `spaceDelimited`, `pipeDelimited`, `deepObject`) and `allow-reserved` values never add a
//! parameter or a path segment the manifest did not declare; a multipart body's values stay
//! inside their parts, its file parts read only inside the folder the tool declares, and
//! no name can add a header. Each test prints what it tried; the controls show each attack
//! works where the guard is not.

use std::cell::Cell;
use std::path::Path;

use mcp_serve::backend::Backend;
use mcp_serve::backend::http::multipart::MultipartError;
use mcp_serve::backend::http::{HttpBackend, RequestError};
use mcp_serve::registry::Registry;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// What means something to a URL, a query, a header or a multipart body.
const HOSTILE: &[char] = &[
    '&', '=', '#', '?', '/', '+', '%', ' ', ',', '|', '[', ']', ';', ':', '@', '!', '$', '\'', '"',
    '\\', '\r', '\n', '-', '.', 'a', 'Z', '0', 'é', '{', '}',
];

fn hostile(max: usize) -> BoxedStrategy<String> {
    prop::collection::vec(prop::sample::select(HOSTILE), 0..max)
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

fn cases(count: u32) -> Config {
    Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    }
}

fn load_in(manifest: &str, dir: &Path) -> Result<Registry, String> {
    mcp_serve::manifest::parse(manifest, "tools.toml", dir).map_err(|error| error.to_string())
}

fn http(registry: &Registry) -> &HttpBackend {
    match &registry.get("t").expect("tool `t`").backend {
        Backend::Http(http) => http,
        _ => panic!("an HTTP tool"),
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// A query value: a string, a list of strings, or an object of strings (nested for
/// `deepObject`).
fn query_value() -> impl Strategy<Value = Value> {
    let leaf = hostile(6).prop_map(Value::String).boxed();
    prop_oneof![
        leaf.clone(),
        prop::collection::vec(leaf.clone(), 0..4).prop_map(Value::Array),
        prop::collection::vec((hostile(4), leaf.clone()), 0..4)
            .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        prop::collection::vec(
            (
                hostile(4),
                prop::collection::vec((hostile(3), leaf), 0..3)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect()))
            ),
            0..3
        )
        .prop_map(|fields| Value::Object(fields.into_iter().collect())),
    ]
}

const STYLES: [(&str, bool); 5] = [
    ("form", true),
    ("form", false),
    ("spaceDelimited", false),
    ("pipeDelimited", false),
    ("deepObject", true),
];

/// The pairs OpenAPI's style table says the value makes, written from the table, or `None`
/// where mcp-serve must refuse it (an item holding its delimiter, a field holding a bracket).
fn expected_pairs(style: &str, explode: bool, value: &Value) -> Option<Vec<(String, String)>> {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let delimiter = match (style, explode) {
        ("form", false) => Some(','),
        ("spaceDelimited", _) => Some(' '),
        ("pipeDelimited", _) => Some('|'),
        _ => None,
    };
    match (value, delimiter) {
        (Value::Array(_) | Value::Object(_), Some(delimiter)) => {
            let items: Vec<String> = match value {
                Value::Array(items) => items.iter().map(text).collect(),
                Value::Object(fields) => fields
                    .iter()
                    .flat_map(|(key, item)| [key.clone(), text(item)])
                    .collect(),
                _ => Vec::new(),
            };
            if items.iter().any(|item| item.contains(delimiter)) {
                return None;
            }
            if items.is_empty() {
                return Some(Vec::new());
            }
            Some(vec![("v".to_owned(), items.join(&delimiter.to_string()))])
        }
        (Value::Array(items), None) if style == "form" => Some(
            items
                .iter()
                .map(|item| ("v".to_owned(), text(item)))
                .collect(),
        ),
        (Value::Object(_) | Value::Array(_), None) if style == "deepObject" => {
            fn flatten(key: &str, value: &Value, out: &mut Vec<(String, String)>) -> bool {
                match value {
                    Value::Object(fields) => fields.iter().all(|(field, item)| {
                        !field.is_empty()
                            && !field.contains(['[', ']'])
                            && flatten(&format!("{key}[{field}]"), item, out)
                    }),
                    Value::Array(items) => items
                        .iter()
                        .all(|item| flatten(&format!("{key}[]"), item, out)),
                    Value::String(text) => {
                        out.push((key.to_owned(), text.clone()));
                        true
                    }
                    other => {
                        out.push((key.to_owned(), other.to_string()));
                        true
                    }
                }
            }
            let mut out = Vec::new();
            flatten("v", value, &mut out).then_some(out)
        }
        (value, _) => Some(vec![("v".to_owned(), text(value))]),
    }
}

#[test]
fn query_styles_keep_every_value_inside_its_parameter() {
    let mut runner = TestRunner::new(cases(1500));
    let (tried, refused) = (Cell::new(0_u32), Cell::new(0_u32));
    runner
        .run(
            &(0..STYLES.len(), any::<bool>(), query_value()),
            |(style, reserved, value)| {
                let (style, explode) = STYLES[style];
                let manifest = format!(
                    r#"
[[tools]]
name = "t"
input-schema = '{{"type": "object", "properties": {{"v": {{}}}}}}'
[tools.http]
url = "http://127.0.0.1:8080/x?first=0"
allow-reserved = {reserved_list}
[tools.http.query]
v = {{ value = "{{v}}", style = "{style}", explode = {explode} }}
fixed = "1"
"#,
                    reserved_list = if reserved { r#"["v"]"# } else { "[]" },
                );
                let registry = load_in(&manifest, Path::new("/")).expect("loads");
                let backend = http(&registry);
                tried.set(tried.get() + 1);
                let want = expected_pairs(style, explode, &value);
                let request = match backend.request(&arguments(json!({ "v": value }))) {
                    Ok(request) => request,
                    Err(error) => {
                        prop_assert!(want.is_none(), "{style} {explode}: {value}: {error}");
                        prop_assert!(
                            matches!(
                                error,
                                RequestError::Delimiter { .. } | RequestError::DeepField { .. }
                            ),
                            "{error}"
                        );
                        refused.set(refused.get() + 1);
                        return Ok(());
                    }
                };
                let url = request.url();
                prop_assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:8080");
                prop_assert_eq!(url.path(), "/x");
                prop_assert!(url.fragment().is_none());
                let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
                // The literal first, the declared parameter's own pairs, `fixed` last: once.
                prop_assert_eq!(&pairs[0], &("first".to_owned(), "0".to_owned()));
                prop_assert_eq!(pairs.last(), Some(&("fixed".to_owned(), "1".to_owned())));
                let middle = &pairs[1..pairs.len() - 1];
                prop_assert!(
                    middle
                        .iter()
                        .all(|(key, _)| key == "v" || key.starts_with("v[")),
                    "{middle:?}"
                );
                prop_assert_eq!(
                    Some(middle.to_vec()),
                    want,
                    "{} {}: {}",
                    style,
                    explode,
                    value
                );
                Ok(())
            },
        )
        .expect("every value stays inside its parameter");
    eprintln!(
        "query styles: {} requests in 5 styles, {} refused (an item holding its delimiter, a field holding a bracket), 0 parameters added",
        tried.get(),
        refused.get()
    );
}

#[test]
fn a_reserved_path_value_keeps_its_slashes_and_never_climbs_or_leaves_the_path() {
    let manifest = r#"
[[tools]]
name = "t"
input-schema = '{"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}}, "required": ["p", "q"]}'
[tools.http]
url = "http://127.0.0.1:8080/files/{p}/end/{q}"
allow-reserved = ["p"]
"#;
    let registry = load_in(manifest, Path::new("/")).expect("loads");
    let backend = http(&registry);
    let mut runner = TestRunner::new(cases(1500));
    let (tried, refused, spanned) = (Cell::new(0_u32), Cell::new(0_u32), Cell::new(0_u32));
    runner
        .run(&(hostile(10), hostile(6)), |(p, q)| {
            tried.set(tried.get() + 1);
            let request = match backend.request(&arguments(json!({"p": p, "q": q}))) {
                Ok(request) => request,
                Err(error) => {
                    // A dot segment, also as a servlet container reads one: `..;x` is `..`.
                    let dot = |piece: &str| matches!(piece.split(';').next(), Some("." | ".."));
                    prop_assert!(
                        p.split('/').any(|piece| piece.is_empty() || dot(piece)) || dot(&q),
                        "{p:?}: {error}"
                    );
                    refused.set(refused.get() + 1);
                    return Ok(());
                }
            };
            let url = request.url();
            prop_assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:8080");
            prop_assert!(url.query().is_none() && url.fragment().is_none(), "{url}");
            prop_assert!(
                servlet_path(url.path()).starts_with("/files/"),
                "{url} climbs out of /files as a servlet container reads it"
            );
            let segments: Vec<String> =
                url.path_segments().expect("segments").map(decode).collect();
            let mut want = vec!["files".to_owned()];
            want.extend(p.split('/').map(ToOwned::to_owned));
            want.push("end".to_owned());
            // The control: the argument without `allow-reserved` is one segment whatever it holds.
            want.push(q.clone());
            prop_assert_eq!(segments, want);
            if p.contains('/') {
                spanned.set(spanned.get() + 1);
            }
            Ok(())
        })
        .expect("a reserved value spans segments, never climbs or leaves the path");
    eprintln!(
        "allow-reserved path: {} values, {} spanning segments, {} refused (an empty, `.` or `..` segment), 0 queries or fragments added",
        tried.get(),
        spanned.get(),
        refused.get()
    );
}

/// A path as a servlet container (Tomcat, Jetty, Spring) resolves it: each segment's `;`
/// parameters cut off, `%2e` read as a dot, then `.` and `..` resolved.
fn servlet_path(path: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    for segment in path.split('/').skip(1) {
        let bare = segment.split(';').next().unwrap_or_default();
        match bare.to_ascii_lowercase().replace("%2e", ".").as_str() {
            "." => {}
            ".." => {
                kept.pop();
            }
            _ => kept.push(bare.to_owned()),
        }
    }
    format!("/{}", kept.join("/"))
}

/// `..;` passed the dot-segment check and went raw under `allow-reserved`, which a servlet
/// container reads as `..`. The control: `servlet_path` does climb with the values refused.
#[test]
fn a_reserved_path_value_cannot_climb_through_segment_parameters() {
    let manifest = r#"
[[tools]]
name = "t"
input-schema = '{"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]}'
[tools.http]
url = "http://127.0.0.1:8080/files/{p}/end"
allow-reserved = ["p"]
"#;
    let registry = load_in(manifest, Path::new("/")).expect("loads");
    let backend = http(&registry);
    for value in ["..;", "..;jsessionid=1/admin", "a/..;/..;/admin", ".;x/..;"] {
        assert!(
            !servlet_path(&format!("/files/{value}/end")).starts_with("/files/"),
            "the control: {value} climbs when sent raw"
        );
        let refused = backend
            .request(&arguments(json!({ "p": value })))
            .expect_err(value);
        assert!(
            matches!(
                refused,
                RequestError::DotSegment { .. } | RequestError::ReservedSegment { .. }
            ),
            "{value}: {refused}"
        );
        assert!(refused.to_string().contains("path segment"), "{refused}");
    }
    let sent = backend
        .request(&arguments(json!({"p": "a;v=1/b..;/c"})))
        .expect("a parameter on a segment that is no dot segment is sent");
    assert_eq!(sent.url().path(), "/files/a;v=1/b..;/c/end");
}

/// The parts of a multipart body: (the Content-Disposition line, other header lines, bytes).
fn parts(request: &reqwest::Request) -> Vec<(String, Vec<String>, Vec<u8>)> {
    let content_type = request
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .expect("a boundary");
    let body = request
        .body()
        .and_then(reqwest::Body::as_bytes)
        .expect("a body in memory");
    let delimiter = format!("\r\n--{boundary}");
    // Every delimiter line, as a receiver finds them (RFC 2046: CRLF, `--`, boundary).
    let framed = [b"\r\n".as_slice(), body].concat();
    let mut at = Vec::new();
    let mut index = 0;
    while let Some(found) = framed[index..]
        .windows(delimiter.len())
        .position(|window| window == delimiter.as_bytes())
    {
        at.push(index + found);
        index += found + delimiter.len();
    }
    let mut out = Vec::new();
    for pair in at.windows(2) {
        let part = &framed[pair[0] + delimiter.len() + 2..pair[1]];
        let end = part
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .expect("headers end");
        let headers = String::from_utf8_lossy(&part[..end]).into_owned();
        let mut lines = headers.split("\r\n").map(ToOwned::to_owned);
        let disposition = lines.next().unwrap_or_default();
        out.push((disposition, lines.collect(), part[end + 4..].to_vec()));
    }
    assert!(framed.ends_with(format!("{delimiter}--\r\n").as_bytes()));
    out
}

#[test]
fn multipart_values_stay_inside_their_parts() {
    let manifest = r#"
[[tools]]
name = "t"
input-schema = '{"type": "object", "properties": {"a": {}, "b": {}, "c": {"type": "string"}}}'
[tools.http]
url = "http://127.0.0.1:8080/up"
method = "POST"
[tools.http.multipart]
a = "{a}"
b = { value = "{b}", content-type = "application/json" }
c = { base64 = "{c}", filename = "c.bin", content-type = "application/octet-stream" }
"#;
    let registry = load_in(manifest, Path::new("/")).expect("loads");
    let backend = http(&registry);
    // Values built to look like a boundary and a part of their own.
    let forged = prop_oneof![
        hostile(12),
        Just(
            "x\r\n--mcp-serve-00\r\nContent-Disposition: form-data; name=\"admin\"\r\n\r\ntrue"
                .to_owned()
        ),
        Just("\r\n\r\n--\r\n".to_owned()),
    ];
    let bytes = prop::collection::vec(any::<u8>(), 0..64);
    let mut runner = TestRunner::new(cases(800));
    let tried = Cell::new(0_u32);
    runner
        .run(&(forged.clone(), forged, bytes), |(a, b, c)| {
            use base64::Engine as _;
            tried.set(tried.get() + 1);
            let content = base64::engine::general_purpose::STANDARD.encode(&c);
            let request = backend
                .request(&arguments(json!({"a": a, "b": {"k": b}, "c": content})))
                .expect("builds");
            let found = parts(&request);
            prop_assert_eq!(found.len(), 3);
            prop_assert_eq!(&found[0].0, "Content-Disposition: form-data; name=\"a\"");
            prop_assert_eq!(found[0].2.clone(), a.into_bytes());
            prop_assert_eq!(&found[1].0, "Content-Disposition: form-data; name=\"b\"");
            prop_assert_eq!(
                &found[1].1,
                &vec!["Content-Type: application/json".to_owned()]
            );
            prop_assert_eq!(
                serde_json::from_slice::<Value>(&found[1].2).expect("JSON"),
                json!({"k": b})
            );
            prop_assert_eq!(
                &found[2].0,
                "Content-Disposition: form-data; name=\"c\"; filename=\"c.bin\""
            );
            prop_assert_eq!(found[2].2.clone(), c);
            Ok(())
        })
        .expect("every value stays inside its part");
    eprintln!(
        "multipart: {} bodies with forged boundaries and parts in their values, each exactly its 3 declared parts",
        tried.get()
    );
}

/// A folder with `uploads/` (a file, a subfolder, links out and in, a FIFO) and a secret
/// beside it.
fn upload_tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("real");
    std::fs::create_dir_all(root.join("uploads/sub")).expect("uploads");
    std::fs::write(root.join("uploads/photo.png"), "public").expect("photo");
    std::fs::write(root.join("uploads/sub/b.txt"), "b").expect("b");
    std::fs::write(root.join("uploads/big.bin"), vec![0_u8; 2048]).expect("big");
    std::fs::write(root.join("secret.txt"), "secret").expect("secret");
    let link = |target: &Path, at: &str| {
        std::os::unix::fs::symlink(target, root.join(at)).expect("link");
    };
    link(&root.join("secret.txt"), "uploads/leaf-out");
    link(Path::new("../secret.txt"), "uploads/leaf-relative");
    link(&root.join("uploads/photo.png"), "uploads/leaf-in");
    link(&root, "uploads/folder-out");
    nix::unistd::mkfifo(&root.join("uploads/fifo"), nix::sys::stat::Mode::S_IRWXU).expect("fifo");
    (dir, root)
}

const UPLOAD: &str = r#"
[[tools]]
name = "t"
input-schema = '{"type": "object", "properties": {"path": {"type": "string"}, "name": {"type": "string"}}, "required": ["path"]}'
[tools.http]
url = "http://127.0.0.1:8080/up"
method = "POST"
max-upload = "1KiB"
[tools.http.multipart]
file = { file = "uploads/{path}" }
"#;

#[test]
fn a_file_part_reads_only_inside_its_folder_and_within_its_limit() {
    let (_dir, root) = upload_tree();
    let registry = load_in(UPLOAD, &root).expect("loads");
    let backend = http(&registry);
    let send = |path: &str| -> Result<Vec<u8>, RequestError> {
        let request = backend.request(&arguments(json!({ "path": path })))?;
        Ok(parts(&request).remove(0).2)
    };
    assert_eq!(send("photo.png").expect("inside"), b"public");
    assert_eq!(send("sub/b.txt").expect("inside"), b"b");
    let secret = root.join("secret.txt");
    let attacks = [
        ("../secret.txt", true),
        (secret.to_str().expect("utf-8"), true),
        ("leaf-out", true),
        ("leaf-relative", true),
        ("folder-out/secret.txt", true),
        // Refused too, though they stay inside: no link is ever followed, no FIFO read.
        ("leaf-in", false),
        ("fifo", false),
        ("sub", false),
        ("sub/../../secret.txt", true),
        ("photo.png\0", false),
        ("", false),
        ("missing.png", false),
    ];
    let mut leaked_by_control = 0;
    for (path, outside) in attacks {
        let refused = send(path).expect_err(path);
        assert!(
            matches!(
                &refused,
                RequestError::Multipart(MultipartError::NoFile { path: named, .. }) if named == path
            ),
            "{path}: {refused}"
        );
        assert!(
            refused
                .to_string()
                .contains("in the folder the tool uploads from"),
            "{refused}"
        );
        // The control: the same path read by name, following links, as a naive upload would.
        if outside
            && std::fs::read_to_string(root.join("uploads").join(path))
                .is_ok_and(|text| text == "secret")
        {
            leaked_by_control += 1;
        }
    }
    assert_eq!(
        leaked_by_control, 6,
        "every outside attack works without the guard"
    );
    let refused = send("big.bin").expect_err("over max-upload");
    assert!(
        matches!(
            refused,
            RequestError::Multipart(MultipartError::TooLarge { .. })
        ),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("larger than the tool's limit (`max-upload`)"),
        "{refused}"
    );
    eprintln!(
        "file parts: {} hostile paths refused (`..`, absolute, links out and in, a FIFO, a folder, NUL, oversize); the control read the secret through {leaked_by_control} of them",
        attacks.len() + 1
    );
}

#[test]
fn a_file_parts_folder_follows_the_file_template_rules() {
    let (_dir, root) = upload_tree();
    std::fs::create_dir_all(root.join("keys")).expect("keys");
    std::fs::write(root.join("keys/token"), "t").expect("token");
    std::os::unix::fs::symlink(root.join("uploads"), root.join("uploads-link")).expect("link");
    let with_file = |file: &str| UPLOAD.replace("uploads/{path}", file);
    let refusals = [
        ("/{path}", "a file part cannot serve `/`"),
        ("{path}", "a file part cannot serve the manifest's folder"),
        ("./{path}", "a file part cannot serve the manifest's folder"),
        ("../{path}", "a file part's path has no `..`"),
        ("uploads/../{path}", "a file part's path has no `..`"),
        ("uploads-link/{path}", "is a symbolic link"),
        ("missing/{path}", "does not exist"),
        (
            "uploads/photo.png",
            "a file part's path has a placeholder after its folder",
        ),
    ];
    for (file, message) in refusals {
        let error = load_in(&with_file(file), &root).expect_err(file);
        assert!(error.contains(message), "{file}: {error}");
    }
    // A folder that holds one of the manifest's secret files.
    let holding = UPLOAD.replace("uploads/{path}", "keys/{path}").replace(
        "[tools.http.multipart]",
        "[tools.http.headers]\nX-Token = \"${file:keys/token}\"\n[tools.http.multipart]",
    );
    let error = load_in(&holding, &root).expect_err("holds a secret");
    assert!(
        error.contains("it holds `keys/token`, a secret file of the manifest"),
        "{error}"
    );
    eprintln!(
        "file part folders: {} refused at load, as file templates' are",
        refusals.len() + 1
    );
}

/// An optional file part whose argument is absent (or null) is left out, as a text part is;
/// it was sent as a lookup of the folder itself and failed the call.
#[test]
fn a_file_part_whose_argument_is_absent_is_left_out() {
    let (_dir, root) = upload_tree();
    let manifest = UPLOAD
        .replace(r#""required": ["path"]"#, r#""required": ["name"]"#)
        .replace(
            "file = { file = \"uploads/{path}\" }",
            "file = { file = \"uploads/{path}\" }\nname = \"{name}\"",
        );
    let registry = load_in(&manifest, &root).expect("loads");
    let backend = http(&registry);
    for arguments_given in [json!({"name": "n"}), json!({"name": "n", "path": null})] {
        let request = backend
            .request(&arguments(arguments_given.clone()))
            .expect("an absent file part is left out");
        let found = parts(&request);
        assert_eq!(found.len(), 1, "{arguments_given}");
        assert_eq!(found[0].0, "Content-Disposition: form-data; name=\"name\"");
    }
    // The control: given, the same part is sent.
    let request = backend
        .request(&arguments(json!({"name": "n", "path": "photo.png"})))
        .expect("given");
    assert_eq!(parts(&request).len(), 2);
}

#[test]
fn part_names_file_names_and_types_cannot_add_a_header() {
    let (_dir, root) = upload_tree();
    // At load: names and types written in the manifest.
    let loads = [
        (r#""a\r\nX-Injected: 1" = "{path}""#, "holds a line break"),
        (
            r#""a\"; filename=\"x" = "{path}""#,
            "holds a line break, a control character",
        ),
        (
            r#"a = { value = "{path}", content-type = "text/plain\r\nX-Injected: 1" }"#,
            "is not a media type",
        ),
        (
            r#"a = { value = "{path}", filename = "x\"y" }"#,
            "`filename` holds",
        ),
        (
            r#"a = { value = "{path}", base64 = "{path}" }"#,
            "has one of `value`, `file` and `base64`",
        ),
    ];
    for (part, message) in loads {
        let manifest = UPLOAD.replace(r#"file = { file = "uploads/{path}" }"#, part);
        let error = load_in(&manifest, &root).expect_err(part);
        assert!(error.contains(message), "{part}: {error}");
    }
    // At each call: a file name from an argument.
    let manifest = UPLOAD.replace(
        r#"file = { file = "uploads/{path}" }"#,
        r#"file = { file = "uploads/{path}", filename = "{name}" }"#,
    );
    let registry = load_in(&manifest, &root).expect("loads");
    let backend = http(&registry);
    let hostile_names = [
        "a\r\nX-Injected: 1",
        "a\"; name=\"admin",
        "a\\",
        "tab\there",
        "\u{0}",
    ];
    for name in hostile_names {
        let error = backend
            .request(&arguments(json!({"path": "photo.png", "name": name})))
            .expect_err(name);
        assert!(
            matches!(
                error,
                RequestError::Multipart(MultipartError::FileName { .. })
            ),
            "{error}"
        );
        // The control: the header line written as reqwest's encoder writes it (a backslash
        // before CR and LF) still breaks the line, and a receiver reads a header of its own.
        let naive = format!(
            "Content-Disposition: form-data; name=\"file\"; filename=\"{}\"",
            name.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\r', "\\\r")
                .replace('\n', "\\\n")
        );
        if name.contains('\n') {
            assert!(
                naive.lines().any(|line| line.starts_with("X-Injected")),
                "{naive}"
            );
        }
    }
    let request = backend
        .request(&arguments(
            json!({"path": "photo.png", "name": "photo é.png"}),
        ))
        .expect("a plain name");
    assert_eq!(
        parts(&request)[0].0,
        "Content-Disposition: form-data; name=\"file\"; filename=\"photo é.png\""
    );
    eprintln!(
        "part headers: {} manifests refused at load, {} file names refused at call; the control's header line breaks",
        loads.len(),
        hostile_names.len()
    );
}

/// A URL too long to send is refused, and the refusal says how long the URL would have
/// been, whether the query alone or the whole URL is over the limit, with a literal query
/// in the manifest or without.
#[test]
fn a_url_too_long_is_refused_with_its_length() {
    for literal in ["", "?lit=abcdefghij"] {
        let manifest = format!(
            r#"
[[tools]]
name = "t"
input-schema = '{{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}'
[tools.http]
url = "http://127.0.0.1:9/d{literal}"
query = {{ q = "{{q}}" }}
"#
        );
        let registry = load_in(&manifest, Path::new("/")).expect("loads");
        let backend = http(&registry);
        let joiner = if literal.is_empty() { "?" } else { "&" };
        // The whole URL over the limit, then the query alone.
        for length in [32_760, 32_767, 33_000, 40_000] {
            let value = "a".repeat(length);
            let sent = format!("http://127.0.0.1:9/d{literal}{joiner}q={value}");
            let refused = backend
                .request(&arguments(json!({ "q": value })))
                .expect_err("too long");
            assert!(
                matches!(refused, RequestError::UrlTooLong { bytes } if bytes == sent.len()),
                "{literal:?} {length}: {refused} (the URL is {} bytes)",
                sent.len()
            );
        }
        // The control: a URL under the limit is sent as written.
        let sent = backend
            .request(&arguments(json!({ "q": "a".repeat(32_000) })))
            .expect("fits");
        assert!(sent.url().as_str().len() < 32 * 1024);
    }
}
