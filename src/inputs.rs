//! What a tool (or prompt) needs from the client before it runs, and the one engine that
//! gathers it for both lifecycles: questions for the user (`confirm`, `[tools.ask]`), a question for
//! the client's model (`[tools.sample]`) and the client's roots (`roots = true`).
//!
//! The engine is pure: given the arguments and the answers so far it says what to ask next
//! ([`Step::Ask`], one round of requests), that the call may go on ([`Step::Ready`], answers
//! joined to the arguments as placeholders), or why it may not. An input is asked as soon as
//! every placeholder its text names is known, so inputs that depend on each other take
//! several rounds and independent ones share one. A 2025 revision sends each round as requests
//! on the client's connection (`mcp::elicit`); 2026-07-28 answers `input_required` and the
//! client retries with the answers (`mcp::mrtr`).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::ask::{Ask, Reply, Sample};

/// The placeholder (and input key) the client's roots fill.
pub const ROOTS: &str = "roots";

/// A client capability an input needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Elicitation,
    Sampling,
    Roots,
}

/// What a client declared it can be asked for, by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub elicitation: bool,
    pub sampling: bool,
    pub roots: bool,
}

impl Capabilities {
    pub fn has(self, capability: Capability) -> bool {
        match capability {
            Capability::Elicitation => self.elicitation,
            Capability::Sampling => self.sampling,
            Capability::Roots => self.roots,
        }
    }
}

impl Capability {
    /// The key under `ClientCapabilities`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation",
            Self::Sampling => "sampling",
            Self::Roots => "roots",
        }
    }

    /// What a person calls it, in errors.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Elicitation => "asking the user (elicitation)",
            Self::Sampling => "lending its model (sampling)",
            Self::Roots => "sharing its roots",
        }
    }
}

/// One thing to gather.
#[derive(Debug, Clone)]
pub enum Input {
    Ask(Ask),
    Sample(Sample),
    Roots,
}

impl Input {
    /// Its key in `inputRequests`/`inputResponses`.
    pub fn key(&self) -> &str {
        match self {
            Self::Ask(ask) => &ask.key,
            Self::Sample(sample) => &sample.name,
            Self::Roots => ROOTS,
        }
    }

    pub fn method(&self) -> &'static str {
        match self {
            Self::Ask(_) => "elicitation/create",
            Self::Sample(_) => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }

    pub fn capability(&self) -> Capability {
        match self {
            Self::Ask(_) => Capability::Elicitation,
            Self::Sample(_) => Capability::Sampling,
            Self::Roots => Capability::Roots,
        }
    }

    /// Whether the call goes on without it when the client cannot be asked.
    fn optional(&self) -> bool {
        matches!(self, Self::Ask(ask) if ask.optional)
    }

    /// The placeholders its answer fills.
    pub fn produces(&self) -> Vec<String> {
        match self {
            Self::Ask(ask) => ask
                .schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|fields| fields.keys().cloned().collect())
                .unwrap_or_default(),
            Self::Sample(sample) => vec![sample.name.clone()],
            Self::Roots => vec![ROOTS.to_owned()],
        }
    }

    /// The placeholders its own text names.
    fn uses(&self) -> Vec<&str> {
        match self {
            Self::Ask(ask) => ask.message.placeholders().collect(),
            Self::Sample(sample) => sample.prompt.placeholders().collect(),
            Self::Roots => Vec::new(),
        }
    }

    fn params(&self, arguments: &Map<String, Value>) -> Value {
        match self {
            Self::Ask(ask) => ask.params(arguments),
            Self::Sample(sample) => sample.params(arguments),
            Self::Roots => json!({}),
        }
    }

    /// Joins the client's answer to the arguments, or says why the call stops.
    fn apply(&self, answer: &Value, arguments: &mut Map<String, Value>) -> Result<(), Stop> {
        match self {
            Self::Ask(ask) => {
                let reply = elicit_reply(answer).ok_or_else(|| self.malformed())?;
                ask.apply(reply, arguments).map_err(Stop::Refused)
            }
            Self::Sample(sample) => {
                let text = sampled_text(answer).ok_or_else(|| self.malformed())?;
                if text.is_empty() {
                    return Err(Stop::Refused(
                        "the client's model answered without text, so the tool did not run".into(),
                    ));
                }
                arguments.insert(sample.name.clone(), Value::String(text));
                Ok(())
            }
            Self::Roots => {
                let roots = root_paths(answer).ok_or_else(|| self.malformed())?;
                if roots.is_empty() {
                    return Err(Stop::Refused(
                        "the client shared no file:// roots, so the call did not run".into(),
                    ));
                }
                arguments.insert(ROOTS.to_owned(), Value::String(roots.join("\n")));
                Ok(())
            }
        }
    }

    fn malformed(&self) -> Stop {
        Stop::Malformed(format!(
            "the answer to `{}` is not a {} result",
            self.key(),
            self.method()
        ))
    }
}

