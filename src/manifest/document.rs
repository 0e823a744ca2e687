//! The document level: TOML syntax, the top-level keys, and turning serde's errors into
//! diagnostics with "did you mean" hints.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use super::Checker;
use super::prompt::build_prompts;
use super::resource::{build_resources, build_templates};
use super::tool::build_tools;
use super::toolset::build_toolsets;
use super::wire::{
    PromptWire, ResourceTemplateWire, ResourceWire, ServerWire, SkillWire, ToolWire, ToolsetWire,
};
use crate::registry::Registry;
use crate::suggest::suggest;

const TOP_LEVEL_KEYS: [&str; 8] = [
    "server",
    "tools",
    "prompts",
    "resources",
    "resource-templates",
    "toolsets",
    "schemas",
    "skills",
];

/// Parses the document and builds the registry; `None` when nothing usable came out.
pub(super) fn load(source: &str, checker: &mut Checker) -> Option<Registry> {
    let (root, syntax_errors) = DeTable::parse_recoverable(source);
    for error in &syntax_errors {
        let span = error.span().unwrap_or(0..0);
        checker.error(
            format!("invalid TOML: {}", error.message().trim_end()),
            span,
        );
    }
    if !syntax_errors.is_empty() {
        return None;
    }
    let root_span = root.span();
    let root = root.into_inner();

    let mut server = ServerWire::default();
    let mut tools = Vec::new();
    let mut tools_seen = false;
    // Whether every `[[tools]]` table was read: a toolset's members are checked only then.
    let mut tools_complete = true;
    let mut prompts: Vec<PromptWire> = Vec::new();
    let mut resources: Vec<ResourceWire> = Vec::new();
    let mut templates: Vec<ResourceTemplateWire> = Vec::new();
    let mut toolsets: Vec<ToolsetWire> = Vec::new();
    let mut skills: Vec<SkillWire> = Vec::new();
    for (key, value) in shared_schemas(root, checker) {
        let key_span = key.span();
        match key.get_ref().as_ref() {
            "server" => {
                if let Some(wire) = deserialize::<ServerWire>(value, "`[server]`", checker) {
                    server = wire;
                }
            }
            "tools" => {
                tools_seen = true;
                let span = value.span();
                match value.into_inner() {
                    DeValue::Array(entries) => {
                        for (index, entry) in entries.into_iter().enumerate() {
                            let context = tool_context(&entry, index);
                            match deserialize::<ToolWire>(entry, &context, checker) {
                                Some(wire) => tools.push(wire),
                                None => tools_complete = false,
                            }
                        }
                    }
                    _ => {
                        checker
                            .error("`tools` must be an array of tables", span)
                            .hint("declare each tool in its own `[[tools]]` table");
                    }
                }
            }
            "prompts" => prompts = entries(value, "prompt", "prompts", checker),
            "resources" => resources = entries(value, "resource", "resources", checker),
            "resource-templates" => {
                templates = entries(value, "resource template", "resource-templates", checker);
            }
            "toolsets" => toolsets = entries(value, "toolset", "toolsets", checker),
            "skills" => skills = entries(value, "skill", "skills", checker),
            other => {
                let suggestion = suggest(other, TOP_LEVEL_KEYS);
                let diagnostic =
                    checker.error(format!("unknown top-level key `{other}`"), key_span);
                diagnostic.suggest(suggestion);
                if suggestion.is_none() {
                    diagnostic.hint(
                        "the manifest has a `[server]` table, `[[tools]]`, `[[toolsets]]`, `[[prompts]]`, `[[resources]]`, `[[resource-templates]]` and `[[skills]]` tables, and a `[schemas]` table",
                    );
                }
            }
        }
    }
    let declares_nothing =
        prompts.is_empty() && resources.is_empty() && templates.is_empty() && skills.is_empty();
    if !tools_seen && declares_nothing {
        no_tools(root_span.start, checker);
    }
    // Prompts and resources may name scopes too, which need `[server.auth]`.
    checker.oauth = server.auth.is_some();
    let prompts = build_prompts(&prompts, checker);
    let mut resources = build_resources(&resources, checker);
    let templates = build_templates(&templates, source, checker);
    let pages = super::app::build_pages(&tools, (&resources, &templates), checker);
    resources.extend(pages);
    let toolsets = build_toolsets(&toolsets, &tools, tools_complete, checker);
    let default_toolsets = server
        .toolsets
        .take()
        .map(|names| default_toolsets(&names, &toolsets, tools_complete, checker));
    checker.unchosen = unchosen(checker, &toolsets, default_toolsets.as_deref(), &tools);
    build_tools(server, tools, checker).map(|registry| {
        // After the tools: each file is redacted of every secret the manifest references.
        let skills = super::skill::build_skills(&skills, registry.redactor(), checker);
        registry
            .with_skills(skills)
            .with_toolsets(toolsets, default_toolsets)
            .with_prompts(prompts)
            .with_resources(resources, templates)
            .with_all_scopes_supported()
    })
}

