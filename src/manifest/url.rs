//! `[tools.http] url`: a literal origin (scheme, host, port: never from an argument), path
//! segments that may use placeholders, and a literal query; secrets resolved per part, each
//! encoded for where it stands.

use toml::Spanned;

use super::Checker;
use super::facts::{ArgumentFacts, template_at};
use super::http::SecretUse;
use crate::backend::http::UrlTemplate;
use crate::template::encode_segment;

/// Splits the URL into a literal origin and templated path segments. Secrets are resolved
/// per part, each encoded for where it stands.
pub(super) fn url_template(
    url: &Spanned<String>,
    facts: &ArgumentFacts,
    secrets: &mut SecretUse,
    checker: &mut Checker,
) -> Option<UrlTemplate> {
    let span = url.span();
    let based;
    let text = if url.get_ref().starts_with("${") {
        based = base_reference(url.get_ref(), secrets, checker, &span)?;
        &based
    } else {
        url.get_ref()
    };
    let Some((scheme, rest)) = text
        .split_once("://")
        .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
    else {
        checker.error("`url` must start with `http://` or `https://`", span);
        return None;
    };
    let authority_end = find_unreferenced(rest, &['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(authority_end);
    let resolved =
        |part: &str, encode: fn(&str) -> String, secrets: &mut SecretUse, checker: &mut Checker| {
            match checker.secret(part, &span, encode) {
                Ok((text, used)) => {
                    secrets.used.extend(used);
                    Some(text)
                }
                Err(error) => {
                    checker.error(format!("`url`: {error}"), span.clone());
                    None
                }
            }
        };
    let authority = resolved(authority, str::to_owned, secrets, checker)?;
    let authority = authority.as_str();
    if authority.is_empty() || authority.contains(['{', '}']) {
        checker
            .error(
                "the scheme, host and port of `url` must be written out",
                span,
            )
            .hint("arguments can fill path segments and query parameters, never the host");
        return None;
    }
    if find_unreferenced(rest, &['#']).is_some() {
        checker.error("`url` cannot have a fragment", span);
        return None;
    }
    let (path, literal_query) = match find_unreferenced(rest, &['?']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let literal_query = match literal_query {
        Some(query) => Some(resolved(query, encode_query, secrets, checker)?),
        None => None,
    };
    if literal_query
        .as_deref()
        .is_some_and(|query| query.contains(['{', '}']))
    {
        checker
            .error(
                "placeholders in the query go in the `query` table, not in `url`",
                span,
            )
            .hint("for example: query = { q = \"{query}\" }");
        return None;
    }
    let mut segments = Vec::new();
    let mut boundaries = vec![];
    let mut rest_of_path = path;
    while let Some(at) = find_unreferenced(rest_of_path, &['/']) {
        boundaries.push(&rest_of_path[..at]);
        rest_of_path = &rest_of_path[at + 1..];
    }
    boundaries.push(rest_of_path);
    for segment in boundaries.into_iter().skip(1) {
        let segment = resolved(segment, encode_segment, secrets, checker)?;
        let template = template_at(&segment, span.clone(), facts, checker)?;
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
        literal_query,
    })
}

/// A URL that starts with a reference, `${env:API_BASE}/items/{id}`: the reference is the
/// base URL (scheme, host, port and perhaps a path), written out before the rest is read.
/// The base is resolved as a whole, without encoding, and must be a plain `http(s)` URL: no
/// query, fragment or braces (its text is literal, never a place for an argument).
fn base_reference(
    text: &str,
    secrets: &mut SecretUse,
    checker: &mut Checker,
    span: &std::ops::Range<usize>,
) -> Option<String> {
    let Some(end) = text.find('}') else {
        checker.error("`url`: a `${` reference is not closed", span.clone());
        return None;
    };
    let (reference, rest) = text.split_at(end + 1);
    let unset_before = checker.unset_count();
    let base = match checker.secret(reference, span, str::to_owned) {
        // Checked without its secrets, an unset base stands as a plain URL, so that the
        // rest of the URL is checked as it will be.
        Ok(_) if checker.unset_count() > unset_before => "https://unset.invalid".to_owned(),
        // Like every reference, its value is a secret: a webhook URL holds its token in the
        // path. Answers that quote it show it redacted, in every form the request carries
        // it (as the URL parser rewrites it, its path alone); a base that is no secret is
        // written out in the manifest instead.
        Ok((base, used)) => {
            secrets.used.extend(used);
            secrets
                .used
                .values
                .extend(crate::secret::base_url_forms(&base));
            base
        }
        Err(error) => {
            checker.error(format!("`url`: {error}"), span.clone());
            return None;
        }
    };
    // What follows the base starts a path or a query: `${env:A}${env:B}` or `${env:A}x`
    // could otherwise extend the host.
    let joined = rest.is_empty() || rest.starts_with(['/', '?']);
    let plain = joined
        && base
            .split_once("://")
            .is_some_and(|(scheme, _)| matches!(scheme, "http" | "https"))
        && !base.contains(['?', '#', '{', '}', ' ']);
    if !plain {
        checker
            .error(
                format!("`url` starts with `{reference}`, which must hold a base URL such as `https://api.example.com/v1`"),
                span.clone(),
            )
            .hint("the scheme, host and port come from the manifest or its environment, never from an argument; a query goes in `query`");
        return None;
    }
    Some(format!("{}{rest}", base.trim_end_matches('/')))
}

/// The first of `separators` in `text` that is not inside a `${…}` secret reference (a
/// `${file:dir/key}` reference holds a `/` that separates nothing).
fn find_unreferenced(text: &str, separators: &[char]) -> Option<usize> {
    let mut inside = false;
    let mut previous = None;
    for (at, c) in text.char_indices() {
        match c {
            '{' if previous == Some('$') => inside = true,
            '}' if inside => inside = false,
            c if !inside && separators.contains(&c) => return Some(at),
            _ => {}
        }
        previous = Some(c);
    }
    None
}

/// A secret inside a literal query string, encoded as a query value.
fn encode_query(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
