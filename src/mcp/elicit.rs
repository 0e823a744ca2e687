//! Asks the user for what a tool declares (`confirm`, `[tools.ask]`: `elicitation/create`)
//! and the client's model (`[tools.sample]`: `sampling/createMessage`), over the client's
//! connection, before the backend runs.
#![expect(
    deprecated,
    reason = "sampling is how 2025 clients lend their model; SEP-2577 deprecates it for 2026"
)]

use rmcp::RoleServer;
use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, ElicitationAction};
use rmcp::service::RequestContext;
use serde_json::{Map, Value};

use crate::ask::{Ask, Reply, Sample};
use crate::backend::CallContext;
use crate::era::Era;
use crate::results::ToolResult;
use crate::results::store::Caller;
use crate::tool::Tool;

/// The user's reply, or the tool error that says why nobody could be asked.
pub(super) async fn ask(
    ask: &Ask,
    arguments: &Map<String, Value>,
    context: &RequestContext<RoleServer>,
    era: Era,
    caller: &Caller,
) -> Result<Reply, String> {
    reachable(era, caller, "the user")?;
    let supported = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some());
    if !supported {
        return Err("this tool asks the user first, and this client does not support elicitation, so the tool did not run".into());
    }
    let params: ElicitRequestParams = serde_json::from_value(ask.params(arguments))
        .map_err(|error| format!("the question could not be built: {error}"))?;
    let result = context
        .peer
        .create_elicitation(params)
        .await
        .map_err(|error| format!("asking the user failed ({error}), so the tool did not run"))?;
    Ok(match result.action {
        ElicitationAction::Accept => Reply::Accepted(match result.content {
            Some(Value::Object(answers)) => answers,
            _ => Map::new(),
        }),
        ElicitationAction::Decline => Reply::Declined,
        _ => Reply::Cancelled,
    })
}

/// Whether the client can be asked at all: a 2025-era connection the server can send on.
fn reachable(era: Era, caller: &Caller, whom: &str) -> Result<(), String> {
    if era == Era::Modern {
        return Err(format!(
            "this tool asks {whom} first; asking a 2026-07-28 client (input_required) is not supported yet, so the tool did not run"
        ));
    }
    if *caller == Caller::Anonymous {
        return Err(format!(
            "this tool asks {whom} first, which needs a connection the server can send a request on (stdio, or HTTP with --sessions), so the tool did not run"
        ));
    }
    Ok(())
}

/// Asks the client's model; its text joins the arguments under the sample's name.
pub(super) async fn sample(
    sample: &Sample,
    arguments: &mut Map<String, Value>,
    context: &RequestContext<RoleServer>,
    era: Era,
    caller: &Caller,
) -> Result<(), String> {
    reachable(era, caller, "the client's model")?;
    let supported = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.sampling.is_some());
    if !supported {
        return Err("this tool asks the client's model first, and this client does not support sampling, so the tool did not run".into());
    }
    let params: CreateMessageRequestParams = serde_json::from_value(sample.params(arguments))
        .map_err(|error| format!("the sampling request could not be built: {error}"))?;
    #[expect(
        deprecated,
        reason = "sampling is how 2025 clients lend their model (SEP-2577 deprecates it for 2026)"
    )]
    let result = context.peer.create_message(params).await.map_err(|error| {
        format!("asking the client's model failed ({error}), so the tool did not run")
    })?;
    let text: Vec<String> = result
        .message
        .content
        .into_vec()
        .into_iter()
        .filter_map(|block| match serde_json::to_value(&block) {
            Ok(value) if value["type"] == "text" => value["text"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect();
    if text.is_empty() {
        return Err("the client's model answered without text, so the tool did not run".into());
    }
    arguments.insert(sample.name.clone(), Value::String(text.join("\n")));
    Ok(())
}

/// The whole call of a tool that may ask first: validate, ask the user, ask the model, run.
pub(super) async fn call(
    tool: &Tool,
    arguments: Option<Map<String, Value>>,
    context: &RequestContext<RoleServer>,
    era: Era,
    call_context: &CallContext<'_>,
) -> ToolResult {
    if tool.ask.is_none() && tool.sample.is_none() {
        return tool.call(arguments, call_context).await;
    }
    let mut arguments = match tool.prepare(arguments) {
        Ok(arguments) => arguments,
        Err(message) => return ToolResult::error(message),
    };
    let caller = &call_context.caller;
    if let Some(question) = &tool.ask {
        let asked = ask(question, &arguments, context, era, caller).await;
        if let Err(message) = asked.and_then(|reply| question.apply(reply, &mut arguments)) {
            return ToolResult::error(message);
        }
    }
    if let Some(request) = &tool.sample
        && let Err(message) = sample(request, &mut arguments, context, era, caller).await
    {
        return ToolResult::error(message);
    }
    tool.call_prepared(&arguments, call_context).await
}
