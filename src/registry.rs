//! The registry: the loaded server identity and tools, in manifest order.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::prompt::Prompt;
use crate::resource::{DeclaredResource, ResourceTemplate};
use crate::results::FilesMode;
use crate::results::store::{ResourceStore, ResourceStoreLimits};
use crate::revision::Revision;
use crate::secret::Redactor;
use crate::suggest::suggest;
use crate::tool::Tool;
use crate::toolset::{Selection, Toolset, ToolsetError};

/// Who the server says it is.
#[derive(Debug, Clone, Default)]
pub struct ServerIdentity {
    /// The MCP `Implementation` object (`name`, `version`, `title`, …).
    pub implementation: Map<String, Value>,
    pub instructions: Option<String>,
    /// `[server] discovery`: `tools/list` is `crate::discovery`'s own tools.
    pub discovery: bool,
}

/// Every tool the manifest declares.
#[derive(Debug)]
pub struct Registry {
    pub server: ServerIdentity,
    tools: IndexMap<String, Arc<Tool>>,
    prompts: IndexMap<String, Arc<Prompt>>,
    resources: IndexMap<String, DeclaredResource>,
    templates: Vec<ResourceTemplate>,
    /// `[[skills]]`, read at load ([`crate::skill`]).
    skills: Vec<Arc<crate::skill::Skill>>,
    /// The named sets of tools (`[[toolsets]]`, a tool's `toolsets`); after
    /// [`Self::select`], only the chosen ones.
    toolsets: Vec<Toolset>,
    /// `[server] toolsets`: what is served when `--toolsets` chooses nothing.
    default_toolsets: Option<Vec<String>>,
    /// The secrets of the tools [`Self::select`] cut: still the manifest's, so still
    /// redacted from what the served tools return and from every message and log line.
    unserved: Vec<Redactor>,
    /// Outputs kept for `resources/read`; shared with the registry a reload replaces this
    /// one with, so links handed out before the reload keep working.
    store: Arc<ResourceStore>,
    /// Environment variables holding the manifest's secrets, never passed to a command.
    withheld_env: Vec<String>,
    /// How long tasks are kept and how often clients should poll (`[server]`).
    pub task_settings: crate::tasks::Settings,
    /// `[server.auth]`, when the manifest makes this server an OAuth resource server.
    pub auth: Option<std::sync::Arc<crate::auth::oauth::Settings>>,
    /// Secrets the server was started with (`--auth-token-file`, `--auth-token-env`),
    /// redacted like the manifest's and kept across reloads.
    launch_secrets: LaunchSecrets,
    /// Every secret the manifest references (each tool's, the server's) and the launch
    /// secrets, redacted from every tool's results, errors, dry runs and audit records.
    redactor: Redactor,
    /// The same, its forms of [`DOOR_SECRET`] bytes or more: what every message and log line
    /// is read for as it leaves.
    door: Redactor,
}

/// The shortest form of a secret the last doors look for (every message, every log line):
/// a shorter one (`dev`, `2.0`) would garble what the protocol says. Results, errors and
/// audit records redact every secret whatever its length.
pub const DOOR_SECRET: usize = 8;

/// Secrets from the command line's environment or files; never shown by `Debug`.
#[derive(Clone, Default)]
struct LaunchSecrets(Vec<String>);

impl std::fmt::Debug for LaunchSecrets {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "LaunchSecrets({} redacted)", self.0.len())
    }
}

/// `tools/call` named a tool that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{}`{}", shown(name), suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
pub struct UnknownTool {
    pub name: String,
    pub suggestion: Option<String>,
}

