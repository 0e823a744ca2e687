//! Asks the user for what a tool declares (`confirm`, `[tools.ask]`), over the client's
//! connection (`elicitation/create`), before the backend runs.

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::RequestContext;
use serde_json::{Map, Value};

use crate::ask::{Ask, Reply};
use crate::era::Era;
use crate::results::store::Caller;

/// The user's reply, or the tool error that says why nobody could be asked.
pub(super) async fn ask(
    ask: &Ask,
    arguments: &Map<String, Value>,
    context: &RequestContext<RoleServer>,
    era: Era,
    caller: &Caller,
) -> Result<Reply, String> {
    if era == Era::Modern {
        return Err("this tool asks the user first; asking a 2026-07-28 client (input_required) is not supported yet, so the tool did not run".into());
    }
    if *caller == Caller::Anonymous {
        return Err("this tool asks the user first, which needs a connection the server can send a request on (stdio, or HTTP with --sessions), so the tool did not run".into());
    }
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
