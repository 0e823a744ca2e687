//! Answering what a tool asks before it runs, from a terminal (`mcp-serve call`, `test`):
//! `--yes` answers a confirmation, `--answer NAME=VALUE` a field; what is still missing is
//! asked on the terminal when there is one, else the call stops and says which flag to
//! give. The client's roots are the current directory; the client's model cannot be asked
//! from here.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use serde_json::{Map, Value, json};

use crate::inputs::{Capability, Question, Step, Stop};
use crate::tool::Tool;

/// How the terminal answers.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// `--yes`: a confirmation is accepted.
    pub yes: bool,
    /// `--answer NAME=VALUE`, typed by the field.
    pub given: Vec<String>,
    /// Ask on the terminal for what is missing (stdin and stderr are terminals).
    pub interactive: bool,
}

impl Answers {
    pub fn from_flags(yes: bool, given: Vec<String>) -> Self {
        Self {
            yes,
            given,
            interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        }
    }
}

/// The terminal as the pipeline's gatherer: nothing is pending (the person answers now)
/// and nothing is a protocol error (a refusal is the tool error the command prints).
impl crate::call::Gatherer for Answers {
    type Pending = std::convert::Infallible;
    type Error = std::convert::Infallible;

    async fn gather(
        &mut self,
        tool: &Tool,
        arguments: Map<String, Value>,
    ) -> Result<crate::call::Gathered<Self::Pending>, Self::Error> {
        Ok(match gather(tool, &arguments, self) {
            Ok(arguments) => crate::call::Gathered::Ready(arguments),
            Err(message) => crate::call::Gathered::Refused(message),
        })
    }
}

/// The prepared arguments with every answer joined, or why the tool does not run.
fn gather(
    tool: &Tool,
    arguments: &Map<String, Value>,
    answers: &Answers,
) -> Result<Map<String, Value>, String> {
    let mut replies = Map::new();
    for _ in 0..=tool.inputs.items.len() {
        match tool
            .inputs
            .step(arguments, &replies, |can| can != Capability::Sampling)
        {
            Ok(Step::Ready(arguments)) => return Ok(arguments),
            Ok(Step::Ask(round)) => {
                for request in round {
                    let reply = reply(tool, &request, answers)?;
                    replies.insert(request.key, reply);
                }
            }
            Err(Stop::Missing(_)) => {
                return Err(format!(
                    "`{}` asks the client's model before it runs, which `mcp-serve` cannot do from the terminal; call it from a client",
                    tool.name
                ));
            }
            Err(Stop::Refused(message) | Stop::Malformed(message)) => return Err(message),
        }
    }
    Err("the answers never completed the questions".into())
}

fn reply(tool: &Tool, request: &Question, answers: &Answers) -> Result<Value, String> {
    if request.method == "roots/list" {
        let here = std::env::current_dir().map_err(|error| error.to_string())?;
        let path: Vec<String> = here
            .to_string_lossy()
            .split('/')
            .map(crate::template::encode_segment)
            .collect();
        let uri = format!("file://{}", path.join("/"));
        return Ok(json!({"roots": [{"uri": uri}]}));
    }
    let message = request.params["message"].as_str().unwrap_or_default();
    let empty = Map::new();
    let fields = request
        .params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if fields.is_empty() {
        if answers.yes {
            return Ok(json!({"action": "accept"}));
        }
        if answers.interactive {
            let line = prompt(&format!("{message} [y/N] "))?;
            let accepted = matches!(line.trim().to_lowercase().as_str(), "y" | "yes");
            return Ok(json!({"action": if accepted { "accept" } else { "decline" }}));
        }
        return Err(format!(
            "`{}` asks first: \"{message}\"; run it again with --yes to answer yes",
            tool.name
        ));
    }
    if answers.interactive && !message.is_empty() {
        eprintln!("{message}");
    }
    let mut content = Map::new();
    for (name, field) in fields {
        let kind = field
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        let given = answers
            .given
            .iter()
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.to_owned());
        let text = match given {
            Some(text) => text,
            None if answers.interactive => {
                let default = field.get("default").map(crate::template::value_text);
                let label = field.get("title").and_then(Value::as_str).unwrap_or(name);
                let line = prompt(&format!(
                    "{label}{}: ",
                    default
                        .as_ref()
                        .map(|d| format!(" [{d}]"))
                        .unwrap_or_default()
                ))?;
                match (line.trim(), default) {
                    ("", Some(default)) => default,
                    ("", None) => continue,
                    (text, _) => text.to_owned(),
                }
            }
            None => match field.get("default") {
                Some(default) => {
                    content.insert(name.clone(), default.clone());
                    continue;
                }
                None => {
                    return Err(format!(
                        "`{}` asks for `{name}` before it runs; give it with --answer {name}=VALUE",
                        tool.name
                    ));
                }
            },
        };
        let value = if kind == "array" {
            serde_json::from_str(&text).unwrap_or_else(|_| json!([text]))
        } else {
            super::call::typed(name, &text, kind)?
        };
        content.insert(name.clone(), value);
    }
    Ok(json!({"action": "accept", "content": content}))
}

fn prompt(question: &str) -> Result<String, String> {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|error| error.to_string())?;
    Ok(line)
}