/// A name as an error quotes it: at most a tool name's 128 characters, so a client that
/// sends megabytes does not get them back.
pub fn shown(name: &str) -> String {
    match name.char_indices().nth(128) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

impl Registry {
    pub fn new(server: ServerIdentity, tools: Vec<Tool>) -> Self {
        let tools = tools
            .into_iter()
            .map(|tool| (tool.name.clone(), Arc::new(tool)))
            .collect();
        let mut registry = Self {
            server,
            tools,
            prompts: IndexMap::new(),
            resources: IndexMap::new(),
            templates: Vec::new(),
            skills: Vec::new(),
            toolsets: Vec::new(),
            default_toolsets: None,
            unserved: Vec::new(),
            store: Arc::new(ResourceStore::new(ResourceStoreLimits::default())),
            withheld_env: Vec::new(),
            task_settings: crate::tasks::Settings::default(),
            auth: None,
            launch_secrets: LaunchSecrets::default(),
            redactor: Redactor::default(),
            door: Redactor::default(),
        };
        registry.set_redactors();
        registry
    }

    /// The secrets of tools the load left out (a server cut to toolsets does not build
    /// them): still redacted from every output, as a cut tool's are.
    #[must_use]
    pub fn with_unserved(mut self, unserved: Vec<Redactor>) -> Self {
        self.unserved.extend(unserved);
        self.set_redactors();
        self
    }

    fn set_redactors(&mut self) {
        self.redactor = self.every_secret();
        self.door = self.redactor.without_forms_shorter_than(DOOR_SECRET);
    }

    /// One redactor for every secret the tools and `[server.auth]` hold.
    fn every_secret(&self) -> Redactor {
        let server: Vec<String> = self
            .auth
            .iter()
            .flat_map(|auth| {
                let hmac = auth
                    .hmac_secret
                    .as_deref()
                    .map(|secret| String::from_utf8_lossy(secret).into_owned());
                let client = auth
                    .introspection
                    .as_ref()
                    .map(|endpoint| endpoint.client_secret.clone());
                hmac.into_iter().chain(client)
            })
            .chain(self.launch_secrets.0.iter().cloned())
            .collect();
        Redactor::combined(
            self.tools()
                .filter_map(|tool| tool.backend.redactor())
                .chain(&self.unserved),
            &server,
        )
    }

    /// What hides every secret the manifest references, in any tool's output.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// What every message and log line is read for as it leaves (see [`DOOR_SECRET`]).
    pub fn door_redactor(&self) -> &Redactor {
        &self.door
    }

    /// Redacts every log line with this registry's secrets (at start, and on each reload).
    pub fn redact_logs(&self) {
        crate::logging::redact_with(Arc::new(self.door.clone()));
    }

    /// Redacts `secrets` (the server's own bearer token) as the manifest's secrets are.
    #[must_use]
    pub fn with_launch_secrets(mut self, secrets: Vec<String>) -> Self {
        self.launch_secrets = LaunchSecrets(secrets);
        self.set_redactors();
        self
    }

    /// Keeps the launch secrets of the registry a reload replaces.
    pub fn adopt_launch_secrets(&mut self, previous: &Registry) {
        if !previous.launch_secrets.0.is_empty() {
            self.launch_secrets = previous.launch_secrets.clone();
            self.set_redactors();
        }
    }

    #[must_use]
    pub fn with_task_settings(mut self, settings: crate::tasks::Settings) -> Self {
        self.task_settings = settings;
        self
    }

    #[must_use]
    pub fn with_auth(mut self, auth: Option<crate::auth::oauth::Settings>) -> Self {
        self.auth = auth.map(std::sync::Arc::new);
        self.set_redactors();
        self
    }

    #[must_use]
    pub fn with_prompts(mut self, prompts: Vec<Prompt>) -> Self {
        self.prompts = prompts
            .into_iter()
            .map(|prompt| (prompt.name.clone(), Arc::new(prompt)))
            .collect();
        self
    }

    #[must_use]
    pub fn with_resources(
        mut self,
        resources: Vec<DeclaredResource>,
        templates: Vec<ResourceTemplate>,
    ) -> Self {
        self.resources = resources
            .into_iter()
            .map(|resource| (resource.uri.clone(), resource))
            .collect();
        self.templates = templates;
        self
    }

    #[must_use]
    pub fn with_skills(mut self, skills: Vec<crate::skill::Skill>) -> Self {
        self.skills = skills.into_iter().map(Arc::new).collect();
        self
    }

    /// The skills, in manifest order.
    pub fn skills(&self) -> &[Arc<crate::skill::Skill>] {
        &self.skills
    }

    /// The skill whose `SKILL.md`, folder or file `uri` names.
    pub fn skill(&self, uri: &str) -> Option<&Arc<crate::skill::Skill>> {
        let name = uri.strip_prefix("skill://")?;
        let name = name.split_once('/').map_or(name, |(name, _)| name);
        self.skills.iter().find(|skill| skill.name == name)
    }

    #[must_use]
    pub fn with_toolsets(mut self, toolsets: Vec<Toolset>, default: Option<Vec<String>>) -> Self {
        self.toolsets = toolsets;
        self.default_toolsets = default;
        self
    }

    /// The toolsets, in manifest order (after [`Self::select`], the chosen ones).
    pub fn toolsets(&self) -> &[Toolset] {
        &self.toolsets
    }

    /// Cuts the tools to the members of the chosen toolsets (with no choice, those of
    /// `[server] toolsets`, else every tool), in manifest order: what is not kept is not
    /// listed, and a call to it is an unknown tool.
    pub fn select(mut self, selection: &Selection) -> Result<Self, ToolsetError> {
        let default = self.default_toolsets.as_deref();
        let Some(kept) = selection.members(&self.toolsets, default)? else {
            return Ok(self);
        };
        let kept: std::collections::HashSet<String> = kept.into_iter().map(str::to_owned).collect();
        let chosen: Vec<String> = selection.names(default).unwrap_or_default().to_vec();
        let cut = self
            .tools
            .values()
            .filter(|tool| !kept.contains(&tool.name))
            .filter_map(|tool| tool.backend.redactor().cloned());
        self.unserved.extend(cut);
        self.tools.retain(|name, _| kept.contains(name));
        self.toolsets.retain(|set| chosen.contains(&set.name));
        self.set_redactors();
        Ok(self)
    }

    /// The registry of one served set alone (an HTTP endpoint's, `/mcp/{set}`): its tools,
    /// in manifest order, sharing their definitions, limits and rate counts with this one
    /// (a call through either counts once), with every prompt, resource and kept output,
    /// and redacting every secret this one does. `None` when this registry has no such set.
    pub fn toolset(&self, name: &str) -> Option<Self> {
        let set = self.toolsets.iter().find(|set| set.name == name)?;
        Some(self.cut(Some(set)))
    }

    /// The same with no tool at all: a set's endpoint when a reload left the set out (its
    /// previous tools may be gone, or have other scopes and rates now).
    #[must_use]
    pub fn without_tools(&self) -> Self {
        self.cut(None)
    }

    fn cut(&self, set: Option<&Toolset>) -> Self {
        let members: std::collections::HashSet<&str> = set
            .iter()
            .flat_map(|set| set.tools.iter().map(String::as_str))
            .collect();
        Self {
            server: self.server.clone(),
            tools: self
                .tools
                .iter()
                .filter(|(name, _)| members.contains(name.as_str()))
                .map(|(name, tool)| (name.clone(), Arc::clone(tool)))
                .collect(),
            prompts: self.prompts.clone(),
            // A page goes with the tools that show it.
            resources: self
                .resources
                .iter()
                .filter(|(uri, resource)| {
                    resource.app.is_none()
                        || self.tools.iter().any(|(name, tool)| {
                            members.contains(name.as_str())
                                && tool
                                    .app
                                    .as_ref()
                                    .and_then(|app| app.page.as_ref())
                                    .is_some_and(|page| page == *uri)
                        })
                })
                .map(|(uri, resource)| (uri.clone(), resource.clone()))
                .collect(),
            templates: self.templates.clone(),
            skills: self.skills.clone(),
            toolsets: set.into_iter().cloned().collect(),
            default_toolsets: None,
            // So that the redactors, if ever made again, still hold every secret.
            unserved: self
                .tools
                .values()
                .filter(|tool| !members.contains(tool.name.as_str()))
                .filter_map(|tool| tool.backend.redactor().cloned())
                .chain(self.unserved.iter().cloned())
                .collect(),
            store: Arc::clone(&self.store),
            withheld_env: self.withheld_env.clone(),
            task_settings: self.task_settings,
            auth: self.auth.clone(),
            launch_secrets: self.launch_secrets.clone(),
            // This registry's: the set's secrets and every other tool's.
            redactor: self.redactor.clone(),
            door: self.door.clone(),
        }
    }

    /// Adds the scopes prompts, resources and templates name to those the OAuth metadata
    /// says this server supports (the tools' are there already).
    #[must_use]
    pub fn with_all_scopes_supported(mut self) -> Self {
        let named: Vec<String> = self
            .prompts
            .values()
            .flat_map(|prompt| &prompt.scopes)
            .chain(
                self.resources
                    .values()
                    .flat_map(|resource| &resource.scopes),
            )
            .chain(self.templates.iter().flat_map(|template| &template.scopes))
            .chain(self.skills.iter().flat_map(|skill| &skill.scopes))
            .cloned()
            .collect();
        if let Some(auth) = self.auth.as_mut() {
            let settings = Arc::make_mut(auth);
            for scope in named {
                if !settings.scopes_supported.contains(&scope) {
                    settings.scopes_supported.push(scope);
                }
            }
        }
        self
    }

    /// The scopes reading `uri` needs: its declared resource's and the first matching
    /// template's, and those of a declared resource its percent-decoded form names (a
    /// template could otherwise serve that resource's file under an encoded URI); none for
    /// a kept output (its link and its caller guard it).
    pub fn resource_scopes(&self, uri: &str) -> Vec<String> {
        let decoded = percent_encoding::percent_decode_str(uri).decode_utf8_lossy();
        let mut scopes: Vec<String> = Vec::new();
        let named = [self.resource(uri), self.resource(&decoded)];
        let template = self
            .templates
            .iter()
            .find(|template| template.matches(uri).is_some());
        for needed in named
            .into_iter()
            .flatten()
            .map(|resource| &resource.scopes)
            .chain(template.map(|template| &template.scopes))
            .chain(self.skill(uri).map(|skill| &skill.scopes))
        {
            for scope in needed {
                if !scopes.contains(scope) {
                    scopes.push(scope.clone());
                }
            }
        }
        scopes
    }

    /// Whether a tool, prompt, resource or template names scopes.
    pub fn scoped(&self) -> bool {
        self.tools().any(|tool| !tool.scopes.is_empty())
            || self.prompts().any(|prompt| !prompt.scopes.is_empty())
            || self.resources().any(|resource| !resource.scopes.is_empty())
            || self
                .templates
                .iter()
                .any(|template| !template.scopes.is_empty())
            || self.skills.iter().any(|skill| !skill.scopes.is_empty())
    }

    /// The declared resources, in manifest order.
    pub fn resources(&self) -> impl Iterator<Item = &DeclaredResource> {
        self.resources.values()
    }

    /// The declared resource at `uri`.
    pub fn resource(&self, uri: &str) -> Option<&DeclaredResource> {
        self.resources.get(uri)
    }

    /// The resource templates, in manifest order.
    pub fn templates(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// The prompts, in manifest order.
    pub fn prompts(&self) -> impl Iterator<Item = &Arc<Prompt>> {
        self.prompts.values()
    }

    /// The prompt called `name`, or why not (with a suggestion).
    pub fn prompt(&self, name: &str) -> Result<&Arc<Prompt>, UnknownTool> {
        self.prompts.get(name).ok_or_else(|| UnknownTool {
            name: name.to_owned(),
            suggestion: suggest(name, self.prompts.keys().map(String::as_str)).map(str::to_owned),
        })
    }

    #[must_use]
    pub fn with_withheld_env(mut self, names: Vec<String>) -> Self {
        self.withheld_env = names;
        self
    }

    /// Serves the outputs `previous` kept (after a reload): same entries, same URIs.
    pub fn adopt_store(&mut self, previous: &Registry) {
        self.store = Arc::clone(&previous.store);
    }

    /// Keeps what a reload must not reset: a tool of the same name whose `max-concurrent`
    /// and `queue`, or `rate` and `burst`, did not change shares the previous tool's slots
    /// (calls begun before the reload still count against it) and its callers' counts.
    pub fn adopt_limits(&mut self, previous: &Registry) {
        for (name, tool) in &mut self.tools {
            let (Some(before), Some(tool)) = (previous.tools.get(name), Arc::get_mut(tool)) else {
                continue;
            };
            if let (Some(now), Some(then)) = (&tool.limit, &before.limit)
                && now.same_bounds(then)
            {
                tool.limit = Some(Arc::clone(then));
            }
            if let (Some(now), Some(then)) = (&tool.rate, &before.rate)
                && now.rate() == then.rate()
            {
                tool.rate = Some(Arc::clone(then));
            }
        }
    }

    pub fn store(&self) -> &ResourceStore {
        &self.store
    }

    /// The variables no command may see: the manifest's secrets.
    pub fn withheld_env(&self) -> &[String] {
        &self.withheld_env
    }

    /// Whether any tool keeps outputs as resources, so the server offers `resources/*`.
    pub fn serves_resources(&self) -> bool {
        !self.resources.is_empty() || self.serves_resources_besides_pages()
    }

    /// Whether it serves resources other than tools' pages (MCP Apps).
    pub fn serves_resources_besides_pages(&self) -> bool {
        self.resources
            .values()
            .any(|resource| resource.app.is_none())
            || !self.templates.is_empty()
            || !self.skills.is_empty()
            || self.tools.values().any(|tool| {
                tool.output_spec.keep_full_output
                    || tool
                        .output_spec
                        .files
                        .is_some_and(|files| files.mode == FilesMode::Link)
            })
    }

    pub fn get(&self, name: &str) -> Result<&Arc<Tool>, UnknownTool> {
        self.find(name, |_| true)
    }

    /// The tool called `name`, or why not, suggesting only a tool `visible` lets through
    /// (a caller's scopes: a hint must not name a tool its token may not see).
    pub fn find(
        &self,
        name: &str,
        visible: impl Fn(&Tool) -> bool,
    ) -> Result<&Arc<Tool>, UnknownTool> {
        self.find_among(name, |_| true, visible)
    }

    /// Like [`Self::find`], among the tools `exists` lets a caller know of (a client that
    /// renders no MCP Apps knows no tool only a page may call).
    pub fn find_among(
        &self,
        name: &str,
        exists: impl Fn(&Tool) -> bool,
        visible: impl Fn(&Tool) -> bool,
    ) -> Result<&Arc<Tool>, UnknownTool> {
        self.tools
            .get(name)
            .filter(|tool| exists(tool))
            .ok_or_else(|| UnknownTool {
                name: name.to_owned(),
                suggestion: suggest(
                    name,
                    self.tools
                        .values()
                        .filter(|tool| exists(tool) && visible(tool))
                        .map(|tool| tool.name.as_str()),
                )
                .map(str::to_owned),
            })
    }

    /// The tool called `name`, if any (no suggestion is worked out).
    pub fn tool(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.get(name)
    }

    pub fn tools(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values()
    }

    /// Where the tool named `name` is in [`Self::tools`], found by hash, not by scanning.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.tools.get_index_of(name)
    }

    /// The sandboxed command tools, each with its sandbox.
    pub fn sandboxes(&self) -> impl Iterator<Item = (&str, &crate::sandbox::Sandbox)> {
        self.tools().filter_map(|tool| match &tool.backend {
            crate::backend::Backend::Command(command) => command
                .sandbox
                .as_deref()
                .map(|sandbox| (tool.name.as_str(), sandbox)),
            _ => None,
        })
    }

    /// Logs, once per load, what this kernel enforces for sandboxed tools and what it does not.
    pub fn log_sandboxes(&self) {
        let mut kernel = None;
        for (tool, sandbox) in self.sandboxes() {
            kernel.get_or_insert(sandbox.kernel);
            for missing in sandbox.enforcement().missing {
                tracing::warn!(tool, "sandbox: not enforced on this kernel: {missing}");
            }
        }
        if let Some(kernel) = kernel {
            tracing::info!("sandbox: {}", kernel.summary());
        }
    }

    /// The `tools/list` entries a client of `revision` sees, in manifest order. Made on demand:
    /// the server keeps its own copy, in rmcp's types.
    /// `apps`: for a client that renders MCP Apps (which sees their `_meta.ui` and the
    /// tools only a page may call).
    pub fn listing(&self, revision: Revision, apps: bool) -> Vec<Map<String, Value>> {
        self.tools()
            .filter_map(|tool| tool.definition_to(revision, apps))
            .collect()
    }
}

impl crate::logging::Redact for Redactor {
    fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        Redactor::redact_bytes(self, bytes)
    }
}
