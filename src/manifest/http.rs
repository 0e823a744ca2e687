//! `[tools.http]`: the request, checked so that arguments can only reach structural sinks,
//! with secrets resolved at load.

use std::ops::Range;

use toml::Spanned;

use super::Checker;
use super::command::{ArgumentFacts, DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT, template_at};
use super::json::toml_to_json;
use super::wire::HttpWire;
use crate::backend::http::{
    Body, HttpBackend, JsonTemplate, LazyClient, RedirectRules, UrlTemplate,
};
use crate::secret::{Redactor, resolve};
use crate::suggest::suggest;
use crate::template::Template;
use crate::units::{parse_duration, parse_size};

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

pub(super) fn build_http(
    wire: &Spanned<HttpWire>,
    tool: &str,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<HttpBackend> {
    let errors_before = checker.diagnostics.len();
    let wire = wire.get_ref();
    let mut secrets = Vec::new();
    let method = match &wire.method {
        None => reqwest::Method::GET,
        Some(method) => {
            let upper = method.get_ref().to_ascii_uppercase();
            if METHODS.contains(&upper.as_str()) {
                reqwest::Method::from_bytes(upper.as_bytes()).unwrap_or(reqwest::Method::GET)
            } else {
                checker
                    .error(
                        format!("unknown HTTP method `{}`", method.get_ref()),
                        method.span(),
                    )
                    .suggest(suggest(&upper, METHODS));
                reqwest::Method::GET
            }
        }
    };
    let url = url_template(&wire.url, facts, &mut secrets, checker);

    let (query, headers) = query_and_headers(wire, facts, &mut secrets, checker);
    let body = body(wire, facts, checker);
    let timeout = wire.timeout.as_ref().map_or(DEFAULT_TIMEOUT, |value| {
        parse_duration(value.get_ref()).unwrap_or_else(|problem| {
            checker.error(format!("invalid `timeout`: {problem}"), value.span());
            DEFAULT_TIMEOUT
        })
    });
    let max_response = wire
        .max_response
        .as_ref()
        .map_or(DEFAULT_MAX_OUTPUT, |value| {
            parse_size(value.get_ref()).unwrap_or_else(|problem| {
                checker.error(format!("invalid `max-response`: {problem}"), value.span());
                DEFAULT_MAX_OUTPUT
            })
        });
    let success_statuses = match &wire.success_statuses {
        None => Vec::new(),
        Some(codes) => codes
            .get_ref()
            .iter()
            .filter_map(|code| {
                let status = u16::try_from(*code)
                    .ok()
                    .filter(|code| (100..=599).contains(code));
                if status.is_none() {
                    checker.error(format!("`{code}` is not an HTTP status"), codes.span());
                }
                status
            })
            .collect(),
    };
    if let Some(pointer) = &wire.response_pointer
        && !(pointer.get_ref().is_empty() || pointer.get_ref().starts_with('/'))
    {
        checker
            .error(
                "`response-pointer` is a JSON pointer such as `/data/items`",
                pointer.span(),
            )
            .hint("it starts with `/`; `~1` stands for `/` inside a key");
    }
    let client = LazyClient::new(RedirectRules {
        max_redirects: wire.max_redirects.unwrap_or(5),
        allow_other_hosts: wire.allow_other_hosts.unwrap_or(false),
    });
    if checker.diagnostics.len() > errors_before {
        return None;
    }
    Some(HttpBackend {
        tool: tool.to_owned(),
        method,
        url: url?,
        query,
        headers,
        body,
        timeout,
        max_response,
        success_statuses,
        pointer: wire
            .response_pointer
            .as_ref()
            .map(|pointer| pointer.get_ref().clone()),
        client,
        redactor: Redactor::new(secrets),
    })
}

type Pairs = Vec<(String, Template)>;
type Headers = Vec<(reqwest::header::HeaderName, Template)>;

/// The query parameters and headers, with secrets resolved.
fn query_and_headers(
    wire: &HttpWire,
    facts: &ArgumentFacts,
    secrets: &mut Vec<String>,
    checker: &mut Checker,
) -> (Pairs, Headers) {
    let mut query = Vec::new();
    for (name, value) in wire.query.iter().flatten() {
        let text = match value.get_ref() {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                value.get_ref().to_string()
            }
            _ => {
                checker.error(
                    "a query value is a string (or a number or boolean)",
                    value.span(),
                );
                continue;
            }
        };
        if let Some(template) = secret_template(&text, value.span(), facts, secrets, checker) {
            query.push((name.get_ref().clone(), template));
        }
    }

    let mut headers = Vec::new();
    for (name, value) in wire.headers.iter().flatten() {
        let Ok(header) = reqwest::header::HeaderName::from_bytes(name.get_ref().as_bytes()) else {
            checker.error(
                format!("`{}` is not a valid header name", name.get_ref()),
                name.span(),
            );
            continue;
        };
        if let Some(template) =
            secret_template(value.get_ref(), value.span(), facts, secrets, checker)
        {
            if template
                .as_literal()
                .is_some_and(|text| reqwest::header::HeaderValue::from_str(&text).is_err())
            {
                checker.error(
                    format!(
                        "the value of header `{}` is not a valid header value",
                        name.get_ref()
                    ),
                    value.span(),
                );
            }
            headers.push((header, template));
        }
    }

    (query, headers)
}

