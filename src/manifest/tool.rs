//! `[[tools]]`: each tool's name, schemas, backend, limits and examples become a [`Tool`],
//! and the tools with the `[server]` identity a [`Registry`].

use std::collections::HashMap;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use toml::Spanned;

use super::Checker;
use super::ask::build_inputs;
use super::command::build_command;
use super::facts::ArgumentFacts;
use super::http::build_http;
use super::identity::{annotations_json, icons_json, server_identity};
use super::json::{table_to_json, toml_to_json};
use super::output::output_spec;
use super::sandbox::{Declared, attach, build_sandbox};
use super::schemas::{compile, input_schema, output_schema};
use super::static_result::build_static;
use super::wire::{ServerWire, ToolWire};
use crate::backend::Backend;
use crate::limit::Slots;
use crate::registry::Registry;
use crate::results::{OutputMode, OutputSpec};
use crate::schema::inline::advertised;
use crate::schema::{self, CompiledSchema};
use crate::tool::{Example, OutputSchema, Tool};

/// Checks every tool and builds the registry; `None` when any tool had a problem.
pub(super) fn build_tools(
    server: ServerWire,
    wires: Vec<ToolWire>,
    checker: &mut Checker,
) -> Option<Registry> {
    let server_sandbox = server
        .sandbox
        .as_ref()
        .and_then(|wire| build_sandbox(wire, None, checker));
    let (default_task, task_settings) = super::task::server_settings(&server, checker);
    checker.oauth = server.auth.is_some();
    let auth = server
        .auth
        .as_ref()
        .and_then(|wire| super::auth::settings(wire, &wires, checker));
    let default_rate = super::rate::parse(server.rate.as_ref(), server.burst.as_ref(), checker);
    let inline_refs = server.inline_refs.unwrap_or(true);
    let discovery = server.discovery == Some(true);
    let identity = server_identity(server, checker);
    if checker.compile == super::Compile::Written && wires.len() >= super::DEFER_COMPILES_FROM {
        checker.compile = super::Compile::OnUse;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut tools = Vec::new();
    let mut unserved = Vec::new();
    for (index, wire) in wires.into_iter().enumerate() {
        let name = wire.name.get_ref().clone();
        if let Some(first) = seen.get(&name) {
            checker
                .error(format!("duplicate tool name `{name}`"), wire.name.span())
                .hint(format!(
                    "tool #{} already uses this name; tool names must be unique",
                    first + 1
                ));
        } else {
            seen.insert(name, index);
        }
        if discovery && crate::discovery::META.contains(&wire.name.get_ref().as_str()) {
            checker
                .error(
                    format!("`{}` is a name discovery gives its own tool", wire.name.get_ref()),
                    wire.name.span(),
                )
                .hint("with `[server] discovery = true`, `find_tools` and `call_tool` are the server's; rename this tool");
        }
        // A server cut to toolsets pays only for what it serves: a tool it leaves out is
        // not built (`check` still builds every tool).
        let unchosen = checker.unchosen.contains(wire.name.get_ref());
        if unchosen
            && checker.compile != super::Compile::All
            && let Some(redactor) = unbuilt_secrets(&wire, checker)
        {
            unserved.push(redactor);
            continue;
        }
        // A tool the server will not serve may lack its secrets, as under `check`.
        let lenient = unchosen && checker.unset_secrets.is_none();
        if lenient {
            checker.unset_secrets = Some(Vec::new());
        }
        let built = build_tool(
            &wire,
            server_sandbox.as_ref(),
            default_task,
            default_rate,
            inline_refs,
            checker,
        );
        if lenient {
            checker.unset_secrets = None;
        }
        if let Some(tool) = built {
            tools.push(tool);
        }
    }
    checker.diagnostics.is_empty().then(|| {
        let mut withheld = std::mem::take(&mut checker.withheld_env);
        withheld.sort_unstable();
        withheld.dedup();
        Registry::new(identity, tools)
            .with_withheld_env(withheld)
            .with_task_settings(task_settings)
            .with_auth(auth)
            .with_unserved(unserved)
    })
}

/// The secrets of a tool a server cut to toolsets does not build: the variables they are
/// read from are withheld from every command all the same, and their values redacted from
/// every output, as for a tool the cut leaves out after it is built (`Registry::select`).
/// Only `[tools.http]` reads secrets (its URL, query, headers and bodies); one that is not
/// set is no error here (the tool is never called), and `check` reports it. `None` when a
/// text holds a reference that is not one (the tool is then built, and its error reported).
fn unbuilt_secrets(wire: &ToolWire, checker: &mut Checker) -> Option<crate::secret::Redactor> {
    let Some(http) = wire.http.as_ref().map(Spanned::get_ref) else {
        return Some(crate::secret::Redactor::default());
    };
    let mut texts: Vec<&str> = vec![http.url.get_ref()];
    let mut values: Vec<&toml::Value> = Vec::new();
    values.extend(
        http.query
            .iter()
            .flat_map(IndexMap::values)
            .map(Spanned::get_ref),
    );
    values.extend(http.json.as_ref().map(Spanned::get_ref));
    values.extend(
        http.multipart
            .iter()
            .flat_map(IndexMap::values)
            .map(Spanned::get_ref),
    );
    texts.extend(
        http.headers
            .iter()
            .chain(&http.form)
            .flat_map(IndexMap::values)
            .map(|value| value.get_ref().as_str()),
    );
    while let Some(value) = values.pop() {
        match value {
            toml::Value::String(text) => texts.push(text),
            toml::Value::Array(items) => values.extend(items),
            toml::Value::Table(table) => values.extend(table.values()),
            _ => {}
        }
    }
    let mut used = crate::secret::Used::default();
    for text in texts {
        let mut unset = Vec::new();
        let (_, found) = crate::secret::resolve_checked(
            text,
            &checker.base_dir,
            str::to_owned,
            Some(&mut unset),
        )
        .ok()?;
        used.extend(found);
    }
    checker.withheld_env.extend(used.variables);
    Some(crate::secret::Redactor::new(&used.values))
}

fn build_tool(
    wire: &ToolWire,
    server_sandbox: Option<&Declared>,
    default_task: crate::tasks::Policy,
    default_rate: Option<crate::rate::Rate>,
    inline_refs: bool,
    checker: &mut Checker,
) -> Option<Tool> {
    let errors_before = checker.diagnostics.len();
    checker.identity_used = false;
    let name = wire.name.get_ref().clone();
    check_tool_name(&wire.name, checker);

    let input_schema = input_schema(wire, checker);
    super::headers::check_headers(
        &input_schema.0,
        input_schema.2,
        input_schema.1.clone(),
        checker,
    );
    let input = match compile(&input_schema, checker) {
        Ok(compiled) => Some(compiled),
        Err(error) => {
            checker.error(
                format!("the input schema of `{name}` is unusable: {error}"),
                input_schema.1.clone(),
            );
            None
        }
    };
    let output = output_schema(wire, checker).and_then(|at| match compile(&at, checker) {
        Ok(compiled) => Some(OutputSchema {
            wrapped_as_object: schema::needs_object_wrap(&at.0),
            schema: at.0,
            compiled,
        }),
        Err(error) => {
            checker.error(
                format!("the output schema of `{name}` is unusable: {error}"),
                at.1,
            );
            None
        }
    });

    let mut facts = ArgumentFacts::from_schema(&input_schema.0);
    let inputs = build_inputs(wire, &mut facts, checker);
    let (mut backend, output_spec) = backend(wire, &name, &facts, output.as_ref(), checker)?;
    if let Some(output) = &output {
        super::project::check_cap(wire, &output_spec.shape, &output.schema, checker);
    }
    confine(wire, &mut backend, server_sandbox, checker);
    let task = super::task::policy(wire.task.as_ref(), default_task, checker);
    let ask_in_task = super::task::ask_in_task(wire, task, &inputs, checker);

    let (definition, shared) =
        shared_definition(wire, &input_schema.0, output.as_ref(), inline_refs, checker);

    let scopes = super::auth::scopes(wire.scopes.as_ref(), checker);
    let rate = super::rate::limiter(
        wire.rate.as_ref(),
        wire.burst.as_ref(),
        default_rate,
        checker,
    );
    if checker.diagnostics.len() > errors_before {
        return None;
    }
    Some(Tool {
        name,
        definition,
        input_schema: input_schema.0,
        input: input?,
        output,
        output_spec,
        backend,
        limit: tool_limit(wire, checker),
        examples: examples(wire, checker),
        inputs,
        task,
        ask_in_task,
        scopes,
        rate,
        uses_identity: checker.identity_used,
        shared,
        app: super::app::tool_app(wire),
    })
}

/// The tool's definition, and the `[schemas]` its schemas use if they do: such a schema
/// is kept as written, `null` in the definition, and made whole when a client is sent it
/// (`Tool::whole_definition`), so the tool keeps one copy of each root.
fn shared_definition(
    wire: &ToolWire,
    input_schema: &Value,
    output: Option<&OutputSchema>,
    inline_refs: bool,
    checker: &mut Checker,
) -> (Map<String, Value>, Option<crate::tool::SharedSchemas>) {
    let uses_shared = |schema: &Value| {
        !checker.shared.is_empty()
            && checker
                .shared
                .closure(schema)
                .is_ok_and(|used| !used.is_empty())
    };
    let shared = (uses_shared(input_schema)
        || output.is_some_and(|output| uses_shared(&output.schema)))
    .then(|| crate::tool::SharedSchemas {
        schemas: std::sync::Arc::clone(&checker.shared),
        inline_refs,
    });
    let mut definition = definition(
        wire,
        input_schema,
        output,
        inline_refs && shared.is_none(),
        checker,
    );
    if shared.is_some() {
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = definition.get_mut(key) {
                *schema = Value::Null;
            }
        }
    }
    (definition, shared)
}

