//! Building a request from arguments. Values reach it only through structural sinks: a
//! percent-encoded path segment, a serialized query pair, a header value checked for line
//! breaks, a JSON value, a form pair. The scheme, host and port are fixed by the manifest.

use reqwest::header::{HeaderName, InvalidHeaderValue};
use serde_json::{Map, Value};

use super::HttpBackend;
use super::multipart::MultipartError;
use crate::template::{RenderError, Sink, Template, value_text};

/// The longest URL sent (the `http` crate's limit is 65,534 bytes; servers accept far less).
const MAX_URL_BYTES: usize = 32 * 1024;

/// Why a call's arguments make no request: nothing is sent, and the text is what the call's
/// result says (redacted by the backend).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error(
        "the URL would be {bytes} bytes, longer than an HTTP request line can carry ({MAX_URL_BYTES})"
    )]
    UrlTooLong { bytes: usize },
    #[error("the URL is invalid: {source}")]
    Url {
        #[from]
        source: url::ParseError,
    },
    #[error("an argument the URL needs was not given")]
    Missing,
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("a path segment cannot be `{segment}`: it would move up the URL's path")]
    DotSegment { segment: String },
    #[error(
        "`{name}` cannot be `{text}`: each part between its `/` is a path segment, and none may be empty, `.` or `..`"
    )]
    ReservedSegment { name: String, text: String },
    #[error(
        "the value of `{name}` has an item `{item}` holding `{delimiter}`, which separates its items in the query"
    )]
    Delimiter {
        name: String,
        item: String,
        delimiter: char,
    },
    #[error("the value of `{name}` nests deeper than {MAX_DEEP} levels")]
    TooDeep { name: String },
    #[error(
        "the value of `{name}` has a field `{field}` that is empty or holds `[` or `]`, which `deepObject` uses for nesting"
    )]
    DeepField { name: String, field: String },
    #[error(
        "the value for the `{name}` header contains a line break or NUL byte, which a header cannot carry"
    )]
    HeaderBreak {
        name: HeaderName,
        source: RenderError,
    },
    #[error("the value for the `{name}` header is not a valid header value")]
    HeaderValue {
        name: HeaderName,
        source: InvalidHeaderValue,
    },
    #[error(transparent)]
    Multipart(#[from] MultipartError),
}

/// A URL whose origin is literal and whose path segments may use placeholders.
#[derive(Debug, Clone)]
pub struct UrlTemplate {
    /// `scheme://host[:port]`, exactly as written.
    pub origin: String,
    /// The path's segments (after the first `/`), each a template.
    pub segments: Vec<Template>,
    /// A literal query string from the manifest, without `?`.
    pub literal_query: Option<String>,
}

/// The request body.
#[derive(Debug, Clone)]
pub enum Body {
    None,
    /// All arguments as one JSON object.
    Arguments,
    /// A JSON document whose placeholders are replaced by typed values.
    Json(JsonTemplate),
    /// `application/x-www-form-urlencoded` pairs.
    Form(Vec<(String, Template)>),
    /// `multipart/form-data` parts.
    Multipart(Vec<super::multipart::Part>),
}

/// One query parameter: its name (fixed by the manifest), its value template, and how a
/// list or object value is written (OpenAPI's `style` and `explode`).
#[derive(Debug, Clone)]
pub struct QueryParameter {
    pub name: String,
    pub template: Template,
    pub style: QueryStyle,
}

/// How a query value that is a list or an object is written. Every style keeps the
/// parameter's name: a value can add items, never another parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryStyle {
    /// `ids=1&ids=2` (`style: form`, `explode: true`; an object is one value of JSON text).
    Repeated,
    /// `ids=1,2`, `color=R,100,G,200` (`style: form`, `explode: false`).
    Comma,
    /// `ids=1%202` (`spaceDelimited`).
    Space,
    /// `ids=1|2` (`pipeDelimited`).
    Pipe,
    /// `color[R]=100&color[G]=200`, nested as `a[b][c]`, list items as `a[]` (`deepObject`).
    DeepObject,
}

impl QueryStyle {
    fn delimiter(self) -> Option<(char, &'static str)> {
        match self {
            Self::Comma => Some((',', ",")),
            Self::Space => Some((' ', "%20")),
            Self::Pipe => Some(('|', "|")),
            Self::Repeated | Self::DeepObject => None,
        }
    }
}

/// Everything but unreserved characters is encoded in a query key or value, as a form
/// serializer does (a space is `+`).
fn encode_component(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// With `allow-reserved`: RFC 3986's reserved characters stay as they are, but for those
/// that would change how the query is split or read (`&`, `=`, `+`, `#`) and `%`.
const RESERVED_QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b',')
    .remove(b';')
    .remove(b'[')
    .remove(b']');

