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
use indexmap::IndexMap;

use crate::backend::http::multipart::{DEFAULT_MAX_UPLOAD, Part, PartSource, is_safe_name};
use crate::backend::http::{
    Body, HttpBackend, JsonTemplate, QueryParameter, QueryStyle, RedirectRules,
};
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
    let allow_reserved = allow_reserved(wire, url.as_ref(), &query, facts, checker);
    let max_upload = max_upload(wire, checker);
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
        allow_reserved,
        max_upload,
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

fn max_upload(wire: &HttpWire, checker: &mut Checker) -> usize {
    wire.max_upload
        .as_ref()
        .map_or(DEFAULT_MAX_UPLOAD, |value| {
            parse_size(value.get_ref()).unwrap_or_else(|problem| {
                checker.error(format!("invalid `max-upload`: {problem}"), value.span());
                DEFAULT_MAX_UPLOAD
            })
        })
}

type Pairs = Vec<QueryParameter>;
type Headers = Vec<(reqwest::header::HeaderName, Template)>;

/// The query parameters and headers, with secrets resolved.
fn query_and_headers(
    wire: &HttpWire,
    facts: &ArgumentFacts,
    secrets: &mut SecretUse,
    checker: &mut Checker,
) -> (Pairs, Headers) {
    let query = query_parameters(wire, facts, secrets, checker);
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

/// The query parameters: a template, or a table with the style its value is written in.
fn query_parameters(
    wire: &HttpWire,
    facts: &ArgumentFacts,
    secrets: &mut SecretUse,
    checker: &mut Checker,
) -> Pairs {
    let mut query = Vec::new();
    for (name, value) in wire.query.iter().flatten() {
        let (text, style) = match value.get_ref() {
            toml::Value::String(text) => (text.clone(), QueryStyle::Repeated),
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                (value.get_ref().to_string(), QueryStyle::Repeated)
            }
            toml::Value::Table(table) => {
                let Some(styled) = styled_query(table, value.span(), checker) else {
                    continue;
                };
                styled
            }
            _ => {
                checker.error(
                    "a query value is a string (or a number or boolean), or a table such as `{ value = \"{ids}\", style = \"form\", explode = false }`",
                    value.span(),
                );
                continue;
            }
        };
        if let Some(template) =
            secret_template(&text, value.span(), facts, &mut secrets.used, checker)
        {
            if style != QueryStyle::Repeated && template.sole_placeholder().is_none() {
                checker
                    .error(
                        "a query value with a `style` is one placeholder, such as `\"{ids}\"`",
                        value.span(),
                    )
                    .hint("the style says how that argument's list or object is written");
                continue;
            }
            query.push(QueryParameter {
                name: name.get_ref().clone(),
                template,
                style,
            });
        }
    }
    query
}

/// `{ value = "{ids}", style = "form", explode = false }`: the value and how a list or
/// object in it is written, as OpenAPI names it.
fn styled_query(
    table: &toml::Table,
    span: Range<usize>,
    checker: &mut Checker,
) -> Option<(String, QueryStyle)> {
    const STYLES: [&str; 4] = ["form", "spaceDelimited", "pipeDelimited", "deepObject"];
    if let Some(key) = table
        .keys()
        .find(|key| !matches!(key.as_str(), "value" | "style" | "explode"))
    {
        checker
            .error(format!("unknown key `{key}` in a query value"), span)
            .hint("a query table has `value`, `style` and `explode`");
        return None;
    }
    let Some(text) = table.get("value").and_then(toml::Value::as_str) else {
        checker.error(
            "a query table needs `value`, a string such as `\"{ids}\"`",
            span,
        );
        return None;
    };
    let explode = match table.get("explode") {
        None => None,
        Some(toml::Value::Boolean(explode)) => Some(*explode),
        Some(_) => {
            checker.error("`explode` is true or false", span);
            return None;
        }
    };
    let style = match table.get("style") {
        None => "form",
        Some(toml::Value::String(style)) => style.as_str(),
        Some(_) => {
            checker.error("`style` is a string", span);
            return None;
        }
    };
    let style = match (style, explode) {
        ("form", None | Some(true)) => QueryStyle::Repeated,
        ("form", Some(false)) => QueryStyle::Comma,
        ("spaceDelimited", None | Some(false)) => QueryStyle::Space,
        ("pipeDelimited", None | Some(false)) => QueryStyle::Pipe,
        ("deepObject", None | Some(true)) => QueryStyle::DeepObject,
        (known, Some(explode)) if STYLES.contains(&known) => {
            checker
                .error(format!("`style = \"{known}\"` is not written with `explode = {explode}`"), span)
                .hint("`form` takes either; `spaceDelimited` and `pipeDelimited` are never exploded; `deepObject` always is");
            return None;
        }
        (unknown, _) => {
            checker
                .error(format!("unknown query `style` `{unknown}`"), span)
                .suggest(suggest(unknown, STYLES))
                .hint("one of `form`, `spaceDelimited`, `pipeDelimited`, `deepObject`");
            return None;
        }
    };
    Some((text.to_owned(), style))
}

