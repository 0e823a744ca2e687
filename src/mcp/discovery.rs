//! Discovery mode as a connection sees it ([`crate::discovery`] ranks and answers):
//! `find_tools` searches what this caller may call, `call_tool` becomes the found tool's own
//! call before the pipeline, and `add_tools` puts tools in this connection's own
//! `tools/list` and tells its client the list changed.
//!
//! Only a connection that lasts has a list of its own: stdio (one client per process) and a
//! 2025 session over HTTP (`--sessions`); [`Handler::connection`] gives each its own. A
//! stateless HTTP request and every 2026-07-28 request are each their own, so they are not
//! offered `add_tools`; they call found tools with `call_tool` or by name, or connect to a
//! toolset's own endpoint (`/mcp/{set}`).

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::{RequestContext, RoleServer};

use super::convert;
use super::state::{Handler, Snapshot};
use crate::caller::Caller;
use crate::discovery::{ADD, Meta};
use crate::results::ToolResult;
use crate::revision::Revision;

/// The tools `add_tools` put in one connection's list, in the order added.
#[derive(Debug, Default)]
pub(super) struct Added(Mutex<Vec<String>>);

impl Added {
    fn names(&self) -> Vec<String> {
        self.0.lock().map(|names| names.clone()).unwrap_or_default()
    }
}

impl Handler {
    /// This handler for one connection that lasts (stdio, a 2025 session), with a list of
    /// its own that `add_tools` adds to.
    #[must_use]
    pub fn connection(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            added: Some(Arc::default()),
        }
    }

    /// Whether this request may add to its connection's list.
    fn adds(&self, revision: Revision) -> bool {
        self.added.is_some() && revision != Revision::V2026_07
    }

    /// Discovery's part of `tools/list`: its own tools (`add_tools` only where it can
    /// add), then the tools this connection added that the registry still has and `grants`
    /// lets this caller call, each as the revision lists it.
    pub(super) fn discovery_listing(
        &self,
        snapshot: &Snapshot,
        revision: Revision,
        apps: bool,
        grants: impl Fn(&crate::tool::Tool) -> bool,
    ) -> Vec<Tool> {
        let mut listed: Vec<Tool> = snapshot
            .listed
            .own(revision)
            .iter()
            .filter(|tool| self.adds(revision) || tool.name != ADD)
            .cloned()
            .collect();
        let Some(added) = self.added.as_ref().filter(|_| self.adds(revision)) else {
            return listed;
        };
        for name in added.names() {
            let Some(tool) = snapshot.registry.tool(&name).filter(|tool| grants(tool)) else {
                continue;
            };
            match super::state::listed(tool, revision) {
                Ok(entry) => listed.extend(super::apps::for_client(tool, entry, apps)),
                Err(error) => {
                    tracing::error!(tool = %name, %error, "an added tool cannot be listed");
                }
            }
        }
        listed
    }

    /// A call of one of discovery's own tools: its answer, or `None` when the call is to go
    /// on through the pipeline (then `request` has become the found tool's own call).
    pub(super) async fn discovered(
        &self,
        snapshot: &Snapshot,
        request: &mut CallToolRequestParams,
        caller: &Caller,
        context: &RequestContext<RoleServer>,
        revision: Revision,
    ) -> Option<ToolResult> {
        // Only what this caller may call (the registry is already cut to the served sets).
        // Discovery's tools are the model's: they never reach a tool only a page may call,
        // whatever the client renders (a page calls one by its own name).
        let visible = |name: &str| {
            snapshot.registry.tool(name).is_some_and(|tool| {
                tool.shown_to(false) && caller.grants(name, &tool.scopes).is_ok()
            })
        };
        match Meta::of(&request.name, request.arguments.as_ref()) {
            Ok(None) => None,
            Ok(Some(Meta::Find { query, limit })) => {
                let index = snapshot
                    .index
                    .get_or_init(|| crate::discovery::Index::new(&snapshot.registry));
                let found = index.search(&query, limit, visible);
                Some(crate::discovery::answer(&snapshot.registry, &found))
            }
            // The found tool's own call: every stage sees its name and arguments.
            Ok(Some(Meta::Call { name, arguments })) => {
                request.name = name.into();
                request.arguments = arguments;
                None
            }
            Ok(Some(Meta::Add { tools, toolsets })) => {
                let Some(added) = self.added.as_ref().filter(|_| self.adds(revision)) else {
                    return Some(ToolResult::error(format!(
                        "`{ADD}` needs a connection that lasts (stdio, or a session over HTTP); \
                         call a found tool with `{}` or by its name",
                        crate::discovery::CALL
                    )));
                };
                let (result, changed) = match added.0.lock() {
                    Ok(mut listed) => crate::discovery::added(
                        &snapshot.registry,
                        &mut listed,
                        &tools,
                        &toolsets,
                        visible,
                    ),
                    Err(_) => (ToolResult::error("the tool list is unavailable"), false),
                };
                if changed && context.peer.notify_tool_list_changed().await.is_err() {
                    tracing::debug!("the client that added tools has gone");
                }
                Some(result)
            }
            Err(reason) => Some(ToolResult::error(reason)),
        }
    }
}

/// A result of discovery's own tools, in the request's revision.
pub(super) fn response(
    result: ToolResult,
    server_info: Option<&serde_json::Value>,
) -> rmcp::model::CallToolResponse {
    convert::call_result(result, server_info).into()
}
