//! The handler's shared state: the current snapshot of the registry (replaced whole on a
//! reload, so in-flight calls finish on the definitions they started with), the call limit,
//! the log level, and who to tell when the tools change.
#![expect(
    deprecated,
    reason = "the logging capability is deprecated in 2026-07-28 (SEP-2577), but 2025 clients use it"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{JsonObject, PromptsCapability, ServerCapabilities, ServerConfig, Tool};
use rmcp::service::{RoleServer, SubscriptionSendError, SubscriptionSink};
use serde_json::Value;

use super::convert;
use super::subscriptions::Subscriptions;
use crate::backend::http::HttpClients;
use crate::backend::processes::Processes;
use crate::events::LogLevel;
use crate::limit::Slots;
use crate::registry::Registry;
use crate::revision::Revision;

/// The handler rmcp calls. Cheap to clone: everything lives behind one `Arc`.
#[derive(Debug, Clone)]
pub struct Handler {
    pub(super) state: Arc<State>,
    /// In discovery mode, the tools `add_tools` put in this connection's list; `None` where
    /// each request is its own (stateless HTTP). See [`Self::connection`].
    pub(super) added: Option<Arc<super::discovery::Added>>,
}

/// A toolset's own handler, made when first asked for ([`Handler::lazy_toolset`]).
#[derive(Debug)]
pub struct LazyToolset {
    parent: Handler,
    name: String,
    made: std::sync::OnceLock<Result<Handler, String>>,
}

impl LazyToolset {
    /// The set's handler, made now if this is the first time.
    pub fn handler(&self) -> Result<Handler, std::io::Error> {
        self.made
            .get_or_init(|| {
                self.parent.toolset_view(&self.name).map_err(|error| {
                    tracing::error!(toolset = %self.name, %error, "the toolset cannot be served at its own endpoint");
                    error.to_string()
                })
            })
            .clone()
            .map_err(std::io::Error::other)
    }
}

/// How the handler behaves.
#[derive(Debug, Clone)]
pub struct HandlerOptions {
    /// Tool calls running at once, across all tools.
    pub max_calls: usize,
    /// Calls that may wait for a free slot; beyond, calls fail fast.
    pub queue: usize,
    /// How often a quiet call reports that it is still running.
    pub heartbeat: Option<Duration>,
    /// The manifest is watched: advertise `listChanged` and accept change subscriptions.
    pub watching: bool,
    /// Variables holding the server's own secrets (the bearer token's), never passed to a
    /// command; the manifest's are added per registry.
    pub withheld_env: Vec<String>,
    /// The server's processes.
    pub processes: Arc<Processes>,
    /// Seals 2026 `requestState` (`--state-key-file`, else a random key).
    pub sealer: rmcp::model::RequestStateCodec,
    /// Where tasks are kept (none: calls are never tasks).
    pub tasks: Option<Arc<crate::tasks::Tasks>>,
    /// Where calls are counted (`--metrics`, `--metrics-addr`).
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// What is recorded per call (`--audit`).
    pub audit: crate::audit::Audit,
    /// `--discovery`: list discovery's own tools whatever the manifest says.
    pub discovery: bool,
}

#[derive(Debug)]
pub(super) struct State {
    current: RwLock<Arc<Snapshot>>,
    /// What every call reaches (processes, clients, limits, metrics, audit, tasks).
    pub(super) services: Arc<crate::call::Services>,
    /// The level `logging/setLevel` asked for, shared by every per-request handler (over
    /// stateless HTTP each request has its own).
    pub(super) log_level: RwLock<LogLevel>,
    pub(super) heartbeat: Option<Duration>,
    pub(super) watching: bool,
    /// `--discovery`, kept for every snapshot a reload makes.
    pub(super) discovery: bool,
    withheld_env: Vec<String>,
    pub(super) sealer: rmcp::model::RequestStateCodec,
    /// 2025 sessions to send `notifications/tools/list_changed` to.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// 2026 `subscriptions/listen` streams.
    sinks: Mutex<Vec<(u64, SubscriptionSink)>>,
    /// 2025 `resources/subscribe`.
    pub(super) subscriptions: Subscriptions,
    /// Resource files read at once (each may hold up to 16 MiB, more once encoded).
    pub(super) reads: tokio::sync::Semaphore,
    next_sink: AtomicU64,
    /// The handlers of the toolsets served at endpoints of their own (`/mcp/{set}`), by set
    /// name: each has its own snapshot, cut from this one's at each reload, and shares its
    /// services.
    views: Mutex<Vec<(String, Handler)>>,
}