/// The MCP `Tool` object a client is sent, its schemas as advertised (local `$ref`s inlined
/// unless `[server] inline-refs = false`).
fn definition(
    wire: &ToolWire,
    input_schema: &Value,
    output: Option<&OutputSchema>,
    inline_refs: bool,
    checker: &mut Checker,
) -> Map<String, Value> {
    let mut definition = Map::new();
    definition.insert("name".into(), json!(wire.name.get_ref()));
    if let Some(title) = &wire.title {
        definition.insert("title".into(), json!(title));
    }
    if let Some(description) = &wire.description {
        definition.insert("description".into(), json!(description));
    }
    definition.insert("inputSchema".into(), advertised(input_schema, inline_refs));
    if let Some(output) = output {
        definition.insert(
            "outputSchema".into(),
            advertised(&output.schema, inline_refs),
        );
    }
    if let Some(annotations) = &wire.annotations {
        definition.insert("annotations".into(), annotations_json(annotations));
    }
    if let Some(icons) = &wire.icons {
        definition.insert("icons".into(), icons_json(icons, checker));
    }
    let mut meta = Map::new();
    if let Some(written) = &wire.meta {
        match table_to_json(written.get_ref()) {
            Some(written) => meta = written,
            None => {
                checker.error(
                    "`_meta` holds a value JSON cannot represent",
                    written.span(),
                );
            }
        }
    }
    if let Some(app) = super::app::tool_app(wire) {
        meta.extend(super::app::tool_meta(&app));
    }
    if wire.meta.is_some() || !meta.is_empty() {
        definition.insert("_meta".into(), Value::Object(meta));
    }
    definition
}

