//! `prompts/list`, `prompts/get` and `completion/complete` over the registry's prompts.

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorCode, GetPromptRequestParams,
    GetPromptResult, ListPromptsResult, Prompt, PromptMessage, Reference, Role,
};

use super::convert;
use crate::prompt;
use crate::registry::Registry;

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

/// Every prompt, on one page.
pub(super) fn list(registry: &Registry) -> Result<ListPromptsResult, ErrorData> {
    served(registry, "prompts/list")?;
    let prompts = registry
        .prompts()
        .map(|prompt| {
            serde_json::from_value::<Prompt>(serde_json::Value::Object(prompt.definition.clone()))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            ErrorData::internal_error(format!("a prompt did not convert: {error}"), None)
        })?;
    Ok(ListPromptsResult::with_all_items(prompts))
}

/// One prompt's messages, its arguments checked and filled in.
pub(super) fn get(
    registry: &Registry,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    served(registry, "prompts/get")?;
    let prompt = registry.prompt(&request.name).map_err(|unknown| {
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
    let arguments = request.arguments.clone().unwrap_or_default();
    let messages = prompt
        .render(&arguments)
        .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?
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
    Ok(result)
}

/// Completion values for a prompt's argument or a resource template's variable (any
/// reference kind rmcp adds completes to nothing).
pub(super) fn complete(
    registry: &Registry,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    if registry.prompts().next().is_none() && registry.templates().is_empty() {
        served(registry, "completion/complete")?;
    }
    let completion = match &request.r#ref {
        Reference::Prompt(reference) => {
            let prompt = registry.prompt(&reference.name).map_err(|unknown| {
                ErrorData::invalid_params(format!("unknown prompt `{}`", unknown.name), None)
            })?;
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
