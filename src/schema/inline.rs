//! What `tools/list` advertises for an author's schema: its local `$ref`s inlined, so that
//! converters which cannot follow references (openai-agents' strict mode, Gemini's schema
//! subset, the adapters that drop what they cannot resolve) keep the whole schema.
//!
//! The inlined schema accepts exactly what the written one does; validation still uses the
//! written one. A reference that points back into itself (a recursive schema) stays, with the
//! `$defs` it reaches (no others). A schema whose meaning depends on where its parts sit (`$id` below the
//! root, anchors, dynamic references) is advertised as written. Inlining stops, and the
//! schema is advertised as written, past [`MAX_VALUES`] JSON values, so a fan-out of
//! references (each definition using the next one twice) cannot grow a listing without
//! bound.

use serde_json::{Map, Value};

/// The most JSON values an inlined schema may hold. openai-agents refuses strict conversion
/// past 100,000 schema nodes (`agents/strict_schema.py`, `_MAX_SCHEMA_NODES`); counting every
/// value, not only schemas, this is below that.
pub const MAX_VALUES: usize = 50_000;

/// What became of a schema's references.
#[derive(Debug, Clone, PartialEq)]
pub enum Inlined {
    /// It has no reference: advertised as written.
    Unchanged,
    /// Every reference inlined; no `$ref` is left, nor `$defs`/`definitions` at the root.
    Inlined(Value),
    /// The references that point back into themselves stay (`recursive`, as written), with
    /// the root's `$defs`/`definitions` they reach; every other one is inlined.
    Partial {
        schema: Value,
        recursive: Vec<String>,
    },
    /// Advertised as written, for `reason`.
    Kept { reason: String },
}

impl Inlined {
    /// The schema to advertise in place of the written one, if it changes.
    pub fn into_schema(self) -> Option<Value> {
        match self {
            Self::Inlined(schema) | Self::Partial { schema, .. } => Some(schema),
            Self::Unchanged | Self::Kept { .. } => None,
        }
    }
}

/// What `tools/list` advertises for `written`: its references inlined unless `inline` is
/// off (`[server] inline-refs = false`). Made once, when the manifest loads.
pub fn advertised(written: &Value, inline: bool) -> Value {
    if inline && let Some(schema) = inline_refs(written).into_schema() {
        return schema;
    }
    written.clone()
}

/// Inlines the local references of `schema` (`#/$defs/…`, `#/definitions/…`, any `#/…`
/// pointer) that do not point back into themselves.
pub fn inline_refs(schema: &Value) -> Inlined {
    let mut found = Found::default();
    scan(schema, true, &mut found);
    if found.refs == 0 {
        return Inlined::Unchanged;
    }
    if let Some(keyword) = found.position_dependent {
        return Inlined::Kept {
            reason: format!("it uses `{keyword}`, whose meaning depends on where it sits"),
        };
    }
    let draft07 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| uri.contains("draft-07"));
    let mut inliner = Inliner {
        root: schema,
        draft07,
        left: MAX_VALUES,
        path: Vec::new(),
        outer: Vec::new(),
        recursive: Vec::new(),
        unresolved: None,
        depth: 0,
    };
    let mut out = match inliner.root_schema() {
        Ok(out) => out,
        Err(stop) => {
            return Inlined::Kept {
                reason: stop.reason(),
            };
        }
    };
    if let Some(reference) = inliner.unresolved {
        return Inlined::Kept {
            reason: format!("`{reference}` is not a local JSON pointer it can inline"),
        };
    }
    if inliner.recursive.is_empty() {
        return Inlined::Inlined(out);
    }
    // The references left must still find what they found: nothing on the way to their
    // target was itself a reference (whose place the inlined schema now takes).
    let mut recursive = std::mem::take(&mut inliner.recursive);
    recursive.sort();
    recursive.dedup();
    for reference in &recursive {
        if !pointer(reference).is_some_and(|segments| path_survives(schema, &segments)) {
            return Inlined::Kept {
                reason: format!("the recursive `{reference}` points through another reference"),
            };
        }
    }
    // And the definitions they reach come along, their own references inlined.
    let definitions = match inliner.definitions(&recursive) {
        Ok(definitions) => definitions,
        Err(stop) => {
            return Inlined::Kept {
                reason: stop.reason(),
            };
        }
    };
    if let Some(object) = out.as_object_mut() {
        object.extend(definitions);
    }
    Inlined::Partial {
        schema: out,
        recursive,
    }
}

