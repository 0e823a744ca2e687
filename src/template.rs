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
    #[error("the value of `{name}` contains a NUL byte, which cannot be passed to a command")]
    NulByte { name: String },
    #[error("an element uses two list arguments (`{first}` and `{second}`); only one can repeat")]
    TwoLists { first: String, second: String },
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
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
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

    /// Renders with `repeat` standing in for the one list argument being expanded.
    fn render_with(
        &self,
        arguments: &Map<String, Value>,
        repeat: Option<(&str, &Value)>,
    ) -> Result<String, RenderError> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Placeholder(name) => {
                    let value = match repeat {
                        Some((list, item)) if list == name => Some(item),
                        _ => present(arguments, name),
                    };
                    let value = value.ok_or_else(|| RenderError::Missing { name: name.clone() })?;
                    let text = value_text(value);
                    if text.contains('\0') {
                        return Err(RenderError::NulByte { name: name.clone() });
                    }
                    out.push_str(&text);
                }
            }
        }
        Ok(out)
    }

    /// Renders with each value passed through `encode` (for URL parts); `None` when an
    /// argument it uses is absent. Literal text is kept as written.
    pub fn render_encoded(
        &self,
        arguments: &Map<String, Value>,
        encode: impl Fn(&str) -> String,
    ) -> Option<String> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Placeholder(name) => {
                    out.push_str(&encode(&value_text(present(arguments, name)?)));
                }
            }
        }
        Some(out)
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

    /// Renders text for a person to read: an absent argument reads as nothing.
    pub fn render_lenient(&self, arguments: &Map<String, Value>) -> String {
        self.segments
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => text.clone(),
                Segment::Placeholder(name) => {
                    present(arguments, name).map(value_text).unwrap_or_default()
                }
            })
            .collect()
    }

    /// Renders a template used outside argv (an environment value): `None` when an argument
    /// it uses is absent, so the variable is left unset.
    pub fn render_optional(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Option<String>, RenderError> {
        if self
            .placeholders()
            .any(|name| present(arguments, name).is_none())
        {
            return Ok(None);
        }
        self.render_with(arguments, None).map(Some)
    }
}

/// One element of a command line as the manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgvElement {
    /// A string such as `"--limit={limit}"`: always present.
    Single(Template),
    /// A nested array such as `["--limit", "{limit}"]`: all or nothing.
    Group(Vec<Template>),
    /// `{ flag = "--all", if = "all" }`: present when the boolean argument is `true`.
    Flag { flag: String, argument: String },
}

impl ArgvElement {
    /// Every argument name the element uses.
    pub fn placeholders(&self) -> Vec<&str> {
        match self {
            Self::Single(template) => template.placeholders().collect(),
            Self::Group(templates) => templates.iter().flat_map(Template::placeholders).collect(),
            Self::Flag { argument, .. } => vec![argument.as_str()],
        }
    }
}

/// Renders a whole command line (or a script's positional parameters).
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
            ArgvElement::Single(template) => {
                render_repeated(std::slice::from_ref(template), arguments, &mut argv)?;
            }
            ArgvElement::Group(templates) => {
                let included = templates
                    .iter()
                    .flat_map(Template::placeholders)
                    .all(|name| {
                        present(arguments, name).is_some_and(|value| *value != Value::Bool(false))
                    });
                if included {
                    render_repeated(templates, arguments, &mut argv)?;
                }
            }
        }
    }
    Ok(argv)
}

/// Renders `templates` once, or once per item when they use a list argument.
fn render_repeated(
    templates: &[Template],
    arguments: &Map<String, Value>,
    argv: &mut Vec<String>,
) -> Result<(), RenderError> {
    let mut list: Option<(&str, &Vec<Value>)> = None;
    for name in templates.iter().flat_map(Template::placeholders) {
        if let Some(Value::Array(items)) = present(arguments, name) {
            match list {
                Some((first, _)) if first != name => {
                    return Err(RenderError::TwoLists {
                        first: first.to_owned(),
                        second: name.to_owned(),
                    });
                }
                _ => list = Some((name, items)),
            }
        }
    }
    match list {
        None => {
            for template in templates {
                argv.push(template.render_with(arguments, None)?);
            }
        }
        Some((name, items)) => {
            for item in items {
                for template in templates {
                    argv.push(template.render_with(arguments, Some((name, item)))?);
                }
            }
        }
    }
    Ok(())
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

    use super::{ArgvElement, RenderError, Template, TemplateError, render_argv};

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn single(text: &str) -> ArgvElement {
        ArgvElement::Single(Template::parse(text).expect("template parses"))
    }

    fn group(texts: &[&str]) -> ArgvElement {
        ArgvElement::Group(
            texts
                .iter()
                .map(|text| Template::parse(text).expect("template parses"))
                .collect(),
        )
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
            &[ArgvElement::Single(template)],
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
    fn lists_repeat_elements_and_groups() {
        let elements = [group(&["--tag", "{tags}"]), single("{files}")];
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
            render_argv(&[single("{files}")], &arguments(json!({"files": []}))),
            Ok(vec![])
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
            Err(RenderError::NulByte { name: "q".into() })
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
        assert_eq!(template.render_optional(&arguments(json!({}))), Ok(None));
        assert_eq!(
            template.render_optional(&arguments(json!({"q": 1.5}))),
            Ok(Some("q=1.5".into()))
        );
    }
}
