//! Gathers what a tool or prompt needs from the client (`crate::inputs`) before it runs, in
//! the request's revision: a 2025 client is sent each round as requests on its connection
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`); a 2026 client gets
//! `input_required` and retries with the answers (`mcp::mrtr`).
#![expect(
    deprecated,
    reason = "sampling and roots are how 2025 clients lend their model and folders; SEP-2577 deprecates them for 2026"
)]

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, InputRequiredResult,
    InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::mrtr;
use crate::inputs::{Capability, Inputs, Question, Step, Stop};
use crate::revision::Revision;

/// What a request brings for gathering: its MRTR fields (2026) and what it is.
#[derive(Debug)]
pub(super) struct Asking<'a> {
    pub(super) inputs: &'a Inputs,
    /// `tools/call` or `prompts/get`, and the tool's or prompt's name: what a state is bound to.
    pub(super) method: &'static str,
    pub(super) name: &'a str,
    pub(super) responses: Option<InputResponses>,
    pub(super) state: Option<String>,
}

/// The outcome of gathering, for a tool or a prompt.
pub(super) type Gathered = crate::call::Gathered<InputRequiredResult>;

/// Gathers the inputs for a call with `arguments` (already checked).
pub(super) async fn gather(
    asking: Asking<'_>,
    arguments: Map<String, Value>,
    context: &RequestContext<RoleServer>,
    revision: Revision,
    reachable: bool,
    codec: &rmcp::model::RequestStateCodec,
) -> Result<Gathered, ErrorData> {
    if asking.inputs.is_empty() {
        return Ok(Gathered::Ready(arguments));
    }
    let declared = context.client_capabilities().unwrap_or_default();
    let can = |capability| declares(&declared, capability);
    if revision.is_stateless() {
        return gather_modern(asking, &arguments, can, codec);
    }
    let mut answers = Map::new();
    // Each round answers at least one input, so this ends.
    for _ in 0..=asking.inputs.items.len() {
        match asking.inputs.step(&arguments, &answers, can) {
            Ok(Step::Ready(arguments)) => return Ok(Gathered::Ready(arguments)),
            Ok(Step::Ask(round)) => {
                if !reachable {
                    return Ok(Gathered::Refused(format!(
                        "`{}` asks the client first, which needs a connection the server can send a request on (stdio, or HTTP with --sessions), so it did not run",
                        asking.name
                    )));
                }
                for request in round {
                    let answer = match send(&request, context).await {
                        Ok(answer) => answer,
                        Err(message) => return Ok(Gathered::Refused(message)),
                    };
                    // A refusal ends the round: the user is not asked anything more.
                    let refused = request.method == "elicitation/create"
                        && answer.get("action").and_then(Value::as_str) != Some("accept");
                    answers.insert(request.key, answer);
                    if refused {
                        break;
                    }
                }
            }
            Err(stop) => return Ok(Gathered::Refused(connection_refusal(stop, asking.name))),
        }
    }
    Ok(Gathered::Refused(
        "the client's answers never completed the questions".into(),
    ))
}

fn gather_modern(
    asking: Asking<'_>,
    arguments: &Map<String, Value>,
    can: impl Fn(Capability) -> bool,
    codec: &rmcp::model::RequestStateCodec,
) -> Result<Gathered, ErrorData> {
    let binding = mrtr::binding(asking.method, asking.name, arguments);
    let mut answers = mrtr::open(codec, asking.state.as_deref(), &binding)?;
    // This round's answers join the sealed ones; keys nothing asked for are ignored.
    let keys: Vec<&str> = asking.inputs.keys().collect();
    for (key, answer) in asking.responses.unwrap_or_default() {
        if keys.contains(&key.as_str()) && !answers.contains_key(&key) {
            answers.insert(key, answer);
        }
    }
    match asking.inputs.step(arguments, &answers, can) {
        Ok(Step::Ready(arguments)) => Ok(Gathered::Ready(arguments)),
        Ok(Step::Ask(round)) => {
            mrtr::input_required(codec, &round, &answers, &binding).map(Gathered::Pending)
        }
        Err(Stop::Refused(message)) => Ok(Gathered::Refused(message)),
        Err(Stop::Malformed(message)) => Err(ErrorData::invalid_params(message, None)),
        Err(Stop::Missing(capability)) => {
            let mut required = ClientCapabilities::default();
            match capability {
                Capability::Elicitation => {
                    required.elicitation = Some(rmcp::model::ElicitationCapability::default());
                }
                Capability::Sampling => {
                    required.sampling = Some(rmcp::model::SamplingCapability::default());
                }
                Capability::Roots => {
                    required.roots = Some(rmcp::model::RootsCapabilities::default());
                }
            }
            let mut error = ErrorData::missing_required_client_capability(required);
            error.message = format!(
                "`{}` needs the client's support for {}, which this request's clientCapabilities do not declare",
                asking.name,
                capability.describe()
            )
            .into();
            Err(error)
        }
    }
}

fn declares(declared: &ClientCapabilities, capability: Capability) -> bool {
    match capability {
        Capability::Elicitation => declared.elicitation.is_some(),
        Capability::Sampling => declared.sampling.is_some(),
        Capability::Roots => declared.roots.is_some(),
    }
}

fn connection_refusal(stop: Stop, name: &str) -> String {
    match stop {
        Stop::Refused(message) => message,
        Stop::Malformed(message) => format!("{message}, so `{name}` did not run"),
        Stop::Missing(capability) => format!(
            "`{name}` needs the client's support for {}, and this client does not support {}, so it did not run",
            capability.describe(),
            capability.key()
        ),
    }
}

/// Sends one request on the client's connection; its result as JSON.
async fn send(request: &Question, context: &RequestContext<RoleServer>) -> Result<Value, String> {
    let failed = |error: &dyn std::fmt::Display| {
        format!(
            "asking the client ({}) failed: {error}, so the call did not run",
            request.method
        )
    };
    let built = |error: serde_json::Error| failed(&error);
    let answer = match request.method {
        "elicitation/create" => {
            let params: ElicitRequestParams =
                serde_json::from_value(request.params.clone()).map_err(built)?;
            serde_json::to_value(
                context
                    .peer
                    .create_elicitation(params)
                    .await
                    .map_err(|error| failed(&error))?,
            )
        }
        "sampling/createMessage" => {
            let params: CreateMessageRequestParams =
                serde_json::from_value(request.params.clone()).map_err(built)?;
            serde_json::to_value(
                context
                    .peer
                    .create_message(params)
                    .await
                    .map_err(|error| failed(&error))?,
            )
        }
        _ => serde_json::to_value(
            context
                .peer
                .list_roots()
                .await
                .map_err(|error| failed(&error))?,
        ),
    };
    answer.map_err(built)
}

/// The protocol's gatherer for a tool call: the connection (2025) or `input_required`
/// rounds (2026), as the request's revision says.
pub(super) struct Connection<'a> {
    pub(super) context: &'a RequestContext<RoleServer>,
    pub(super) revision: Revision,
    /// The server can send this caller requests (stdio, or a 2025 session).
    pub(super) reachable: bool,
    pub(super) codec: &'a rmcp::model::RequestStateCodec,
    /// This round's answers and the sealed state of the earlier ones (2026).
    pub(super) responses: Option<InputResponses>,
    pub(super) state: Option<String>,
}

impl crate::call::Gatherer for Connection<'_> {
    type Pending = InputRequiredResult;
    type Error = ErrorData;

    async fn gather(
        &mut self,
        tool: &crate::tool::Tool,
        arguments: Map<String, Value>,
    ) -> Result<Gathered, ErrorData> {
        let asking = Asking {
            inputs: &tool.inputs,
            method: "tools/call",
            name: &tool.name,
            responses: self.responses.take(),
            state: self.state.take(),
        };
        gather(
            asking,
            arguments,
            self.context,
            self.revision,
            self.reachable,
            self.codec,
        )
        .await
    }
}
