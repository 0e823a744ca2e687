//! JSON Schema handling: dialect checks and compilation at load time, readable violation
//! messages at call time, default filling, and the `{"result": …}` wrapping a 2025-06 client needs.

pub mod inline;
pub mod shared;

use std::fmt::Write as _;
use std::sync::OnceLock;

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

/// Why a schema could not be used. Cheap to clone: a schema compiled on first use keeps
/// why it did not compile, and each use that finds it says so.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "unsupported JSON Schema dialect `{uri}`; use 2020-12 (the default), 2019-09 or draft-07"
    )]
    UnsupportedDialect { uri: String },
    #[error("`$schema` must be a string")]
    DialectNotString,
    #[error("the schema does not compile: {source}")]
    Invalid {
        source: std::sync::Arc<jsonschema::ValidationError<'static>>,
    },
    #[error(transparent)]
    Shared(#[from] shared::SharedError),
    #[error("no schema to compile")]
    Absent,
}

/// A schema, compiled once: at load time when it came from the manifest's author, or on
/// first use when we generated it from the concise argument form (whose parts that can fail
/// to compile, patterns, are checked per argument at load). Compiling costs about 0.1 ms a
/// schema, which made a 10,000-tool manifest slow to start.
#[derive(Debug)]
pub struct CompiledSchema {
    /// The schema to compile on first use (`None` when compiled at load).
    deferred: Option<Deferred>,
    validator: OnceLock<Result<Validator, SchemaError>>,
}

/// What a schema compiled on first use is made from.
#[derive(Debug)]
enum Deferred {
    Whole(std::sync::Arc<Value>, Draft),
    /// A root that uses the manifest's `[schemas]`: made whole ([`shared::Shared::attach`])
    /// only when compiled, so the shared entries are not copied into every tool at load.
    /// The root is the tool's own (one copy).
    Shared(std::sync::Arc<Value>, Draft, std::sync::Arc<shared::Shared>),
}

impl CompiledSchema {
    /// Compiles `schema` in the dialect its `$schema` names (2020-12 when absent). References
    /// are resolved inside the document only; nothing is ever fetched.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let validator = build(schema, dialect(schema)?)?;
        Ok(Self {
            deferred: None,
            validator: OnceLock::from(Ok(validator)),
        })
    }

    /// A schema compiled on first use (shared with its tool, not copied).
    pub fn deferred(schema: std::sync::Arc<Value>) -> Result<Self, SchemaError> {
        let draft = dialect(&schema)?;
        Ok(Self {
            deferred: Some(Deferred::Whole(schema, draft)),
            validator: OnceLock::new(),
        })
    }

    /// A root that may use the manifest's `[schemas]`, compiled on first use.
    pub fn deferred_shared(
        root: std::sync::Arc<Value>,
        shared: std::sync::Arc<shared::Shared>,
    ) -> Result<Self, SchemaError> {
        let draft = dialect(&root)?;
        Ok(Self {
            deferred: Some(Deferred::Shared(root, draft, shared)),
            validator: OnceLock::new(),
        })
    }

    fn validator(&self) -> Result<&Validator, &SchemaError> {
        self.validator
            .get_or_init(|| match &self.deferred {
                Some(deferred) => deferred.build(),
                // Compiled at load: `compile` fills the cell.
                None => Err(SchemaError::Absent),
            })
            .as_ref()
    }

    /// One line per violation, each naming the path and the broken constraint, e.g.
    /// `limit: 999 is greater than the maximum of 50`. `root` names the whole instance.
    pub fn violations(&self, instance: &Value, root: &str) -> Vec<String> {
        let validator = match self.validator() {
            Ok(validator) => validator,
            Err(error) => return vec![format!("{root}: {error}")],
        };
        let mut violations: Vec<String> = validator
            .iter_errors(instance)
            .map(|error| {
                let path = readable_path(error.instance_path().as_str());
                match error.kind() {
                    jsonschema::error::ValidationErrorKind::Required { property } => {
                        let name = property
                            .as_str()
                            .map_or_else(|| property.to_string(), str::to_owned);
                        format!("{}: required, but missing", join(&path, &name))
                    }
                    jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                        let names: Vec<String> =
                            unexpected.iter().map(|name| format!("`{name}`")).collect();
                        let label = if path.is_empty() { root } else { &path };
                        format!(
                            "{label}: unexpected {} {}",
                            plural(names.len(), "property"),
                            names.join(", ")
                        )
                    }
                    _ => {
                        let label = if path.is_empty() { root } else { &path };
                        format!("{label}: {error}")
                    }
                }
            })
            .collect();
        // A stable order (by path) keeps messages reproducible whatever the keyword order.
        violations.sort();
        violations.dedup();
        violations
    }

    /// Compiled now if it was not yet: why it does not compile, if it does not.
    pub fn ready(&self) -> Result<(), SchemaError> {
        self.validator().map(drop).map_err(Clone::clone)
    }

    /// Why a deferred schema would not compile, found by compiling it and dropping the
    /// result (`check` reads every tool this way without keeping them all compiled).
    pub fn trial(&self) -> Result<(), SchemaError> {
        self.deferred
            .as_ref()
            .map_or(Ok(()), |deferred| deferred.build().map(drop))
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator()
            .is_ok_and(|validator| validator.is_valid(instance))
    }
}