/// What a handler's state takes from its options, and a toolset's view from its server's.
struct Settings {
    heartbeat: Option<Duration>,
    watching: bool,
    discovery: bool,
    withheld_env: Vec<String>,
    sealer: rmcp::model::RequestStateCodec,
}

impl State {
    fn new(
        snapshot: Arc<Snapshot>,
        services: Arc<crate::call::Services>,
        settings: Settings,
    ) -> Self {
        Self {
            current: RwLock::new(snapshot),
            services,
            log_level: RwLock::new(LogLevel::Info),
            heartbeat: settings.heartbeat,
            watching: settings.watching,
            discovery: settings.discovery,
            withheld_env: settings.withheld_env,
            sealer: settings.sealer,
            peers: Mutex::new(Vec::new()),
            sinks: Mutex::new(Vec::new()),
            subscriptions: Subscriptions::default(),
            reads: tokio::sync::Semaphore::new(8),
            next_sink: AtomicU64::new(0),
            views: Mutex::new(Vec::new()),
        }
    }
}

/// Everything derived from one registry.
#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) registry: Arc<Registry>,
    /// Each tool as `tools/list` lists it, in rmcp's types, made when first asked for.
    pub(super) listed: super::listing::Listed,
    pub(super) info: ServerConfig,
    pub(super) server_info: Value,
    /// What calls run against: the registry and the server's withheld variables with the
    /// manifest's.
    pub(super) served: crate::call::Loaded,
    /// Some tool names `scopes`: only then does a call's body need a look before rmcp.
    pub(super) scoped: bool,
    /// Some tool (not only a prompt or resource) names `scopes`: lists vary by caller.
    pub(super) scoped_tools: bool,
    /// What its MCP Apps change for a client that renders none.
    pub(super) apps: super::apps::Served,
    /// The full `tools/list` answers, serialized on first use.
    pub(super) serialized: super::listing::Serialized,
    /// Discovery mode (`--discovery`, `[server] discovery`): `tools/list` is its own tools.
    pub(super) discovery: bool,
    /// In discovery mode: the tools, indexed as the snapshot is made.
    pub(super) index: std::sync::OnceLock<crate::discovery::Index>,
}

/// Why a registry cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// The manifest produced a definition rmcp cannot represent (a bug on our side).
    #[error("tool definition rejected by the MCP model: {0}")]
    Model(#[from] serde_json::Error),
    /// `--discovery` takes names a tool of the manifest has.
    #[error(
        "tool `{0}` has a name discovery gives its own tool; rename it to serve with --discovery"
    )]
    Taken(String),
}

