//! rmcp's `ServerHandler` over our registry: `tools/list` per revision, `tools/call` through the
//! one call path, cancellation that kills the backend.
#![expect(
    deprecated,
    reason = "logging/setLevel is deprecated in 2026-07-28 (SEP-2577), but 2025 clients use it"
)]

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, ClientCapabilities, CustomRequest,
    CustomResult, DiscoverResult, ErrorCode, GetSkillRequestParams, GetSkillResult,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::model::{CancelTaskParams, GetTaskParams, GetTaskResult, UpdateTaskParams};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};

use super::state::Handler;
use super::{convert, elicit, notify, prompts, resources};
use std::time::Duration;

use crate::call::{AsTask, Call, CallError, Conclusion, Tasking};
use crate::caller::{Caller, Identity, Seen};
use crate::revision::Revision;

/// Who sent the request in hand: the one stdio client, or what the HTTP layer saw of it
/// (`crate::caller::Seen`), resolved for the request's lifecycle (a 2026 request has no
/// session). An HTTP request the gate did not see is nobody, with no back channel.
fn caller(context: &RequestContext<RoleServer>) -> Caller {
    let mut caller = match context.extensions.get::<axum::http::request::Parts>() {
        None => Caller::only(),
        Some(parts) => parts.extensions.get::<Seen>().map_or_else(
            || Seen::default().caller(true),
            |seen| seen.caller(revision(context).is_stateless()),
        ),
    };
    caller.apps = super::apps::declared(context, revision(context).is_stateless());
    caller
}

/// The revision of the request in hand: its own `_meta` version, else the negotiated one.
fn revision(context: &RequestContext<RoleServer>) -> Revision {
    context
        .protocol_version()
        .map_or(Revision::V2025_03, |version| {
            Revision::of_version(version.as_str())
        })
}