/// Keywords whose value is one schema.
const SINGLE: [&str; 13] = [
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "dependencies",
];
/// Keywords whose value is a list of schemas (`items` too, in draft-07's list form).
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords beside a `$ref` that constrain nothing: merged into the inlined schema, the
/// reference's own winning (as openai-agents' `_REF_NON_CONSTRAINING_SIBLINGS` has it).
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
/// Keywords whose meaning depends on the keywords beside them (`additionalProperties` sees
/// only the `properties` next to it; `unevaluated*` sees the in-place applicators next to
/// it): a `$ref`'s sibling among them is not merged into the inlined schema.
const ADJACENT: [&str; 22] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
];
/// Keywords that make a part's meaning depend on where it sits in the document.
const POSITION_DEPENDENT: [&str; 5] = [
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
];

#[derive(Default)]
struct Found {
    refs: usize,
    position_dependent: Option<&'static str>,
}

/// Counts references and finds position-dependent keywords, in schema positions only (a
/// `default` or `enum` value that looks like a schema is data).
fn scan(schema: &Value, root: bool, found: &mut Found) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if object.get("$ref").is_some_and(Value::is_string) {
        found.refs += 1;
    }
    if found.position_dependent.is_none() {
        found.position_dependent = POSITION_DEPENDENT
            .into_iter()
            .find(|keyword| object.contains_key(*keyword))
            .or_else(|| {
                (!root && object.get("$id").is_some_and(Value::is_string)).then_some("$id")
            });
    }
    for_each_subschema(object, |_, child| scan(child, false, found));
}

/// Calls `visit` with each direct subschema (in schema positions only: a `default` or `enum`
/// value that looks like a schema is data) and the path segments that lead to it.
pub(crate) fn for_each_subschema<'a>(
    object: &'a Map<String, Value>,
    mut visit: impl FnMut(&[&str], &'a Value),
) {
    for (key, value) in object {
        let key = key.as_str();
        if SINGLE.contains(&key) || LIST.contains(&key) || MAP.contains(&key) {
            match value {
                Value::Array(items) if key != "dependencies" => {
                    for (index, item) in items.iter().enumerate() {
                        visit(&[key, &index.to_string()], item);
                    }
                }
                Value::Object(map) if MAP.contains(&key) || key == "dependencies" => {
                    for (name, child) in map {
                        visit(&[key, name], child);
                    }
                }
                _ if MAP.contains(&key) || key == "dependencies" => {}
                _ => visit(&[key], value),
            }
        }
    }
}

/// Why inlining stopped: the schema is then advertised as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TooLarge {
    /// Past [`MAX_VALUES`].
    Values,
    /// Past [`MAX_DEPTH`] nested schemas: a chain of references, each inlined into the
    /// last, would be as deep as it is long, and every walk of it (ours, a client's
    /// converter, serializing it) recursive.
    Depth,
}

impl TooLarge {
    fn reason(self) -> String {
        match self {
            Self::Values => format!("inlined, it would hold more than {MAX_VALUES} JSON values"),
            Self::Depth => format!("inlined, it would nest more than {MAX_DEPTH} schemas deep"),
        }
    }
}

/// The deepest an inlined schema may nest schemas in schemas.
pub const MAX_DEPTH: usize = 128;

struct Inliner<'a> {
    root: &'a Value,
    draft07: bool,
    /// Values the output may still hold.
    left: usize,
    /// Where in the written document the value being walked sits.
    path: Vec<String>,
    /// The places of the references being inlined, outermost first.
    outer: Vec<Vec<String>>,
    /// References left because they point back into what is being inlined.
    recursive: Vec<String>,
    /// A reference that is no local pointer to a schema.
    unresolved: Option<String>,
    /// Schemas being walked, one in another.
    depth: usize,
}