impl Snapshot {
    fn new(
        registry: Arc<Registry>,
        watching: bool,
        withheld_env: &[String],
        tasks: bool,
        discovery: bool,
    ) -> Result<Self, DefinitionError> {
        let discovery = discovery || registry.server.discovery;
        if discovery && let Some(taken) = crate::discovery::taken(&registry) {
            return Err(DefinitionError::Taken(taken.to_owned()));
        }
        let count = registry.tools().count();
        let listed = if discovery {
            super::listing::Listed::discovery(discovery_listings(&registry)?, count)
        } else {
            super::listing::Listed::new(count)
        };
        let implementation = convert::implementation(&registry.server.implementation)?;
        let mut capabilities = if registry.serves_resources() {
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
        if watching && let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        if registry.prompts().next().is_some() {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = watching.then_some(true);
            capabilities.prompts = Some(prompts);
        }
        // Subscriptions are heard only with `--watch`, and only file resources change.
        let files = registry
            .resources()
            .any(|resource| matches!(resource.source, crate::resource::Source::File(_)));
        if watching
            && files
            && let Some(resources) = capabilities.resources.as_mut()
        {
            resources.subscribe = Some(true);
        }
        if registry.prompts().next().is_some() || !registry.templates().is_empty() {
            capabilities.completions = Some(JsonObject::new());
        }
        if tasks
            && registry
                .tools()
                .any(|tool| tool.task != crate::tasks::Policy::Never)
        {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.into(), JsonObject::new());
        }
        if !registry.skills().is_empty() {
            let mut settings = JsonObject::new();
            settings.insert("directoryRead".into(), Value::Bool(true));
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(crate::skill::EXTENSION_ID.into(), settings);
        }
        let apps = super::apps::Served::of(&registry);
        // Offered only to a client that declares it (`apps::offer`).
        if apps.tools {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(crate::app::EXTENSION_ID.into(), JsonObject::new());
        }
        let mut info = ServerConfig::new(capabilities).with_server_info(implementation);
        info.instructions.clone_from(&registry.server.instructions);
        let server_info = Value::Object(registry.server.implementation.clone());
        let mut withheld = withheld_env.to_vec();
        withheld.extend(registry.withheld_env().iter().cloned());
        let served = crate::call::Loaded {
            registry: Arc::clone(&registry),
            withheld_env: withheld.into(),
        };
        let scoped = registry.scoped();
        let scoped_tools = registry.tools().any(|tool| !tool.scopes.is_empty());
        Ok(Self {
            scoped,
            scoped_tools,
            apps,
            serialized: super::listing::Serialized::default(),
            discovery,
            // Built with the snapshot, at start or reload, so that no client's first
            // `find_tools` waits for it (GitHub's 1,221 tools: about a third of a second,
            // debug build).
            index: if discovery {
                std::sync::OnceLock::from(crate::discovery::Index::new(&registry))
            } else {
                std::sync::OnceLock::new()
            },
            registry,
            listed,
            info,
            server_info,
            served,
        })
    }
}

/// Discovery's own tools per revision, the same in every revision (no output schema), but
/// for `add_tools`: a 2026 client's requests are each their own, so it has no list to add
/// to. Last in each list: the handler drops it where the connection does not last
/// ([`Handler::listing`]).
fn discovery_listings(registry: &Registry) -> Result<[Vec<Tool>; 4], DefinitionError> {
    let mut listings: [Vec<Tool>; 4] = Default::default();
    for definition in crate::discovery::definitions(registry) {
        let add = definition.get("name") == Some(&Value::from(crate::discovery::ADD));
        let tool = convert::tool(definition)?;
        for (index, listing) in listings.iter_mut().enumerate() {
            if !(add && index == Revision::V2026_07.index()) {
                listing.push(tool.clone());
            }
        }
    }
    Ok(listings)
}

/// One tool as every revision lists it. Revisions differ only in their output schemas: the
/// tool is converted once, and the others are clones sharing its schemas.
pub(super) fn listed_in_every_revision(
    tool: &crate::tool::Tool,
) -> Result<[Tool; 4], DefinitionError> {
    let modern = convert::tool(tool.definition_for(Revision::V2026_07))?;
    let v2025 = if tool.wrapped_as_object() {
        convert::tool(tool.definition_for(Revision::V2025_06))?
    } else {
        modern.clone()
    };
    let mut early = modern.clone();
    early.output_schema = None;
    // In `Revision::index` order.
    Ok([early.clone(), early, v2025, modern])
}

/// One tool as `tools/list` lists it to a client of `revision`.
pub(super) fn listed(
    tool: &crate::tool::Tool,
    revision: Revision,
) -> Result<Tool, DefinitionError> {
    Ok(convert::tool(tool.definition_for(revision))?)
}

impl Handler {
    pub fn new(registry: Arc<Registry>, options: HandlerOptions) -> Result<Self, DefinitionError> {
        let snapshot = Snapshot::new(
            registry,
            options.watching,
            &options.withheld_env,
            options.tasks.is_some(),
            options.discovery,
        )?;
        let services = Arc::new(crate::call::Services {
            projector: Arc::new(crate::backend::projector::Projector::new(Arc::clone(
                &options.processes,
            ))),
            processes: options.processes,
            clients: HttpClients::default(),
            egress: Arc::new(crate::egress::Egress::new(options.metrics.clone())),
            metrics: options.metrics,
            audit: options.audit,
            calls: Some(Slots::new(options.max_calls, options.queue)),
            tasks: options.tasks,
        });
        Ok(Self {
            state: Arc::new(State::new(
                Arc::new(snapshot),
                services,
                Settings {
                    heartbeat: options.heartbeat,
                    watching: options.watching,
                    discovery: options.discovery,
                    withheld_env: options.withheld_env,
                    sealer: options.sealer,
                },
            )),
            added: None,
        })
    }

