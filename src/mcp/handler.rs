//! rmcp's `ServerHandler` over our registry: `tools/list` per era, `tools/call` through the
//! one call path, cancellation that kills the backend.
#![expect(
    deprecated,
    reason = "logging/setLevel is deprecated in 2026-07-28 (SEP-2577), but 2025 clients use it"
)]

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerConfig, SetLevelRequestParams, Tool,
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

use crate::backend::CallContext;
use crate::era::Era;
use crate::results::ToolResult;
use crate::results::store::Caller;

/// Who sent the request in hand: the one stdio client, a legacy HTTP session, or a
/// stateless HTTP request nothing identifies. A session id counts only where rmcp checked
/// it: a 2025-era request to a server with `--sessions` (elsewhere the header is ignored,
/// and anyone could name any scope with it).
fn caller(context: &RequestContext<RoleServer>, sessions: bool) -> Caller {
    let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
        return Caller::Only;
    };
    if let Some(subject) = parts.extensions.get::<crate::auth::Subject>() {
        return Caller::Subject(subject.clone());
    }
    if !sessions || era(context) == Era::Modern {
        return Caller::Anonymous;
    }
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map_or(Caller::Anonymous, |session| {
            Caller::Session(session.to_owned())
        })
}

/// Whether the server can send the client a request and hear its answer on this
/// connection: stdio, or a legacy session rmcp keeps (`--sessions`); never a stateless
/// request, whoever its token names.
pub(super) fn back_channel(context: &RequestContext<RoleServer>, sessions: bool) -> bool {
    let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
        return true;
    };
    sessions && era(context) != Era::Modern && parts.headers.contains_key("mcp-session-id")
}

/// Who a rate limit counts: the token's subject, else the client's address (not a legacy
/// session, which a client can replace at will); the one stdio client is one caller.
fn rate_key(context: &RequestContext<RoleServer>, sessions: bool) -> String {
    match caller(context, sessions) {
        Caller::Subject(subject) => format!("sub:{}", subject.0.subject),
        Caller::Only => "stdio".to_owned(),
        Caller::Session(_) | Caller::Anonymous => context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<super::ClientAddress>())
            .map_or_else(
                || "anonymous".to_owned(),
                |address| crate::rate::address_key(address.0.ip()),
            ),
    }
}

/// A caller with a token may call only the tools its scopes grant. The HTTP layer answers
/// 403 first; this holds where it cannot look (a batch).
fn granted(tool: &crate::tool::Tool, caller: &Caller) -> Result<(), ErrorData> {
    match caller {
        Caller::Subject(subject) if !subject.0.grants(&tool.scopes) => {
            Err(ErrorData::invalid_request(
                format!(
                    "`{}` needs the scope {}",
                    tool.name,
                    subject.0.missing(&tool.scopes).join(" ")
                ),
                None,
            ))
        }
        _ => Ok(()),
    }
}

/// The era of the request in hand: its own `_meta` version, else the negotiated one.
fn era(context: &RequestContext<RoleServer>) -> Era {
    context
        .protocol_version()
        .map_or(Era::Early, |version| Era::of_version(version.as_str()))
}

impl Handler {
    /// A slot among the server's `--max-calls`, waited for in the queue (until the request
    /// is cancelled), or the message that says the server is busy.
    async fn slot(
        &self,
        tool: &crate::tool::Tool,
        context: &RequestContext<RoleServer>,
    ) -> Result<Result<tokio::sync::OwnedSemaphorePermit, String>, ErrorData> {
        let waiting = std::time::Instant::now();
        let acquired = tokio::select! {
            acquired = self.state.calls.acquire() => acquired,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        };
        if let Some(metrics) = self.state.metrics.as_deref() {
            metrics.waited(waiting.elapsed());
            if acquired.is_err() {
                metrics.call_ended(&tool.name, crate::metrics::Outcome::Busy, waiting.elapsed());
            }
        }
        Ok(acquired.map_err(|busy| {
            tracing::warn!(tool = %tool.name, running = busy.running, "refusing a call: too many in flight");
            format!(
                "the server is busy: {} tool calls are already running{}; try again shortly",
                busy.running,
                if busy.queue > 0 {
                    format!(" and {} are waiting", busy.queue)
                } else {
                    String::new()
                }
            )
        }))
    }

