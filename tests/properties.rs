//! Property tests of the structural guarantees, over random manifests and values: a command
//! gets exactly the argv the templating rules predict (never another program, never an
//! element an argument added); an HTTP request keeps the manifest's scheme, host and port
//! and gets no header the manifest did not declare; no encoding of a secret survives
//! redaction. Each prints how many cases it tried and how many broke the rule (0).

use std::cell::Cell;
use std::path::Path;

use mcp_serve::backend::Backend;
use mcp_serve::registry::Registry;
use mcp_serve::secret::Redactor;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// Characters that mean something to a shell, a URL, a header or JSON.
const HOSTILE: &[char] = &[
    ';', '|', '&', '$', '(', ')', '<', '>', '`', '\'', '"', '\\', '*', '?', '~', '!', '#', ' ',
    '\n', '\r', '\t', '=', '-', '.', '/', '%', '@', ':', ',', '+', '[', ']', 'a', 'Z', '0', 'é',
    '\u{202e}', '{', '}',
];

fn hostile_string(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(HOSTILE), 0..max)
        .prop_map(|chars| chars.into_iter().collect())
}

/// A value as a model might send it: hostile characters, now and then a NUL byte.
fn hostile_value(max: usize) -> impl Strategy<Value = String> {
    (hostile_string(max), prop::bool::weighted(0.05))
        .prop_map(|(text, nul)| if nul { format!("{text}\0") } else { text })
}

/// A piece of a template: literal text, or a placeholder.
#[derive(Debug, Clone)]
enum Piece {
    Literal(String),
    Placeholder(&'static str),
}

fn pieces(
    names: &'static [&'static str],
    literal: BoxedStrategy<String>,
) -> impl Strategy<Value = Vec<Piece>> {
    prop::collection::vec(
        prop_oneof![
            literal.prop_map(Piece::Literal),
            prop::sample::select(names).prop_map(Piece::Placeholder),
        ],
        1..4,
    )
}

/// The template text for `pieces` (braces in literals doubled).
fn template_text(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Literal(text) => text.replace('{', "{{").replace('}', "}}"),
            Piece::Placeholder(name) => format!("{{{name}}}"),
        })
        .collect()
}

/// `count` cases, nothing written to disk (a failure prints its minimal input).
fn cases(count: u32) -> Config {
    Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    }
}

fn load(manifest: &str) -> Registry {
    mcp_serve::manifest::parse(manifest, "tools.toml", Path::new("/"))
        .unwrap_or_else(|error| panic!("the generated manifest does not load: {error}\n{manifest}"))
}

// ---------------------------------------------------------------- argv

#[derive(Debug, Clone)]
enum Element {
    Single(Vec<Piece>),
    Group(Vec<Vec<Piece>>),
}

/// `s` is pinned to string, `u` is not pinned at all, `n` may be a string or an array,
/// `l` is pinned to array: the only one that repeats.
const ARGV_NAMES: &[&str] = &["s", "u", "n", "l"];