    /// A handler serving only the toolset `name` of this one's registry (no tool, when the
    /// registry has no such set now), kept current by this one's [`Self::replace`]: its
    /// calls share this one's services (processes, the server's call slots, each tool's
    /// limits and rate, metrics, audit, tasks), so an endpoint per set adds no capacity.
    pub fn toolset_view(&self, name: &str) -> Result<Self, DefinitionError> {
        let state = &self.state;
        // Held while the set is cut and registered, as `replace` holds it while it re-cuts
        // every view: a view made during a reload is cut from the registry it brings.
        let mut views = state
            .views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let served = self.registry();
        let registry = served
            .toolset(name)
            .unwrap_or_else(|| served.without_tools());
        let view = Self {
            state: Arc::new(State::new(
                self.prepare(Arc::new(registry))?,
                Arc::clone(&state.services),
                Settings {
                    heartbeat: state.heartbeat,
                    watching: state.watching,
                    discovery: state.discovery,
                    withheld_env: state.withheld_env.clone(),
                    sealer: state.sealer.clone(),
                },
            )),
            added: None,
        };
        views.push((name.to_owned(), view.clone()));
        Ok(view)
    }

    /// The toolset `name`'s handler, made on the first request to its endpoint: a manifest
    /// of many sets (Microsoft Graph's 824) pays only for those its clients ask for.
    pub fn lazy_toolset(&self, name: &str) -> Arc<LazyToolset> {
        Arc::new(LazyToolset {
            parent: self.clone(),
            name: name.to_owned(),
            made: std::sync::OnceLock::new(),
        })
    }

    /// The toolset views, to reload and notify with this handler.
    fn views(&self) -> Vec<(String, Handler)> {
        self.state
            .views
            .lock()
            .map(|views| views.clone())
            .unwrap_or_default()
    }

    pub(super) fn snapshot(&self) -> Arc<Snapshot> {
        self.state.current.read().map_or_else(
            |poisoned| poisoned.into_inner().clone(),
            |current| current.clone(),
        )
    }

    /// Whether a tool, prompt, resource or template names scopes.
    pub(crate) fn anything_scoped(&self) -> bool {
        self.snapshot().scoped
    }

    /// The scopes what a request acts on needs, when it names any (`None` for an unknown
    /// one: the request then fails as unknown, not as forbidden).
    pub(crate) fn scopes_for(&self, target: super::http::ScopeTarget<'_>) -> Option<Vec<String>> {
        let snapshot = self.snapshot();
        if !snapshot.scoped {
            return None;
        }
        let registry = &snapshot.registry;
        let scopes = match target {
            // A tool only an MCP App's page may call gets no step-up here: the gate cannot
            // tell whether this client renders pages, and a `403` naming its scopes would
            // tell one that does not that the tool exists. The pipeline still refuses a
            // token without them.
            super::http::ScopeTarget::Tool(name) => registry
                .get(name)
                .ok()
                .filter(|tool| tool.shown_to(false))?
                .scopes
                .clone(),
            super::http::ScopeTarget::Prompt(name) => registry.prompt(name).ok()?.scopes.clone(),
            super::http::ScopeTarget::Resource(uri) => registry.resource_scopes(uri),
            super::http::ScopeTarget::Template(uri_template) => registry
                .templates()
                .iter()
                .find(|template| template.uri_template == uri_template)?
                .scopes
                .clone(),
        };
        (!scopes.is_empty()).then_some(scopes)
    }

    /// Where calls are counted, if anywhere.
    pub(crate) fn metrics(&self) -> Option<&Arc<crate::metrics::Metrics>> {
        self.state.services.metrics.as_ref()
    }

    /// The registry being served now.
    pub fn registry(&self) -> Arc<Registry> {
        self.snapshot().registry.clone()
    }

