//! A tool as the server knows it: its advertised definition, its compiled schemas, its
//! backend and the policies its calls go through (`crate::call` applies them).

use serde_json::{Map, Value};

use crate::backend::Backend;
use crate::limit::Slots;
use crate::results::OutputSpec;
use crate::revision::Revision;
use crate::schema::{self, CompiledSchema};

/// A tool, checked and compiled at load time.
#[derive(Debug)]
pub struct Tool {
    pub name: String,
    /// The MCP `Tool` object in its natural (2026-07-28) form, its schemas as advertised
    /// ([`schema::inline::advertised`]: local `$ref`s inlined). When they use `[schemas]`,
    /// `null` stands for each: read [`Tool::whole_definition`] for them.
    pub definition: Map<String, Value>,
    /// The input schema as written: what arguments are validated against.
    pub input_schema: std::sync::Arc<Value>,
    pub input: CompiledSchema,
    pub output: Option<OutputSchema>,
    /// How the backend's output becomes a result.
    pub output_spec: OutputSpec,
    pub backend: Backend,
    /// This tool's own bound on calls in flight, when it declares one.
    pub limit: Option<std::sync::Arc<Slots>>,
    /// What `mcp-serve test` runs.
    pub examples: Vec<Example>,
    /// What the client is asked before the backend runs (`confirm`, `[tools.ask]`,
    /// `[tools.sample]`, `roots`).
    pub inputs: crate::inputs::Inputs,
    /// Whether its calls may run as tasks (`task`).
    pub task: crate::tasks::Policy,
    /// In a task, ask the questions inside it (`tasks/get` shows them) rather than before it
    /// is created (`ask-in-task`).
    pub ask_in_task: bool,
    /// OAuth scopes a caller needs to list and call it (`scopes`).
    pub scopes: Vec<String>,
    /// Calls per caller (`rate`, `burst`, or the server's).
    pub rate: Option<std::sync::Arc<crate::rate::RateLimiter>>,
    /// Its templates use `{auth.…}`: it runs only for a caller a token names.
    pub uses_identity: bool,
    /// The manifest's `[schemas]`, when its schemas use them: `definition` then holds them
    /// as written, made whole (and inlined) only when a client is sent them.
    pub shared: Option<SharedSchemas>,
    /// Its page and who may call it (`[tools.app]`, the MCP Apps extension).
    pub app: Option<crate::app::ToolApp>,
}

/// The `[schemas]` a tool's schemas use, and how they are advertised.
#[derive(Debug, Clone)]
pub struct SharedSchemas {
    pub schemas: std::sync::Arc<schema::shared::Shared>,
    /// `[server] inline-refs`.
    pub inline_refs: bool,
}

/// Arguments that do not fit a tool's input schema: a tool error the model can correct.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments for tool `{tool}`:\n{}", violations.join("\n"))]
pub struct InvalidArguments {
    pub tool: String,
    /// One line per violation, each naming where it is.
    pub violations: Vec<String>,
}

/// A declared call and what it must return.
#[derive(Debug)]
pub struct Example {
    pub name: String,
    pub arguments: Map<String, Value>,
    pub is_error: Option<bool>,
    pub text: Option<String>,
    pub text_contains: Option<String>,
    pub structured: Option<Value>,
    pub schema: Option<CompiledSchema>,
    /// An HTTP tool's upstream, stood in for by `mcp-serve test`.
    pub upstream: Option<ExampleUpstream>,
}

/// What a stand-in upstream answers, and the request it expects.
#[derive(Debug, Clone)]
pub struct ExampleUpstream {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub method: Option<String>,
    pub path: Option<String>,
}

/// A declared output schema.
#[derive(Debug)]
pub struct OutputSchema {
    /// As written: what structured results are checked against.
    pub schema: std::sync::Arc<Value>,
    pub compiled: CompiledSchema,
    /// 2025-06 and 2025-11 clients see this schema wrapped as `{"result": …}`.
    pub wrapped_as_object: bool,
}

impl Tool {
    /// Whether a client sees it: one that renders no MCP Apps never sees a tool only a
    /// page may call (it is unknown to it, as a tool outside its toolsets is).
    pub fn shown_to(&self, apps: bool) -> bool {
        apps || !self.app.as_ref().is_some_and(crate::app::ToolApp::app_only)
    }

