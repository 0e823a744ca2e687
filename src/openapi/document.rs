//! Reading an OpenAPI description: JSON or YAML, its version, and the `$ref`s inside it.

use serde_json::Value;

/// Why a description could not be imported at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the description is not valid {format}: {reason}")]
    Parse {
        format: &'static str,
        reason: String,
    },
    #[error(
        "this is a Swagger 2.0 description; convert it to OpenAPI 3 first (for example with `npx swagger2openapi spec.json -o openapi.json`) and import that"
    )]
    Swagger2,
    #[error("`openapi: {0}` is not a version this importer reads (3.0.x and 3.1.x)")]
    Version(String),
    #[error("the document has no `openapi` version: is it an OpenAPI description?")]
    NotOpenApi,
    #[error("the description has no operations under `paths`")]
    NoOperations,
    #[error("{flag} `{pattern}` matches no operation{hint}")]
    FilterMatchesNothing {
        flag: &'static str,
        pattern: String,
        hint: String,
    },
    #[error("{flag} `{pattern}` is not a valid pattern: {reason}")]
    Pattern {
        flag: &'static str,
        pattern: String,
        reason: String,
    },
    #[error("no operation is left to import ({dropped} dropped: {reasons})")]
    NothingKept { dropped: usize, reasons: String },
    #[error("the manifest made from this description would not load: {reason}")]
    Unloadable { reason: String },
}

/// A parsed description.
#[derive(Debug)]
pub struct Document {
    pub root: Value,
    /// The `openapi` version string, e.g. `3.0.3`.
    pub openapi: String,
    /// 3.0 schemas need translating to JSON Schema 2020-12 (`nullable`, `example`, boolean
    /// `exclusiveMinimum`); 3.1 schemas already are.
    pub is_3_0: bool,
}

impl Document {
    /// Parses JSON (when the text starts with `{`) or YAML, and checks the version.
    pub fn parse(text: &str) -> Result<Self, ImportError> {
        let text = text.trim_start_matches('\u{feff}');
        let root: Value = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|error| ImportError::Parse {
                format: "JSON",
                reason: error.to_string(),
            })?
        } else {
            let options = serde_saphyr::options! {
                budget: serde_saphyr::budget! {
                    // Large descriptions (GitHub's has 1,200 operations) need more events
                    // and nodes than a configuration file; the alias limits that stop
                    // "billion laughs" documents stay as they are.
                    max_events: 20_000_000,
                    max_nodes: 20_000_000,
                    max_depth: 256,
                },
            };
            serde_saphyr::from_str_with_options(text, options).map_err(|error| {
                ImportError::Parse {
                    format: "YAML",
                    reason: first_line(&error.to_string()),
                }
            })?
        };
        if root.get("swagger").is_some() {
            return Err(ImportError::Swagger2);
        }
        let openapi = match root.get("openapi") {
            Some(Value::String(version)) => version.clone(),
            Some(Value::Number(number)) => number.to_string(),
            _ => return Err(ImportError::NotOpenApi),
        };
        let is_3_0 = openapi.starts_with("3.0");
        if !(is_3_0 || openapi.starts_with("3.1")) {
            return Err(ImportError::Version(openapi));
        }
        Ok(Self {
            root,
            openapi,
            is_3_0,
        })
    }

    pub fn title(&self) -> String {
        self.info("title").unwrap_or("API").to_owned()
    }

    pub fn api_version(&self) -> String {
        self.info("version").unwrap_or_default().to_owned()
    }

    pub fn info(&self, key: &str) -> Option<&str> {
        self.root.get("info")?.get(key)?.as_str()
    }

    /// The value a local reference (`#/components/...`) points at.
    pub fn lookup(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        let pointer = percent_decode(pointer);
        self.root.pointer(&pointer)
    }

    /// Follows `$ref` until a value that is not one (parameters, request bodies, responses).
    pub fn resolve<'a>(&'a self, mut value: &'a Value) -> Result<&'a Value, String> {
        for _ in 0..32 {
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                return Ok(value);
            };
            if !reference.starts_with('#') {
                return Err(format!(
                    "`$ref: {reference}` points outside the description (only `#/…` references are followed)"
                ));
            }
            value = self
                .lookup(reference)
                .ok_or_else(|| format!("`$ref: {reference}` points at nothing"))?;
        }
        Err("a `$ref` chain is longer than 32 links (a loop?)".to_owned())
    }
}

/// Decodes `%XX` escapes (a reference is a URI fragment).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(byte) = text
                .get(index + 1..index + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yaml_with_numeric_keys_and_json() {
        let yaml = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n";
        let document = Document::parse(yaml).expect("yaml");
        assert!(document.is_3_0);
        assert!(
            document
                .root
                .pointer("/paths/~1a/get/responses/200")
                .is_some()
        );
        let json = r#"{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {}}"#;
        assert!(!Document::parse(json).expect("json").is_3_0);
    }

    #[test]
    fn refuses_swagger_2_and_other_versions_with_a_reason() {
        assert!(matches!(
            Document::parse("swagger: '2.0'\n"),
            Err(ImportError::Swagger2)
        ));
        assert!(matches!(
            Document::parse("openapi: 4.0.0\n"),
            Err(ImportError::Version(_))
        ));
        assert!(matches!(
            Document::parse("title: nothing\n"),
            Err(ImportError::NotOpenApi)
        ));
        assert!(matches!(
            Document::parse("{ not json"),
            Err(ImportError::Parse { format: "JSON", .. })
        ));
    }

    #[test]
    fn references_are_followed_inside_the_document_only() {
        let document = Document::parse(
            r##"{"openapi": "3.1.0", "components": {"parameters": {"a b": {"$ref": "#/components/parameters/c"}, "c": {"name": "c"}, "loop": {"$ref": "#/components/parameters/loop"}}}}"##,
        )
        .expect("parses");
        let reference = serde_json::json!({"$ref": "#/components/parameters/a%20b"});
        assert_eq!(document.resolve(&reference).expect("found")["name"], "c");
        let outside = serde_json::json!({"$ref": "other.yaml#/x"});
        assert!(document.resolve(&outside).is_err());
        let looped = serde_json::json!({"$ref": "#/components/parameters/loop"});
        assert!(document.resolve(&looped).is_err());
    }
}