/// The tool's sandbox (its own, or the server's) on a command; an error elsewhere.
fn confine(
    wire: &ToolWire,
    backend: &mut Backend,
    server_sandbox: Option<&Declared>,
    checker: &mut Checker,
) {
    let declared = match &wire.sandbox {
        Some(own) => build_sandbox(own, server_sandbox, checker),
        None => server_sandbox.cloned(),
    };
    match backend {
        Backend::Command(command) => {
            if let Some(declared) = declared {
                attach(declared, command, checker);
            }
        }
        _ => {
            if let Some(own) = &wire.sandbox {
                checker
                    .error(
                        "a sandbox confines commands; this tool has no `[tools.command]`",
                        own.span(),
                    )
                    .hint("HTTP and static tools run no program of their own");
            }
        }
    }
}

/// `[[tools.examples]]`, with their schemas compiled.
fn examples(wire: &ToolWire, checker: &mut Checker) -> Vec<Example> {
    wire.examples
        .iter()
        .enumerate()
        .map(|(index, example)| {
            let example = example.get_ref();
            let schema = example.schema.as_ref().and_then(|schema| {
                let json = toml_to_json(schema.get_ref())?;
                CompiledSchema::compile(&json)
                    .map_err(|error| {
                        checker.error(
                            format!("the example's `schema` is unusable: {error}"),
                            schema.span(),
                        )
                    })
                    .ok()
            });
            Example {
                name: example
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("example {}", index + 1)),
                arguments: table_to_json(&example.arguments).unwrap_or_default(),
                is_error: example.is_error,
                text: example.text.clone(),
                text_contains: example.text_contains.clone(),
                structured: example.structured.as_ref().and_then(toml_to_json),
                schema,
                upstream: example
                    .upstream
                    .as_ref()
                    .and_then(|upstream| super::upstream::build(upstream, wire, checker)),
            }
        })
        .collect()
}