    /// A call over its tool's rate for this caller: the message that refuses it.
    fn over_rate(
        &self,
        tool: &crate::tool::Tool,
        context: &RequestContext<RoleServer>,
    ) -> Option<String> {
        let limiter = tool.rate.as_ref()?;
        let refused = limiter
            .check(&rate_key(context, self.state.sessions))
            .err()?;
        tracing::info!(tool = %tool.name, retry_after = ?refused.retry_after, "refused a call over its rate");
        if let Some(metrics) = self.state.metrics.as_deref() {
            metrics.call_ended(
                &tool.name,
                crate::metrics::Outcome::RateLimited,
                std::time::Duration::ZERO,
            );
        }
        Some(refused.to_string())
    }

    /// The task store, for the `tasks/*` methods (rmcp answers them only when the
    /// extension is advertised, which needs one).
    fn tasks(&self) -> Result<&std::sync::Arc<crate::tasks::Tasks>, ErrorData> {
        self.state.tasks.as_ref().ok_or_else(|| {
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
        self.snapshot().info.clone()
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
        let era = era(&context);
        // With scoped tools, a caller sees only the tools its token may call, so the list
        // varies by caller: cacheable by that caller only.
        let principal = match caller(&context, self.state.sessions) {
            Caller::Subject(subject) if self.snapshot().scoped_tools => Some(subject),
            _ => None,
        };
        let result = self.listing(era, principal.as_ref());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.state.audit.enabled {
            return self.call(request, context).await;
        }
        let started = std::time::Instant::now();
        let (name, arguments) = (request.name.clone(), request.arguments.clone());
        let key = rate_key(&context, self.state.sessions);
        let answered = self.call(request, context).await;
        let outcome = match &answered {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                crate::audit::Outcome::Error
            }
            Ok(CallToolResponse::InputRequired(_)) => crate::audit::Outcome::Pending,
            Ok(CallToolResponse::Task(_)) => crate::audit::Outcome::Task,
            Ok(_) => crate::audit::Outcome::Ok,
            Err(_) => crate::audit::Outcome::Refused,
        };
        let registry = self.registry();
        let redactor = registry
            .get(&name)
            .ok()
            .and_then(|tool| tool.backend.redactor());
        self.state.audit.record(
            &crate::audit::Record {
                tool: &name,
                caller: &key,
                outcome,
                took: started.elapsed(),
                arguments: arguments.as_ref(),
            },
            redactor,
        );
        answered
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = caller(&context, self.state.sessions);
        super::tasks::get(self.tasks()?, &request.task_id, &caller).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller(&context, self.state.sessions);
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
        let caller = caller(&context, self.state.sessions);
        super::tasks::cancel(self.tasks()?, &request.task_id, &caller).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let caller = caller(&context, self.state.sessions);
        prompts::list(&self.registry(), caller.principal())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let asked = prompts::Asked {
            context: &context,
            era: era(&context),
            reachable: back_channel(&context, self.state.sessions),
            codec: &self.state.sealer,
        };
        let caller = caller(&context, self.state.sessions);
        prompts::get(&self.registry(), request, caller.principal(), asked).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = caller(&context, self.state.sessions);
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
        resources::list(&self.registry(), &caller(&context, self.state.sessions))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = caller(&context, self.state.sessions);
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
        let caller = caller(&context, self.state.sessions);
        let era = era(&context);
        let contents = tokio::task::spawn_blocking(move || {
            resources::read(&registry, &request.uri, &caller, era)
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
            caller(&context, self.state.sessions).principal(),
            &registry.resource_scopes(&request.uri),
        )?;
        if !self.state.watching {
            return Err(ErrorData::invalid_request(
                "this server does not watch its files (start it with --watch to subscribe)",
                None,
            ));
        }
        if !back_channel(&context, self.state.sessions) {
            return Err(ErrorData::invalid_request(
                "a subscription needs a connection to notify: stdio, or HTTP with --sessions",
                None,
            ));
        }
        self.state.subscriptions.subscribe(
            &self.registry(),
            caller(&context, self.state.sessions),
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
            .unsubscribe(&caller(&context, self.state.sessions), &request.uri);
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
        let snapshot = self.snapshot();
        let index = snapshot.registry.position(name)?;
        snapshot.listings[Era::Modern.index()].get(index).cloned()
    }
}

impl Handler {
    /// `tools/call`: the checks before a call, then the call (or its task).
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.snapshot();
        let tool = snapshot
            .registry
            .get(&request.name)
            .map_err(|unknown| ErrorData::invalid_params(unknown.to_string(), None))?
            .clone();
        granted(&tool, &caller(&context, self.state.sessions))?;
        let era = era(&context);
        // A call is counted once: the rounds that answer its questions (2026's `requestState`)
        // are the same call.
        let first_round = request.input_responses.is_none() && request.request_state.is_none();
        if let Some(refused) = first_round
            .then(|| self.over_rate(&tool, &context))
            .flatten()
        {
            let server_info = (era == Era::Modern).then_some(&snapshot.server_info);
            return Ok(convert::call_result(ToolResult::error(refused), server_info).into());
        }
        if let Some(tasks) = self.state.tasks.as_ref()
            && super::tasks::wanted(&tool, Some(tasks), &context)?
        {
            let caller = caller(&context, self.state.sessions);
            return super::tasks::start(self, tasks, tool, request, &context, era, caller).await;
        }
        let server_info = (era == Era::Modern).then_some(&snapshot.server_info);
        let _permit = match self.slot(&tool, &context).await? {
            Ok(permit) => permit,
            Err(busy) => {
                return Ok(convert::call_result(ToolResult::error(busy), server_info).into());
            }
        };
        let wanted = notify::Wanted {
            progress: context.meta.get_progress_token(),
            log_threshold: if era == Era::Modern {
                context.meta.log_level().map(notify::from_rmcp)
            } else {
                self.state.log_level.read().ok().map(|level| *level)
            },
            heartbeat: self.state.heartbeat,
        };
        let (events, forwarder) = if wanted.progress.is_some() || wanted.log_threshold.is_some() {
            let (sender, receiver) = tokio::sync::mpsc::channel(256);
            let task = tokio::spawn(notify::forward(
                receiver,
                context.peer.clone(),
                wanted,
                tool.name.clone(),
            ));
            (Some(sender), Some(task))
        } else {
            (None, None)
        };
        let call_context = CallContext {
            store: snapshot.registry.store(),
            caller: caller(&context, self.state.sessions),
            events,
            withheld_env: &snapshot.withheld_env,
            processes: &self.state.processes,
            clients: &self.state.clients,
            metrics: self.state.metrics.as_deref(),
        };
        // Dropping the call future kills the backend's process group.
        let codec = &self.state.sealer;
        let reachable = back_channel(&context, self.state.sessions);
        let run = elicit::call(
            &tool,
            request,
            &context,
            era,
            &call_context,
            codec,
            reachable,
        );
        let called = tokio::select! {
            called = run => called,
            () = context.ct.cancelled() => {
                if let Some(forwarder) = forwarder {
                    forwarder.abort();
                }
                tracing::info!(tool = %tool.name, "call cancelled; backend stopped");
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        };
        // Every event goes out before the result, never after it.
        drop(call_context);
        if let Some(forwarder) = forwarder {
            let _ = tokio::time::timeout(Duration::from_secs(1), forwarder).await;
        }
        match called? {
            elicit::Called::Done(result) => {
                let result = result.for_era(era, tool.legacy_wrapped());
                Ok(convert::call_result(result, server_info).into())
            }
            elicit::Called::Pending(pending) => Ok(pending.into()),
        }
    }
}
