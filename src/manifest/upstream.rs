//! `[tools.examples.upstream]`: what an HTTP tool's upstream answers when `mcp-serve test`
//! runs the example against a stand-in, and the request it must receive.

use toml::Spanned;

use super::Checker;
use super::json::toml_to_json;
use super::wire::{ToolWire, UpstreamWire};
use crate::tool::ExampleUpstream;

pub(super) fn build(
    wire: &Spanned<UpstreamWire>,
    tool: &ToolWire,
    checker: &mut Checker,
) -> Option<ExampleUpstream> {
    if tool.http.is_none() {
        checker
            .error("`upstream` is for HTTP tools", wire.span())
            .hint("an example of a command or static tool runs the tool itself");
        return None;
    }
    let upstream = wire.get_ref();
    let status = upstream.status.unwrap_or(200);
    if !(100..=599).contains(&status) {
        checker.error(
            format!("`status` {status} is not an HTTP status"),
            wire.span(),
        );
        return None;
    }
    let (body, content_type) = match &upstream.body {
        None => (Vec::new(), "text/plain"),
        Some(toml::Value::String(text)) => (text.clone().into_bytes(), "text/plain"),
        Some(value) => {
            let Some(json) = toml_to_json(value) else {
                checker.error(
                    "the `body` holds a value JSON cannot represent",
                    wire.span(),
                );
                return None;
            };
            (json.to_string().into_bytes(), "application/json")
        }
    };
    let mut headers: Vec<(String, String)> = upstream
        .headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value.clone()))
        .collect();
    for (name, value) in &headers {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || reqwest::header::HeaderValue::from_str(value).is_err()
        {
            checker.error(
                format!("`{name}: {value}` is not a valid header"),
                wire.span(),
            );
            return None;
        }
    }
    if !headers.iter().any(|(name, _)| name == "content-type") {
        headers.push(("content-type".into(), content_type.into()));
    }
    if let Some(path) = &upstream.path
        && !path.starts_with('/')
    {
        checker.error(format!("`path` `{path}` must start with `/`"), wire.span());
        return None;
    }
    Some(ExampleUpstream {
        status,
        headers,
        body,
        method: upstream
            .method
            .as_ref()
            .map(|method| method.to_ascii_uppercase()),
        path: upstream.path.clone(),
    })
}