/// `max-concurrent` and `queue`.
fn tool_limit(wire: &ToolWire, checker: &mut Checker) -> Option<std::sync::Arc<Slots>> {
    let queue = match &wire.queue {
        Some(queue) if queue.get_ref() < &0 => {
            checker.error("`queue` cannot be negative", queue.span());
            0
        }
        Some(queue) => usize::try_from(*queue.get_ref()).unwrap_or(usize::MAX),
        None => 0,
    };
    match &wire.max_concurrent {
        None => {
            if let Some(queue) = &wire.queue {
                checker.error("`queue` goes with `max-concurrent`", queue.span());
            }
            None
        }
        Some(max) if *max.get_ref() < 1 => {
            checker.error("`max-concurrent` is at least 1", max.span());
            None
        }
        Some(max) => Some(std::sync::Arc::new(Slots::new(
            usize::try_from(*max.get_ref()).unwrap_or(usize::MAX),
            queue,
        ))),
    }
}

/// The tool's one backend and how its output becomes a result.
fn backend(
    wire: &ToolWire,
    name: &str,
    facts: &ArgumentFacts,
    output: Option<&OutputSchema>,
    checker: &mut Checker,
) -> Option<(Backend, OutputSpec)> {
    let backends = [
        wire.command.is_some(),
        wire.static_result.is_some(),
        wire.http.is_some(),
    ];
    if backends.iter().filter(|present| **present).count() > 1 {
        checker
            .error(
                format!("tool `{name}` has more than one backend"),
                wire.name.span(),
            )
            .hint("a tool has one of `[tools.command]`, `[tools.http]` and `[tools.static]`");
        return None;
    }
    if let Some(http) = &wire.http {
        let shape = super::project::shape(wire, Ok(()), checker);
        let backend = build_http(http, name, facts, checker)?;
        let spec = OutputSpec {
            tool: name.to_owned(),
            mode: OutputMode::Content,
            files: None,
            keep_full_output: false,
            shape,
        };
        return Some((Backend::Http(Box::new(backend)), spec));
    }
    match (&wire.command, &wire.static_result) {
        (Some(command), None) => {
            let mut spec = output_spec(name, command.get_ref(), output.is_some(), checker);
            let applies = if spec.mode == OutputMode::Json {
                Ok(())
            } else {
                Err("this command's output is not `output = \"json\"`")
            };
            spec.shape = super::project::shape(wire, applies, checker);
            let backend = build_command(command, name, facts, checker)?;
            Some((Backend::Command(backend), spec))
        }
        (None, Some(result)) => {
            let result = build_static(
                result,
                facts,
                output.map(|output| &output.compiled),
                checker,
            )?;
            let shape =
                super::project::shape(wire, Err("a static tool's result is declared"), checker);
            let spec = OutputSpec {
                tool: name.to_owned(),
                mode: OutputMode::Content,
                files: None,
                keep_full_output: false,
                shape,
            };
            Some((Backend::Static(result), spec))
        }
        (Some(_), Some(result)) => {
            checker
                .error(
                    format!("tool `{name}` has both `[tools.command]` and `[tools.static]`"),
                    result.span(),
                )
                .hint("a tool has one backend");
            None
        }
        (None, None) => {
            checker
                .error(format!("tool `{name}` has no backend"), wire.name.span())
                .hint("add a `[tools.command]` table with `argv` (or `[tools.http]` with a `url`, or `[tools.static]` with a declared result)");
            None
        }
    }
}

/// SEP-986: 1 to 128 characters from `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &Spanned<String>, checker: &mut Checker) {
    let text = name.get_ref();
    if text.is_empty() || text.chars().count() > 128 {
        checker.error("a tool name has 1 to 128 characters", name.span());
    } else if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        checker
            .error(format!("tool name `{text}` contains `{bad}`"), name.span())
            .hint("tool names use letters, digits, `_`, `-` and `.`, e.g. `product-details`");
    }
}