impl Deferred {
    /// The validator, the shared entries it uses attached first.
    fn build(&self) -> Result<Validator, SchemaError> {
        match self {
            Self::Whole(schema, draft) => build(schema, *draft),
            Self::Shared(root, draft, shared) => {
                let whole = shared.attach(root)?;
                build(whole.as_ref().unwrap_or(root), *draft)
            }
        }
    }
}

fn build(schema: &Value, draft: Draft) -> Result<Validator, SchemaError> {
    jsonschema::options()
        .with_draft(draft)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|source| SchemaError::Invalid {
            source: std::sync::Arc::new(source),
        })
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        word.to_owned()
    } else if let Some(stem) = word.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{word}s")
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// `/filter/tags/0` reads as `filter.tags[0]`.
fn readable_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|byte| byte.is_ascii_digit()) {
            let _ = write!(out, "[{segment}]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}

fn dialect(schema: &Value) -> Result<Draft, SchemaError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let uri = uri.as_str().ok_or(SchemaError::DialectNotString)?;
    let normalized = uri
        .trim_end_matches('#')
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    match normalized {
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "json-schema.org/draft/2019-09/schema" => Ok(Draft::Draft201909),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        _ => Err(SchemaError::UnsupportedDialect {
            uri: uri.to_owned(),
        }),
    }
}

/// Fills `default`s of declared properties that are absent, recursing into objects that are
/// present. Follows `properties` only; `$ref`-reached defaults are not applied.
pub fn fill_defaults(schema: &Value, instance: &mut Value) {
    let (Some(properties), Value::Object(object)) = (
        schema.get("properties").and_then(Value::as_object),
        instance,
    ) else {
        return;
    };
    for (name, property) in properties {
        match object.get_mut(name) {
            None => {
                if let Some(default) = property.get("default") {
                    object.insert(name.clone(), default.clone());
                }
            }
            Some(value) => fill_defaults(property, value),
        }
    }
}

/// True when 2025-06 and 2025-11 clients (which only accept an object root) need this schema wrapped.
pub fn needs_object_wrap(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) != Some("object")
}