impl Inliner<'_> {
    fn spend(&mut self, count: usize) -> Result<(), TooLarge> {
        self.left = self.left.checked_sub(count).ok_or(TooLarge::Values)?;
        Ok(())
    }

    /// The root without its definitions (they come back only for recursive references).
    fn root_schema(&mut self) -> Result<Value, TooLarge> {
        let root = self.root;
        match root {
            Value::Object(object) => {
                let mut trimmed = object.clone();
                trimmed.shift_remove("$defs");
                trimmed.shift_remove("definitions");
                self.schema(&Value::Object(trimmed))
            }
            other => self.schema(other),
        }
    }

    /// The root's `$defs` and `definitions` that the references left (`recursive`) reach,
    /// directly or through the definitions they bring, walked, in the root's order.
    fn definitions(&mut self, recursive: &[String]) -> Result<Map<String, Value>, TooLarge> {
        let mut out = Map::new();
        let Some(object) = self.root.as_object() else {
            return Ok(out);
        };
        let mut walked: std::collections::HashMap<(String, String), Value> =
            std::collections::HashMap::new();
        let mut wanted: Vec<(String, String)> = Vec::new();
        for reference in recursive {
            wanted.extend(places(object, reference));
        }
        while let Some(place) = wanted.pop() {
            if walked.contains_key(&place) {
                continue;
            }
            let Some(child) = object.get(&place.0).and_then(|map| map.get(&place.1)) else {
                continue;
            };
            let before = self.recursive.len();
            self.path = vec![place.0.clone(), place.1.clone()];
            let value = self.schema(child)?;
            walked.insert(place, value);
            for reference in &self.recursive[before..] {
                wanted.extend(places(object, reference));
            }
        }
        self.path.clear();
        for key in ["$defs", "definitions"] {
            let Some(Value::Object(map)) = object.get(key) else {
                continue;
            };
            let kept: Map<String, Value> = map
                .keys()
                .filter_map(|name| {
                    walked
                        .remove(&(key.to_owned(), name.clone()))
                        .map(|value| (name.clone(), value))
                })
                .collect();
            if !kept.is_empty() {
                out.insert(key.to_owned(), Value::Object(kept));
            }
        }
        Ok(out)
    }

    fn schema(&mut self, schema: &Value) -> Result<Value, TooLarge> {
        if self.depth >= MAX_DEPTH {
            return Err(TooLarge::Depth);
        }
        self.depth += 1;
        let walked = self.schema_within(schema);
        self.depth -= 1;
        walked
    }

    fn schema_within(&mut self, schema: &Value) -> Result<Value, TooLarge> {
        let Value::Object(object) = schema else {
            self.spend(1)?;
            return Ok(schema.clone());
        };
        if let Some(Value::String(reference)) = object.get("$ref") {
            return self.reference(object, reference);
        }
        self.members(object)
    }

    /// Each keyword, walking subschemas and copying the rest.
    fn members(&mut self, object: &Map<String, Value>) -> Result<Value, TooLarge> {
        self.spend(1)?;
        let mut out = Map::new();
        for (key, value) in object {
            let walked = if SINGLE.contains(&key.as_str())
                || LIST.contains(&key.as_str())
                || MAP.contains(&key.as_str())
            {
                self.subschemas(key, value)?
            } else {
                self.spend(size(value))?;
                value.clone()
            };
            out.insert(key.clone(), walked);
        }
        Ok(Value::Object(out))
    }

    fn subschemas(&mut self, key: &str, value: &Value) -> Result<Value, TooLarge> {
        self.path.push(key.to_owned());
        let result = match value {
            Value::Array(items) if key != "dependencies" => {
                self.spend(1)?;
                let mut out = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    self.path.push(index.to_string());
                    let walked = self.schema(item);
                    self.path.pop();
                    out.push(walked?);
                }
                Ok(Value::Array(out))
            }
            Value::Object(map) if MAP.contains(&key) || key == "dependencies" => {
                self.spend(1)?;
                let mut out = Map::new();
                for (name, child) in map {
                    self.path.push(name.clone());
                    // draft-07's `dependencies` also maps names to lists of names.
                    let walked = if child.is_array() {
                        self.spend(size(child)).map(|()| child.clone())
                    } else {
                        self.schema(child)
                    };
                    self.path.pop();
                    out.insert(name.clone(), walked?);
                }
                Ok(Value::Object(out))
            }
            _ if MAP.contains(&key) || key == "dependencies" => {
                self.spend(size(value)).map(|()| value.clone())
            }
            _ => self.schema(value),
        };
        self.path.pop();
        result
    }

    fn reference(
        &mut self,
        object: &Map<String, Value>,
        reference: &str,
    ) -> Result<Value, TooLarge> {
        let mut siblings = object.clone();
        siblings.shift_remove("$ref");
        let Some(segments) = pointer(reference) else {
            self.unresolved.get_or_insert_with(|| reference.to_owned());
            return self.members(object);
        };
        if self.points_back(&segments) {
            self.recursive.push(reference.to_owned());
            return self.members(object);
        }
        let Some(target) = resolve(self.root, &segments) else {
            self.unresolved.get_or_insert_with(|| reference.to_owned());
            return self.members(object);
        };
        let here = std::mem::replace(&mut self.path, segments);
        self.outer.push(here);
        let inlined = self.schema(target);
        self.path = self.outer.pop().unwrap_or_default();
        let inlined = inlined?;
        if siblings.is_empty() {
            return Ok(inlined);
        }
        // draft-07 ignores a `$ref`'s siblings; later drafts apply them beside it: merged
        // where that means the same, else both under an `allOf`.
        if self.draft07 {
            siblings.retain(|key, _| ANNOTATIONS.contains(&key.as_str()));
        }
        let siblings = match self.members(&siblings)? {
            Value::Object(siblings) => siblings,
            _ => Map::new(),
        };
        match inlined {
            Value::Object(mut merged) if self.draft07 || mergeable(&merged, &siblings) => {
                merged.extend(siblings);
                Ok(Value::Object(merged))
            }
            inlined if self.draft07 => Ok(inlined),
            inlined => {
                let mut out = siblings;
                let mut all_of = vec![inlined];
                if let Some(Value::Array(existing)) = out.shift_remove("allOf") {
                    all_of.extend(existing);
                }
                out.insert("allOf".into(), Value::Array(all_of));
                Ok(Value::Object(out))
            }
        }
    }

    /// Whether `target` holds the place being walked, or one of the references being
    /// inlined: inlining it would never end.
    fn points_back(&self, target: &[String]) -> bool {
        std::iter::once(&self.path)
            .chain(self.outer.iter())
            .any(|place| place.starts_with(target))
    }
}