fn no_tools(at: usize, checker: &mut Checker) {
    checker
        .error("the manifest declares no tools", at..at)
        .hint("add a `[[tools]]` table; `mcp-serve init` writes a starter manifest");
}

/// Reads `[schemas]` first, wherever it is written (every tool's schema may use it), and
/// gives back the other top-level entries.
fn shared_schemas<'i>(
    root: DeTable<'i>,
    checker: &mut Checker,
) -> Vec<(Spanned<toml::de::DeString<'i>>, Spanned<DeValue<'i>>)> {
    let (schemas, rest): (Vec<_>, Vec<_>) = root
        .into_iter()
        .partition(|(key, _)| key.get_ref().as_ref() == "schemas");
    for (_, value) in schemas {
        if let Some(wire) = deserialize::<super::shared::SchemasWire>(value, "`[schemas]`", checker)
        {
            checker.shared = std::sync::Arc::new(super::shared::build(wire, checker));
        }
    }
    rest
}

/// The tools the load's toolsets leave out (none when the choice does not fit: the cut
/// reports that).
fn unchosen(
    checker: &Checker,
    toolsets: &[crate::toolset::Toolset],
    default: Option<&[String]>,
    tools: &[ToolWire],
) -> std::collections::HashSet<String> {
    let Ok(Some(kept)) = checker.toolsets.members(toolsets, default) else {
        return std::collections::HashSet::new();
    };
    tools
        .iter()
        .map(|tool| tool.name.get_ref())
        .filter(|name| !kept.contains(&name.as_str()))
        .cloned()
        .collect()
}

/// `[server] toolsets`: each a set the manifest has.
fn default_toolsets(
    names: &[Spanned<String>],
    toolsets: &[crate::toolset::Toolset],
    complete: bool,
    checker: &mut Checker,
) -> Vec<String> {
    for name in names {
        if complete && !toolsets.iter().any(|set| &set.name == name.get_ref()) {
            let known = toolsets.iter().map(|set| set.name.as_str());
            checker
                .error(
                    format!(
                        "`[server] toolsets` names `{}`, which is no toolset",
                        name.get_ref()
                    ),
                    name.span(),
                )
                .suggest(suggest(name.get_ref(), known));
        }
    }
    names.iter().map(|name| name.get_ref().clone()).collect()
}

/// An array of tables (`[[prompts]]` …), each deserialized on its own.
fn entries<T: for<'de> Deserialize<'de>>(
    value: Spanned<DeValue<'_>>,
    kind: &str,
    key: &str,
    checker: &mut Checker,
) -> Vec<T> {
    let span = value.span();
    if let DeValue::Array(entries) = value.into_inner() {
        entries
            .into_iter()
            .enumerate()
            .filter_map(|(index, entry)| {
                let context = entry_context(&entry, kind, index);
                deserialize::<T>(entry, &context, checker)
            })
            .collect()
    } else {
        checker
            .error(format!("`{key}` must be an array of tables"), span)
            .hint(format!("declare each {kind} in its own `[[{key}]]` table"));
        Vec::new()
    }
}

