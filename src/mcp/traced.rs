//! The handler as both transports serve it: every request inside its trace.
//!
//! A request continues the W3C trace context in its `_meta` (2026-07-28 reserves
//! `traceparent` and `tracestate`), else in its HTTP request's headers. With traces on it
//! gets a server span named and described as OpenTelemetry's MCP conventions say
//! (`tools/call weather`, `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, …),
//! naming only what the manifest declares: no resource URI (a kept output's link is its
//! read capability), no session id, no message that could quote a client's value;
//! with traces off the client's context is only made current, so backends still get it.
//!
//! rmcp dispatches each request to one `ServerHandler` method and offers no hook around
//! that, so `Traced` is a `ServerHandler` that hands every method to [`Handler`], each
//! request method inside its span.
#![expect(
    deprecated,
    reason = "logging/setLevel and resources/subscribe are deprecated in 2026-07-28, but 2025 clients use them"
)]

use std::borrow::Cow;
use std::future::Future;

use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};

use super::Handler;
use crate::traces::context::{Carried, TRACEPARENT, TRACESTATE, incoming};

/// The handler as served.
#[derive(Debug, Clone)]
pub(crate) struct Traced(pub(crate) Handler);

/// What a request acts on, for its span's name and attributes.
enum SpanTarget {
    None,
    Tool(String),
    Prompt(String),
}

/// One request's place in its trace: its span (traces on), or only the client's context.
struct RequestTrace {
    /// The context the answer is computed in.
    context: Option<Context>,
    /// Whether `context` holds our span.
    spanned: bool,
}

impl RequestTrace {
    /// `target` is asked for only when traces are on.
    fn start(
        method: &'static str,
        request: &RequestContext<RoleServer>,
        target: impl FnOnce() -> SpanTarget,
    ) -> Self {
        let parent = parent(request);
        let Some(tracer) = crate::traces::tracer() else {
            return Self {
                context: parent,
                spanned: false,
            };
        };
        let (name, attributes) = describe(method, &target(), request);
        let parent = parent.unwrap_or_default();
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        Self {
            context: Some(parent.with_span(span)),
            spanned: true,
        }
    }

    /// Computes the answer inside the trace and records how it went. The answer's future
    /// comes boxed: rmcp's dispatch holds any method's future in one state as large as the
    /// largest (a tool call's, kilobytes) and moves it as it goes, for a ping too; boxed,
    /// each request allocates what its own method needs, once.
    async fn around<T, F: Future<Output = Result<T, ErrorData>>>(
        self,
        answering: std::pin::Pin<Box<F>>,
        tool_error: fn(&T) -> bool,
    ) -> Result<T, ErrorData> {
        let Some(context) = self.context else {
            return answering.await;
        };
        let answered = answering.with_context(context.clone()).await;
        if self.spanned {
            let span = context.span();
            match &answered {
                Err(error) => {
                    let code = error.code.0.to_string();
                    span.set_attributes([
                        KeyValue::new("error.type", code.clone()),
                        KeyValue::new("rpc.response.status_code", code),
                    ]);
                    // The code only: messages can quote what the client sent.
                    span.set_status(Status::error(format!("JSON-RPC error {}", error.code.0)));
                }
                Ok(answer) if tool_error(answer) => {
                    span.set_attribute(KeyValue::new("error.type", "tool_error"));
                    span.set_status(Status::error("the tool returned an error"));
                }
                Ok(_) => {}
            }
            span.end();
        }
        answered
    }
}

fn answered<T>(_: &T) -> bool {
    false
}

fn is_tool_error(response: &CallToolResponse) -> bool {
    matches!(response, CallToolResponse::Complete(result) if result.is_error == Some(true))
}

/// Request methods handed to the handler inside their span, with nothing to name.
macro_rules! plain_requests {
    ($($name:ident($params:ty) -> $answer:ty = $method:literal;)*) => {$(
        fn $name(
            &self,
            request: $params,
            context: RequestContext<RoleServer>,
        ) -> impl Future<Output = Result<$answer, ErrorData>> + Send + '_ {
            RequestTrace::start($method, &context, || SpanTarget::None)
                .around(Box::pin(self.0.$name(request, context)), answered)
        }
    )*};
}

/// Notifications and plain questions, handed to the handler as they are.
macro_rules! notifications {
    ($($name:ident($params:ty);)*) => {$(
        fn $name(
            &self,
            notification: $params,
            context: NotificationContext<RoleServer>,
        ) -> impl Future<Output = ()> + Send + '_ {
            self.0.$name(notification, context)
        }
    )*};
}

