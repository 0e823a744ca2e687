//! Prompts (`[[prompts]]`): templates of messages a host offers its user, with arguments
//! filled into text blocks only, and completion values for each argument.

use serde_json::{Map, Value};

use crate::backend::static_result::StaticBlock;
use crate::results::Content;

/// The most completion values one answer carries (the spec's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// One declared prompt, checked at load.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub name: String,
    /// The `prompts/list` entry: name, title, description, arguments, icons.
    pub definition: Map<String, Value>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
    pub messages: Vec<PromptMessage>,
    /// What the user is asked before the messages are made (`[prompts.ask]`).
    pub inputs: crate::inputs::Inputs,
    /// The OAuth scopes a caller needs to see and get it.
    pub scopes: Vec<String>,
}

/// One argument of a prompt. Prompt arguments are strings.
#[derive(Debug, Clone)]
pub struct PromptArgument {
    pub name: String,
    pub required: bool,
    /// What `completion/complete` offers, in order; with `closed`, the only values allowed.
    pub values: Vec<String>,
    /// `enum`: a value outside `values` is refused.
    pub closed: bool,
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone)]
pub struct PromptMessage {
    pub role: Role,
    pub block: StaticBlock,
}

/// Why `prompts/get` refused: the client's mistake, answered with `-32602`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("prompt `{prompt}` needs the argument `{name}`")]
    Missing { prompt: String, name: String },
    #[error("prompt `{prompt}` has no argument `{name}`{}", known_list(known))]
    Unknown {
        prompt: String,
        name: String,
        known: Vec<String>,
    },
    #[error("the argument `{name}` of prompt `{prompt}` is a string, not {got}")]
    NotAString {
        prompt: String,
        name: String,
        got: &'static str,
    },
    #[error(
        "the argument `{name}` of prompt `{prompt}` is one of {}, not `{value}`",
        quoted(allowed)
    )]
    NotAllowed {
        prompt: String,
        name: String,
        value: String,
        allowed: Vec<String>,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "; it takes none".to_owned()
    } else {
        format!("; it takes {}", quoted(known))
    }
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|value| format!("`{value}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Completion values for one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: usize,
    pub has_more: bool,
}

impl Prompt {
    /// The arguments, checked, with every optional one left out filled in as empty text:
    /// what the questions and the messages are rendered from.
    pub fn check(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, PromptError> {
        for (name, value) in arguments {
            let Some(argument) = self.arguments.iter().find(|a| &a.name == name) else {
                return Err(PromptError::Unknown {
                    prompt: self.name.clone(),
                    name: name.clone(),
                    known: self.arguments.iter().map(|a| a.name.clone()).collect(),
                });
            };
            let Value::String(text) = value else {
                return Err(PromptError::NotAString {
                    prompt: self.name.clone(),
                    name: name.clone(),
                    got: json_kind(value),
                });
            };
            if argument.closed && !argument.values.contains(text) {
                return Err(PromptError::NotAllowed {
                    prompt: self.name.clone(),
                    name: name.clone(),
                    value: text.clone(),
                    allowed: argument.values.clone(),
                });
            }
        }
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|argument| argument.required && !arguments.contains_key(&argument.name))
        {
            return Err(PromptError::Missing {
                prompt: self.name.clone(),
                name: missing.name.clone(),
            });
        }
        // An optional argument left out reads as empty text.
        let mut filled = arguments.clone();
        for argument in &self.arguments {
            filled
                .entry(argument.name.clone())
                .or_insert_with(|| Value::String(String::new()));
        }
        Ok(filled)
    }

    /// The messages with `arguments` filled in, after checking them.
    pub fn render(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Vec<(Role, Content)>, PromptError> {
        Ok(self.render_checked(&self.check(arguments)?))
    }

    /// The messages from checked arguments (and any answers joined to them).
    pub fn render_checked(&self, arguments: &Map<String, Value>) -> Vec<(Role, Content)> {
        self.messages
            .iter()
            .map(|message| {
                let content = message.block.render(arguments);
                (message.role, content)
            })
            .collect()
    }

    /// The values of `argument` that start with `partial` (case-insensitively), at most
    /// [`MAX_COMPLETIONS`]; `None` when the prompt has no such argument.
    pub fn complete(&self, argument: &str, partial: &str) -> Option<Completion> {
        let argument = self.arguments.iter().find(|a| a.name == argument)?;
        let partial = partial.to_lowercase();
        let matching: Vec<&String> = argument
            .values
            .iter()
            .filter(|value| value.to_lowercase().starts_with(&partial))
            .collect();
        Some(Completion {
            total: matching.len(),
            has_more: matching.len() > MAX_COMPLETIONS,
            values: matching
                .into_iter()
                .take(MAX_COMPLETIONS)
                .cloned()
                .collect(),
        })
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::template::Template;

    fn prompt() -> Prompt {
        Prompt {
            scopes: Vec::new(),
            name: "review".into(),
            inputs: crate::inputs::Inputs::default(),
            definition: Map::new(),
            description: None,
            arguments: vec![
                PromptArgument {
                    name: "code".into(),
                    required: true,
                    values: vec![],
                    closed: false,
                },
                PromptArgument {
                    name: "tone".into(),
                    required: false,
                    values: (0..150)
                        .map(|i| format!("tone-{i:03}"))
                        .chain(["Gentle".into()])
                        .collect(),
                    closed: true,
                },
            ],
            messages: vec![PromptMessage {
                role: Role::User,
                block: StaticBlock::Text {
                    template: Template::parse("Review this: {code}").expect("template"),
                    annotations: None,
                },
            }],
        }
    }

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn arguments_fill_text_and_are_checked() {
        let prompt = prompt();
        let messages = prompt
            .render(&map(json!({"code": "x = 1; {tone} $(rm -rf /)"})))
            .expect("renders");
        assert_eq!(messages.len(), 1);
        let Content::Text { text, .. } = &messages[0].1 else {
            panic!("text")
        };
        assert_eq!(text, "Review this: x = 1; {tone} $(rm -rf /)");
        let missing = prompt.render(&Map::new()).expect_err("missing");
        assert_eq!(
            missing.to_string(),
            "prompt `review` needs the argument `code`"
        );
        let unknown = prompt
            .render(&map(json!({"code": "x", "colour": "red"})))
            .expect_err("unknown");
        assert_eq!(
            unknown.to_string(),
            "prompt `review` has no argument `colour`; it takes `code`, `tone`"
        );
        let number = prompt.render(&map(json!({"code": 1}))).expect_err("number");
        assert!(number.to_string().contains("is a string, not a number"));
        let closed = prompt
            .render(&map(json!({"code": "x", "tone": "rude"})))
            .expect_err("enum");
        assert!(matches!(closed, PromptError::NotAllowed { .. }));
    }

    #[test]
    fn completion_filters_by_prefix_and_stops_at_one_hundred() {
        let prompt = prompt();
        let all = prompt.complete("tone", "").expect("argument");
        assert_eq!(
            (all.values.len(), all.total, all.has_more),
            (100, 151, true)
        );
        let few = prompt.complete("tone", "TONE-14").expect("argument");
        assert_eq!(
            few.values,
            (140..150)
                .map(|i| format!("tone-{i:03}"))
                .collect::<Vec<_>>()
        );
        assert!(!few.has_more);
        assert_eq!(
            prompt.complete("tone", "g").expect("argument").values,
            ["Gentle"]
        );
        assert!(
            prompt
                .complete("code", "x")
                .expect("argument")
                .values
                .is_empty()
        );
        assert!(prompt.complete("nope", "").is_none());
    }
}
