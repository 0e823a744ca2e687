//! The one substitution routine: `{name}` placeholders in argv elements, script parameters
//! and environment values, filled from validated arguments.
//!
//! A placeholder fills a whole argv element or part of one; it can never create, split or
//! join elements, because rendering happens per element after the manifest has already fixed
//! how many elements there are. The only ways an argument changes the element count are the
//! explicit ones a manifest declares: an optional group (left out when an argument it uses is
//! absent, null or `false`), a flag (present when a boolean argument is `true`), and
//! repetition (an element or group that uses an array argument is repeated once per item).

use serde_json::{Map, Value};

/// A string with `{name}` placeholders; `{{` and `}}` stand for literal braces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Placeholder(String),
}

/// Why a template string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("`{{` at byte {offset} is never closed; write `{{{{` for a literal brace")]
    Unclosed { offset: usize },
    #[error("unmatched `}}` at byte {offset}; write `}}}}` for a literal brace")]
    Unmatched { offset: usize },
    #[error(
        "`{{{name}}}` is not a valid placeholder (names use letters, digits, `_` and `-`); write `{{{{` for a literal brace"
    )]
    BadName { name: String },
}

/// Why a template could not be rendered for one call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("argument `{name}` is required by the command but was not given")]
    Missing { name: String },
    #[error("the value of `{name}` contains {sink}")]
    Unrepresentable { name: String, sink: &'static str },
}

impl Template {
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((offset, character)) = chars.next() {
            match character {
                '{' if chars.peek().map(|(_, next)| *next) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|(_, next)| *next) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '}' => return Err(TemplateError::Unmatched { offset }),
                '{' => {
                    let rest = &text[offset + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(TemplateError::Unclosed { offset });
                    };
                    let name = &rest[..end];
                    let argument = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !argument && !crate::auth::is_placeholder(name) {
                        return Err(TemplateError::BadName {
                            name: name.to_owned(),
                        });
                    }
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(Segment::Placeholder(name.to_owned()));
                    for _ in 0..=name.len() {
                        chars.next();
                    }
                }
                other => literal.push(other),
            }
        }
        if !literal.is_empty() || segments.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Ok(Self { segments })
    }

    /// The argument names this template uses, in order, possibly repeated.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Placeholder(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// The one rendering routine: fills each placeholder with its argument's text as `sink`
    /// requires (encoded, checked, or refused). `Ok(None)` when an argument it uses is absent
    /// or null and the sink leaves such a value out; `repeat` stands in for the one list
    /// argument an argv element is being repeated for.
    pub fn render(
        &self,
        arguments: &Map<String, Value>,
        sink: Sink,
    ) -> Result<Option<String>, RenderError> {
        self.render_item(arguments, sink, None)
    }

    fn render_item(
        &self,
        arguments: &Map<String, Value>,
        sink: Sink,
        repeat: Option<(&str, &Value)>,
    ) -> Result<Option<String>, RenderError> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Placeholder(name) => {
                    let value = match repeat {
                        Some((list, item)) if list == name => Some(item),
                        _ => present(arguments, name),
                    };
                    let Some(value) = value else {
                        match sink {
                            Sink::Argv => {
                                return Err(RenderError::Missing { name: name.clone() });
                            }
                            Sink::Display | Sink::JsonString => continue,
                            _ => return Ok(None),
                        }
                    };
                    let text = value_text(value);
                    if sink.refuses_control() && text.contains(['\0', '\r', '\n'])
                        || text.contains('\0') && sink.refuses_nul()
                    {
                        return Err(RenderError::Unrepresentable {
                            name: name.clone(),
                            sink: sink.describe(),
                        });
                    }
                    match sink {
                        Sink::PathSegment => out.push_str(&encode_segment(&text)),
                        Sink::JsonString => push_json_string(&mut out, &text),
                        _ => out.push_str(&text),
                    }
                }
            }
        }
        Ok(Some(out))
    }

    /// The template's text when it has no placeholders.
    pub fn as_literal(&self) -> Option<String> {
        match self.segments.as_slice() {
            [Segment::Literal(text)] => Some(text.clone()),
            _ => None,
        }
    }

    /// The single placeholder, when the template is exactly `{name}`.
    pub fn sole_placeholder(&self) -> Option<&str> {
        match self.segments.as_slice() {
            [Segment::Placeholder(name)] => Some(name),
            _ => None,
        }
    }
}