impl ServerHandler for Traced {
    plain_requests! {
        initialize(InitializeRequestParams) -> InitializeResult = "initialize";
        complete(CompleteRequestParams) -> CompleteResult = "completion/complete";
        set_level(SetLevelRequestParams) -> () = "logging/setLevel";
        list_prompts(Option<PaginatedRequestParams>) -> ListPromptsResult = "prompts/list";
        list_resources(Option<PaginatedRequestParams>) -> ListResourcesResult = "resources/list";
        list_resource_templates(Option<PaginatedRequestParams>) -> ListResourceTemplatesResult = "resources/templates/list";
        subscribe(SubscribeRequestParams) -> () = "resources/subscribe";
        unsubscribe(UnsubscribeRequestParams) -> () = "resources/unsubscribe";
        list_tools(Option<PaginatedRequestParams>) -> ListToolsResult = "tools/list";
        on_custom_request(CustomRequest) -> CustomResult = "custom";
        get_task(GetTaskParams) -> GetTaskResult = "tasks/get";
        update_task(UpdateTaskParams) -> () = "tasks/update";
        cancel_task(CancelTaskParams) -> () = "tasks/cancel";
        list_skills(Option<PaginatedRequestParams>) -> ListSkillsResult = "skills/list";
        get_skill(GetSkillRequestParams) -> GetSkillResult = "skills/get";
        read_resource_directory(ReadResourceDirectoryRequestParams) -> ReadResourceDirectoryResult = "resources/directory/read";
    }

    notifications! {
        on_cancelled(CancelledNotificationParam);
        on_progress(ProgressNotificationParam);
        on_custom_notification(CustomNotification);
    }

    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        RequestTrace::start("ping", &context, || SpanTarget::None)
            .around(Box::pin(self.0.ping(context)), answered)
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, ErrorData>> + Send + '_ {
        RequestTrace::start("server/discover", &context, || SpanTarget::None)
            .around(Box::pin(self.0.discover(context)), answered)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        RequestTrace::start("tools/call", &context, || {
            // A name the client made up is not a span name (any length, any number of them).
            if self.0.registry().get(&request.name).is_ok() {
                SpanTarget::Tool(request.name.to_string())
            } else {
                SpanTarget::None
            }
        })
        .around(Box::pin(self.0.call_tool(request, context)), is_tool_error)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + '_ {
        RequestTrace::start("prompts/get", &context, || {
            SpanTarget::Prompt(request.name.clone())
        })
        .around(Box::pin(self.0.get_prompt(request, context)), answered)
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + '_ {
        // No URI: a kept output's link is the capability to read it.
        RequestTrace::start("resources/read", &context, || SpanTarget::None)
            .around(Box::pin(self.0.read_resource(request, context)), answered)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.0.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.0.listen(context)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.0.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.0.on_roots_list_changed(context)
    }

    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }
}

/// The context the client sent: the request's `_meta`, else its HTTP headers.
fn parent(context: &RequestContext<RoleServer>) -> Option<Context> {
    let meta = Carried {
        traceparent: context.meta.get_traceparent(),
        tracestate: context.meta.get_tracestate(),
    };
    let parts = context.extensions.get::<axum::http::request::Parts>();
    if meta.traceparent.is_none()
        && parts.is_none_or(|parts| !parts.headers.contains_key(TRACEPARENT))
    {
        return None;
    }
    let header = |name| {
        parts
            .and_then(|parts| parts.headers.get(name))
            .and_then(|value| value.to_str().ok())
    };
    let headers = Carried {
        traceparent: header(TRACEPARENT),
        tracestate: header(TRACESTATE),
    };
    incoming(&[meta, headers])
}

/// The span's name and attributes, as the MCP semantic conventions give them.
fn describe(
    method: &'static str,
    target: &SpanTarget,
    context: &RequestContext<RoleServer>,
) -> (Cow<'static, str>, Vec<KeyValue>) {
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", method),
        KeyValue::new("jsonrpc.request.id", context.id.to_string()),
    ];
    if let Some(version) = context.protocol_version() {
        attributes.push(KeyValue::new(
            "mcp.protocol.version",
            version.as_str().to_owned(),
        ));
    }
    match context.extensions.get::<axum::http::request::Parts>() {
        None => attributes.push(KeyValue::new("network.transport", "pipe")),
        Some(parts) => {
            attributes.push(KeyValue::new("network.transport", "tcp"));
            attributes.push(KeyValue::new("network.protocol.name", "http"));
            if let Some(address) = parts.extensions.get::<super::ClientAddress>() {
                attributes.push(KeyValue::new("client.address", address.0.ip().to_string()));
                attributes.push(KeyValue::new("client.port", i64::from(address.0.port())));
            }
        }
    }
    let name = match target {
        SpanTarget::None => Cow::Borrowed(method),
        SpanTarget::Tool(tool) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            Cow::Owned(format!("{method} {tool}"))
        }
        SpanTarget::Prompt(prompt) => {
            attributes.push(KeyValue::new("gen_ai.prompt.name", prompt.clone()));
            Cow::Owned(format!("{method} {prompt}"))
        }
    };
    (name, attributes)
}