/// The 2025 form of an output schema whose root is not `type: "object"`:
/// `{"type":"object","properties":{"result": <schema>},"required":["result"]}`, with `$schema`
/// hoisted and same-document references rewritten to point inside `result`.
pub fn wrap_as_object(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let dialect = inner
        .as_object_mut()
        .and_then(|object| object.remove("$schema"));
    rewrite_refs(&mut inner);
    let mut wrapper = Map::new();
    if let Some(dialect) = dialect {
        wrapper.insert("$schema".into(), dialect);
    }
    wrapper.insert("type".into(), json!("object"));
    wrapper.insert("properties".into(), json!({ "result": inner }));
    wrapper.insert("required".into(), json!(["result"]));
    Value::Object(wrapper)
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, child) in object.iter_mut() {
                if key == "$ref" || key == "$dynamicRef" {
                    if let Value::String(target) = child
                        && let Some(rest) = target.strip_prefix('#')
                    {
                        *target = format!("#/properties/result{rest}");
                    }
                } else {
                    rewrite_refs(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// Whether a property's schema may say `null` by its own words: it constrains nothing, its
/// `type` is or lists `"null"`, its `const`/`enum` hold it, or an `anyOf`/`oneOf` branch
/// does. (A `$ref` or `allOf` is taken to refuse it: such a `null` is then left out.)
pub fn admits_null(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return true;
    };
    let constrains = [
        "type", "const", "enum", "anyOf", "oneOf", "allOf", "$ref", "not",
    ];
    if !constrains.iter().any(|key| schema.contains_key(*key)) {
        return true;
    }
    let typed = match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        _ => false,
    };
    typed
        || schema.get("const").is_some_and(Value::is_null)
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(Value::is_null))
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(admits_null))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn only_a_schema_that_says_so_admits_null() {
        use serde_json::json;
        for admits in [
            json!({}),
            json!({"description": "anything"}),
            json!({"type": "null"}),
            json!({"type": ["string", "null"]}),
            json!({"enum": ["a", null]}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        ] {
            assert!(super::admits_null(&admits), "{admits}");
        }
        for refuses in [
            json!({"type": "boolean"}),
            json!({"type": ["string", "integer"]}),
            json!({"enum": ["a"]}),
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"$ref": "#/$defs/thing"}),
        ] {
            assert!(!super::admits_null(&refuses), "{refuses}");
        }
    }

    use super::{CompiledSchema, SchemaError, fill_defaults, wrap_as_object};

    fn compile(schema: &serde_json::Value) -> CompiledSchema {
        CompiledSchema::compile(schema).expect("schema compiles")
    }

    #[test]
    fn violations_name_the_path_and_the_constraint() {
        let schema = compile(&json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "maximum": 50},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false
        }));
        let violations = schema.violations(
            &json!({"limit": 999, "tags": ["a", 3], "extra": 1}),
            "arguments",
        );
        assert_eq!(
            violations,
            vec![
                "arguments: unexpected property `extra`",
                "limit: 999 is greater than the maximum of 50",
                "query: required, but missing",
                "tags[1]: 3 is not of type \"string\"",
            ]
        );
    }

    #[test]
    fn dialects_are_checked() {
        assert!(
            CompiledSchema::compile(&json!({"$schema": "http://json-schema.org/draft-07/schema#"}))
                .is_ok()
        );
        assert!(
            CompiledSchema::compile(
                &json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})
            )
            .is_ok()
        );
        let refused =
            CompiledSchema::compile(&json!({"$schema": "http://json-schema.org/draft-04/schema#"}));
        assert!(
            matches!(
                &refused,
                Err(SchemaError::UnsupportedDialect { uri })
                    if uri == "http://json-schema.org/draft-04/schema#"
            ),
            "{refused:?}"
        );
    }

    #[test]
    fn network_references_are_never_fetched() {
        let result = CompiledSchema::compile(&json!({"$ref": "https://example.com/schema.json"}));
        assert!(
            matches!(result, Err(SchemaError::Invalid { .. })),
            "{result:?}"
        );
    }

    #[test]
    fn deferred_schemas_compile_on_first_use() {
        let schema = CompiledSchema::deferred(json!({"type": "integer", "maximum": 5}).into())
            .expect("dialect");
        assert!(
            schema.validator.get().is_none(),
            "compiled before first use"
        );
        assert!(schema.is_valid(&json!(3)));
        assert_eq!(
            schema.violations(&json!(9), "value"),
            ["value: 9 is greater than the maximum of 5"]
        );
        // A schema that cannot compile is a violation, never a panic.
        let broken = CompiledSchema::deferred(json!({"pattern": "("}).into()).expect("dialect");
        assert!(!broken.is_valid(&json!("x")));
        assert!(
            broken.violations(&json!("x"), "value")[0]
                .starts_with("value: the schema does not compile")
        );
    }

    #[test]
    fn local_references_work() {
        let schema = compile(&json!({
            "type": "object",
            "$defs": {"name": {"type": "string", "minLength": 2}},
            "properties": {"name": {"$ref": "#/$defs/name"}}
        }));
        assert_eq!(
            schema.violations(&json!({"name": "x"}), "arguments"),
            vec!["name: \"x\" is shorter than 2 characters"]
        );
    }

    #[test]
    fn defaults_fill_absent_properties_recursively() {
        let schema = json!({
            "properties": {
                "limit": {"default": 10},
                "filter": {"properties": {"kind": {"default": "all"}}},
                "given": {"default": 1}
            }
        });
        let mut instance = json!({"given": 2, "filter": {}});
        fill_defaults(&schema, &mut instance);
        assert_eq!(
            instance,
            json!({"given": 2, "filter": {"kind": "all"}, "limit": 10})
        );
    }

    #[test]
    fn object_wrap_hoists_dialect_and_rewrites_references() {
        let wrapped = wrap_as_object(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/item"},
            "$defs": {"item": {"type": "string"}}
        }));
        assert_eq!(
            wrapped,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"result": {
                    "type": "array",
                    "items": {"$ref": "#/properties/result/$defs/item"},
                    "$defs": {"item": {"type": "string"}}
                }},
                "required": ["result"]
            })
        );
    }
}