    /// Serves `registry` from now on; calls already running keep their definitions.
    pub fn replace(&self, registry: Arc<Registry>) -> Result<(), DefinitionError> {
        let snapshot = self.prepare(registry)?;
        // Every view's snapshot is made before any is swapped in: all change, or none. The
        // list is held until this one is swapped in too, so no view is made meanwhile from
        // the registry being replaced (`toolset_view`).
        let known = self
            .state
            .views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut views = Vec::new();
        for (name, view) in known.iter() {
            let registry = snapshot.registry.toolset(name).unwrap_or_else(|| {
                // Not its previous tools: a reload may have removed them, or changed their
                // scopes and rates, and the set may no longer be served at all.
                tracing::warn!(toolset = %name, "the changed manifest does not serve this toolset; its endpoint serves no tool until a reload brings it back");
                snapshot.registry.without_tools()
            });
            views.push((view.prepare(Arc::new(registry))?, view));
        }
        for (prepared, view) in views {
            view.install(prepared);
        }
        self.install(snapshot);
        drop(known);
        Ok(())
    }

    fn prepare(&self, registry: Arc<Registry>) -> Result<Arc<Snapshot>, DefinitionError> {
        Snapshot::new(
            registry,
            self.state.watching,
            &self.state.withheld_env,
            self.state.services.tasks.is_some(),
            self.state.discovery,
        )
        .map(Arc::new)
    }

    fn install(&self, snapshot: Arc<Snapshot>) {
        match self.state.current.write() {
            Ok(mut current) => *current = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
    }

    /// Tells every client that asked (2025 sessions, 2026 subscriptions), at this endpoint
    /// and each toolset's, that the tools changed; forgets those that are gone.
    pub async fn notify_tools_changed(&self) {
        for (_, view) in self.views() {
            Box::pin(view.notify_tools_changed()).await;
        }
        let peers: Vec<Peer<RoleServer>> = self
            .state
            .peers
            .lock()
            .map(|peers| peers.clone())
            .unwrap_or_default();
        let mut alive = Vec::new();
        let prompts = self.registry().prompts().next().is_some();
        for peer in peers {
            if peer.notify_tool_list_changed().await.is_ok()
                && (!prompts || peer.notify_prompt_list_changed().await.is_ok())
            {
                alive.push(peer);
            }
        }
        if let Ok(mut peers) = self.state.peers.lock() {
            *peers = alive;
        }
        let sinks: Vec<(u64, SubscriptionSink)> = self
            .state
            .sinks
            .lock()
            .map(|sinks| sinks.clone())
            .unwrap_or_default();
        for (id, sink) in sinks {
            // A stream that did not ask for a kind of change refuses it; only a closed one
            // is forgotten.
            let closed = |result: Result<(), SubscriptionSendError>| {
                matches!(result, Err(SubscriptionSendError::SubscriptionClosed))
            };
            if closed(sink.notify_tool_list_changed().await)
                || (prompts && closed(sink.notify_prompt_list_changed().await))
            {
                self.remove_sink(id);
            }
        }
    }

    /// Tells 2025 subscribers whose resource file changed (the `--watch` loop calls this).
    pub async fn notify_resource_changes(&self) {
        for (_, view) in self.views() {
            Box::pin(view.notify_resource_changes()).await;
        }
        let registry = self.registry();
        self.state.subscriptions.notify_changes(&registry).await;
    }

    /// Tool calls running now.
    pub fn calls_in_flight(&self) -> usize {
        self.state
            .services
            .calls
            .as_ref()
            .map_or(0, Slots::in_flight)
    }

    pub(super) fn remember_peer(&self, peer: Peer<RoleServer>) {
        if let Ok(mut peers) = self.state.peers.lock() {
            // Sessions that went away are only found out on the next notification; keep
            // the list bounded meanwhile.
            if peers.len() >= 1024 {
                peers.remove(0);
            }
            peers.push(peer);
        }
    }

    pub(super) fn add_sink(&self, sink: SubscriptionSink) -> u64 {
        let id = self.state.next_sink.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut sinks) = self.state.sinks.lock() {
            sinks.push((id, sink));
        }
        id
    }

    pub(super) fn remove_sink(&self, id: u64) {
        if let Ok(mut sinks) = self.state.sinks.lock() {
            sinks.retain(|(sink, _)| *sink != id);
        }
    }
}