/// `allow-reserved`: each name is an argument that fills a whole path segment or query
/// value on its own.
fn allow_reserved(
    wire: &HttpWire,
    url: Option<&crate::backend::http::UrlTemplate>,
    query: &[QueryParameter],
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Vec<String> {
    let Some(names) = &wire.allow_reserved else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    for name in names.get_ref() {
        let whole = |template: &Template| template.sole_placeholder() == Some(name.as_str());
        let used = url.is_some_and(|url| url.segments.iter().any(whole))
            || query.iter().any(|parameter| whole(&parameter.template));
        if !facts.names.iter().any(|known| known == name) {
            checker
                .error(
                    format!("`allow-reserved` names `{name}`, which is not an argument"),
                    names.span(),
                )
                .suggest(suggest(name, facts.names.iter().map(String::as_str)));
        } else if !used {
            checker
                .error(
                    format!("`allow-reserved` names `{name}`, which fills no whole path segment or query value"),
                    names.span(),
                )
                .hint("write it alone between two `/` (`/contents/{path}`) or as a whole query value (`\"{path}\"`)");
        } else {
            kept.push(name.clone());
        }
    }
    kept
}

/// `[tools.http.multipart]`: each part a text template, or a table with `file`
/// (`"folder/{path}"`, the folder checked as a file template's is) or `base64`, and
/// optional `filename` and `content-type`.
fn multipart(
    parts: &IndexMap<Spanned<String>, Spanned<toml::Value>>,
    facts: &ArgumentFacts,
    secrets: &mut Used,
    checker: &mut Checker,
) -> Option<Vec<Part>> {
    let mut out = Vec::new();
    let mut ok = true;
    for (name, value) in parts {
        match multipart_part(name, value, facts, secrets, checker) {
            Some(part) => out.push(part),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// `image/png`, `text/plain; charset=utf-8`: a type and subtype of token characters, as a
/// header value can carry them.
fn is_media_type(text: &str) -> bool {
    let token = |part: Option<&str>| {
        part.is_some_and(|part| !part.is_empty() && super::headers::is_header_name(part))
    };
    text.split(';').next().is_some_and(|essence| {
        let mut halves = essence.trim().split('/');
        token(halves.next()) && token(halves.next()) && halves.next().is_none()
    }) && reqwest::header::HeaderValue::from_str(text).is_ok()
        && !text.contains(['\r', '\n'])
}

/// Where a part's bytes come from: `value`, `file` or `base64`, one of them.
fn part_source(
    value: Option<String>,
    file: Option<String>,
    base64: Option<String>,
    span: &Range<usize>,
    facts: &ArgumentFacts,
    secrets: &mut Used,
    checker: &mut Checker,
) -> Option<PartSource> {
    Some(match (value, file, base64) {
        (Some(value), None, None) => PartSource::Text(secret_template(
            &value,
            span.clone(),
            facts,
            secrets,
            checker,
        )?),
        (None, Some(file), None) => {
            let file = Spanned::new(span.clone(), file);
            let (folder, relative) = super::resource::upload_folder(&file, checker)?;
            let path = template_at(&relative, span.clone(), facts, checker)?;
            if path.placeholders().next().is_none() {
                checker
                    .error("a file part's path has a placeholder after its folder, such as `\"uploads/{path}\"`", span.clone())
                    .hint("the argument names a file inside the folder; the folder is all the tool can read");
                return None;
            }
            PartSource::File { folder, path }
        }
        (None, None, Some(content)) => {
            PartSource::Base64(template_at(&content, span.clone(), facts, checker)?)
        }
        _ => {
            checker
                .error("a multipart part has one of `value`, `file` and `base64`", span.clone())
                .hint("`value` is text, `file` reads a file inside a folder (`\"uploads/{path}\"`), `base64` decodes an argument's content");
            return None;
        }
    })
}

fn multipart_part(
    name: &Spanned<String>,
    value: &Spanned<toml::Value>,
    facts: &ArgumentFacts,
    secrets: &mut Used,
    checker: &mut Checker,
) -> Option<Part> {
    let span = value.span();
    if !is_safe_name(name.get_ref()) {
        checker.error(
            format!("the part name `{}` holds a line break, a control character, `\"` or `\\`, which a part's header cannot carry", name.get_ref().escape_debug()),
            name.span(),
        );
        return None;
    }
    let table = match value.get_ref() {
        toml::Value::String(text) => {
            return Some(Part {
                name: name.get_ref().clone(),
                source: PartSource::Text(secret_template(text, span, facts, secrets, checker)?),
                filename: None,
                content_type: None,
            });
        }
        toml::Value::Table(table) => table,
        _ => {
            checker.error("a multipart part is a text template or a table", span);
            return None;
        }
    };
    if let Some(key) = table.keys().find(|key| {
        !matches!(
            key.as_str(),
            "value" | "file" | "base64" | "filename" | "content-type"
        )
    }) {
        checker
            .error(format!("unknown key `{key}` in a multipart part"), span)
            .hint("a part has one of `value`, `file` and `base64`, and may have `filename` and `content-type`");
        return None;
    }
    let text = |key: &str, checker: &mut Checker| match table.get(key) {
        None => Some(None),
        Some(toml::Value::String(text)) => Some(Some(text.clone())),
        Some(_) => {
            checker.error(format!("`{key}` is a string"), span.clone());
            None
        }
    };
    let value_text = text("value", checker)?;
    let file = text("file", checker)?;
    let base64 = text("base64", checker)?;
    let filename = text("filename", checker)?;
    let content_type = text("content-type", checker)?;
    let source = part_source(value_text, file, base64, &span, facts, secrets, checker)?;
    let filename = match filename {
        None => None,
        Some(text) => {
            let template = template_at(&text, span.clone(), facts, checker)?;
            if template
                .as_literal()
                .is_some_and(|literal| !is_safe_name(&literal))
            {
                checker.error(
                    "`filename` holds a line break, a control character, `\"` or `\\`",
                    span,
                );
                return None;
            }
            Some(template)
        }
    };
    if let Some(content_type) = &content_type {
        let valid = is_media_type(content_type);
        if !valid {
            checker.error(
                format!("`content-type` `{content_type}` is not a media type such as `image/png`"),
                span,
            );
            return None;
        }
    }
    Some(Part {
        name: name.get_ref().clone(),
        source,
        filename,
        content_type,
    })
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
    if let Some(parts) = &wire.multipart {
        if wire.body.is_some() || wire.json.is_some() || wire.form.is_some() {
            checker.error(
                "a request has one body: `body`, `json`, `form` or `multipart`",
                wire.url.span(),
            );
            return Body::None;
        }
        return multipart(parts, facts, secrets, checker).map_or(Body::None, Body::Multipart);
    }
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
