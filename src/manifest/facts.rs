//! What a tool's templates may refer to: the input schema's top-level properties, which of
//! them are always present, and their pinned types. Every template in a manifest is parsed
//! and checked against these facts here.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde_json::Value;
use toml::Spanned;

use super::Checker;
use crate::suggest::suggest;
use crate::template::Template;

/// What the templates may refer to: the input schema's top-level properties.
#[derive(Debug, Default)]
pub(super) struct ArgumentFacts {
    pub(super) names: Vec<String>,
    pub(super) always_present: HashSet<String>,
    pub(super) types: HashMap<String, String>,
}

impl ArgumentFacts {
    /// Adds the fields a tool asks the user for (`[tools.ask]`): after an accepted answer
    /// they are placeholders like arguments.
    /// `certain`: the answers are there whenever the call runs (not an optional question).
    pub(super) fn add_answers(&mut self, schema: &Value, certain: bool) {
        let answers = Self::from_schema(schema);
        for name in answers.names {
            if !self.names.contains(&name) {
                self.names.push(name);
            }
        }
        if certain {
            self.always_present.extend(answers.always_present);
        }
        self.types.extend(answers.types);
    }

    pub(super) fn from_schema(schema: &Value) -> Self {
        let mut facts = Self::default();
        let required: HashSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                facts.names.push(name.clone());
                if required.contains(name.as_str()) || property.get("default").is_some() {
                    facts.always_present.insert(name.clone());
                }
                if let Some(kind) = property.get("type").and_then(Value::as_str) {
                    facts.types.insert(name.clone(), kind.to_owned());
                }
            }
        }
        facts
    }

    pub(super) fn is_always_present(&self, name: &str) -> bool {
        self.always_present.contains(name)
    }

    pub(super) fn is_list(&self, name: &str) -> bool {
        self.types.get(name).is_some_and(|kind| kind == "array")
    }
}

pub(super) fn parse_template(
    value: &Spanned<String>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Template> {
    template_at(value.get_ref(), value.span(), facts, checker)
}

/// Parses a template and checks that every placeholder names a declared argument.
pub(super) fn template_at(
    text: &str,
    span: Range<usize>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Template> {
    let template = match Template::parse(text) {
        Ok(template) => template,
        Err(error) => {
            checker.error(format!("invalid template: {error}"), span);
            return None;
        }
    };
    let mut ok = true;
    for name in template.placeholders() {
        // The caller's identity (`{auth.sub}`, `{auth.claims.NAME}`) is there when a token
        // named someone, and absent otherwise, like an optional argument.
        if crate::auth::is_placeholder(name) && !facts.names.iter().any(|known| known == name) {
            if !checker.oauth {
                ok = false;
                checker
                    .error(format!("`{{{name}}}` needs `[server.auth]`"), span.clone())
                    .hint("the caller's identity comes from an OAuth access token; without one the value would be missing");
            }
            checker.identity_used = true;
            continue;
        }
        if !facts.names.iter().any(|known| known == name) {
            ok = false;
            let diagnostic = checker.error(
                format!("template refers to undeclared argument `{name}`"),
                span.clone(),
            );
            diagnostic.suggest(suggest(name, facts.names.iter().map(String::as_str)));
            if facts.names.is_empty() {
                diagnostic.hint("this tool declares no arguments");
            }
        }
    }
    ok.then_some(template)
}
