//! rmcp's `ServerHandler` over our registry: `tools/list` per era, `tools/call` through the
//! one call path, cancellation that kills the backend.
#![expect(
    deprecated,
    reason = "logging/setLevel is deprecated in 2026-07-28 (SEP-2577), but 2025 clients use it"
)]

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::{convert, notify};
use std::time::Duration;

use crate::backend::CallContext;
use crate::era::Era;
use crate::events::LogLevel;
use crate::registry::Registry;
use crate::results::ToolResult;

/// How long 2026-era clients may cache `tools/list`: the manifest does not change while
/// we run, but a restart may bring a new one.
const LIST_TTL_MS: u64 = 60_000;

/// The handler rmcp calls. Cheap to clone: everything lives behind one `Arc`, built once.
#[derive(Debug, Clone)]
pub struct Handler {
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    registry: Arc<Registry>,
    /// One permit per call in flight; beyond the limit calls fail fast.
    calls: Arc<Semaphore>,
    max_calls: usize,
    /// `tools/list` per era, already in rmcp's types.
    listings: [Vec<Tool>; 4],
    info: ServerConfig,
    server_info: Value,
    /// The level `logging/setLevel` asked for, shared by every per-request handler (over
    /// stateless HTTP each request has its own).
    log_level: std::sync::RwLock<LogLevel>,
    /// How often a quiet call reports that it is still running.
    heartbeat: Option<Duration>,
}

/// The manifest produced a definition rmcp cannot represent (a bug on our side).
#[derive(Debug, thiserror::Error)]
#[error("tool definition rejected by the MCP model: {0}")]
pub struct DefinitionError(#[from] serde_json::Error);

impl Handler {
    /// A handler over `registry` running at most `max_calls` tool calls at once.
    pub fn new(
        registry: Arc<Registry>,
        max_calls: usize,
        heartbeat: Option<Duration>,
    ) -> Result<Self, DefinitionError> {
        let listing = |era: Era| -> Result<Vec<Tool>, DefinitionError> {
            registry
                .listing(era)
                .iter()
                .map(|definition| convert::tool(definition).map_err(DefinitionError::from))
                .collect()
        };
        let listings = [
            listing(Era::Initial)?,
            listing(Era::Early)?,
            listing(Era::Legacy)?,
            listing(Era::Modern)?,
        ];
        let implementation = convert::implementation(&registry.server.implementation)?;
        let capabilities = if registry.serves_resources() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .enable_resources()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build()
        };
        let mut info = ServerConfig::new(capabilities).with_server_info(implementation);
        info.instructions.clone_from(&registry.server.instructions);
        let server_info = Value::Object(registry.server.implementation.clone());
        Ok(Self {
            state: Arc::new(State {
                registry,
                calls: Arc::new(Semaphore::new(max_calls)),
                max_calls,
                listings,
                info,
                server_info,
                log_level: std::sync::RwLock::new(LogLevel::Info),
                heartbeat,
            }),
        })
    }
}

impl Handler {
    /// Tool calls running now.
    pub fn calls_in_flight(&self) -> usize {
        self.state.max_calls - self.state.calls.available_permits()
    }
}

/// The era of the request in hand: its own `_meta` version, else the negotiated one.
fn era(context: &RequestContext<RoleServer>) -> Era {
    context
        .protocol_version()
        .map_or(Era::Early, |version| Era::of_version(version.as_str()))
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.state.info.clone()
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
        let mut result = ListToolsResult::with_all_items(self.state.listings[era.index()].clone());
        if era == Era::Modern {
            result = result
                .with_ttl_ms(LIST_TTL_MS)
                .with_cache_scope(CacheScope::Public);
            result.meta = Some(convert::server_info_meta(&self.state.server_info));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = self
            .state
            .registry
            .get(&request.name)
            .map_err(|unknown| ErrorData::invalid_params(unknown.to_string(), None))?;
        let era = era(&context);
        let Ok(_permit) = self.state.calls.clone().try_acquire_owned() else {
            tracing::warn!(tool = %tool.name, limit = self.state.max_calls, "refusing a call: too many in flight");
            let busy = ToolResult::error(format!(
                "the server is busy: {} tool calls are already running; try again shortly",
                self.state.max_calls
            ));
            let server_info = (era == Era::Modern).then_some(&self.state.server_info);
            return Ok(convert::call_result(busy, server_info).into());
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
            store: self.state.registry.store(),
            events,
        };
        // Dropping the call future kills the backend's process group.
        let result = tokio::select! {
            result = tool.call(request.arguments, &call_context) => result,
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
        let result = result.for_era(era, tool.legacy_wrapped());
        let server_info = (era == Era::Modern).then_some(&self.state.server_info);
        Ok(convert::call_result(result, server_info).into())
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.state.registry.serves_resources() {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found: resources/list",
                None,
            ));
        }
        let resources = self
            .state
            .registry
            .store()
            .list()
            .iter()
            .filter_map(convert::resource)
            .collect();
        // Kept outputs come and go: clients must not cache the list.
        Ok(ListResourcesResult::with_all_items(resources)
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.state.registry.serves_resources() {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found: resources/read",
                None,
            ));
        }
        let Some((mime_type, bytes)) = self.state.registry.store().read(&request.uri) else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource `{}`: kept outputs expire after an hour, or when the store is full",
                    request.uri
                ),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![convert::resource_contents(
            request.uri,
            mime_type,
            bytes,
        )])
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private)
        .into())
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

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let index = self
            .state
            .registry
            .tools()
            .position(|tool| tool.name == name)?;
        self.state.listings[Era::Modern.index()].get(index).cloned()
    }
}