/// Whether a `$ref`'s `siblings` mean the same merged into its inlined `target`: each is an
/// annotation, or constrains alone (never an adjacent keyword, which sees other keywords
/// beside it: `additionalProperties: false` beside a `$ref` refuses every key, and in the
/// target only those its `properties` do not name) and is not in the target already (or is,
/// with the same value).
/// The root's definitions `reference` needs: the one it points into, or every one of a
/// map it names whole (`#/$defs`).
fn places(root: &Map<String, Value>, reference: &str) -> Vec<(String, String)> {
    let Some(segments) = pointer(reference) else {
        return Vec::new();
    };
    match segments.as_slice() {
        [key, name, ..] if matches!(key.as_str(), "$defs" | "definitions") => {
            vec![(key.clone(), name.clone())]
        }
        [key] if matches!(key.as_str(), "$defs" | "definitions") => match root.get(key) {
            Some(Value::Object(map)) => {
                map.keys().map(|name| (key.clone(), name.clone())).collect()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn mergeable(target: &Map<String, Value>, siblings: &Map<String, Value>) -> bool {
    siblings.iter().all(|(key, value)| {
        ANNOTATIONS.contains(&key.as_str())
            || (!ADJACENT.contains(&key.as_str())
                && target.get(key).is_none_or(|theirs| theirs == value))
    })
}

/// The segments of a local JSON pointer reference (`#`, `#/a/b~1c`), percent-decoded.
fn pointer(reference: &str) -> Option<Vec<String>> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(Vec::new());
    }
    let decoded = percent_encoding::percent_decode_str(fragment.strip_prefix('/')?)
        .decode_utf8()
        .ok()?;
    Some(
        decoded
            .split('/')
            .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

fn resolve<'a>(root: &'a Value, segments: &[String]) -> Option<&'a Value> {
    segments
        .iter()
        .try_fold(root, |value, segment| match value {
            Value::Object(object) => object.get(segment),
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
            _ => None,
        })
}

/// No part of the written schema on the way to `segments` (the root and the target aside) is
/// a reference, whose place its inlined target takes.
fn path_survives(root: &Value, segments: &[String]) -> bool {
    let mut value = root;
    for (depth, segment) in segments.iter().enumerate() {
        if depth > 0 && value.get("$ref").is_some() {
            return false;
        }
        match resolve(value, std::slice::from_ref(segment)) {
            Some(next) => value = next,
            None => return false,
        }
    }
    true
}

/// How many JSON values `value` holds.
fn size(value: &Value) -> usize {
    match value {
        Value::Object(object) => 1 + object.values().map(size).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Inlined, MAX_DEPTH, MAX_VALUES, inline_refs};
    use crate::schema::CompiledSchema;

    fn inlined(schema: &serde_json::Value) -> serde_json::Value {
        match inline_refs(schema) {
            Inlined::Inlined(out) => out,
            other => panic!("not inlined: {other:?}"),
        }
    }

    #[test]
    fn local_references_are_inlined_and_the_definitions_dropped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"$ref": "#/$defs/id"}},
                "owner": {"$ref": "#/definitions/person", "description": "who owns it"},
                "default-looks-like-a-ref": {"type": "object", "default": {"$ref": "#/nowhere"}}
            },
            "$defs": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
            "definitions": {"person": {"type": "object", "description": "a person",
                "properties": {"id": {"$ref": "#/$defs/id"}}, "additionalProperties": false}},
            "additionalProperties": false
        });
        assert_eq!(
            inlined(&schema),
            json!({
                "type": "object",
                "properties": {
                    "ids": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
                    "owner": {"type": "object", "description": "who owns it",
                        "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
                        "additionalProperties": false},
                    "default-looks-like-a-ref": {"type": "object", "default": {"$ref": "#/nowhere"}}
                },
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn a_schema_without_references_is_unchanged() {
        assert_eq!(
            inline_refs(&json!({"type": "object", "properties": {"a": {"enum": [{"$ref": "#"}]}}})),
            Inlined::Unchanged
        );
    }

    #[test]
    fn a_references_siblings_merge_where_that_means_the_same_and_else_sit_beside_it() {
        let schema = json!({
            "type": "object",
            "properties": {
                "merged": {"$ref": "#/$defs/base", "required": ["a"], "type": "object"},
                "beside": {"$ref": "#/$defs/base", "additionalProperties": false},
                "in-all-of": {"$ref": "#/$defs/base", "allOf": [{"minProperties": 1}]}
            },
            "$defs": {"base": {"type": "object", "properties": {"a": {"type": "string"}}}}
        });
        let out = inlined(&schema);
        let base = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            out["properties"]["merged"],
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
        );
        // `additionalProperties` beside the `$ref` sees no `properties`: every key is refused.
        assert_eq!(
            out["properties"]["beside"],
            json!({"additionalProperties": false, "allOf": [base.clone()]})
        );
        assert_eq!(
            out["properties"]["in-all-of"],
            json!({"allOf": [base, {"minProperties": 1}]})
        );
        let (written, advertised) = (
            CompiledSchema::compile(&schema).expect("compiles"),
            CompiledSchema::compile(&out).expect("compiles"),
        );
        for instance in [
            json!({"merged": {}}),
            json!({"merged": {"a": "x"}}),
            json!({"beside": {"a": "x"}}),
            json!({"beside": {}}),
            json!({"in-all-of": {}}),
            json!({"in-all-of": {"a": 1}}),
        ] {
            assert_eq!(
                written.is_valid(&instance),
                advertised.is_valid(&instance),
                "{instance}"
            );
        }
    }

    #[test]
    fn draft_07_ignores_a_references_siblings_but_keeps_its_annotations() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"p": {"$ref": "#/definitions/n", "maximum": 1, "description": "d"}},
            "definitions": {"n": {"type": "integer"}}
        });
        assert_eq!(
            inlined(&schema)["properties"]["p"],
            json!({"type": "integer", "description": "d"})
        );
    }

    #[test]
    fn recursive_references_stay_with_their_definitions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tree": {"$ref": "#/$defs/node"},
                "name": {"$ref": "#/$defs/name"}
            },
            "$defs": {
                "name": {"type": "string"},
                "node": {"type": "object", "properties": {
                    "label": {"$ref": "#/$defs/name"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                }}
            }
        });
        let Inlined::Partial {
            schema: out,
            recursive,
        } = inline_refs(&schema)
        else {
            panic!("not partial");
        };
        assert_eq!(recursive, ["#/$defs/node"]);
        assert_eq!(out["properties"]["name"], json!({"type": "string"}));
        assert_eq!(
            out["properties"]["tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/node"})
        );
        assert_eq!(
            out["$defs"]["node"]["properties"]["label"],
            json!({"type": "string"})
        );
        assert_eq!(
            out["$defs"]["node"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/node"}),
            "a definition is not unrolled into itself"
        );
        // A reference to the whole map keeps every definition, whatever it holds.
        let whole_map = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"type": "object", "properties": {"q": {"$ref": "#/$defs"}}}, "not": true}
        });
        let Inlined::Partial { schema: shown, .. } = inline_refs(&whole_map) else {
            panic!("not partial");
        };
        assert_eq!(shown["$defs"]["not"], json!(true), "{shown}");
        let (written, advertised) = (
            CompiledSchema::compile(&whole_map).expect("compiles"),
            CompiledSchema::compile(&shown).expect("compiles"),
        );
        for instance in [json!({"p": {"q": 1}}), json!({"p": {}})] {
            assert_eq!(
                written.is_valid(&instance),
                advertised.is_valid(&instance),
                "{instance}"
            );
        }
        // `name` was inlined everywhere: no reference left reaches it.
        assert_eq!(
            out["$defs"]
                .as_object()
                .map(|defs| defs.keys().collect::<Vec<_>>()),
            Some(vec![&"node".to_owned()]),
            "{out}"
        );
        // It accepts what the written one does.
        let (written, advertised) = (
            CompiledSchema::compile(&schema).expect("compiles"),
            CompiledSchema::compile(&out).expect("compiles"),
        );
        for instance in [
            json!({"tree": {"label": "a", "children": [{"label": "b", "children": []}]}}),
            json!({"tree": {"children": [{"label": 3}]}}),
            json!({"name": 1}),
        ] {
            assert_eq!(
                written.is_valid(&instance),
                advertised.is_valid(&instance),
                "{instance}"
            );
        }
        assert!(matches!(
            inline_refs(&json!({"type": "object", "properties": {"again": {"$ref": "#"}}})),
            Inlined::Partial { .. }
        ));
    }

    #[test]
    fn position_dependent_schemas_are_kept() {
        for schema in [
            json!({"properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$id": "https://x.example/a"}}}),
            json!({"properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$anchor": "a"}}}),
            json!({"properties": {"a": {"$dynamicRef": "#t", "$ref": "#/$defs/a"}}, "$defs": {"a": {}}}),
        ] {
            assert!(
                matches!(inline_refs(&schema), Inlined::Kept { .. }),
                "{schema}"
            );
        }
    }

    #[test]
    fn a_fan_out_of_references_stops_at_the_bound() {
        // Each definition uses the next twice: 2^30 copies, inlined.
        let mut defs = serde_json::Map::new();
        for level in 0..30 {
            defs.insert(
                format!("d{level}"),
                json!({"type": "array", "prefixItems": [
                    {"$ref": format!("#/$defs/d{}", level + 1)},
                    {"$ref": format!("#/$defs/d{}", level + 1)}
                ]}),
            );
        }
        defs.insert("d30".into(), json!({"type": "string"}));
        let schema =
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
        let started = std::time::Instant::now();
        let Inlined::Kept { reason } = inline_refs(&schema) else {
            panic!("inlined a fan-out");
        };
        assert!(reason.contains(&MAX_VALUES.to_string()), "{reason}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_chain_of_references_stops_at_the_depth_bound_without_overflowing() {
        // Each definition holds the next: inlined, as deep as the chain is long (5,000
        // overflowed the stack before the bound; 60 deep still inlines).
        for (length, inlined) in [(60, true), (5_000, false)] {
            let mut defs = serde_json::Map::new();
            for level in 0..length {
                defs.insert(
                    format!("d{level}"),
                    json!({"type": "object", "properties": {"next": {"$ref": format!("#/$defs/d{}", level + 1)}}}),
                );
            }
            defs.insert(format!("d{length}"), json!({"type": "string"}));
            let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
            match inline_refs(&schema) {
                Inlined::Inlined(_) => assert!(inlined, "{length} inlined"),
                Inlined::Kept { reason } => {
                    assert!(!inlined, "{length}: {reason}");
                    assert!(reason.contains(&MAX_DEPTH.to_string()), "{reason}");
                }
                other => panic!("{length}: {other:?}"),
            }
        }
    }

    #[test]
    fn escaped_pointers_resolve() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a~1b%20c"}},
            "$defs": {"a/b c": {"type": "boolean"}}
        });
        assert_eq!(
            inlined(&schema)["properties"]["a"],
            json!({"type": "boolean"})
        );
    }

    mod accepts_the_same {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::super::{Inlined, inline_refs};
        use crate::schema::CompiledSchema;

        /// A small schema that may refer to `d0`…`d3` (itself included), with siblings
        /// beside some references.
        fn schema(depth: u32) -> BoxedStrategy<Value> {
            let leaf = prop_oneof![
                Just(json!({"type": "string", "maxLength": 2})),
                Just(json!({"type": "integer", "minimum": 0})),
                Just(json!({"type": "boolean"})),
                Just(json!({"enum": [1, "a", null]})),
                Just(json!(true)),
                (0..4u8).prop_map(|target| json!({"$ref": format!("#/$defs/d{target}")})),
                (
                    0..4u8,
                    prop_oneof![
                        Just(json!({"description": "beside"})),
                        Just(json!({"type": "object"})),
                        Just(json!({"required": ["a"]})),
                        Just(json!({"additionalProperties": false})),
                        Just(json!({"minProperties": 1, "title": "t"})),
                    ]
                )
                    .prop_map(|(target, siblings)| {
                        let mut out = siblings;
                        out["$ref"] = json!(format!("#/$defs/d{target}"));
                        out
                    }),
            ];
            leaf.prop_recursive(depth, 16, 3, |inner| {
                prop_oneof![
                    (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(a, b, closed)| {
                        json!({"type": "object", "properties": {"a": a, "b": b}, "additionalProperties": !closed})
                    }),
                    inner.clone().prop_map(|items| json!({"type": "array", "items": items, "maxItems": 3})),
                    (inner.clone(), inner).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
                ]
            })
            .boxed()
        }

        fn instance() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(json!(null)),
                any::<bool>().prop_map(Value::from),
                (-2i64..3).prop_map(Value::from),
                prop_oneof![Just(""), Just("a"), Just("abc")].prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 12, 3, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                    (
                        prop::option::of(inner.clone()),
                        prop::option::of(inner),
                        any::<bool>()
                    )
                        .prop_map(|(a, b, extra)| {
                            let mut object = serde_json::Map::new();
                            if let Some(a) = a {
                                object.insert("a".into(), a);
                            }
                            if let Some(b) = b {
                                object.insert("b".into(), b);
                            }
                            if extra {
                                object.insert("c".into(), json!(1));
                            }
                            Value::Object(object)
                        }),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]
            #[test]
            fn the_advertised_schema_accepts_what_the_written_one_does(
                defs in prop::collection::vec(schema(2), 4),
                root in schema(2),
                draft07 in any::<bool>(),
                instances in prop::collection::vec(instance(), 8),
            ) {
                let mut written = json!({"type": "object", "properties": {"x": root}, "$defs": {}});
                for (index, def) in defs.into_iter().enumerate() {
                    written["$defs"][format!("d{index}")] = def;
                }
                if draft07 {
                    written["$schema"] = json!("http://json-schema.org/draft-07/schema#");
                }
                let Some(advertised) = inline_refs(&written).into_schema() else {
                    return Ok(());
                };
                let (Ok(before), Ok(after)) = (CompiledSchema::compile(&written), CompiledSchema::compile(&advertised)) else {
                    prop_assert!(CompiledSchema::compile(&written).is_err(), "{advertised}");
                    return Ok(());
                };
                for value in instances {
                    let instance = json!({"x": value});
                    prop_assert_eq!(
                        before.is_valid(&instance),
                        after.is_valid(&instance),
                        "{} with {} advertised as {}", instance, written, advertised
                    );
                }
                if matches!(inline_refs(&written), Inlined::Inlined(_)) {
                    prop_assert!(!advertised.to_string().contains("\"$ref\""), "{advertised}");
                }
            }
        }
    }
}