/// With `allow-reserved` in a path: `/` and the sub-delimiters stay, so a value may span
/// segments; `?`, `#`, `%`, `[` and `]` are still encoded.
const RESERVED_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/')
    .remove(b':')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// How deep a `deepObject` value may nest.
const MAX_DEEP: usize = 8;

/// A JSON body template.
#[derive(Debug, Clone)]
pub enum JsonTemplate {
    Literal(Value),
    /// A string that is exactly `{name}`: the argument's JSON value, whatever its type.
    Value(String),
    /// A string with text around placeholders: a JSON string.
    Text(Template),
    Array(Vec<JsonTemplate>),
    Object(Vec<(String, JsonTemplate)>),
}

impl JsonTemplate {
    /// The value, or `None` when it uses an absent argument (the key is then left out).
    fn render(&self, arguments: &Map<String, Value>) -> Option<Value> {
        match self {
            Self::Literal(value) => Some(value.clone()),
            Self::Value(name) => arguments
                .get(name)
                .filter(|value| !value.is_null())
                .cloned(),
            Self::Text(template) => template
                .render(arguments, Sink::JsonText)
                .ok()
                .flatten()
                .map(Value::String),
            Self::Array(items) => Some(Value::Array(
                items
                    .iter()
                    .filter_map(|item| item.render(arguments))
                    .collect(),
            )),
            Self::Object(entries) => Some(Value::Object(
                entries
                    .iter()
                    .filter_map(|(key, item)| Some((key.clone(), item.render(arguments)?)))
                    .collect(),
            )),
        }
    }

    /// Every argument name it uses.
    pub fn placeholders(&self) -> Vec<&str> {
        match self {
            Self::Literal(_) => Vec::new(),
            Self::Value(name) => vec![name.as_str()],
            Self::Text(template) => template.placeholders().collect(),
            Self::Array(items) => items.iter().flat_map(Self::placeholders).collect(),
            Self::Object(entries) => entries
                .iter()
                .flat_map(|(_, item)| item.placeholders())
                .collect(),
        }
    }
}

/// Whether a segment reads as `.` or `..` to a URL parser or a server, which would climb the
/// path: WHATWG URL parsing treats `%2e` as a dot, and servlet containers (Tomcat, Jetty,
/// Spring) cut a segment's `;` parameters off before resolving dots, so `..;x=1` is `..`
/// to them (`%3b` too, for a server that decodes first).
fn is_dot_segment(segment: &str) -> bool {
    let lowered = segment
        .to_ascii_lowercase()
        .replace("%2e", ".")
        .replace("%3b", ";");
    let bare = lowered.split(';').next().unwrap_or_default();
    bare == "." || bare == ".."
}

