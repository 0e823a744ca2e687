//! OpenAPI schemas as JSON Schema 2020-12, the dialect tools advertise.
//!
//! 3.1 schemas already are JSON Schema; 3.0 ones are translated (`nullable`, `example`,
//! boolean `exclusiveMinimum`). Every `$ref` inside the description becomes one entry of the
//! root's `$defs` (so recursive schemas stay finite), and only the entries a schema uses are
//! kept. Properties a request cannot send (`readOnly`) are left out of input schemas, and
//! `writeOnly` ones out of output schemas. Keywords that only OpenAPI reads (`discriminator`,
//! `xml`, `externalDocs`, `x-…`) are dropped.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::document::Document;

/// How deep inline schemas may nest (references do not count: each is converted once).
const MAX_DEPTH: usize = 128;

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Which way the data flows, for `readOnly` and `writeOnly`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Request,
    Response,
}

/// Converts the schemas of one description, collecting the `$defs` they refer to: one
/// converter serves every tool of an import, so each component is converted once (once per
/// direction where `readOnly` or `writeOnly` make the two differ), and the tools share the
/// result as the manifest's `[schemas]`.
#[derive(Debug)]
pub struct Converter<'a> {
    document: &'a Document,
    direction: Direction,
    defs: Map<String, Value>,
    names: HashMap<String, String>,
    /// Whether a reference's target (through its own references) has `readOnly` or
    /// `writeOnly`: only those are converted once per direction.
    one_way: HashMap<String, bool>,
    /// The entries being converted, innermost last: a note is the innermost one's.
    converting: Vec<String>,
    /// The notes of each entry, given to every tool that uses it.
    def_notes: HashMap<String, Vec<String>>,
    /// The size of each entry as compact JSON.
    sizes: HashMap<String, usize>,
    /// The `$dynamicAnchor`s in scope, outermost first: each schema entered that declares
    /// one (itself, or in its `$defs`) binds it while its parts are converted.
    dynamic_scope: Vec<Binding>,
    /// Whether a reference's target (through its own references) uses `$dynamicRef`: only
    /// those are converted once per binding of their anchors.
    dynamic: HashMap<String, bool>,
    /// Patterns the validator cannot run, each left out once with a note.
    patterns: HashMap<String, bool>,
    notes: Vec<String>,
}

/// A `$dynamicAnchor` in scope: its name, the schema that declares it, and an identity for
/// cache keys.
#[derive(Debug, Clone)]
struct Binding {
    anchor: String,
    schema: Value,
    id: String,
}

impl<'a> Converter<'a> {
    pub fn new(document: &'a Document, direction: Direction) -> Self {
        Self {
            document,
            direction,
            defs: Map::new(),
            names: HashMap::new(),
            one_way: HashMap::new(),
            converting: Vec::new(),
            def_notes: HashMap::new(),
            sizes: HashMap::new(),
            dynamic_scope: Vec::new(),
            dynamic: HashMap::new(),
            patterns: HashMap::new(),
            notes: Vec::new(),
        }
    }

    /// Which way the schemas converted next go.
    pub fn set_direction(&mut self, direction: Direction) {
        self.direction = direction;
    }

