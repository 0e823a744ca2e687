//! Security schemes as credentials read from the environment: each scheme an operation
//! needs becomes a header or query value holding `${env:NAME}`, so the secret stays out of
//! the manifest and, as every `${env:…}`, out of `tools/list`, logs and results.

use serde_json::Value;

use super::document::Document;
use super::operation::Operation;

/// A variable the manifest reads, and what to put in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    pub variable: String,
    pub scheme: String,
    pub explanation: String,
}

/// Where a credential goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Header,
    Query,
}

/// One value a request carries: `name = value`, the value holding `${env:…}`.
#[derive(Debug, Clone)]
pub struct Credential {
    pub place: Place,
    pub name: String,
    pub value: String,
}

/// The schemes of one description, and the variables used so far.
#[derive(Debug)]
pub struct Secrets<'a> {
    document: &'a Document,
    prefix: String,
    used: Vec<Secret>,
}

impl<'a> Secrets<'a> {
    pub fn new(document: &'a Document, prefix: &str) -> Self {
        Self {
            document,
            prefix: prefix.to_owned(),
            used: Vec::new(),
        }
    }

    /// What an operation sends: the first alternative of its `security` (else the
    /// document's) that mcp-serve can send; nothing when anonymous access comes first.
    /// Notes say what could not be sent.
    pub fn for_operation(&mut self, operation: &Operation<'_>) -> (Vec<Credential>, Vec<String>) {
        let requirements = operation
            .operation
            .get("security")
            .or_else(|| self.document.root.get("security"))
            .and_then(Value::as_array);
        let Some(requirements) = requirements else {
            return (Vec::new(), Vec::new());
        };
        let mut notes = Vec::new();
        for requirement in requirements {
            let Some(schemes) = requirement.as_object() else {
                continue;
            };
            let mut credentials = Vec::new();
            let mut secrets = Vec::new();
            let mut sendable = true;
            for (name, scopes) in schemes {
                match self.credential(name, scopes) {
                    Ok((credential, secret)) => {
                        credentials.push(credential);
                        secrets.push(secret);
                    }
                    Err(reason) => {
                        notes.push(reason);
                        sendable = false;
                    }
                }
            }
            // Two schemes of one requirement may not set the same header or query key.
            let mut seen: Vec<(Place, String)> = Vec::new();
            for credential in &credentials {
                let key = (credential.place, credential.name.to_ascii_lowercase());
                if seen.contains(&key) && credential.name != "Cookie" {
                    notes.push(format!(
                        "two security schemes both set `{}`",
                        credential.name
                    ));
                    sendable = false;
                }
                seen.push(key);
            }
            if sendable {
                for secret in secrets {
                    if !self.used.contains(&secret) {
                        self.used.push(secret);
                    }
                }
                return (merge_cookies(credentials), Vec::new());
            }
        }
        (Vec::new(), notes)
    }

    pub fn into_used(self) -> Vec<Secret> {
        self.used
    }

    fn credential(&self, name: &str, scopes: &Value) -> Result<(Credential, Secret), String> {
        let scheme = self
            .document
            .root
            .pointer("/components/securitySchemes")
            .and_then(|schemes| schemes.get(name))
            .ok_or_else(|| format!("security scheme `{name}` is not declared"))?;
        let scheme = self.document.resolve(scheme)?;
        let variable = variable_name(&self.prefix, name);
        let reference = format!("${{env:{variable}}}");
        let text = |key: &str| scheme.get(key).and_then(Value::as_str).unwrap_or_default();
        let scopes: Vec<&str> = scopes
            .as_array()
            .map(|scopes| scopes.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let scope_text = if scopes.is_empty() {
            String::new()
        } else {
            format!(" with scopes {}", scopes.join(", "))
        };
        let header = |value: String| Credential {
            place: Place::Header,
            name: "Authorization".to_owned(),
            value,
        };
        let (credential, explanation) = match (text("type"), text("in")) {
            ("apiKey", place @ ("header" | "query" | "cookie")) => {
                api_key(name, place, text("name"), reference)?
            }
            ("http", _) => {
                let kind = text("scheme");
                if kind.eq_ignore_ascii_case("basic") {
                    (
                        header(format!("Basic {reference}")),
                        "`user:password` in base64 (HTTP Basic)".to_owned(),
                    )
                } else if kind.eq_ignore_ascii_case("bearer") {
                    let format = text("bearerFormat");
                    let what = if format.is_empty() {
                        "bearer token".to_owned()
                    } else {
                        format!("bearer token ({format})")
                    };
                    (header(format!("Bearer {reference}")), what)
                } else {
                    // Digest, Negotiate, HOBA…: a challenge and response, not a value to send.
                    return Err(format!(
                        "security scheme `{name}` (HTTP `{kind}`) is not one mcp-serve can send"
                    ));
                }
            }
            ("oauth2" | "openIdConnect", _) => (
                header(format!("Bearer {reference}")),
                format!("OAuth access token{scope_text}, sent as a bearer token"),
            ),
            (kind, _) => {
                return Err(format!(
                    "security scheme `{name}` ({kind}) is not one mcp-serve can send"
                ));
            }
        };
        Ok((
            credential,
            Secret {
                variable,
                scheme: name.to_owned(),
                explanation,
            },
        ))
    }
}

/// An `apiKey` credential. Its name is copied into the request: it must be a plain header or
/// cookie name (never `${…}`, a separator or a framing header), or a query key without a
/// secret reference.
fn api_key(
    name: &str,
    place: &str,
    key: &str,
    reference: String,
) -> Result<(Credential, String), String> {
    let lower = key.to_ascii_lowercase();
    let valid = match place {
        "query" => !key.is_empty() && !key.contains("${") && !key.chars().any(char::is_control),
        _ => {
            super::naming::is_header_name(key)
                && !crate::manifest::FORBIDDEN_HEADERS.contains(&lower.as_str())
                && lower != "host"
        }
    };
    if !valid {
        return Err(format!(
            "security scheme `{name}` names `{key}`, which cannot be sent as a {place} name"
        ));
    }
    let credential = match place {
        "header" => Credential {
            place: Place::Header,
            name: key.to_owned(),
            value: reference,
        },
        "query" => Credential {
            place: Place::Query,
            name: key.to_owned(),
            value: reference,
        },
        _ => Credential {
            place: Place::Header,
            name: "Cookie".to_owned(),
            value: format!("{key}={reference}"),
        },
    };
    Ok((credential, format!("API key, sent as the {place} `{key}`")))
}

/// `PREFIX_SCHEME_NAME`, in upper case, letters, digits and `_` only.
pub fn variable_name(prefix: &str, scheme: &str) -> String {
    let mut name = String::new();
    for c in format!("{prefix}{scheme}").chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        };
        if c == '_' && (name.is_empty() || name.ends_with('_')) {
            continue;
        }
        name.push(c);
    }
    let name = name.trim_end_matches('_').to_owned();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else {
        name
    }
}

/// Several cookie credentials share one `Cookie` header.
fn merge_cookies(credentials: Vec<Credential>) -> Vec<Credential> {
    let mut merged: Vec<Credential> = Vec::new();
    for credential in credentials {
        if credential.name == "Cookie"
            && let Some(existing) = merged.iter_mut().find(|kept| kept.name == "Cookie")
        {
            existing.value = format!("{}; {}", existing.value, credential.value);
            continue;
        }
        merged.push(credential);
    }
    merged
}