/// Where a rendered value goes; each sink has its own rules for absent values, encoding and
/// bytes it cannot carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// One argv element: every argument must be present; no NUL.
    Argv,
    /// An environment variable's value: unset when an argument is absent; no NUL.
    Env,
    /// One URL path segment: percent-encoded so it can add no `/`, `?` or `#`.
    PathSegment,
    /// A query or form value (encoded by the serializer).
    Query,
    /// A header value: no NUL, CR or LF.
    Header,
    /// Text that becomes a JSON string value (the serializer encodes it).
    JsonText,
    /// Text written into a JSON document's string literal, as the inside of one: quotes,
    /// backslashes and control characters escaped, so a value can never end the string. An
    /// absent argument reads as nothing.
    JsonString,
    /// Text for a person or a model to read: an absent argument reads as nothing.
    Display,
}

impl Sink {
    fn refuses_nul(self) -> bool {
        matches!(self, Self::Argv | Self::Env | Self::Header)
    }

    fn refuses_control(self) -> bool {
        matches!(self, Self::Header)
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Argv => "a NUL byte, which cannot be passed to a command",
            Self::Env => "a NUL byte, which an environment variable cannot carry",
            Self::Header => "a line break or NUL byte, which a header cannot carry",
            Self::PathSegment | Self::Query | Self::JsonText | Self::JsonString | Self::Display => {
                "a character the destination cannot carry"
            }
        }
    }
}

/// Everything but RFC 3986's unreserved characters is encoded in a path segment value.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One path segment value, percent-encoded: it cannot add `/`, `?` or `#`.
pub fn encode_segment(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, SEGMENT).to_string()
}

/// Appends `text` as the inside of a JSON string literal (RFC 8259 section 7): `"` and `\`
/// escaped, and every control character (U+0000 to U+001F) as `\n`, `\t`… or `\u00XX`.
fn push_json_string(out: &mut String, text: &str) {
    use std::fmt::Write as _;
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            control if control < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(control));
            }
            other => out.push(other),
        }
    }
}

/// One element of a command line as the manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgvElement {
    /// A string such as `"--limit={limit}"`: always present.
    Single(Repeated),
    /// A nested array such as `["--limit", "{limit}"]`: all or nothing.
    Group(Repeated),
    /// `{ flag = "--all", if = "all" }`: present when the boolean argument is `true`.
    Flag { flag: String, argument: String },
}

/// An element's templates, and the list argument they repeat for. Which argument repeats
/// is fixed at load, from the input schema (only an argument pinned to `"type": "array"`
/// repeats); at call time an array in any other argument is one element's JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    pub templates: Vec<Template>,
    pub repeat: Option<String>,
}

impl Repeated {
    pub fn once(templates: Vec<Template>) -> Self {
        Self {
            templates,
            repeat: None,
        }
    }
}

impl ArgvElement {
    /// Every argument name the element uses.
    pub fn placeholders(&self) -> Vec<&str> {
        match self {
            Self::Single(repeated) | Self::Group(repeated) => repeated
                .templates
                .iter()
                .flat_map(Template::placeholders)
                .collect(),
            Self::Flag { argument, .. } => vec![argument.as_str()],
        }
    }
}

/// Renders a whole command line (or a script's positional parameters). The number of
/// elements depends only on the manifest and on three things it declares: which groups'
/// arguments are present, which flags are `true`, and how many items the one declared list
/// argument of an element has.
pub fn render_argv(
    elements: &[ArgvElement],
    arguments: &Map<String, Value>,
) -> Result<Vec<String>, RenderError> {
    let mut argv = Vec::with_capacity(elements.len());
    for element in elements {
        match element {
            ArgvElement::Flag { flag, argument } => {
                if arguments.get(argument) == Some(&Value::Bool(true)) {
                    argv.push(flag.clone());
                }
            }
            ArgvElement::Single(repeated) => render_repeated(repeated, arguments, &mut argv)?,
            ArgvElement::Group(repeated) => {
                let included = repeated
                    .templates
                    .iter()
                    .flat_map(Template::placeholders)
                    .all(|name| {
                        present(arguments, name).is_some_and(|value| *value != Value::Bool(false))
                    });
                if included {
                    render_repeated(repeated, arguments, &mut argv)?;
                }
            }
        }
    }
    Ok(argv)
}

/// Renders the templates once, or once per item of the declared list argument.
fn render_repeated(
    repeated: &Repeated,
    arguments: &Map<String, Value>,
    argv: &mut Vec<String>,
) -> Result<(), RenderError> {
    let items = repeated
        .repeat
        .as_deref()
        .and_then(|name| Some((name, present(arguments, name)?)));
    match items {
        Some((name, Value::Array(items))) => {
            for item in items {
                for template in &repeated.templates {
                    argv.push(render_element(template, arguments, Some((name, item)))?);
                }
            }
        }
        _ => {
            for template in &repeated.templates {
                argv.push(render_element(template, arguments, None)?);
            }
        }
    }
    Ok(())
}