    /// `schema` (its input or output schema as written) with the `[schemas]` entries it uses.
    pub fn whole_schema<'a>(&self, schema: &'a Value) -> std::borrow::Cow<'a, Value> {
        match self
            .shared
            .as_ref()
            .and_then(|shared| shared.schemas.attach(schema).ok().flatten())
        {
            Some(whole) => std::borrow::Cow::Owned(whole),
            None => std::borrow::Cow::Borrowed(schema),
        }
    }

    /// The definition in its natural form with whole schemas: those that use `[schemas]`
    /// get the entries they use (and are inlined as the manifest says).
    pub fn whole_definition(&self) -> std::borrow::Cow<'_, Map<String, Value>> {
        self.made_whole(true)
    }

    /// [`Tool::whole_definition`], with its output schema or without it (an older
    /// revision's, which is not made whole only to be dropped).
    fn made_whole(&self, output: bool) -> std::borrow::Cow<'_, Map<String, Value>> {
        let Some(shared) = &self.shared else {
            return std::borrow::Cow::Borrowed(&self.definition);
        };
        let mut definition = self.definition.clone();
        if !output {
            definition.shift_remove("outputSchema");
        }
        let roots = [
            ("inputSchema", Some(&*self.input_schema)),
            (
                "outputSchema",
                self.output.as_ref().map(|output| &*output.schema),
            ),
        ];
        for (key, root) in roots {
            if let Some(root) = root
                && definition.contains_key(key)
            {
                let advertised =
                    schema::inline::advertised(&self.whole_schema(root), shared.inline_refs);
                definition.insert(key.into(), advertised);
            }
        }
        std::borrow::Cow::Owned(definition)
    }

    /// Whether a client would be sent the same definition as `other`'s, without making
    /// either whole: the definitions, and for schemas that use `[schemas]` the roots and
    /// the entries they use (a reload compares every tool this way).
    pub fn same_definition(&self, other: &Self) -> bool {
        if self.definition != other.definition {
            return false;
        }
        match (&self.shared, &other.shared) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => {
                mine.inline_refs == theirs.inline_refs
                    && self.input_schema == other.input_schema
                    && self.output.as_ref().map(|output| &output.schema)
                        == other.output.as_ref().map(|output| &output.schema)
                    && self.entries_used() == other.entries_used()
            }
            _ => false,
        }
    }

    /// The `[schemas]` entries its schemas use, by name.
    fn entries_used(&self) -> Vec<(&str, Option<&Value>)> {
        let Some(shared) = &self.shared else {
            return Vec::new();
        };
        let roots = std::iter::once(&*self.input_schema)
            .chain(self.output.as_ref().map(|output| &*output.schema));
        let mut used: Vec<(&str, Option<&Value>)> = roots
            .flat_map(|root| shared.schemas.closure(root).unwrap_or_default())
            .map(|name| (name, shared.schemas.get(name)))
            .collect();
        used.sort_by_key(|(name, _)| *name);
        used.dedup_by_key(|(name, _)| *name);
        used
    }

    /// The tool's `tools/list` entry for a client of `revision` that renders MCP Apps or
    /// not (`apps`); `None` when that client does not see the tool.
    pub fn definition_to(&self, revision: Revision, apps: bool) -> Option<Map<String, Value>> {
        if !self.shown_to(apps) {
            return None;
        }
        let mut definition = self.definition_for(revision);
        if !apps
            && self.app.is_some()
            && let Some(Value::Object(meta)) = definition.get_mut("_meta")
            && crate::app::strip(meta)
        {
            definition.shift_remove("_meta");
        }
        Some(definition)
    }

    /// The definition as a client of `revision` must see it.
    pub fn definition_for(&self, revision: Revision) -> Map<String, Value> {
        let older = matches!(revision, Revision::V2024_11 | Revision::V2025_03);
        let mut definition = self.made_whole(!older).into_owned();
        match (revision, &self.output) {
            (Revision::V2024_11 | Revision::V2025_03, _) => {
                definition.shift_remove("outputSchema");
            }
            (Revision::V2025_06, Some(output)) if output.wrapped_as_object => {
                let advertised = definition.get("outputSchema").unwrap_or(&output.schema);
                let wrapped = schema::wrap_as_object(advertised);
                definition.insert("outputSchema".into(), wrapped);
            }
            _ => {}
        }
        definition
    }

    /// Fills defaults and validates: the arguments the backend would get, or why they do
    /// not fit the schema (the message a model reads).
    pub fn prepare(
        &self,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Map<String, Value>, InvalidArguments> {
        let mut arguments = arguments.unwrap_or_default();
        self.drop_null_optionals(&mut arguments);
        let mut arguments = Value::Object(arguments);
        schema::fill_defaults(&self.input_schema, &mut arguments);
        let mut violations = self.input.violations(&arguments, "arguments");
        // An output schema compiled on first use that does not compile refuses the call
        // before anything runs (its result could never be checked).
        if let Some(Err(error)) = self.output.as_ref().map(|output| output.compiled.ready()) {
            violations.push(format!("output schema: {error}"));
        }
        if !violations.is_empty() {
            return Err(InvalidArguments {
                tool: self.name.clone(),
                violations,
            });
        }
        match arguments {
            Value::Object(arguments) => Ok(arguments),
            // Unreachable: defaults never change the root's type, and the root was an object.
            _ => Err(InvalidArguments {
                tool: self.name.clone(),
                violations: vec!["arguments must be an object".into()],
            }),
        }
    }

    /// `null` for an optional argument whose schema does not take `null` is the argument
    /// left out (its default then fills it): what converters that send every key (`OpenAI`'s
    /// strict mode, llama-index) mean by it. A required argument's `null` stays, and is
    /// refused by the schema.
    fn drop_null_optionals(&self, arguments: &mut Map<String, Value>) {
        if !arguments.values().any(Value::is_null) {
            return;
        }
        let required = |name: &str| {
            self.input_schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|names| names.iter().any(|required| required == name))
        };
        let properties = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object);
        arguments.retain(|name, value| {
            !value.is_null()
                || required(name)
                || properties
                    .and_then(|properties| properties.get(name))
                    .is_none_or(schema::admits_null)
        });
    }

    /// Whether 2025-06 and 2025-11 clients get this tool's structured output wrapped.
    pub fn wrapped_as_object(&self) -> bool {
        self.output
            .as_ref()
            .is_some_and(|output| output.wrapped_as_object)
    }
}
