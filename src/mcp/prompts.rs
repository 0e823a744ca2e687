//! `prompts/list`, `prompts/get` and `completion/complete` over the registry's prompts.

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorCode, GetPromptRequestParams,
    GetPromptResult, ListPromptsResult, Prompt, PromptMessage, Reference, Role,
};

use rmcp::RoleServer;
use rmcp::model::{GetPromptResponse, RequestStateCodec};
use rmcp::service::RequestContext;

use super::elicit::{self, Asking, Gathered};
use super::{access, convert};
use crate::auth::Principal;
use crate::prompt;
use crate::registry::Registry;
use crate::revision::Revision;

/// A manifest without prompts serves no prompt methods.
fn served(registry: &Registry, method: &str) -> Result<(), ErrorData> {
    if registry.prompts().next().is_some() {
        Ok(())
    } else {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method} (this manifest declares no prompts)"),
            None,
        ))
    }
}

/// Every prompt the caller may get, on one page.
pub(super) fn list(
    registry: &Registry,
    principal: Option<&Principal>,
) -> Result<ListPromptsResult, ErrorData> {
    served(registry, "prompts/list")?;
    let prompts = registry
        .prompts()
        .filter(|prompt| access::allowed(principal, &prompt.scopes))
        .map(|prompt| {
            serde_json::from_value::<Prompt>(serde_json::Value::Object(prompt.definition.clone()))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            ErrorData::internal_error(format!("a prompt did not convert: {error}"), None)
        })?;
    Ok(ListPromptsResult::with_all_items(prompts))
}

/// How a `prompts/get` can ask the client (`[prompts.ask]`).
#[derive(Debug)]
pub(super) struct Asked<'a> {
    pub(super) context: &'a RequestContext<RoleServer>,
    pub(super) revision: Revision,
    /// Whether the server can send this caller a request (a question) and hear the answer.
    pub(super) reachable: bool,
    pub(super) codec: &'a RequestStateCodec,
}

/// The prompt `name`, if there is one and the caller's scopes reach it.
fn reachable<'r>(
    registry: &'r Registry,
    name: &str,
    principal: Option<&Principal>,
) -> Result<&'r std::sync::Arc<prompt::Prompt>, ErrorData> {
    let prompt = registry.prompt(name).map_err(|unknown| {
        ErrorData::invalid_params(
            format!(
                "unknown prompt `{}`{}",
                unknown.name,
                unknown
                    .suggestion
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default()
            ),
            None,
        )
    })?;
    access::require(
        || format!("prompt `{}`", prompt.name),
        principal,
        &prompt.scopes,
    )?;
    Ok(prompt)
}

/// One prompt's messages, its arguments checked and filled in, after asking what it asks.
pub(super) async fn get(
    registry: &Registry,
    request: GetPromptRequestParams,
    principal: Option<&Principal>,
    asked: Asked<'_>,
) -> Result<GetPromptResponse, ErrorData> {
    served(registry, "prompts/get")?;
    let prompt = reachable(registry, &request.name, principal)?;
    let arguments = prompt
        .check(&request.arguments.clone().unwrap_or_default())
        .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
    let asking = Asking {
        inputs: &prompt.inputs,
        method: "prompts/get",
        name: &prompt.name,
        responses: request.input_responses,
        state: request.request_state,
    };
    let arguments = match elicit::gather(
        asking,
        arguments,
        asked.context,
        asked.revision,
        asked.reachable,
        asked.codec,
    )
    .await?
    {
        Gathered::Ready(arguments) => arguments,
        Gathered::Pending(pending) => return Ok(pending.into()),
        // A prompt has no error result: the refusal is the request's error.
        Gathered::Refused(message) => return Err(ErrorData::invalid_request(message, None)),
    };
    let messages = prompt
        .render_checked(&arguments)
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                prompt::Role::User => Role::User,
                prompt::Role::Assistant => Role::Assistant,
            };
            PromptMessage::new(role, convert::content_block(content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description.clone_from(&prompt.description);
    Ok(result.into())
}

/// Completion values for a prompt's argument or a resource template's variable (any
/// reference kind rmcp adds completes to nothing).
pub(super) fn complete(
    registry: &Registry,
    request: &CompleteRequestParams,
    principal: Option<&Principal>,
) -> Result<CompleteResult, ErrorData> {
    if registry.prompts().next().is_none() && registry.templates().is_empty() {
        served(registry, "completion/complete")?;
    }
    let completion = match &request.r#ref {
        Reference::Prompt(reference) => {
            let prompt = reachable(registry, &reference.name, principal)?;
            prompt
                .complete(&request.argument.name, &request.argument.value)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "prompt `{}` has no argument `{}`",
                            prompt.name, request.argument.name
                        ),
                        None,
                    )
                })?
        }
        Reference::Resource(reference) => {
            let values = registry
                .templates()
                .iter()
                .find(|template| template.uri_template == reference.uri)
                .filter(|template| access::allowed(principal, &template.scopes))
                .and_then(|template| {
                    template.complete(&request.argument.name, &request.argument.value)
                })
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "no resource template `{}` with a variable `{}`",
                            reference.uri, request.argument.name
                        ),
                        None,
                    )
                })?;
            prompt::Completion {
                total: values.len(),
                has_more: values.len() > prompt::MAX_COMPLETIONS,
                values: values.into_iter().take(prompt::MAX_COMPLETIONS).collect(),
            }
        }
        _ => prompt::Completion {
            values: Vec::new(),
            total: 0,
            has_more: false,
        },
    };
    let info = CompletionInfo::with_pagination(
        completion.values,
        u32::try_from(completion.total).ok(),
        completion.has_more,
    )
    .map_err(|error| ErrorData::internal_error(error, None))?;
    Ok(CompleteResult::new(info))
}