fn render_element(
    template: &Template,
    arguments: &Map<String, Value>,
    repeat: Option<(&str, &Value)>,
) -> Result<String, RenderError> {
    template
        .render_item(arguments, Sink::Argv, repeat)?
        .ok_or_else(|| RenderError::Missing {
            name: template
                .placeholders()
                .next()
                .unwrap_or_default()
                .to_owned(),
        })
}

fn present<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    arguments.get(name).filter(|value| !value.is_null())
}

/// How a JSON value reads as text: strings as they are, everything else as compact JSON.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::{ArgvElement, RenderError, Repeated, Sink, Template, TemplateError, render_argv};

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn templates(texts: &[&str]) -> Vec<Template> {
        texts
            .iter()
            .map(|text| Template::parse(text).expect("template parses"))
            .collect()
    }

    fn single(text: &str) -> ArgvElement {
        ArgvElement::Single(Repeated::once(templates(&[text])))
    }

    fn group(texts: &[&str]) -> ArgvElement {
        ArgvElement::Group(Repeated::once(templates(texts)))
    }

    /// An element declared to repeat for the list argument `list`.
    fn repeating(texts: &[&str], list: &str, grouped: bool) -> ArgvElement {
        let repeated = Repeated {
            templates: templates(texts),
            repeat: Some(list.to_owned()),
        };
        if grouped {
            ArgvElement::Group(repeated)
        } else {
            ArgvElement::Single(repeated)
        }
    }

    #[test]
    fn placeholders_fill_whole_or_partial_elements() {
        let argv = render_argv(
            &[
                single("grep"),
                single("--max-count={limit}"),
                single("{query}"),
            ],
            &arguments(json!({"query": "a b; rm -rf /", "limit": 5})),
        );
        assert_eq!(
            argv,
            Ok(vec![
                "grep".into(),
                "--max-count=5".into(),
                "a b; rm -rf /".into()
            ])
        );
    }

    #[test]
    fn braces_escape_by_doubling() {
        let template = Template::parse("{{literal}} {name}}}").expect("parses");
        assert_eq!(template.placeholders().collect::<Vec<_>>(), vec!["name"]);
        let rendered = render_argv(
            &[ArgvElement::Single(Repeated::once(vec![template]))],
            &arguments(json!({"name": "x"})),
        );
        assert_eq!(rendered, Ok(vec!["{literal} x}".into()]));
    }

    #[test]
    fn malformed_templates_are_rejected() {
        assert_eq!(
            Template::parse("{open"),
            Err(TemplateError::Unclosed { offset: 0 })
        );
        assert_eq!(
            Template::parse("a}b"),
            Err(TemplateError::Unmatched { offset: 1 })
        );
        assert_eq!(
            Template::parse("{a b}"),
            Err(TemplateError::BadName { name: "a b".into() })
        );
        assert_eq!(
            Template::parse("{}"),
            Err(TemplateError::BadName {
                name: String::new()
            })
        );
    }

    #[test]
    fn groups_drop_when_an_argument_is_absent_null_or_false() {
        let elements = [
            single("ls"),
            group(&["--sort", "{sort}"]),
            group(&["--color={color}"]),
        ];
        assert_eq!(
            render_argv(&elements, &arguments(json!({"color": false}))),
            Ok(vec!["ls".into()])
        );
        assert_eq!(
            render_argv(
                &elements,
                &arguments(json!({"sort": null, "color": "always"}))
            ),
            Ok(vec!["ls".into(), "--color=always".into()])
        );
        assert_eq!(
            render_argv(&elements, &arguments(json!({"sort": "size"}))),
            Ok(vec!["ls".into(), "--sort".into(), "size".into()])
        );
    }

    #[test]
    fn flags_follow_booleans() {
        let elements = [ArgvElement::Flag {
            flag: "-a".into(),
            argument: "all".into(),
        }];
        assert_eq!(
            render_argv(&elements, &arguments(json!({"all": true}))),
            Ok(vec!["-a".into()])
        );
        assert_eq!(
            render_argv(&elements, &arguments(json!({"all": false}))),
            Ok(vec![])
        );
        assert_eq!(render_argv(&elements, &arguments(json!({}))), Ok(vec![]));
    }

    #[test]
    fn declared_lists_repeat_elements_and_groups() {
        let elements = [
            repeating(&["--tag", "{tags}"], "tags", true),
            repeating(&["{files}"], "files", false),
        ];
        let rendered = render_argv(
            &elements,
            &arguments(json!({"tags": ["a", "b"], "files": ["x y", 3, {"k": 1}]})),
        );
        assert_eq!(
            rendered,
            Ok(vec![
                "--tag".into(),
                "a".into(),
                "--tag".into(),
                "b".into(),
                "x y".into(),
                "3".into(),
                "{\"k\":1}".into()
            ])
        );
        assert_eq!(
            render_argv(
                &[repeating(&["{files}"], "files", false)],
                &arguments(json!({"files": []}))
            ),
            Ok(vec![])
        );
    }

    #[test]
    fn an_array_in_an_undeclared_list_is_one_element_of_json() {
        // `x` was not pinned to `"type": "array"` at load, so it cannot add elements.
        for element in [single("{x}"), single("pre-{x}"), group(&["--x", "{x}"])] {
            let rendered = render_argv(
                &[single("prog"), element],
                &arguments(json!({"x": ["--evil", "a"]})),
            )
            .expect("renders");
            assert_eq!(rendered.len(), if rendered[1] == "--x" { 3 } else { 2 });
            assert!(
                rendered
                    .iter()
                    .any(|arg| arg.ends_with("[\"--evil\",\"a\"]")),
                "{rendered:?}"
            );
            assert!(!rendered.contains(&"--evil".to_owned()), "{rendered:?}");
        }
        assert_eq!(
            render_argv(&[single("{x}")], &arguments(json!({"x": []}))),
            Ok(vec!["[]".into()])
        );
    }

    #[test]
    fn objects_render_as_json_and_nul_bytes_are_refused() {
        assert_eq!(
            render_argv(
                &[single("{filter}")],
                &arguments(json!({"filter": {"a": [1, true]}}))
            ),
            Ok(vec!["{\"a\":[1,true]}".into()])
        );
        assert_eq!(
            render_argv(&[single("{q}")], &arguments(json!({"q": "a\u{0}b"}))),
            Err(RenderError::Unrepresentable {
                name: "q".into(),
                sink: "a NUL byte, which cannot be passed to a command"
            })
        );
    }

    #[test]
    fn a_missing_argument_in_a_plain_element_is_an_error() {
        assert_eq!(
            render_argv(&[single("{q}")], &arguments(json!({}))),
            Err(RenderError::Missing { name: "q".into() })
        );
    }

    #[test]
    fn optional_environment_values_are_unset_when_an_argument_is_absent() {
        let template = Template::parse("q={q}").expect("parses");
        assert_eq!(template.render(&arguments(json!({})), Sink::Env), Ok(None));
        assert_eq!(
            template.render(&arguments(json!({"q": 1.5})), Sink::Env),
            Ok(Some("q=1.5".into()))
        );
        assert_eq!(
            template.render(&arguments(json!({})), Sink::Display),
            Ok(Some("q=".into()))
        );
    }

    #[test]
    fn a_json_string_value_can_never_end_its_string() {
        let template = Template::parse(r#"{{"v": "{v}", "admin": false}}"#).expect("parses");
        let mut tried = 0;
        for value in [
            r#"a", "admin": true, "x": ""#,
            "back\\slash\\",
            "\"",
            "line\nbreak\r\ttab\u{0}nul\u{1f}unit\u{8}\u{c}",
            "\u{2028}\u{7f}é🙂</script>",
        ] {
            let rendered = template
                .render(&arguments(json!({ "v": value })), Sink::JsonString)
                .expect("renders")
                .expect("present");
            let document: Value = serde_json::from_str(&rendered).expect("still JSON");
            assert_eq!(document, json!({"v": value, "admin": false}), "{rendered}");
            tried += 1;
        }
        assert_eq!(
            template.render(&arguments(json!({})), Sink::JsonString),
            Ok(Some(r#"{"v": "", "admin": false}"#.into()))
        );
        // A value that is not a string is its JSON text, inside the string.
        assert_eq!(
            template.render(&arguments(json!({"v": {"k": "\""}})), Sink::JsonString),
            Ok(Some(r#"{"v": "{\"k\":\"\\\"\"}", "admin": false}"#.into()))
        );
        eprintln!("JSON string sink: {tried} hostile values, each one string");
    }

    #[test]
    fn each_sink_refuses_what_it_cannot_carry() {
        let template = Template::parse("{v}").expect("parses");
        let line_break = arguments(json!({"v": "a\r\nHost: evil"}));
        assert!(template.render(&line_break, Sink::Header).is_err());
        assert_eq!(
            template.render(&line_break, Sink::Env),
            Ok(Some("a\r\nHost: evil".into()))
        );
        assert_eq!(
            template.render(&arguments(json!({"v": "../a/b?c#d"})), Sink::PathSegment),
            Ok(Some("..%2Fa%2Fb%3Fc%23d".into()))
        );
    }
}