impl HttpBackend {
    /// The request for one call.
    pub(super) fn build(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<reqwest::Request, RequestError> {
        let mut url = self.path(arguments)?;
        if let Some(query) = &self.url.literal_query {
            url.push('?');
            url.push_str(query);
        }
        if url.len() > MAX_URL_BYTES {
            return Err(RequestError::UrlTooLong { bytes: url.len() });
        }
        let mut url = reqwest::Url::parse(&url)?;
        let query = self.query_string(url.query().unwrap_or_default(), arguments)?;
        if query.len() > MAX_URL_BYTES {
            // The URL as it would be sent: before its query, `?`, the whole query (which
            // holds the literal query already).
            let bytes = url[..url::Position::AfterPath].len() + 1 + query.len();
            return Err(RequestError::UrlTooLong { bytes });
        }
        url.set_query((!query.is_empty()).then_some(query.as_str()));
        if url.as_str().len() > MAX_URL_BYTES {
            let bytes = url.as_str().len();
            return Err(RequestError::UrlTooLong { bytes });
        }
        let mut request = reqwest::Request::new(self.method.clone(), url);
        *request.timeout_mut() = Some(self.timeout);
        for (name, template) in &self.headers {
            let rendered = template.render(arguments, Sink::Header);
            let Some(value) = rendered.map_err(|source| RequestError::HeaderBreak {
                name: name.clone(),
                source,
            })?
            else {
                continue;
            };
            let value = reqwest::header::HeaderValue::from_str(&value).map_err(|source| {
                RequestError::HeaderValue {
                    name: name.clone(),
                    source,
                }
            })?;
            request.headers_mut().append(name.clone(), value);
        }
        let (content_type, body) = match &self.body {
            Body::None => return Ok(request),
            Body::Arguments => (
                "application/json",
                Value::Object(crate::auth::without_identity(arguments).into_owned()).to_string(),
            ),
            Body::Json(template) => (
                "application/json",
                template
                    .render(arguments)
                    .unwrap_or(Value::Null)
                    .to_string(),
            ),
            Body::Form(pairs) => {
                let mut form = form_urlencoded::Serializer::new(String::new());
                for (name, template) in pairs {
                    for value in repeated(template, arguments) {
                        form.append_pair(name, &value);
                    }
                }
                ("application/x-www-form-urlencoded", form.finish())
            }
            Body::Multipart(parts) => {
                let (content_type, body) =
                    super::multipart::encode(parts, arguments, self.max_upload)?;
                let value =
                    reqwest::header::HeaderValue::from_str(&content_type).map_err(|source| {
                        RequestError::HeaderValue {
                            name: reqwest::header::CONTENT_TYPE,
                            source,
                        }
                    })?;
                request
                    .headers_mut()
                    .insert(reqwest::header::CONTENT_TYPE, value);
                *request.body_mut() = Some(body.into());
                return Ok(request);
            }
        };
        if !request
            .headers()
            .contains_key(reqwest::header::CONTENT_TYPE)
        {
            request.headers_mut().insert(
                reqwest::header::CONTENT_TYPE,
                reqwest::header::HeaderValue::from_static(content_type),
            );
        }
        *request.body_mut() = Some(body.into());
        Ok(request)
    }
}

impl HttpBackend {
    /// The origin and the path, each segment filled in.
    fn path(&self, arguments: &Map<String, Value>) -> Result<String, RequestError> {
        let mut url = self.url.origin.clone();
        for segment in &self.url.segments {
            url.push('/');
            if let Some(name) = segment
                .sole_placeholder()
                .filter(|name| self.allow_reserved.iter().any(|kept| kept == name))
            {
                url.push_str(&reserved_path(name, arguments)?);
                continue;
            }
            let rendered = segment
                .render(arguments, Sink::PathSegment)?
                .ok_or(RequestError::Missing)?;
            if segment.placeholders().next().is_some() && is_dot_segment(&rendered) {
                return Err(RequestError::DotSegment { segment: rendered });
            }
            url.push_str(&rendered);
        }
        if self.url.segments.is_empty() {
            url.push('/');
        }
        Ok(url)
    }

