//! `[tools.http]`: the request, checked so that arguments can only reach structural sinks,
//! with secrets resolved at load.

use std::ops::Range;

use toml::Spanned;

use super::Checker;
use super::command::{DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT};
use super::facts::{ArgumentFacts, template_at};
use super::json::toml_to_json;
use super::url::url_template;
use super::wire::HttpWire;
use crate::backend::http::{Body, HttpBackend, JsonTemplate, RedirectRules};
use crate::secret::{Redactor, Used};
use crate::suggest::suggest;
use crate::template::Template;
use crate::units::{parse_duration, parse_size};

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// Headers a manifest can never set: they frame the message or steer the connection, so
/// only the HTTP client may write them.
pub(crate) const FORBIDDEN_HEADERS: [&str; 10] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "http2-settings",
];

/// Headers that carry credentials: arguments may fill them only with
/// `argument-credentials = true`.
pub(crate) const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// What a built HTTP backend needs from the manifest's secrets.
#[derive(Debug, Default)]
pub(super) struct SecretUse {
    pub(super) used: Used,
}

pub(super) fn build_http(
    wire: &Spanned<HttpWire>,
    tool: &str,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<HttpBackend> {
    let errors_before = checker.diagnostics.len();
    let wire = wire.get_ref();
    let mut secrets = SecretUse::default();
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
    let body = body(wire, facts, &mut secrets.used, checker);
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
    let redirects = RedirectRules {
        max_redirects: wire.max_redirects.unwrap_or(5),
        allow_other_hosts: wire.allow_other_hosts.unwrap_or(false),
        carries_secrets: !secrets.used.values.is_empty(),
    };
    if checker.diagnostics.len() > errors_before {
        return None;
    }
    checker.withheld_env.extend(secrets.used.variables);
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
        redirects,
        client: std::sync::OnceLock::new(),
        redactor: Redactor::new(&secrets.used.values),
    })
}

type Pairs = Vec<(String, Template)>;
type Headers = Vec<(reqwest::header::HeaderName, Template)>;

/// The query parameters and headers, with secrets resolved.
fn query_and_headers(
    wire: &HttpWire,
    facts: &ArgumentFacts,
    secrets: &mut SecretUse,
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
        if let Some(template) =
            secret_template(&text, value.span(), facts, &mut secrets.used, checker)
        {
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
        let lower = header.as_str();
        if FORBIDDEN_HEADERS.contains(&lower) {
            checker
                .error(
                    format!("`{}` cannot be set by a manifest", name.get_ref()),
                    name.span(),
                )
                .hint("it frames the message or steers the connection; the HTTP client writes it");
            continue;
        }
        let Some(template) = secret_template(
            value.get_ref(),
            value.span(),
            facts,
            &mut secrets.used,
            checker,
        ) else {
            continue;
        };
        let templated = template.placeholders().next().is_some();
        if templated && lower == "host" {
            checker
                .error("arguments can never choose the `Host` header", value.span())
                .hint(
                    "the host is fixed by the manifest; write it out, or leave `Host` to the URL",
                );
            continue;
        }
        if templated
            && CREDENTIAL_HEADERS.contains(&lower)
            && !wire.argument_credentials.unwrap_or(false)
        {
            checker
                .error(
                    format!("arguments cannot fill the `{}` header", name.get_ref()),
                    value.span(),
                )
                .hint("it carries credentials; reference a secret (`${env:NAME}`), or set `argument-credentials = true` if the caller must supply them");
            continue;
        }
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

/// Resolves secrets in `text`, then parses it as a template.
fn secret_template(
    text: &str,
    span: Range<usize>,
    facts: &ArgumentFacts,
    secrets: &mut Used,
    checker: &mut Checker,
) -> Option<Template> {
    match checker.secret(text, &span, ToOwned::to_owned) {
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

fn body(wire: &HttpWire, facts: &ArgumentFacts, secrets: &mut Used, checker: &mut Checker) -> Body {
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
        (None, Some(json), None) => {
            json_template(json.get_ref(), json.span(), facts, secrets, checker)
                .map_or(Body::None, Body::Json)
        }
        (None, None, Some(form)) => Body::Form(
            form.iter()
                .filter_map(|(name, value)| {
                    let template =
                        secret_template(value.get_ref(), value.span(), facts, secrets, checker)?;
                    Some((name.get_ref().clone(), template))
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
    secrets: &mut Used,
    checker: &mut Checker,
) -> Option<JsonTemplate> {
    Some(match value {
        toml::Value::String(text) => {
            let template = secret_template(text, span, facts, secrets, checker)?;
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
                .map(|item| json_template(item, span.clone(), facts, secrets, checker))
                .collect::<Option<_>>()?,
        ),
        toml::Value::Table(table) => JsonTemplate::Object(
            table
                .iter()
                .map(|(key, item)| {
                    Some((
                        key.clone(),
                        json_template(item, span.clone(), facts, secrets, checker)?,
                    ))
                })
                .collect::<Option<_>>()?,
        ),
        other => JsonTemplate::Literal(toml_to_json(other)?),
    })
}