fn element() -> impl Strategy<Value = Element> {
    let literal = hostile_string(6).boxed();
    prop_oneof![
        pieces(ARGV_NAMES, literal.clone()).prop_map(Element::Single),
        prop::collection::vec(pieces(ARGV_NAMES, literal), 1..3)
            .prop_filter("a group uses an argument", |templates| {
                templates
                    .iter()
                    .flatten()
                    .any(|piece| matches!(piece, Piece::Placeholder(_)))
            })
            .prop_map(Element::Group),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        hostile_value(8).prop_map(Value::String),
        any::<i32>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((hostile_string(4), inner), 0..3)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn argv_arguments() -> impl Strategy<Value = Map<String, Value>> {
    (
        hostile_value(10),
        any_value(),
        prop_oneof![hostile_value(6).prop_map(Value::String), any_value()],
        prop::collection::vec(hostile_value(6).prop_map(Value::String), 0..4),
    )
        .prop_map(|(s, u, n, l)| {
            let mut arguments = Map::new();
            arguments.insert("s".into(), Value::String(s));
            arguments.insert("u".into(), u);
            arguments.insert("n".into(), n);
            arguments.insert("l".into(), Value::Array(l));
            arguments
        })
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The argv the templating rules predict: written from the documented rules, not the code.
fn predicted(elements: &[Element], arguments: &Map<String, Value>) -> Option<Vec<String>> {
    let render = |pieces: &[Piece], item: Option<&Value>| -> Option<String> {
        let mut out = String::new();
        for piece in pieces {
            let value = match piece {
                Piece::Literal(text) => {
                    out.push_str(text);
                    continue;
                }
                Piece::Placeholder("l") if item.is_some() => text_of(item?),
                Piece::Placeholder(name) => text_of(&arguments[*name]),
            };
            // A value with a NUL byte cannot be an argv element: the call is refused.
            if value.contains('\0') {
                return None;
            }
            out.push_str(&value);
        }
        Some(out)
    };
    let uses_list = |pieces: &[&Vec<Piece>]| {
        pieces.iter().any(|pieces| {
            pieces
                .iter()
                .any(|piece| matches!(piece, Piece::Placeholder("l")))
        })
    };
    let items = arguments["l"].as_array().cloned().unwrap_or_default();
    let mut argv = vec!["prog".to_owned()];
    for element in elements {
        let templates: Vec<&Vec<Piece>> = match element {
            Element::Single(pieces) => vec![pieces],
            Element::Group(templates) => {
                let included = templates.iter().flat_map(|pieces| pieces.iter()).all(|piece| {
                    !matches!(piece, Piece::Placeholder(name) if arguments[*name] == Value::Bool(false))
                });
                if !included {
                    continue;
                }
                templates.iter().collect()
            }
        };
        if uses_list(&templates) {
            for item in &items {
                for pieces in &templates {
                    argv.push(render(pieces, Some(item))?);
                }
            }
        } else {
            for pieces in &templates {
                argv.push(render(pieces, None)?);
            }
        }
    }
    Some(argv)
}

fn argv_manifest(elements: &[Element]) -> String {
    let schema = json!({
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "u": {},
            "n": {"anyOf": [{"type": "string"}, {"type": "array"}, {"type": "object"}, {"type": "integer"}, {"type": "boolean"}]},
            "l": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["s", "u", "n", "l"],
    });
    let mut argv = vec![toml::Value::String("prog".into())];
    for element in elements {
        argv.push(match element {
            Element::Single(pieces) => toml::Value::String(template_text(pieces)),
            Element::Group(templates) => toml::Value::Array(
                templates
                    .iter()
                    .map(|pieces| toml::Value::String(template_text(pieces)))
                    .collect(),
            ),
        });
    }
    let mut command = toml::Table::new();
    command.insert("argv".into(), toml::Value::Array(argv));
    let mut tool = toml::Table::new();
    tool.insert("name".into(), "t".into());
    tool.insert("input-schema".into(), schema.to_string().into());
    tool.insert("command".into(), toml::Value::Table(command));
    let mut document = toml::Table::new();
    document.insert(
        "tools".into(),
        toml::Value::Array(vec![toml::Value::Table(tool)]),
    );
    toml::to_string(&document).expect("serializes")
}

#[test]
fn commands_get_exactly_the_predicted_argv() {
    let mut runner = TestRunner::new(cases(1500));
    let (tried, refused) = (Cell::new(0_u32), Cell::new(0_u32));
    let strategy = (prop::collection::vec(element(), 0..5), argv_arguments());
    runner
        .run(&strategy, |(elements, arguments)| {
            let registry = load(&argv_manifest(&elements));
            let tool = registry.get("t").expect("tool");
            let Backend::Command(command) = &tool.backend else {
                panic!("a command tool");
            };
            let arguments = tool.prepare(Some(arguments)).expect("valid arguments");
            tried.set(tried.get() + 1);
            match (
                command.describe(&arguments),
                predicted(&elements, &arguments),
            ) {
                (Ok(description), Some(expected)) => {
                    let line = description.lines().next().unwrap_or_default();
                    let argv: Vec<String> =
                        serde_json::from_str(line.strip_prefix("argv: ").expect("an argv line"))
                            .expect("argv JSON");
                    prop_assert_eq!(&argv[0], "prog");
                    prop_assert_eq!(argv, expected);
                }
                (Err(_), None) => refused.set(refused.get() + 1),
                (got, expected) => {
                    prop_assert!(false, "rendered {got:?}, predicted {expected:?}");
                }
            }
            Ok(())
        })
        .expect("every argv is the predicted one");
    eprintln!(
        "argv property: {} manifests × values, {} refused (NUL), 0 escapes",
        tried.get(),
        refused.get()
    );
}

// ---------------------------------------------------------------- HTTP

const HTTP_NAMES: &[&str] = &["a", "b"];

fn http_literal() -> BoxedStrategy<String> {
    prop::collection::vec(
        prop::sample::select(&['a', 'z', '0', '-', '_', '~'][..]),
        1..4,
    )
    .prop_map(|chars| chars.into_iter().collect())
    .boxed()
}

fn header_literal() -> BoxedStrategy<String> {
    prop::collection::vec(
        prop::sample::select(&['a', 'Z', '0', ' ', '=', ';', '/', ','][..]),
        1..4,
    )
    .prop_map(|chars| chars.into_iter().collect())
    .boxed()
}

#[derive(Debug, Clone)]
struct HttpShape {
    segments: Vec<Vec<Piece>>,
    query: Vec<Vec<Piece>>,
    headers: Vec<Vec<Piece>>,
}

fn http_shape() -> impl Strategy<Value = HttpShape> {
    (
        prop::collection::vec(pieces(HTTP_NAMES, http_literal()), 1..4),
        prop::collection::vec(pieces(HTTP_NAMES, header_literal()), 0..3),
        prop::collection::vec(pieces(HTTP_NAMES, header_literal()), 0..3),
    )
        .prop_map(|(segments, query, headers)| HttpShape {
            segments,
            query,
            headers,
        })
}

fn http_manifest(shape: &HttpShape) -> String {
    let path: String = shape
        .segments
        .iter()
        .flat_map(|pieces| ["/".to_owned(), template_text(pieces)])
        .collect();
    let mut http = toml::Table::new();
    http.insert("url".into(), format!("http://127.0.0.1:8080{path}").into());
    let table = |items: &[Vec<Piece>], prefix: &str| {
        toml::Value::Table(
            items
                .iter()
                .enumerate()
                .map(|(index, pieces)| (format!("{prefix}{index}"), template_text(pieces).into()))
                .collect(),
        )
    };
    http.insert("query".into(), table(&shape.query, "q"));
    http.insert("headers".into(), table(&shape.headers, "X-H"));
    let mut arguments = toml::Table::new();
    for name in HTTP_NAMES {
        let mut argument = toml::Table::new();
        argument.insert("type".into(), "string".into());
        arguments.insert((*name).into(), toml::Value::Table(argument));
    }
    let mut tool = toml::Table::new();
    tool.insert("name".into(), "t".into());
    tool.insert("arguments".into(), toml::Value::Table(arguments));
    tool.insert("http".into(), toml::Value::Table(http));
    let mut document = toml::Table::new();
    document.insert(
        "tools".into(),
        toml::Value::Array(vec![toml::Value::Table(tool)]),
    );
    toml::to_string(&document).expect("serializes")
}

fn fill(pieces: &[Piece], arguments: &Map<String, Value>) -> String {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Literal(text) => text.clone(),
            Piece::Placeholder(name) => text_of(&arguments[*name]),
        })
        .collect()
}

#[test]
fn http_requests_keep_their_origin_and_declared_headers() {
    let mut runner = TestRunner::new(cases(1500));
    let (tried, refused) = (Cell::new(0_u32), Cell::new(0_u32));
    let values = (hostile_value(12), hostile_value(12));
    runner
        .run(&(http_shape(), values), |(shape, (a, b))| {
            let registry = load(&http_manifest(&shape));
            let tool = registry.get("t").expect("tool");
            let Backend::Http(http) = &tool.backend else {
                panic!("an HTTP tool");
            };
            let mut arguments = Map::new();
            arguments.insert("a".into(), Value::String(a));
            arguments.insert("b".into(), Value::String(b));
            tried.set(tried.get() + 1);
            let description = match http.describe(&arguments) {
                Ok(description) => description,
                Err(error) => {
                    // Only values a header cannot carry, or a path segment that would climb.
                    prop_assert!(
                        error.contains("header contains a line break")
                            || error.contains("would move up the URL's path"),
                        "{error}"
                    );
                    refused.set(refused.get() + 1);
                    return Ok(());
                }
            };
            let mut lines = description.lines();
            let first = lines.next().unwrap_or_default();
            let url = reqwest::Url::parse(first.strip_prefix("GET ").expect("GET")).expect("URL");
            prop_assert_eq!(url.scheme(), "http");
            prop_assert_eq!(url.host_str(), Some("127.0.0.1"));
            prop_assert_eq!(url.port(), Some(8080));
            let segments: Vec<String> = url
                .path_segments()
                .expect("segments")
                .map(|segment| {
                    percent_encoding::percent_decode_str(segment)
                        .decode_utf8_lossy()
                        .into_owned()
                })
                .collect();
            let expected: Vec<String> = shape
                .segments
                .iter()
                .map(|pieces| fill(pieces, &arguments))
                .collect();
            prop_assert_eq!(segments, expected);
            let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
            let expected: Vec<(String, String)> = shape
                .query
                .iter()
                .enumerate()
                .map(|(index, pieces)| (format!("q{index}"), fill(pieces, &arguments)))
                .collect();
            prop_assert_eq!(query, expected);
            let headers: Vec<(String, String)> = lines
                .take_while(|line| !line.is_empty())
                .map(|line| {
                    let (name, value) = line.split_once(": ").unwrap_or((line, ""));
                    (name.to_owned(), value.to_owned())
                })
                .collect();
            let expected: Vec<(String, String)> = shape
                .headers
                .iter()
                .enumerate()
                .map(|(index, pieces)| {
                    (
                        format!("x-h{index}"),
                        fill(pieces, &arguments).trim().to_owned(),
                    )
                })
                .collect();
            let headers: Vec<(String, String)> = headers
                .into_iter()
                .map(|(name, value)| (name, value.trim().to_owned()))
                .collect();
            prop_assert_eq!(headers, expected);
            Ok(())
        })
        .expect("every request keeps its origin and headers");
    eprintln!(
        "HTTP property: {} requests, {} refused (line breaks, dot segments), 0 escapes",
        tried.get(),
        refused.get()
    );
}

// ---------------------------------------------------------------- redaction

fn secret() -> impl Strategy<Value = String> {
    // No brackets, so no form of a secret can straddle `[redacted]`; a digit, so none fits
    // inside it.
    let alphabet: Vec<char> = HOSTILE
        .iter()
        .copied()
        .filter(|c| !matches!(c, '[' | ']'))
        .chain(['k', 'Q', 'ü', '日'])
        .collect();
    (
        prop::collection::vec(prop::sample::select(alphabet), 8..24),
        0_u8..10,
    )
        .prop_map(|(chars, digit)| format!("{}{digit}", chars.into_iter().collect::<String>()))
}

fn encodings(secret: &str) -> Vec<(&'static str, String)> {
    let percent = percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
        .to_string();
    let segment = mcp_serve::template::encode_segment(secret);
    let form: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
    let json = serde_json::to_string(secret).expect("json");
    let json = json[1..json.len() - 1].to_owned();
    vec![
        ("raw", secret.to_owned()),
        ("percent", percent.clone()),
        ("percent, lower-case hex", lower_hex(&percent)),
        ("path segment", segment),
        ("form", form),
        ("JSON", json.clone()),
        ("JSON, escaped slashes", json.replace('/', "\\/")),
    ]
}

#[test]
fn no_encoding_of_a_secret_survives_redaction() {
    let mut runner = TestRunner::new(cases(1000));
    let checked = Cell::new(0_u32);
    let around = || {
        prop::collection::vec(
            prop::sample::select(&['a', 'b', ' ', '\n', '<', '"'][..]),
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>())
    };
    runner
        .run(
            &(secret(), around(), around()),
            |(secret, before, after)| {
                let redactor = Redactor::new(std::slice::from_ref(&secret));
                for (name, encoded) in encodings(&secret) {
                    let text = format!("{before}{encoded}{after}");
                    let redacted = redactor.redact(&text);
                    prop_assert!(
                        !redacted.contains(&encoded),
                        "{name} form survived: {redacted:?}"
                    );
                    let bytes = redactor.redact_bytes(text.into_bytes());
                    prop_assert!(
                        !bytes
                            .windows(encoded.len())
                            .any(|window| window == encoded.as_bytes()),
                        "{name} form survived in bytes"
                    );
                    checked.set(checked.get() + 1);
                }
                Ok(())
            },
        )
        .expect("no form of a secret survives");
    eprintln!(
        "redaction property: {} secret forms in random text, 0 survived",
        checked.get()
    );
}

/// `%2F` → `%2f`, leaving every other character as it is.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::new();
    let mut hex = 0;
    for c in encoded.chars() {
        if hex > 0 {
            out.push(c.to_ascii_lowercase());
            hex -= 1;
        } else {
            out.push(c);
            if c == '%' {
                hex = 2;
            }
        }
    }
    out
}

