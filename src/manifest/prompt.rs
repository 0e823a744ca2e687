//! `[[prompts]]`: names, arguments (with their completion values) and messages, whose text
//! placeholders must name declared arguments. Content blocks are checked (and files read)
//! as `[tools.static]`'s are.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};
use toml::Spanned;

use super::Checker;
use super::facts::{ArgumentFacts, template_at};
use super::identity::icons_json;
use super::static_result::build_block;
use super::wire::PromptWire;
use crate::backend::static_result::StaticBlock;
use crate::prompt::{Prompt, PromptArgument, PromptMessage, Role};
use crate::suggest::suggest;

/// Checks every prompt; the ones with problems are left out (their diagnostics say why).
pub(super) fn build_prompts(wires: &[PromptWire], checker: &mut Checker) -> Vec<Prompt> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut prompts = Vec::new();
    for (index, wire) in wires.iter().enumerate() {
        let name = wire.name.get_ref().clone();
        if let Some(first) = seen.get(&name) {
            checker
                .error(format!("duplicate prompt name `{name}`"), wire.name.span())
                .hint(format!("prompt #{} already uses this name", first + 1));
        } else {
            seen.insert(name, index);
        }
        if let Some(prompt) = build_prompt(wire, checker) {
            prompts.push(prompt);
        }
    }
    prompts
}

/// The prompt's name, which may not be empty or hold spaces.
fn checked_name(wire: &PromptWire, checker: &mut Checker) -> String {
    let name = wire.name.get_ref().clone();
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        checker.error(
            format!("prompt name `{name}` is empty or has spaces"),
            wire.name.span(),
        );
    }
    name
}

fn build_prompt(wire: &PromptWire, checker: &mut Checker) -> Option<Prompt> {
    let errors_before = checker.diagnostics.len();
    let name = checked_name(wire, checker);
    let arguments: Vec<PromptArgument> = wire
        .arguments
        .iter()
        .map(|(argument, spec)| {
            let values = match (&spec.choices, &spec.complete) {
                (Some(choices), Some(_)) => {
                    checker.error(
                        "an argument has `enum` (the values allowed) or `complete` (values offered), not both",
                        choices.span(),
                    );
                    Vec::new()
                }
                (Some(choices), None) => choices.get_ref().clone(),
                (None, Some(values)) => values.clone(),
                (None, None) => Vec::new(),
            };
            PromptArgument {
                name: argument.get_ref().clone(),
                required: !spec.optional.unwrap_or(false),
                values,
                closed: spec.choices.is_some(),
            }
        })
        .collect();
    let mut facts = ArgumentFacts {
        names: arguments.iter().map(|a| a.name.clone()).collect(),
        always_present: arguments
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name.clone())
            .collect::<HashSet<_>>(),
        types: arguments
            .iter()
            .map(|a| (a.name.clone(), "string".to_owned()))
            .collect(),
    };
    let inputs = wire
        .ask
        .as_ref()
        .map(|asks| super::ask::build_asks(asks, &mut facts, checker))
        .unwrap_or_default();
    super::ask::unique_keys(&inputs, wire.name.span(), checker);
    if wire.messages.is_empty() {
        checker
            .error(format!("prompt `{name}` has no messages"), wire.name.span())
            .hint(
                "add `[[prompts.messages]]` tables with `role` and `text` (or a `content` block)",
            );
    }
    let messages: Vec<PromptMessage> = wire
        .messages
        .iter()
        .filter_map(|message| build_message(message, &facts, checker))
        .collect();

    let mut definition = Map::new();
    definition.insert("name".into(), json!(name));
    if let Some(title) = &wire.title {
        definition.insert("title".into(), json!(title));
    }
    if let Some(description) = &wire.description {
        definition.insert("description".into(), json!(description));
    }
    if !wire.arguments.is_empty() {
        let listed: Vec<Value> = wire
            .arguments
            .iter()
            .map(|(argument, spec)| {
                let mut entry = Map::new();
                entry.insert("name".into(), json!(argument.get_ref()));
                if let Some(title) = &spec.title {
                    entry.insert("title".into(), json!(title));
                }
                if let Some(description) = &spec.description {
                    entry.insert("description".into(), json!(description));
                }
                entry.insert("required".into(), json!(!spec.optional.unwrap_or(false)));
                Value::Object(entry)
            })
            .collect();
        definition.insert("arguments".into(), Value::Array(listed));
    }
    if let Some(icons) = &wire.icons {
        definition.insert("icons".into(), icons_json(icons, checker));
    }
    let scopes = super::auth::scopes(wire.scopes.as_ref(), checker);
    (checker.diagnostics.len() == errors_before).then(|| Prompt {
        name,
        definition,
        description: wire.description.clone(),
        arguments,
        messages,
        inputs,
        scopes,
    })
}

fn build_message(
    message: &Spanned<crate::manifest::wire::MessageWire>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<PromptMessage> {
    let span = message.span();
    let wire = message.get_ref();
    let role = match wire.role.get_ref().as_str() {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        other => {
            checker
                .error(format!("unknown role `{other}`"), wire.role.span())
                .suggest(suggest(other, ["user", "assistant"]))
                .hint("a message's role is `user` or `assistant`");
            None
        }
    };
    let block = match (&wire.text, &wire.content) {
        (Some(text), None) => {
            template_at(text, span.clone(), facts, checker).map(|template| StaticBlock::Text {
                template,
                annotations: None,
            })
        }
        (None, Some(content)) => build_block(content, facts, checker),
        _ => {
            checker
                .error(
                    "a message has `text` or a `content` block, one of them",
                    span.start..span.start + 1,
                )
                .hint("for example: text = \"Review this code: {code}\"");
            None
        }
    };
    Some(PromptMessage {
        role: role?,
        block: block?,
    })
}
