//! `mcp-serve check`: what the server would reject (the same diagnostics), then lints for
//! people and for the hosts they target.

mod sandbox;
mod targets;

use serde::Serialize;
use serde_json::Value;

use crate::backend::Backend;
use crate::backend::command::Program;
use std::process::ExitCode;

use crate::cli::{CheckArgs, Format};
use crate::manifest::{ManifestError, UnsetSecret};
use crate::registry::Registry;
use crate::template::{ArgvElement, Repeated};
use crate::tool::Tool;

/// Hosts with known limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Gemini,
    Openai,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable name for the rule.
    pub rule: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub message: String,
}

impl Finding {
    fn warning(rule: &'static str, tool: &str, message: String) -> Self {
        Self {
            severity: Severity::Warning,
            rule,
            tool: Some(tool.to_owned()),
            message,
        }
    }

    fn error(rule: &'static str, tool: Option<&str>, message: String) -> Self {
        Self {
            severity: Severity::Error,
            rule,
            tool: tool.map(str::to_owned),
            message,
        }
    }
}

/// Lints a loaded registry for people and for `targets`.
pub fn lint(registry: &Registry, targets: &[Target]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for tool in registry.tools() {
        lint_tool(tool, &mut findings);
        for target in targets {
            targets::lint(tool, *target, &mut findings);
        }
    }
    sandbox::lint(registry, &mut findings);
    lint_size(registry, &mut findings);
    // In discovery mode a host lists discovery's own tools.
    let count = if registry.server.discovery {
        crate::discovery::META.len()
    } else {
        registry.tools().count()
    };
    for target in targets {
        let limit = match target {
            Target::Cursor => Some(40),
            Target::Vscode => Some(128),
            _ => None,
        };
        if let Some(limit) = limit.filter(|limit| count > *limit) {
            findings.push(Finding::error(
                "too-many-tools",
                None,
                format!(
                    "{} shows at most {limit} tools; this manifest has {count}",
                    target_name(*target)
                ),
            ));
        }
    }
    findings
}

/// A `tools/list` over the budget (`size::over_budget`); in discovery mode a client lists
/// two tools, whatever the manifest holds, and no tool may have their names.
fn lint_size(registry: &Registry, findings: &mut Vec<Finding>) {
    if registry.server.discovery {
        // `--discovery` on a manifest that does not ask for it: its names are checked here.
        if let Some(name) = crate::discovery::taken(registry) {
            findings.push(Finding::error(
                "discovery-name",
                Some(name),
                "has a name discovery gives its own tool; rename it to serve with --discovery"
                    .into(),
            ));
        }
        return;
    }
    if let Some(message) = super::size::over_budget(registry) {
        findings.push(Finding {
            severity: Severity::Warning,
            rule: "list-size",
            tool: None,
            message,
        });
    }
}

fn lint_tool(tool: &Tool, findings: &mut Vec<Finding>) {
    let name = tool.name.as_str();
    let definition = &tool.definition;
    if definition.get("description").is_none() {
        findings.push(Finding::warning(
            "missing-description",
            name,
            "has no `description`; the model picks tools by it".into(),
        ));
    }
    if definition.get("title").is_none() {
        findings.push(Finding::warning(
            "missing-title",
            name,
            "has no `title`; hosts show the bare name".into(),
        ));
    }
    let Backend::Command(command) = &tool.backend else {
        return;
    };
    if definition.get("annotations").is_none() {
        findings.push(Finding::warning(
            "missing-annotations",
            name,
            "runs a command but declares no `annotations`; hosts assume it may destroy data".into(),
        ));
    }
    match &command.program {
        Program::Script { .. } => findings.push(Finding::warning(
            "shell",
            name,
            "runs a shell (`script`); arguments reach it only as $1…, but check the script quotes them".into(),
        )),
        Program::Argv(elements) => {
            // Types reached through a `$ref` count: read them in the inlined schema.
            let whole = tool.whole_schema(&tool.input_schema);
            let inlined = crate::schema::inline::inline_refs(&whole).into_schema();
            let schema = inlined.as_ref().unwrap_or(&whole);
            for argument in unpinned_placeholders(elements, schema) {
                findings.push(Finding::warning(
                    "unpinned-argument",
                    name,
                    format!("`{{{argument}}}` is not pinned to one type in the input schema: an array or object value is passed as one argv element of JSON text, never as several elements (declare `\"type\": \"array\"` to repeat an element per item)"),
                ));
            }
            if let Some(argument) = option_like_placeholder(elements, schema) {
                findings.push(Finding::warning(
                    "option-injection",
                    name,
                    format!("`{{{argument}}}` fills an argv element of its own with no `--` before it; a value starting with `-` would read as an option"),
                ));
            }
        }
    }
}