// ---------------------------------------------------------------- loader fuzz

#[test]
fn the_manifest_loader_never_panics_on_mutated_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = [
        (include_str!("../tools.example.toml"), root.to_owned()),
        (
            include_str!("fixtures/conformance.toml"),
            root.join("tests/fixtures"),
        ),
    ];
    let mut runner = TestRunner::new(cases(1500));
    let (tried, loaded) = (Cell::new(0_u32), Cell::new(0_u32));
    let mutation = (
        0..seeds.len(),
        prop::collection::vec(
            (any::<prop::sample::Index>(), 0_u8..4, hostile_string(6)),
            1..6,
        ),
    );
    runner
        .run(&mutation, |(seed, edits)| {
            let (seed, base_dir) = &seeds[seed];
            let mut text = (*seed).to_owned();
            for (at, kind, insert) in edits {
                let mut position = at.index(text.len().max(1)).min(text.len());
                while !text.is_char_boundary(position) {
                    position -= 1;
                }
                match kind {
                    0 => text.insert_str(position, &insert),
                    1 => {
                        let mut end = (position + insert.len() + 1).min(text.len());
                        while !text.is_char_boundary(end) {
                            end -= 1;
                        }
                        text.replace_range(position..end, "");
                    }
                    2 => text.insert_str(position, "\n[[tools]]\nname = \"x\"\n"),
                    _ => text.insert_str(position, "{{}}[]\"'\\"),
                }
            }
            tried.set(tried.get() + 1);
            // Ok or a rendered error: anything but a panic.
            if mcp_serve::manifest::parse(&text, "tools.toml", base_dir).is_ok() {
                loaded.set(loaded.get() + 1);
            }
            Ok(())
        })
        .expect("the loader never panics");
    eprintln!(
        "loader fuzz: {} mutated manifests, {} still loaded, 0 panics",
        tried.get(),
        loaded.get()
    );
}
