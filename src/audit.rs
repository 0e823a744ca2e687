//! `--audit`: one record per tool call, on the log (`target` `mcp_serve::audit`, a JSON object
//! with `--log-format json`): when, who (the token's subject, the session or the client's
//! address), which tool, the outcome, how long it took, and the *shape* of the arguments
//! (each name and its JSON type). Values only with `--audit-values`; the manifest's secrets
//! never appear in either, and the caller's token is never an argument.

use std::time::Duration;

use serde_json::{Map, Value};

/// What the server records, from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Audit {
    pub enabled: bool,
    pub values: bool,
}

use crate::outcome::Outcome;

/// One call's audit entry.
#[derive(Debug)]
pub struct Entry<'a> {
    pub tool: &'a str,
    pub caller: &'a str,
    pub outcome: Outcome,
    pub took: Duration,
    pub arguments: Option<&'a Map<String, Value>>,
}

impl Audit {
    /// Logs the record; `--audit-values` are redacted for every secret the manifest
    /// references (`redactor` is the registry's), not only the called tool's.
    pub fn record(&self, record: &Entry<'_>, redactor: &crate::secret::Redactor) {
        if !self.enabled {
            return;
        }
        let shape = record.arguments.map(shape).unwrap_or_default();
        let values = if self.values {
            let text = record
                .arguments
                .map(|arguments| Value::Object(arguments.clone()).to_string())
                .unwrap_or_default();
            redactor.redact(&text)
        } else {
            String::new()
        };
        tracing::info!(
            target: "mcp_serve::audit",
            tool = record.tool,
            caller = record.caller,
            outcome = record.outcome.label(),
            duration_ms = u64::try_from(record.took.as_millis()).unwrap_or(u64::MAX),
            arguments = %shape,
            values = %values,
            "audit"
        );
    }
}

/// A request the HTTP layer refused before the pipeline saw it (an unauthenticated 401, a
/// 403 for its `Origin`, `Host` or scopes, a 429, a 400 for its headers or body…).
#[derive(Debug)]
pub struct Refused<'a> {
    /// The HTTP status it got.
    pub status: u16,
    /// What it asked for, as far as its headers say (`Mcp-Method`, `Mcp-Name`), else `-`.
    pub method: &'a str,
    pub tool: &'a str,
    /// The token's subject, else the client's address (as a rate limit keys it).
    pub caller: &'a str,
    pub took: Duration,
}

impl Audit {
    /// Logs a refused request: the same target and fields as a call's record, with the
    /// outcome `refused_http` and the status; no arguments (its body was never read).
    pub fn refused(&self, refused: &Refused<'_>) {
        if !self.enabled {
            return;
        }
        tracing::info!(
            target: "mcp_serve::audit",
            tool = refused.tool,
            method = refused.method,
            caller = refused.caller,
            outcome = "refused_http",
            http_status = refused.status,
            duration_ms = u64::try_from(refused.took.as_millis()).unwrap_or(u64::MAX),
            "audit"
        );
    }
}

/// `{"name":"string","limit":"integer"}`: the names and JSON types, never the values.
pub fn shape(arguments: &Map<String, Value>) -> String {
    let shape: Map<String, Value> = arguments
        .iter()
        .filter(|(name, _)| !name.starts_with(crate::auth::PLACEHOLDER_PREFIX))
        .map(|(name, value)| {
            let kind = match value {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(number) if number.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            (name.clone(), Value::String(kind.to_owned()))
        })
        .collect();
    Value::Object(shape).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::shape;

    #[test]
    fn the_shape_names_types_never_values() {
        let arguments =
            json!({"q": "secret text", "limit": 5, "ratio": 0.5, "tags": ["a"], "auth.sub": "ada"});
        let text = shape(arguments.as_object().expect("object"));
        assert_eq!(
            text,
            r#"{"q":"string","limit":"integer","ratio":"number","tags":"array"}"#
        );
    }
}