/// One question of a round: a request to the client for input (an elicitation, a sampling,
/// the roots), answered before the call goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub key: String,
    pub method: &'static str,
    pub params: Value,
}

impl Question {
    /// `{"method": …, "params": …}`, as `inputRequests` carries it.
    pub fn to_json(&self) -> Value {
        json!({"method": self.method, "params": self.params})
    }
}

/// What happens next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Everything is known: the arguments with the answers joined.
    Ready(Map<String, Value>),
    /// Ask these (one round), then try again with their answers.
    Ask(Vec<Question>),
}

/// Why the call stops before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The user declined, cancelled or answered outside what was asked: a tool error.
    Refused(String),
    /// An answer is not shaped like the method's result: the client's protocol error.
    Malformed(String),
    /// The client cannot be asked for something the call needs.
    Missing(Capability),
}

/// Everything a tool or prompt gathers, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub items: Vec<Input>,
}

impl Inputs {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The keys, for keeping only answers that mean something.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.items.iter().map(Input::key)
    }

    /// The next step given `answers` (by key; unknown keys are ignored) and what the client
    /// can do. Answers are applied in declaration order; an input is asked once every
    /// placeholder it names is known.
    pub fn step(
        &self,
        arguments: &Map<String, Value>,
        answers: &Map<String, Value>,
        can: impl Fn(Capability) -> bool,
    ) -> Result<Step, Stop> {
        let mut unknown: HashSet<String> = self.items.iter().flat_map(Input::produces).collect();
        // What an input fills comes from the client only: an argument of the same name (a
        // full input schema may allow undeclared ones) never stands in for an answer.
        let mut arguments = arguments.clone();
        arguments.retain(|name, _| !unknown.contains(name));
        let mut round = Vec::new();
        let mut waiting = false;
        for input in &self.items {
            if !can(input.capability()) {
                if input.optional() {
                    for name in input.produces() {
                        unknown.remove(&name);
                    }
                    continue;
                }
                return Err(Stop::Missing(input.capability()));
            }
            if input.uses().iter().any(|name| unknown.contains(*name)) {
                waiting = true;
                continue;
            }
            if let Some(answer) = answers.get(input.key()) {
                input.apply(answer, &mut arguments)?;
                for name in input.produces() {
                    unknown.remove(&name);
                }
            } else {
                round.push(Question {
                    key: input.key().to_owned(),
                    method: input.method(),
                    params: input.params(&arguments),
                });
            }
        }
        if round.is_empty() && waiting {
            // Unreachable for a loaded manifest (an input names only earlier ones), but
            // never run with a question left unasked.
            return Err(Stop::Refused(
                "a question could not be asked, so the call did not run".into(),
            ));
        }
        Ok(if round.is_empty() {
            Step::Ready(arguments)
        } else {
            Step::Ask(round)
        })
    }
}

/// An `ElicitResult`: `{"action": "accept", "content": {…}}`.
fn elicit_reply(answer: &Value) -> Option<Reply> {
    match answer.get("action")?.as_str()? {
        "accept" => match answer.get("content") {
            None | Some(Value::Null) => Some(Reply::Accepted(Map::new())),
            Some(Value::Object(content)) => Some(Reply::Accepted(content.clone())),
            Some(_) => None,
        },
        "decline" => Some(Reply::Declined),
        "cancel" => Some(Reply::Cancelled),
        _ => None,
    }
}

/// The text of a `CreateMessageResult` (one content block or several).
fn sampled_text(answer: &Value) -> Option<String> {
    let blocks = match answer.get("content")? {
        Value::Array(blocks) => blocks.iter().collect::<Vec<_>>(),
        block @ Value::Object(_) => vec![block],
        _ => return None,
    };
    Some(
        blocks
            .into_iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The local paths of a `ListRootsResult`'s `file://` roots (others are not places a
/// command can work in).
fn root_paths(answer: &Value) -> Option<Vec<String>> {
    let roots = answer.get("roots")?.as_array()?;
    let mut paths = Vec::new();
    for root in roots {
        let uri = root.get("uri")?.as_str()?;
        let local = uri
            .strip_prefix("file://localhost")
            .or_else(|| uri.strip_prefix("file://"));
        if let Some(path) = local {
            let path = percent_encoding::percent_decode_str(path)
                .decode_utf8()
                .ok()?;
            if path.starts_with('/') && !path.contains('\0') {
                paths.push(path.into_owned());
            }
        }
    }
    Some(paths)
}

#[cfg(test)]
mod tests;