/// Arguments used in argv whose schema does not pin one JSON type (no `type`, a list of
/// types, `anyOf`, `$ref` …): their arrays and objects reach the program as JSON text.
fn unpinned_placeholders(elements: &[ArgvElement], schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for element in elements {
        if matches!(element, ArgvElement::Flag { .. }) {
            continue;
        }
        for name in element.placeholders() {
            let pinned = schema
                .pointer(&format!(
                    "/properties/{}/type",
                    name.replace('~', "~0").replace('/', "~1")
                ))
                .is_some_and(Value::is_string);
            if !pinned && !names.iter().any(|known| known == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// A string argument that fills a whole element, not after `--`, not an option's value.
fn option_like_placeholder(elements: &[ArgvElement], schema: &Value) -> Option<String> {
    let mut previous: Option<String> = None;
    for element in elements {
        let ArgvElement::Single(Repeated { templates, .. }) = element else {
            previous = None;
            continue;
        };
        let [template] = templates.as_slice() else {
            previous = None;
            continue;
        };
        if template.as_literal().as_deref() == Some("--") {
            return None;
        }
        if let Some(name) = template.sole_placeholder() {
            let is_string = schema
                .pointer(&format!("/properties/{name}/type"))
                .and_then(Value::as_str)
                .is_none_or(|kind| kind == "string");
            let after_option = previous
                .as_deref()
                .is_some_and(|text| text.starts_with('-'));
            if is_string && !after_option {
                return Some(name.to_owned());
            }
        }
        previous = template.as_literal();
    }
    None
}

pub(super) fn target_name(target: Target) -> &'static str {
    match target {
        Target::ClaudeDesktop => "Claude Desktop",
        Target::ClaudeCode => "Claude Code",
        Target::Cursor => "Cursor",
        Target::Vscode => "VS Code",
        Target::Gemini => "Gemini",
        Target::Openai => "OpenAI",
    }
}

/// Runs `mcp-serve check`: exit 2 for a manifest the server would refuse, 1 for errors
/// found by the lints, 0 otherwise.
pub fn command(
    loaded: Result<(Registry, Vec<UnsetSecret>), ManifestError>,
    args: &CheckArgs,
) -> ExitCode {
    let (registry, unset) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            if args.format == Format::Json {
                let report =
                    serde_json::json!({"valid": false, "error": error.to_string(), "findings": []});
                super::print(&format!(
                    "{}
",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                ));
            } else {
                crate::failure::Failure::from(error).print();
            }
            return ExitCode::from(2);
        }
    };
    let mut findings = unset_secrets(&unset, args.strict);
    findings.extend(lint(&registry, &args.target));
    let failed = findings
        .iter()
        .any(|finding| finding.severity == Severity::Error);
    if args.format == Format::Json {
        let mut report = serde_json::json!({"valid": true, "findings": findings, "sizes": super::size::report(&registry)});
        if let Some(sandbox) = sandbox::report(&registry) {
            report["sandbox"] = sandbox;
        }
        super::print(&format!(
            "{}
",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ));
    } else {
        if let Some(sandbox) = sandbox::report(&registry) {
            eprint!("{}", sandbox::render(&sandbox));
        }
        eprint!("{}", render(&findings));
    }
    if failed {
        ExitCode::from(super::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

/// A secret the manifest references that is not there: serving refuses to start without
/// it, checking only says so (an error with `--strict`).
fn unset_secrets(unset: &[UnsetSecret], strict: bool) -> Vec<Finding> {
    unset
        .iter()
        .map(|secret| {
            let lines: Vec<String> = secret.lines.iter().map(ToString::to_string).collect();
            let place = if lines.len() == 1 { "line" } else { "lines" };
            Finding {
                severity: if strict {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                rule: "unset-secret",
                tool: None,
                message: format!(
                    "{} (used on {place} {}): set it before serving, which refuses to start without it",
                    secret.reason,
                    abbreviated(&lines)
                ),
            }
        })
        .collect()
}

/// At most five items, then how many more.
fn abbreviated(items: &[String]) -> String {
    if items.len() <= 5 {
        items.join(", ")
    } else {
        format!("{} and {} more", items[..5].join(", "), items.len() - 5)
    }
}

/// The findings for a terminal.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let label = super::label(match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        });
        match &finding.tool {
            Some(tool) => out.push_str(&format!(
                "{label} tool `{tool}` {} [{}]\n",
                finding.message, finding.rule
            )),
            None => out.push_str(&format!("{label} {} [{}]\n", finding.message, finding.rule)),
        }
    }
    let errors = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    out.push_str(&format!(
        "{errors} error{}, {warnings} warning{}\n",
        plural(errors),
        plural(warnings)
    ));
    out
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
