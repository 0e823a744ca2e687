//! Asking the user before a tool runs (`confirm`, `[tools.ask]`): an elicitation whose
//! message is filled from the arguments and whose accepted answers become placeholders the
//! backend can use. Declining or cancelling means the backend never runs.

use serde_json::{Map, Value, json};

use crate::template::{Sink, Template};

/// What a tool asks before it runs.
#[derive(Debug, Clone)]
pub struct Ask {
    /// Its key in `inputRequests` (`name`; `confirm` or `ask` by default).
    pub key: String,
    /// Whether the call goes on without it when the client cannot ask the user.
    pub optional: bool,
    /// Shown to the user; `{argument}` placeholders are filled in.
    pub message: Template,
    /// The elicitation's `requestedSchema` (an object of primitive fields; none for a plain
    /// confirmation).
    pub schema: Value,
    /// The same, compiled: an answer is the client's word, checked like arguments.
    pub compiled: std::sync::Arc<crate::schema::CompiledSchema>,
}

/// A question for the client's model (`[tools.sample]`), whose text becomes a placeholder.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The user message; `{argument}` (and answer) placeholders are filled in.
    pub prompt: Template,
    pub system: Option<String>,
    pub max_tokens: u32,
    /// The placeholder the model's text fills.
    pub name: String,
}

impl Sample {
    /// The `sampling/createMessage` params for a call with `arguments`.
    pub fn params(&self, arguments: &Map<String, Value>) -> Value {
        let prompt = self
            .prompt
            .render(arguments, Sink::Display)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": self.max_tokens,
        });
        if let Some(system) = &self.system {
            params["systemPrompt"] = json!(system);
        }
        params
    }
}

/// What the user did.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Accepted, with these field values.
    Accepted(Map<String, Value>),
    Declined,
    Cancelled,
}

impl Ask {
    /// The `elicitation/create` params for a call with `arguments`.
    pub fn params(&self, arguments: &Map<String, Value>) -> Value {
        let message = self
            .message
            .render(arguments, Sink::Display)
            .ok()
            .flatten()
            .unwrap_or_default();
        json!({ "message": message, "requestedSchema": self.schema })
    }

    /// The arguments the backend gets after `reply`, or the tool error that says why it
    /// did not run.
    pub fn apply(&self, reply: Reply, arguments: &mut Map<String, Value>) -> Result<(), String> {
        match reply {
            Reply::Accepted(answers) => {
                let violations = self
                    .compiled
                    .violations(&Value::Object(answers.clone()), "answer");
                if !violations.is_empty() {
                    return Err(format!(
                        "the user's answer does not fit what was asked, so the tool did not run:\n{}",
                        violations.join("\n")
                    ));
                }
                let declared = self.schema.get("properties").and_then(Value::as_object);
                for (name, value) in answers {
                    // Only declared fields, never an argument the model already set.
                    if declared.is_some_and(|fields| fields.contains_key(&name))
                        && !arguments.contains_key(&name)
                    {
                        arguments.insert(name, value);
                    }
                }
                Ok(())
            }
            Reply::Declined => Err("the user declined, so the tool did not run".into()),
            Reply::Cancelled => Err("the user cancelled, so the tool did not run".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_join_the_arguments_and_refusals_stop_the_call() {
        let schema = json!({"type": "object", "properties": {"reason": {"type": "string"}}});
        let ask = Ask {
            key: "ask".into(),
            optional: false,
            message: Template::parse("Delete {path}?").expect("template"),
            compiled: std::sync::Arc::new(
                crate::schema::CompiledSchema::compile(&schema).expect("schema"),
            ),
            schema,
        };
        let mut arguments = Map::new();
        arguments.insert("path".into(), json!("/tmp/x"));
        assert_eq!(ask.params(&arguments)["message"], json!("Delete /tmp/x?"));
        let mut answers = Map::new();
        answers.insert("reason".into(), json!("cleanup"));
        answers.insert("path".into(), json!("/etc"));
        answers.insert("extra".into(), json!(1));
        ask.apply(Reply::Accepted(answers), &mut arguments)
            .expect("accepted");
        assert_eq!(arguments["reason"], json!("cleanup"));
        assert_eq!(
            arguments["path"],
            json!("/tmp/x"),
            "an answer never replaces an argument"
        );
        assert!(
            !arguments.contains_key("extra"),
            "undeclared answers are dropped"
        );
        let mut wrong = Map::new();
        wrong.insert("reason".into(), json!(42));
        assert!(
            ask.apply(Reply::Accepted(wrong), &mut arguments)
                .expect_err("refused")
                .contains("does not fit")
        );
        assert!(
            ask.apply(Reply::Declined, &mut arguments)
                .expect_err("refused")
                .contains("declined")
        );
        assert!(
            ask.apply(Reply::Cancelled, &mut arguments)
                .expect_err("refused")
                .contains("cancelled")
        );
    }
}