/// How diagnostics refer to the tool at `index`: by name when it has one.
fn tool_context(entry: &Spanned<DeValue<'_>>, index: usize) -> String {
    entry_context(entry, "tool", index)
}

/// How diagnostics refer to the `kind` (tool, prompt) at `index`: by name when it has one.
fn entry_context(entry: &Spanned<DeValue<'_>>, kind: &str, index: usize) -> String {
    let name = match entry.get_ref() {
        DeValue::Table(table) => table.get("name").and_then(|value| match value.get_ref() {
            DeValue::String(name) => Some(name.to_string()),
            _ => None,
        }),
        _ => None,
    };
    name.map_or_else(
        || format!("{kind} #{}", index + 1),
        |name| format!("{kind} `{name}`"),
    )
}

/// Deserializes one table into its wire shape, recording a diagnostic on failure.
fn deserialize<'de, T: Deserialize<'de>>(
    value: Spanned<DeValue<'de>>,
    context: &str,
    checker: &mut Checker,
) -> Option<T> {
    let span = value.span();
    match T::deserialize(ValueDeserializer::from(value)) {
        Ok(wire) => Some(wire),
        Err(error) => {
            report_serde_error(
                error.message(),
                error.span().unwrap_or(span.clone()),
                &span,
                context,
                checker,
            );
            None
        }
    }
}

/// Rewrites serde's messages in our style, with suggestions for misspelt keys and values.
fn report_serde_error(
    message: &str,
    span: Range<usize>,
    table: &Range<usize>,
    context: &str,
    checker: &mut Checker,
) {
    if let Some((unknown, expected)) = parse_unknown(message, "unknown field `") {
        let suggestion = suggest(&unknown, expected.iter().map(String::as_str));
        let diagnostic = checker.error(format!("unknown key `{unknown}` in {context}"), span);
        diagnostic.suggest(suggestion);
        if suggestion.is_none() && !expected.is_empty() {
            diagnostic.hint(format!("expected one of {}", quoted(&expected)));
        }
    } else if let Some((unknown, expected)) = parse_unknown(message, "unknown variant `") {
        let suggestion = suggest(&unknown, expected.iter().map(String::as_str));
        let diagnostic = checker.error(format!("unknown value `{unknown}` in {context}"), span);
        diagnostic.suggest(suggestion);
        if suggestion.is_none() {
            diagnostic.hint(format!("expected one of {}", quoted(&expected)));
        }
    } else if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let start = table.start;
        checker.error(
            format!("{context} is missing the required key `{field}`"),
            start..start + 1,
        );
    } else if let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.trim_end().split_once(", expected "))
    {
        checker.error(
            format!("expected {expected}, found {found} in {context}"),
            span,
        );
    } else {
        checker.error(format!("{} in {context}", message.trim_end()), span);
    }
}

/// Splits "unknown field `x`, expected one of `a`, `b`" into `x` and `[a, b]`.
fn parse_unknown(message: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix(prefix)?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    Some((unknown.to_owned(), expected))
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::parse_unknown;

    #[test]
    fn splits_serde_unknown_field_messages() {
        assert_eq!(
            parse_unknown(
                "unknown field `argvv`, expected one of `argv`, `script`",
                "unknown field `"
            ),
            Some(("argvv".into(), vec!["argv".into(), "script".into()]))
        );
        assert_eq!(
            parse_unknown(
                "unknown variant `lite`, expected `light` or `dark`",
                "unknown variant `"
            ),
            Some(("lite".into(), vec!["light".into(), "dark".into()]))
        );
    }
}
