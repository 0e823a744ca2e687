//! Secrets by reference: `${env:NAME}` and `${file:PATH}` in a manifest, resolved once at
//! start-up, and a redactor that keeps their values out of every result and message.

use std::path::Path;
use std::sync::Arc;

/// Why a secret reference could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the environment variable `{name}` is not set")]
    MissingVariable { name: String },
    #[error("could not read the secret file `{path}`: {reason}")]
    UnreadableFile { path: String, reason: String },
    #[error(
        "`${{{reference}}}` is not a secret reference; write `${{env:NAME}}` or `${{file:PATH}}`"
    )]
    Unknown { reference: String },
    #[error("a `${{` is never closed")]
    Unclosed,
}

/// Replaces every `${env:NAME}` / `${file:PATH}` in `text` with the secret's value, escaped
/// for the template syntax (`{` → `{{`). Returns the text and the values it used.
pub fn resolve(text: &str, base_dir: &Path) -> Result<(String, Vec<String>), SecretError> {
    let mut out = String::with_capacity(text.len());
    let mut used = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(SecretError::Unclosed)?;
        let reference = &after[..end];
        let value = match reference.split_once(':') {
            Some(("env", name)) => {
                std::env::var(name).map_err(|_| SecretError::MissingVariable {
                    name: name.to_owned(),
                })?
            }
            Some(("file", path)) => std::fs::read_to_string(base_dir.join(path))
                .map_err(|error| SecretError::UnreadableFile {
                    path: path.to_owned(),
                    reason: error.to_string(),
                })?
                .trim_end_matches(['\n', '\r'])
                .to_owned(),
            _ => {
                return Err(SecretError::Unknown {
                    reference: reference.to_owned(),
                });
            }
        };
        out.push_str(&value.replace('{', "{{").replace('}', "}}"));
        if !value.is_empty() {
            used.push(value);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, used))
}

/// Replaces known secret values with `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Arc<[String]>,
}

impl Redactor {
    pub fn new(mut secrets: Vec<String>) -> Self {
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        Self {
            secrets: secrets.into(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in self.secrets.iter() {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "[redacted]");
            }
        }
        text
    }

    /// Redacts every string inside a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(text) => *text = self.redact(text),
            serde_json::Value::Array(items) => {
                for item in items {
                    self.redact_json(item);
                }
            }
            serde_json::Value::Object(object) => {
                for item in object.values_mut() {
                    self.redact_json(item);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{Redactor, SecretError, resolve};

    #[test]
    fn resolves_environment_and_file_references() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("token"), "t{o}k\n").expect("write");
        let (text, used) =
            resolve("Bearer ${file:token} at ${env:HOME}", dir.path()).expect("resolves");
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(text, format!("Bearer t{{{{o}}}}k at {home}"));
        assert_eq!(used, vec!["t{o}k".to_owned(), home]);
    }

    #[test]
    fn missing_and_unknown_references_are_errors() {
        assert_eq!(
            resolve("${env:MCP_SERVE_SURELY_UNSET}", Path::new(".")),
            Err(SecretError::MissingVariable {
                name: "MCP_SERVE_SURELY_UNSET".into()
            })
        );
        assert_eq!(
            resolve("${vault:x}", Path::new(".")),
            Err(SecretError::Unknown {
                reference: "vault:x".into()
            })
        );
        assert_eq!(
            resolve("${env:X", Path::new(".")),
            Err(SecretError::Unclosed)
        );
    }

    #[test]
    fn redaction_replaces_every_occurrence() {
        let redactor = Redactor::new(vec!["abc".into(), "abcdef".into()]);
        assert_eq!(
            redactor.redact("x abcdef y abc"),
            "x [redacted] y [redacted]"
        );
        let mut value = serde_json::json!({"a": ["abc", 1], "b": "no"});
        redactor.redact_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"a": ["[redacted]", 1], "b": "no"})
        );
    }
}
