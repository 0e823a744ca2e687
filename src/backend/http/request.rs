//! Building a request from arguments. Values reach it only through structural sinks: a
//! percent-encoded path segment, a serialized query pair, a header value checked for line
//! breaks, a JSON value, a form pair. The scheme, host and port are fixed by the manifest.

use serde_json::{Map, Value};

use super::HttpBackend;
use crate::template::{Sink, Template, value_text};

/// The longest URL sent (the `http` crate's limit is 65,534 bytes; servers accept far less).
const MAX_URL_BYTES: usize = 32 * 1024;

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
}

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

/// Whether a segment reads as `.` or `..` to a URL parser, which would climb the path
/// (WHATWG URL parsing treats `%2e` as a dot).
fn is_dot_segment(segment: &str) -> bool {
    let lowered = segment.to_ascii_lowercase().replace("%2e", ".");
    lowered == "." || lowered == ".."
}

impl HttpBackend {
    /// The request for one call.
    pub(super) fn build(&self, arguments: &Map<String, Value>) -> Result<reqwest::Request, String> {
        let mut url = self.url.origin.clone();
        for segment in &self.url.segments {
            url.push('/');
            let rendered = segment
                .render(arguments, Sink::PathSegment)
                .map_err(|error| error.to_string())?
                .ok_or_else(|| "an argument the URL needs was not given".to_owned())?;
            if segment.placeholders().next().is_some() && is_dot_segment(&rendered) {
                return Err(format!(
                    "a path segment cannot be `{rendered}`: it would move up the URL's path"
                ));
            }
            url.push_str(&rendered);
        }
        if self.url.segments.is_empty() {
            url.push('/');
        }
        if let Some(query) = &self.url.literal_query {
            url.push('?');
            url.push_str(query);
        }
        if url.len() > MAX_URL_BYTES {
            return Err(format!(
                "the URL would be {} bytes, longer than an HTTP request line can carry ({MAX_URL_BYTES})",
                url.len()
            ));
        }
        let mut url =
            reqwest::Url::parse(&url).map_err(|error| format!("the URL is invalid: {error}"))?;
        {
            let mut pairs = url.query_pairs_mut();
            for (name, template) in &self.query {
                for value in repeated(template, arguments) {
                    pairs.append_pair(name, &value);
                }
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        if url.as_str().len() > MAX_URL_BYTES {
            return Err(format!(
                "the URL would be {} bytes, longer than an HTTP request line can carry ({MAX_URL_BYTES})",
                url.as_str().len()
            ));
        }
        let mut request = reqwest::Request::new(self.method.clone(), url);
        *request.timeout_mut() = Some(self.timeout);
        for (name, template) in &self.headers {
            let Some(value) = template
                .render(arguments, Sink::Header)
                .map_err(|_| {
                    format!("the value for the `{name}` header contains a line break or NUL byte, which a header cannot carry")
                })?
            else {
                continue;
            };
            let value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
                format!("the value for the `{name}` header is not a valid header value")
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
        assert_eq!(encode_segment("a\\b"), "a%5Cb");
        assert_eq!(encode_segment("a?b#c%2F d"), "a%3Fb%23c%252F%20d");
        assert_eq!(encode_segment("café"), "caf%C3%A9");
        assert_eq!(encode_segment("ok-1.2_~"), "ok-1.2_~");
    }
}