    /// The literal query, then each parameter's pairs, encoded.
    fn query_string(
        &self,
        literal: &str,
        arguments: &Map<String, Value>,
    ) -> Result<String, RequestError> {
        let mut query = literal.to_owned();
        for parameter in &self.query {
            let reserved = parameter
                .template
                .sole_placeholder()
                .is_some_and(|name| self.allow_reserved.iter().any(|kept| kept == name));
            for pair in query_pairs(parameter, arguments, reserved)? {
                if !query.is_empty() {
                    query.push('&');
                }
                query.push_str(&pair);
            }
        }
        Ok(query)
    }
}

/// A path value that keeps `/` (`allow-reserved`): each segment it makes is refused when
/// empty or a dot segment, so it can neither climb the path nor leave it.
fn reserved_path(name: &str, arguments: &Map<String, Value>) -> Result<String, RequestError> {
    let value = arguments
        .get(name)
        .filter(|value| !value.is_null())
        .ok_or(RequestError::Missing)?;
    let text = value_text(value);
    let encoded = percent_encoding::utf8_percent_encode(&text, RESERVED_PATH).to_string();
    for segment in encoded.split('/') {
        if segment.is_empty() || is_dot_segment(segment) {
            let name = name.to_owned();
            return Err(RequestError::ReservedSegment { name, text });
        }
    }
    Ok(encoded)
}

/// The encoded `key=value` pairs one query parameter adds: none when its argument is
/// absent. Every key is the parameter's name, or (`deepObject`) starts with it and `[`.
fn query_pairs(
    parameter: &QueryParameter,
    arguments: &Map<String, Value>,
    reserved: bool,
) -> Result<Vec<String>, RequestError> {
    let encode_value = |text: &str| {
        if reserved {
            percent_encoding::utf8_percent_encode(text, RESERVED_QUERY).to_string()
        } else {
            encode_component(text)
        }
    };
    let key = encode_component(&parameter.name);
    let value = match parameter.template.sole_placeholder() {
        Some(name) => match arguments.get(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(value) => value,
        },
        None => {
            return Ok(parameter
                .template
                .render(arguments, Sink::Query)
                .ok()
                .flatten()
                .map(|text| format!("{key}={}", encode_value(&text)))
                .into_iter()
                .collect());
        }
    };
    let name = &parameter.name;
    match (parameter.style, value) {
        (QueryStyle::Repeated, Value::Array(items)) => Ok(items
            .iter()
            .map(|item| format!("{key}={}", encode_value(&value_text(item))))
            .collect()),
        (QueryStyle::DeepObject, Value::Object(_) | Value::Array(_)) => {
            let mut pairs = Vec::new();
            deep_pairs(name, &key, value, 0, &encode_value, &mut pairs)?;
            Ok(pairs)
        }
        (style, Value::Array(_) | Value::Object(_)) if style.delimiter().is_some() => {
            let (delimiter, encoded) = style.delimiter().unwrap_or((',', ","));
            let texts: Vec<String> = match value {
                Value::Array(items) => items.iter().map(value_text).collect(),
                Value::Object(fields) => fields
                    .iter()
                    .flat_map(|(field, item)| [field.clone(), value_text(item)])
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(item) = texts.iter().find(|text| text.contains(delimiter)) {
                return Err(RequestError::Delimiter {
                    name: name.clone(),
                    item: item.clone(),
                    delimiter,
                });
            }
            if texts.is_empty() {
                return Ok(Vec::new());
            }
            let joined: Vec<String> = texts.iter().map(|text| encode_value(text)).collect();
            Ok(vec![format!("{key}={}", joined.join(encoded))])
        }
        (_, value) => Ok(vec![format!("{key}={}", encode_value(&value_text(value)))]),
    }
}

/// `deepObject` pairs: `key[field]=value`, nested fields as more brackets, list items as
/// `key[]` (or `key[0]` when they nest further). A field name with a bracket is refused:
/// it could not be told from the nesting.
fn deep_pairs(
    name: &str,
    key: &str,
    value: &Value,
    depth: usize,
    encode_value: &dyn Fn(&str) -> String,
    pairs: &mut Vec<String>,
) -> Result<(), RequestError> {
    if depth > MAX_DEEP {
        let name = name.to_owned();
        return Err(RequestError::TooDeep { name });
    }
    match value {
        Value::Object(fields) => {
            for (field, item) in fields {
                if field.is_empty() || field.contains(['[', ']']) {
                    return Err(RequestError::DeepField {
                        name: name.to_owned(),
                        field: field.clone(),
                    });
                }
                let nested = format!("{key}[{}]", encode_component(field));
                deep_pairs(name, &nested, item, depth + 1, encode_value, pairs)?;
            }
        }
        Value::Array(items) => {
            let flat = items
                .iter()
                .all(|item| !matches!(item, Value::Array(_) | Value::Object(_)));
            for (index, item) in items.iter().enumerate() {
                let nested = if flat {
                    format!("{key}[]")
                } else {
                    format!("{key}[{index}]")
                };
                deep_pairs(name, &nested, item, depth + 1, encode_value, pairs)?;
            }
        }
        Value::Null => {}
        scalar => pairs.push(format!("{key}={}", encode_value(&value_text(scalar)))),
    }
    Ok(())
}

/// A query or form value: nothing when its argument is absent, one pair per item for a list.
fn repeated(template: &Template, arguments: &Map<String, Value>) -> Vec<String> {
    if let Some(name) = template.sole_placeholder() {
        return match arguments.get(name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().map(value_text).collect(),
            Some(value) => vec![value_text(value)],
        };
    }
    template
        .render(arguments, Sink::Query)
        .ok()
        .flatten()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_dot_segment;
    use crate::template::encode_segment;

    #[test]
    fn path_values_cannot_change_the_path() {
        assert_eq!(encode_segment("../etc/passwd"), "..%2Fetc%2Fpasswd");
        assert!(is_dot_segment(&encode_segment("..")));
        assert!(is_dot_segment(".%2E") && is_dot_segment("%2e") && !is_dot_segment("..."));
        for parameter in [
            "..;",
            "..;jsessionid=1",
            ".;x",
            "%2e%2e;a=b",
            "..%3B",
            "..%3bx",
        ] {
            assert!(is_dot_segment(parameter), "{parameter}");
        }
        assert!(!is_dot_segment("...;x") && !is_dot_segment("a..;") && !is_dot_segment(";.."));
        assert_eq!(encode_segment("a\\b"), "a%5Cb");
        assert_eq!(encode_segment("a?b#c%2F d"), "a%3Fb%23c%252F%20d");
        assert_eq!(encode_segment("café"), "caf%C3%A9");
        assert_eq!(encode_segment("ok-1.2_~"), "ok-1.2_~");
    }
}