    /// What was left out of the schemas converted since the last call, outside any entry,
    /// for the tool's notes (an entry's own go with it: [`Converter::notes_of`]).
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The notes of the entries `used`, in order, each once.
    pub fn notes_of(&self, used: &[String]) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for note in used
            .iter()
            .filter_map(|name| self.def_notes.get(name))
            .flatten()
        {
            if !notes.contains(note) {
                notes.push(note.clone());
            }
        }
        notes
    }

    fn note(&mut self, note: String) {
        match self.converting.last() {
            Some(name) => self.def_notes.entry(name.clone()).or_default().push(note),
            None => self.notes.push(note),
        }
    }

    /// Every entry converted, by name, in the order made.
    pub fn defs(&self) -> &Map<String, Value> {
        &self.defs
    }

    /// Whether the validator that checks calls can run `pattern` (ECMA-262 syntax, as
    /// JSON Schema has it, within the engine's limits). One it cannot is left out with a
    /// note naming it: a schema that does not compile would make the whole tool unusable.
    fn pattern_runs(&mut self, pattern: &str) -> bool {
        let runs = if let Some(runs) = self.patterns.get(pattern) {
            *runs
        } else {
            let runs =
                crate::schema::CompiledSchema::compile(&json!({ "pattern": pattern })).is_ok();
            self.patterns.insert(pattern.to_owned(), runs);
            runs
        };
        if !runs {
            self.note(format!(
                "pattern `{}` left out: the validator cannot compile it",
                shown(pattern)
            ));
        }
        runs
    }

    pub fn convert(&mut self, schema: &Value) -> Result<Value, String> {
        self.convert_at(schema, 0)
    }

    /// The schema a converted one stands for: itself, or the `$defs` entry it refers to.
    pub fn peek<'b>(&'b self, mut schema: &'b Value) -> &'b Value {
        for _ in 0..8 {
            let Some(name) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| reference.strip_prefix("#/$defs/"))
            else {
                break;
            };
            match self.defs.get(name) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// A root that only refers to an entry becomes that entry (an output schema then says
    /// `type: object` at its root, as clients expect).
    pub fn inline_root(&self, schema: Value) -> Value {
        let target = self.peek(&schema);
        if schema.as_object().is_some_and(|object| object.len() == 1) && target != &schema {
            target.clone()
        } else {
            schema
        }
    }

    /// An output schema's root: one that only refers to an entry admitting nothing but
    /// objects becomes `{"type": "object", "$ref": …}` (clients expect `type: object` at
    /// the root, and the entry stays shared); any other reference becomes its entry, copied
    /// ([`Converter::inline_root`]).
    pub fn output_root(&self, schema: Value) -> Value {
        let reference = schema
            .as_object()
            .filter(|object| object.len() == 1)
            .and_then(|object| object.get("$ref"))
            .filter(|reference| reference.is_string())
            .cloned();
        match reference {
            Some(reference) if self.admits_only_objects(&schema, 0) => {
                json!({"type": "object", "$ref": reference})
            }
            _ => self.inline_root(schema),
        }
    }

    /// Whether `schema` (through references, and any part of an `allOf`) says `type: object`.
    fn admits_only_objects(&self, schema: &Value, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        let target = self.peek(schema);
        target.get("type").and_then(Value::as_str) == Some("object")
            || target
                .get("allOf")
                .and_then(Value::as_array)
                .is_some_and(|parts| {
                    parts
                        .iter()
                        .any(|part| self.admits_only_objects(part, depth + 1))
                })
    }

    /// The entries `root` uses, directly or through other entries, in the order they were
    /// made.
    pub fn used(&self, root: &Value) -> Vec<String> {
        let mut used = HashSet::new();
        let mut pending = Vec::new();
        references(root, &mut pending);
        while let Some(name) = pending.pop() {
            if used.insert(name.clone())
                && let Some(target) = self.defs.get(&name)
            {
                references(target, &mut pending);
            }
        }
        self.defs
            .keys()
            .filter(|name| used.contains(*name))
            .cloned()
            .collect()
    }

    /// `root` with the entries it uses as its own `$defs`: the whole schema.
    pub fn attach(&self, root: &Value) -> Value {
        let mut whole = root.clone();
        let defs: Map<String, Value> = self
            .used(root)
            .into_iter()
            .filter_map(|name| self.defs.get(&name).map(|def| (name, def.clone())))
            .collect();
        if !defs.is_empty()
            && let Some(object) = whole.as_object_mut()
        {
            object.insert("$defs".to_owned(), Value::Object(defs));
        }
        whole
    }

    /// The size of `root` as compact JSON with the entries it uses attached, without
    /// writing it out.
    pub fn whole_size(&mut self, root: &Value) -> usize {
        let used = self.used(root);
        let mut size = root.to_string().len();
        if !used.is_empty() {
            size += ",\"$defs\":{}".len() + used.len().saturating_sub(1);
        }
        for name in used {
            let entry = if let Some(size) = self.sizes.get(&name) {
                *size
            } else {
                let entry = self.defs.get(&name).map_or(0, |def| def.to_string().len());
                self.sizes.insert(name.clone(), entry);
                entry
            };
            size += Value::from(name).to_string().len() + 1 + entry;
        }
        size
    }

    fn convert_at(&mut self, schema: &Value, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("a schema nests deeper than {MAX_DEPTH} levels"));
        }
        let Some(object) = schema.as_object() else {
            // `true` and `false` are schemas in 3.1; anything else is not, and accepts all.
            return Ok(if schema.is_boolean() {
                schema.clone()
            } else {
                json!({})
            });
        };
        let bound = self.bind(object);
        let converted = self.convert_object(object, depth);
        self.dynamic_scope
            .truncate(self.dynamic_scope.len() - bound);
        converted
    }

    /// Puts the `$dynamicAnchor`s an object declares (itself, or its `$defs` entries) in
    /// scope; returns how many.
    fn bind(&mut self, object: &Map<String, Value>) -> usize {
        let mut bindings = Vec::new();
        let mut declare = |schema: &Value| {
            if let Some(anchor) = schema.get("$dynamicAnchor").and_then(Value::as_str) {
                bindings.push(Binding {
                    anchor: anchor.to_owned(),
                    id: identity(schema),
                    schema: schema.clone(),
                });
            }
        };
        if object.contains_key("$dynamicAnchor") {
            declare(&Value::Object(object.clone()));
        }
        for key in ["$defs", "definitions"] {
            for schema in object
                .get(key)
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(Map::values)
            {
                declare(schema);
            }
        }
        let count = bindings.len();
        self.dynamic_scope.extend(bindings);
        count
    }

    /// `$dynamicRef: "#name"` as the schema it stands for here: the outermost `$dynamicAnchor`
    /// of that name in scope (Scalar Galaxy's `PaginatedResource` binds `itemType` to
    /// `Planet` where a response specializes it), converted like a reference, so a
    /// recursive one stays finite. The output has no dynamic reference left to resolve.
    fn dynamic_reference(&mut self, reference: &str, depth: usize) -> Result<Value, String> {
        let Some(anchor) = reference
            .strip_prefix('#')
            .filter(|name| !name.starts_with('/'))
        else {
            if reference.starts_with("#/") {
                return self.reference(reference, depth);
            }
            return Err(format!(
                "`$dynamicRef: {reference}` points outside the description (only `#…` references are followed)"
            ));
        };
        let Some(binding) = self
            .dynamic_scope
            .iter()
            .find(|binding| binding.anchor == anchor)
            .cloned()
        else {
            return Err(format!(
                "`$dynamicRef: {reference}` has no `$dynamicAnchor: {anchor}` in scope to bind to"
            ));
        };
        let key = format!(
            "$dynamicAnchor {anchor} {} {:?}",
            binding.id, self.direction
        );
        if let Some(name) = self.names.get(&key) {
            return Ok(json!({ "$ref": format!("#/$defs/{name}") }));
        }
        let name = self.def_name(anchor, true);
        self.names.insert(key, name.clone());
        self.defs.insert(name.clone(), json!({}));
        let mut schema = binding.schema;
        if let Some(object) = schema.as_object_mut() {
            object.shift_remove("$dynamicAnchor");
            object.shift_remove("$defs");
        }
        let converted = self.convert_at(&schema, depth + 1)?;
        self.defs.insert(name.clone(), converted.clone());
        // A binding that only names another schema is that schema.
        if converted.as_object().is_some_and(|object| {
            object.len() == 1 && object.get("$ref").is_some_and(Value::is_string)
        }) {
            return Ok(converted);
        }
        Ok(json!({ "$ref": format!("#/$defs/{name}") }))
    }

    /// An object with a `$dynamicRef`: the schema it stands for, and its other keywords
    /// beside it (in an `allOf`).
    fn convert_dynamic(
        &mut self,
        reference: &str,
        object: &Map<String, Value>,
        depth: usize,
    ) -> Result<Value, String> {
        let target = self.dynamic_reference(reference, depth)?;
        let mut rest = object.clone();
        rest.shift_remove("$dynamicRef");
        if rest.is_empty() {
            return Ok(target);
        }
        let mut converted = self.convert_object(&rest, depth + 1)?;
        if let Some(map) = converted.as_object_mut() {
            let parts = map
                .entry("allOf")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(parts) = parts {
                parts.push(target);
            }
        }
        Ok(converted)
    }

    /// An object with a `$ref`: the reference, and in 3.1 its siblings beside it (3.0
    /// ignores them).
    fn convert_reference(
        &mut self,
        reference: &str,
        object: &Map<String, Value>,
        depth: usize,
    ) -> Result<Value, String> {
        let target = self.reference(reference, depth)?;
        if self.document.is_3_0 || object.len() == 1 {
            return Ok(target);
        }
        let mut rest = object.clone();
        rest.shift_remove("$ref");
        let mut converted = self.convert_at(&Value::Object(rest), depth + 1)?;
        if let Some(map) = converted.as_object_mut() {
            map.insert("$ref".to_owned(), target["$ref"].clone());
        }
        Ok(converted)
    }

    fn convert_object(
        &mut self,
        object: &Map<String, Value>,
        depth: usize,
    ) -> Result<Value, String> {
        if let Some(reference) = object.get("$dynamicRef").and_then(Value::as_str) {
            return self.convert_dynamic(reference, object, depth);
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            return self.convert_reference(reference, object, depth);
        }
        let mut out = Map::new();
        for (key, value) in object {
            let key = key.as_str();
            match key {
                _ if key.starts_with("x-") => {}
                "nullable" | "discriminator" | "xml" | "externalDocs" | "$id" | "$schema"
                | "$anchor" | "$dynamicAnchor" | "$comment" | "$defs" | "definitions" => {}
                "example" => {
                    out.insert("examples".to_owned(), json!([value]));
                }
                "type" => {
                    if let Some(kind) = valid_type(value) {
                        out.insert("type".to_owned(), kind);
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if value == &Value::Bool(true)
                        && let Some(limit) = object.get(bound)
                    {
                        out.insert(key.to_owned(), limit.clone());
                    }
                }
                "minimum" | "maximum" => {
                    let exclusive = if key == "minimum" {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    };
                    if object.get(exclusive) != Some(&Value::Bool(true)) {
                        out.insert(key.to_owned(), value.clone());
                    }
                }
                "pattern" => {
                    if value
                        .as_str()
                        .is_none_or(|pattern| self.pattern_runs(pattern))
                    {
                        out.insert(key.to_owned(), value.clone());
                    }
                }
                "patternProperties" => {
                    let mut kept = self.convert_map(value, depth)?;
                    if let Some(map) = kept.as_object_mut() {
                        let unusable: Vec<String> = map
                            .keys()
                            .filter(|pattern| !self.pattern_runs(pattern))
                            .cloned()
                            .collect();
                        for pattern in unusable {
                            map.shift_remove(&pattern);
                        }
                    }
                    out.insert(key.to_owned(), kept);
                }
                "properties" | "dependentSchemas" => {
                    out.insert(key.to_owned(), self.convert_map(value, depth)?);
                }
                "items" if value.is_array() => {
                    out.insert("prefixItems".to_owned(), self.convert_list(value, depth)?);
                }
                "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames" => {
                    out.insert(key.to_owned(), self.convert_at(value, depth + 1)?);
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                    out.insert(key.to_owned(), self.convert_list(value, depth)?);
                }
                _ => {
                    out.insert(key.to_owned(), value.clone());
                }
            }
        }
        self.leave_out_one_way_properties(&mut out);
        let nullable = self.document.is_3_0 && object.get("nullable") == Some(&Value::Bool(true));
        Ok(if nullable {
            nullable_form(out)
        } else {
            Value::Object(out)
        })
    }

    fn convert_map(&mut self, value: &Value, depth: usize) -> Result<Value, String> {
        let Some(map) = value.as_object() else {
            return Ok(json!({}));
        };
        let mut out = Map::new();
        for (name, schema) in map {
            out.insert(name.clone(), self.convert_at(schema, depth + 1)?);
        }
        Ok(Value::Object(out))
    }

    fn convert_list(&mut self, value: &Value, depth: usize) -> Result<Value, String> {
        let Some(list) = value.as_array() else {
            return Ok(json!([]));
        };
        list.iter()
            .map(|schema| self.convert_at(schema, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    }

    /// `{"$ref": "#/$defs/NAME"}` for a reference, converting its target the first time
    /// (once per binding of the dynamic anchors it uses).
    fn reference(&mut self, reference: &str, depth: usize) -> Result<Value, String> {
        let one_way = self.is_one_way(reference);
        let mut key = if self.dynamic_scope.is_empty() || !self.uses_dynamic_reference(reference) {
            reference.to_owned()
        } else {
            format!("{reference} {}", self.scope_signature())
        };
        if one_way {
            key = format!("{key} {:?}", self.direction);
        }
        if let Some(name) = self.names.get(&key) {
            return Ok(json!({ "$ref": format!("#/$defs/{name}") }));
        }
        if !reference.starts_with('#') {
            return Err(format!(
                "`$ref: {reference}` points outside the description (only `#/…` references are followed)"
            ));
        }
        // A schema lives under `components/schemas`, or under a `schema` key (a parameter's,
        // a media type's); a reference elsewhere (a parameter object, the whole document)
        // would be read as a schema that accepts anything.
        if !(reference.starts_with("#/components/schemas/")
            || reference.split('/').any(|segment| segment == "schema"))
        {
            return Err(format!("`$ref: {reference}` does not point at a schema"));
        }
        let target = self
            .document
            .lookup(reference)
            .ok_or_else(|| format!("`$ref: {reference}` points at nothing"))?;
        let name = self.def_name(reference, one_way);
        self.names.insert(key, name.clone());
        // A placeholder first: the target may refer to itself.
        let mark = self.defs.len();
        self.defs.insert(name.clone(), json!({}));
        self.converting.push(name.clone());
        let converted = self.convert_at(target, depth + 1);
        self.converting.pop();
        match converted {
            Ok(converted) => {
                self.defs.insert(name.clone(), converted);
                Ok(json!({ "$ref": format!("#/$defs/{name}") }))
            }
            Err(reason) => {
                self.forget_since(mark);
                Err(reason)
            }
        }
    }

    /// Forgets the entries made since there were `mark` (a conversion that failed): a later
    /// tool converts them anew rather than refer to a placeholder.
    fn forget_since(&mut self, mark: usize) {
        let made: Vec<String> = self.defs.keys().skip(mark).cloned().collect();
        for name in made.iter().rev() {
            self.defs.shift_remove(name);
            self.def_notes.remove(name);
            self.sizes.remove(name);
        }
        let defs = &self.defs;
        self.names.retain(|_, name| defs.contains_key(name));
    }

    /// Whether the schema `reference` names, or one it refers to, has `readOnly` or
    /// `writeOnly`: then a request's conversion and a response's differ.
    fn is_one_way(&mut self, reference: &str) -> bool {
        if let Some(known) = self.one_way.get(reference) {
            return *known;
        }
        let found = self.reaches(reference, |key, value| {
            matches!(key, "readOnly" | "writeOnly") && value == &Value::Bool(true)
        });
        self.one_way.insert(reference.to_owned(), found);
        found
    }

    /// Whether the schema `reference` names, or one it refers to, has a `$dynamicRef`.
    fn uses_dynamic_reference(&mut self, reference: &str) -> bool {
        if let Some(known) = self.dynamic.get(reference) {
            return *known;
        }
        let found = self.reaches(reference, |key, _| key == "$dynamicRef");
        self.dynamic.insert(reference.to_owned(), found);
        found
    }

    /// Whether the schema `reference` names, or one it refers to through local
    /// references, has a keyword `marker` picks.
    fn reaches(&self, reference: &str, marker: fn(&str, &Value) -> bool) -> bool {
        let mut pending = vec![reference.to_owned()];
        let mut seen = HashSet::new();
        let mut found = false;
        while let Some(next) = pending.pop() {
            if found || !seen.insert(next.clone()) {
                continue;
            }
            if let Some(target) = self.document.lookup(&next) {
                found = scan(target, &mut pending, marker);
            }
        }
        found
    }

    /// Which schema each dynamic anchor in scope binds to (the outermost of each name).
    fn scope_signature(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        let mut signature = String::new();
        for binding in &self.dynamic_scope {
            if !seen.contains(&binding.anchor.as_str()) {
                seen.push(&binding.anchor);
                signature.push_str(&binding.anchor);
                signature.push('=');
                signature.push_str(&binding.id);
                signature.push(' ');
            }
        }
        signature
    }

    /// The last segment of the reference, as a plain name (no `/`, `~` or `%` to escape in
    /// a pointer), unique in this document.
    fn def_name(&self, reference: &str, one_way: bool) -> String {
        let last = reference.rsplit('/').next().unwrap_or("schema");
        let mut base: String = last
            .replace("~1", "_")
            .replace("~0", "_")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            "schema".clone_into(&mut base);
        }
        // A schema with `readOnly` or `writeOnly` parts is two: the response's keeps the
        // name, the request's is `NAME_input`.
        if one_way && self.direction == Direction::Request {
            base.push_str("_input");
        }
        let mut name = base.clone();
        let mut counter = 2;
        while self.defs.contains_key(&name) {
            name = format!("{base}_{counter}");
            counter += 1;
        }
        name
    }

    /// Properties a request cannot send (`readOnly`), or a response does not return
    /// (`writeOnly`), are not part of the schema.
    fn leave_out_one_way_properties(&self, out: &mut Map<String, Value>) {
        let marker = match self.direction {
            Direction::Request => "readOnly",
            Direction::Response => "writeOnly",
        };
        let Some(properties) = out.get("properties").and_then(Value::as_object) else {
            return;
        };
        let one_way: Vec<String> = properties
            .iter()
            // The property's own keyword (beside a 3.1 `$ref`), else its target's.
            .filter(|(_, schema)| {
                schema.get(marker).or_else(|| self.peek(schema).get(marker))
                    == Some(&Value::Bool(true))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if one_way.is_empty() {
            return;
        }
        if let Some(Value::Object(properties)) = out.get_mut("properties") {
            for name in &one_way {
                properties.shift_remove(name);
            }
        }
        if let Some(Value::Array(required)) = out.get_mut("required") {
            required.retain(|name| {
                !name
                    .as_str()
                    .is_some_and(|name| one_way.iter().any(|gone| gone == name))
            });
        }
    }
}

/// `type` if it names JSON Schema types (a 3.0 `type: file` does not).
fn valid_type(value: &Value) -> Option<Value> {
    match value {
        Value::String(kind) if TYPES.contains(&kind.as_str()) => Some(value.clone()),
        Value::Array(kinds) => {
            let kept: Vec<Value> = kinds
                .iter()
                .filter(|kind| kind.as_str().is_some_and(|kind| TYPES.contains(&kind)))
                .cloned()
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        _ => None,
    }
}

/// 3.0's `nullable: true` in 2020-12 terms: `null` joins the type (and the enum), or the
/// schema becomes one of two.
fn nullable_form(mut out: Map<String, Value>) -> Value {
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match out.get_mut("type") {
        Some(Value::String(kind)) => {
            let kind = std::mem::take(kind);
            out.insert("type".to_owned(), json!([kind, "null"]));
            Value::Object(out)
        }
        Some(Value::Array(kinds)) => {
            if !kinds.contains(&json!("null")) {
                kinds.push(json!("null"));
            }
            Value::Object(out)
        }
        _ => json!({ "anyOf": [Value::Object(out), { "type": "null" }] }),
    }
}

/// A pattern for a note: at most 80 characters.
fn shown(pattern: &str) -> String {
    match pattern.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &pattern[..at]),
        None => pattern.to_owned(),
    }
}

/// A short identity of a schema's text, for cache keys.
fn identity(schema: &Value) -> String {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    schema.to_string().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Whether `value` has a keyword `marker` picks; the local references it makes join
/// `pending`.
fn scan(value: &Value, pending: &mut Vec<String>, marker: fn(&str, &Value) -> bool) -> bool {
    match value {
        Value::Object(map) => {
            let mut found = false;
            for (key, child) in map {
                match (key.as_str(), child) {
                    (key, child) if marker(key, child) => found = true,
                    ("$ref", Value::String(reference)) if reference.starts_with("#/") => {
                        pending.push(reference.clone());
                    }
                    _ => found |= scan(child, pending, marker),
                }
            }
            found
        }
        Value::Array(items) => items.iter().any(|item| scan(item, pending, marker)),
        _ => false,
    }
}

/// The `$defs` names a schema refers to.
fn references(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "$ref"
                    && let Some(name) = child
                        .as_str()
                        .and_then(|reference| reference.strip_prefix("#/$defs/"))
                {
                    found.push(name.to_owned());
                } else if key != "$defs" {
                    references(child, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(version: &str, schemas: &Value) -> Document {
        let text = json!({"openapi": version, "components": {"schemas": schemas}}).to_string();
        Document::parse(&text).expect("parses")
    }

    #[test]
    fn openapi_3_0_keywords_become_json_schema() {
        let document = document("3.0.3", &json!({}));
        let mut converter = Converter::new(&document, Direction::Request);
        let schema = json!({
            "type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true,
            "maximum": 9, "example": 4, "x-internal": true, "enum": [2, 4]
        });
        assert_eq!(
            converter.convert(&schema).expect("converts"),
            json!({"type": ["integer", "null"], "exclusiveMinimum": 1, "maximum": 9, "examples": [4], "enum": [2, 4, null]})
        );
        let untyped = json!({"allOf": [{"type": "string"}], "nullable": true});
        assert_eq!(
            converter.convert(&untyped).expect("converts"),
            json!({"anyOf": [{"allOf": [{"type": "string"}]}, {"type": "null"}]})
        );
        assert_eq!(
            converter
                .convert(&json!({"type": "file"}))
                .expect("converts"),
            json!({})
        );
    }

    #[test]
    fn references_become_defs_and_only_used_ones_are_kept() {
        let document = document(
            "3.1.0",
            &json!({
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}, "tag": {"$ref": "#/components/schemas/Tag"}}},
                "Tag": {"type": "string"},
                "Unused": {"type": "string"}
            }),
        );
        let mut converter = Converter::new(&document, Direction::Request);
        let _unused = converter
            .convert(&json!({"$ref": "#/components/schemas/Unused"}))
            .expect("converts");
        let root = converter
            .convert(&json!({"type": "object", "properties": {"head": {"$ref": "#/components/schemas/Node", "description": "first"}}}))
            .expect("converts");
        assert_eq!(converter.used(&root), ["Node", "Tag"]);
        let root = converter.attach(&root);
        assert_eq!(
            root["properties"]["head"],
            json!({"$ref": "#/$defs/Node", "description": "first"})
        );
        let defs = root["$defs"].as_object().expect("defs");
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["Node", "Tag"]);
        assert_eq!(
            defs["Node"]["properties"]["next"],
            json!({"$ref": "#/$defs/Node"})
        );
    }

    #[test]
    fn read_only_properties_are_not_asked_for_and_write_only_ones_not_promised() {
        let document = document(
            "3.0.3",
            &json!({"Id": {"type": "integer", "readOnly": true}}),
        );
        let schema = json!({
            "type": "object", "required": ["id", "name", "secret"],
            "properties": {"id": {"$ref": "#/components/schemas/Id"}, "name": {"type": "string"}, "secret": {"type": "string", "writeOnly": true}}
        });
        let request = Converter::new(&document, Direction::Request)
            .convert(&schema)
            .expect("converts");
        assert_eq!(request["required"], json!(["name", "secret"]));
        assert!(request["properties"].get("id").is_none());
        let response = Converter::new(&document, Direction::Response)
            .convert(&schema)
            .expect("converts");
        assert_eq!(response["required"], json!(["id", "name"]));
    }

    #[test]
    fn external_and_dangling_references_are_refused() {
        let document = document("3.1.0", &json!({}));
        let mut converter = Converter::new(&document, Direction::Request);
        assert!(
            converter
                .convert(&json!({"$ref": "common.yaml#/Pet"}))
                .is_err()
        );
        assert!(
            converter
                .convert(&json!({"$ref": "#/components/schemas/Missing"}))
                .is_err()
        );
    }
}