/// Splits the URL into a literal origin and templated path segments.
fn url_template(
    url: &Spanned<String>,
    facts: &ArgumentFacts,
    secrets: &mut Vec<String>,
    checker: &mut Checker,
) -> Option<UrlTemplate> {
    let span = url.span();
    let (text, used) = match resolve(url.get_ref(), &checker.base_dir) {
        Ok(resolved) => resolved,
        Err(error) => {
            checker.error(format!("`url`: {error}"), span);
            return None;
        }
    };
    secrets.extend(used);
    let Some((scheme, rest)) = text
        .split_once("://")
        .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
    else {
        checker.error("`url` must start with `http://` or `https://`", span);
        return None;
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(authority_end);
    if authority.is_empty() || authority.contains(['{', '}']) {
        checker
            .error(
                "the scheme, host and port of `url` must be written out",
                span,
            )
            .hint("arguments can fill path segments and query parameters, never the host");
        return None;
    }
    if rest.contains('#') {
        checker.error("`url` cannot have a fragment", span);
        return None;
    }
    let (path, literal_query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    if literal_query.is_some_and(|query| query.contains(['{', '}'])) {
        checker
            .error(
                "placeholders in the query go in the `query` table, not in `url`",
                span,
            )
            .hint("for example: query = { q = \"{query}\" }");
        return None;
    }
    let mut segments = Vec::new();
    for segment in path.split('/').skip(1) {
        let template = template_at(segment, span.clone(), facts, checker)?;
        for name in template.placeholders() {
            if !facts.is_always_present(name) {
                checker
                    .error(
                        format!("argument `{name}` is optional, so it cannot fill a path segment"),
                        span.clone(),
                    )
                    .hint("make it required, give it a default, or pass it in `query`");
            }
        }
        segments.push(template);
    }
    Some(UrlTemplate {
        origin: format!("{scheme}://{authority}"),
        segments,
        literal_query: literal_query.map(str::to_owned),
    })
}

/// Resolves secrets in `text`, then parses it as a template.
fn secret_template(
    text: &str,
    span: Range<usize>,
    facts: &ArgumentFacts,
    secrets: &mut Vec<String>,
    checker: &mut Checker,
) -> Option<Template> {
    match resolve(text, &checker.base_dir) {
        Ok((resolved, used)) => {
            secrets.extend(used);
            template_at(&resolved, span, facts, checker)
        }
        Err(error) => {
            checker.error(error.to_string(), span);
            None
        }
    }
}

fn body(wire: &HttpWire, facts: &ArgumentFacts, checker: &mut Checker) -> Body {
    match (&wire.body, &wire.json, &wire.form) {
        (None, None, None) => Body::None,
        (Some(body), None, None) => {
            if body.get_ref() == "arguments" {
                Body::Arguments
            } else {
                checker
                    .error(format!("unknown `body` `{}`", body.get_ref()), body.span())
                    .hint("`body = \"arguments\"` sends all arguments as JSON; use `json` or `form` for more control");
                Body::None
            }
        }
        (None, Some(json), None) => json_template(json.get_ref(), json.span(), facts, checker)
            .map_or(Body::None, Body::Json),
        (None, None, Some(form)) => Body::Form(
            form.iter()
                .filter_map(|(name, value)| {
                    Some((
                        name.get_ref().clone(),
                        template_at(value.get_ref(), value.span(), facts, checker)?,
                    ))
                })
                .collect(),
        ),
        _ => {
            checker.error(
                "a request has one body: `body`, `json` or `form`",
                wire.url.span(),
            );
            Body::None
        }
    }
}

fn json_template(
    value: &toml::Value,
    span: Range<usize>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<JsonTemplate> {
    Some(match value {
        toml::Value::String(text) => {
            let template = template_at(text, span, facts, checker)?;
            if let Some(name) = template.sole_placeholder() {
                JsonTemplate::Value(name.to_owned())
            } else if let Some(literal) = template.as_literal() {
                JsonTemplate::Literal(serde_json::Value::String(literal))
            } else {
                JsonTemplate::Text(template)
            }
        }
        toml::Value::Array(items) => JsonTemplate::Array(
            items
                .iter()
                .map(|item| json_template(item, span.clone(), facts, checker))
                .collect::<Option<_>>()?,
        ),
        toml::Value::Table(table) => JsonTemplate::Object(
            table
                .iter()
                .map(|(key, item)| {
                    Some((
                        key.clone(),
                        json_template(item, span.clone(), facts, checker)?,
                    ))
                })
                .collect::<Option<_>>()?,
        ),
        other => JsonTemplate::Literal(toml_to_json(other)?),
    })
}