impl Handler {
    /// The task store, for the `tasks/*` methods (rmcp answers them only when the
    /// extension is advertised, which needs one).
    fn tasks(&self) -> Result<&std::sync::Arc<crate::tasks::Tasks>, ErrorData> {
        self.state.services.tasks.as_ref().ok_or_else(|| {
            ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "this server keeps no tasks",
                None,
            )
        })
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let snapshot = self.snapshot();
        let mut info = snapshot.info.clone();
        // A connection that lasts hears when `add_tools` changed its list.
        if snapshot.discovery
            && self.added.is_some()
            && let Some(tools) = info.capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        // Over HTTP without sessions no later request carries what this one declares:
        // offering MCP Apps here would promise pages the next `tools/list` would not show.
        let remembered = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_none_or(|parts| {
                parts
                    .extensions
                    .get::<Seen>()
                    .is_some_and(|seen| seen.lasting)
            });
        let declared = if remembered {
            request.capabilities.clone()
        } else {
            ClientCapabilities::default()
        };
        super::apps::offer(
            &mut result.capabilities,
            &declared,
            self.snapshot().apps.only_pages,
        );
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        let declared = context.meta.client_capabilities().unwrap_or_default();
        super::apps::offer(
            &mut info.capabilities,
            &declared,
            self.snapshot().apps.only_pages,
        );
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(cursor) = request.and_then(|request| request.cursor) {
            return Err(ErrorData::invalid_params(
                format!("invalid cursor `{cursor}`: this server lists every tool on one page"),
                None,
            ));
        }
        let revision = revision(&context);
        // With scoped tools, a caller sees only the tools its token may call, so the list
        // varies by caller: cacheable by that caller only.
        let caller = caller(&context);
        let principal = match caller.identity {
            Identity::Subject(subject) if self.snapshot().scoped_tools => Some(subject),
            _ => None,
        };
        let spliced = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<super::pieces::Spliced>());
        Ok(self
            .listing_or_spliced(revision, principal.as_ref(), caller.apps, spliced)
            .await)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = caller(&context);
        super::tasks::get(self.tasks()?, &request.task_id, &caller).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller(&context);
        let responses = request
            .input_responses
            .into_iter()
            .map(|(key, response)| serde_json::to_value(response).map(|response| (key, response)))
            .collect::<Result<_, _>>()
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        super::tasks::update(self.tasks()?, &request.task_id, &caller, responses).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller(&context);
        super::tasks::cancel(self.tasks()?, &request.task_id, &caller).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let caller = caller(&context);
        prompts::list(&self.registry(), caller.principal())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let asked = prompts::Asked {
            context: &context,
            revision: revision(&context),
            reachable: caller(&context).back_channel,
            codec: &self.state.sealer,
        };
        let caller = caller(&context);
        prompts::get(&self.registry(), request, caller.principal(), asked).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = caller(&context);
        prompts::complete(&self.registry(), &request, caller.principal())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Ok(mut level) = self.state.log_level.write() {
            *level = notify::from_rmcp(request.level);
        }
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.registry(), &caller(&context))
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        super::skills::list(
            &self.registry(),
            &caller(&context),
            cursor.as_deref(),
            self.state.watching,
        )
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        super::skills::get(
            &self.registry(),
            &caller(&context),
            &request.uri,
            self.state.watching,
        )
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        super::skills::directory(&self.registry(), &caller(&context), &request.uri)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = caller(&context);
        resources::templates(&self.registry(), caller.principal())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Files are read on the blocking pool, not on the runtime's threads, a few at once.
        let _permit = self
            .state
            .reads
            .acquire()
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let registry = self.registry();
        let caller = caller(&context);
        let revision = revision(&context);
        let contents = tokio::task::spawn_blocking(move || {
            resources::read(&registry, &request.uri, &caller, revision)
        })
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))??;
        Ok(ReadResourceResult::new(vec![contents])
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private)
            .into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        resources::served(&self.registry(), "resources/subscribe")?;
        let registry = self.registry();
        super::access::require(
            || format!("`{}`", request.uri),
            caller(&context).principal(),
            &registry.resource_scopes(&request.uri),
        )?;
        if !self.state.watching {
            return Err(ErrorData::invalid_request(
                "this server does not watch its files (start it with --watch to subscribe)",
                None,
            ));
        }
        if !caller(&context).back_channel {
            return Err(ErrorData::invalid_request(
                "a subscription needs a connection to notify: stdio, or HTTP with --sessions",
                None,
            ));
        }
        // A page is no resource to a client that renders no MCP Apps.
        if !caller(&context).apps
            && registry
                .resource(&request.uri)
                .is_some_and(|resource| resource.app.is_some())
        {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}` to subscribe to", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
            ));
        }
        self.state.subscriptions.subscribe(
            &self.registry(),
            caller(&context).identity,
            context.peer.clone(),
            &request.uri,
        )
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        resources::served(&self.registry(), "resources/unsubscribe")?;
        self.state
            .subscriptions
            .unsubscribe(&caller(&context).identity, &request.uri);
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            None,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A 2025 session that may hear about tool changes.
        if self.state.watching {
            self.remember_peer(context.peer);
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Always acknowledged; list changes are offered only when the manifest is watched
        // (prompts: when it has prompts).
        let mut accepted = SubscriptionFilter::new();
        if self.state.watching && requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        if self.state.watching
            && requested.prompts_list_changed == Some(true)
            && self.registry().prompts().next().is_some()
        {
            accepted.prompts_list_changed = Some(true);
        }
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let id = self.add_sink(subscription.sink().clone());
        subscription.cancelled().await;
        self.remove_sink(id);
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // rmcp asks on every 2026 HTTP `tools/call` (for the `Mcp-Param-*` headers): a lookup
        // by hash, not a scan of every tool's name.
        // Not for a tool only a page may call: rmcp checks its `Mcp-Param-*` headers before
        // the handler could say it is unknown to a client that renders no pages.
        let snapshot = self.snapshot();
        let index = snapshot.registry.position(name)?;
        if !snapshot.registry.tool(name)?.shown_to(false) {
            return None;
        }
        snapshot
            .listed
            .tool(&snapshot.registry, index, Revision::V2026_07)
    }
}

impl Handler {
    /// `tools/call`: where the call came from, handed to the pipeline (`crate::call`), and
    /// its answer in the request's revision.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.snapshot();
        let revision = revision(&context);
        let mut caller = caller(&context);
        let server_info = (revision == Revision::V2026_07).then_some(&snapshot.server_info);
        let mut request = request;
        let asked = request.name.clone();
        if snapshot.discovery
            && let Some(result) =
                Box::pin(self.discovered(&snapshot, &mut request, &caller, &context, revision))
                    .await
        {
            return Ok(super::discovery::response(result, server_info));
        }
        // What discovery's `call_tool` reaches is the model's call: never a tool only a
        // page may call, whatever the client renders.
        if request.name != asked {
            caller.apps = false;
        }
        let (events, forwarder) = self.forward_events(&context, revision, &request.name);
        let declared = context.client_capabilities().unwrap_or_default();
        let tasking = Tasking::Offered(AsTask {
            declared: declared.supports_tasks(),
            capabilities: crate::inputs::Capabilities {
                elicitation: declared.elicitation.is_some(),
                sampling: declared.sampling.is_some(),
                roots: declared.roots.is_some(),
            },
            asks_inside: true,
            keep: std::sync::Arc::new(convert::task_result),
        });
        let gatherer = elicit::Connection {
            context: &context,
            revision,
            reachable: caller.back_channel,
            codec: &self.state.sealer,
            responses: request.input_responses,
            state: request.request_state,
        };
        let call = Call {
            tool: request.name.into_owned(),
            arguments: request.arguments,
            caller,
            events,
            revision: Some(revision),
            tasking,
            gatherer,
        };
        // Cancelling the request drops the call, which kills the backend's process group.
        let answered = crate::call::run(
            &snapshot.served,
            &self.state.services,
            call,
            context.ct.cancelled(),
        )
        .await;
        // Every event goes out before the result, never after it.
        if let Some(forwarder) = forwarder {
            if matches!(answered, Err(CallError::Cancelled)) {
                forwarder.abort();
            } else {
                let _ = tokio::time::timeout(Duration::from_secs(1), forwarder).await;
            }
        }
        match answered {
            Ok(Conclusion::Done(result)) => Ok(convert::call_result(result, server_info).into()),
            Ok(Conclusion::Pending(pending)) => Ok(pending.into()),
            Ok(Conclusion::Task(record)) => super::tasks::created(&record),
            Err(error) => Err(protocol_error(error)),
        }
    }

    /// Progress and log events for the client, when it wants them: the sender the call
    /// writes to and the spawned future that forwards them as notifications.
    fn forward_events(
        &self,
        context: &RequestContext<RoleServer>,
        revision: Revision,
        tool: &str,
    ) -> (
        Option<tokio::sync::mpsc::Sender<crate::events::CallEvent>>,
        Option<tokio::task::JoinHandle<()>>,
    ) {
        let wanted = notify::Wanted {
            progress: context.meta.get_progress_token(),
            log_threshold: if revision.is_stateless() {
                context.meta.log_level().map(notify::from_rmcp)
            } else {
                self.state.log_level.read().ok().map(|level| *level)
            },
            heartbeat: self.state.heartbeat,
        };
        if wanted.progress.is_none() && wanted.log_threshold.is_none() {
            return (None, None);
        }
        let (sender, receiver) = tokio::sync::mpsc::channel(256);
        let task = tokio::spawn(notify::forward(
            receiver,
            context.peer.clone(),
            wanted,
            tool.to_owned(),
        ));
        (Some(sender), Some(task))
    }
}

/// What the pipeline refused as a protocol error, as JSON-RPC says it.
fn protocol_error(error: CallError<ErrorData>) -> ErrorData {
    match error {
        CallError::UnknownTool(unknown) => ErrorData::invalid_params(unknown.to_string(), None),
        // The HTTP layer answers 403 first; this holds where it cannot look (a batch).
        CallError::Ungranted(ungranted) => ErrorData::invalid_request(ungranted.to_string(), None),
        CallError::Gather(error) => error,
        CallError::TaskRequired(_) => {
            let mut refused = ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            );
            refused.message = error.to_string().into();
            refused
        }
        CallError::TaskStart(_) => ErrorData::internal_error(error.to_string(), None),
        CallError::Cancelled => ErrorData::internal_error("the request was cancelled", None),
    }
}
