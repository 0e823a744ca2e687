//! `[tools.command]`: the command line and its templates, checked against the tool's
//! arguments, plus the process settings (cwd, environment, stdin, limits).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use toml::Spanned;

use super::Checker;
use super::wire::CommandWire;
use crate::backend::command::{CommandBackend, InheritEnv, Program, StdinMode};
use crate::events::LogLevel;
use crate::suggest::suggest;
use crate::template::{ArgvElement, Repeated, Template};
use crate::units::{parse_duration, parse_size};

pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(super) const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

/// What the templates may refer to: the input schema's top-level properties.
#[derive(Debug, Default)]
pub(super) struct ArgumentFacts {
    names: Vec<String>,
    always_present: HashSet<String>,
    types: HashMap<String, String>,
}

impl ArgumentFacts {
    pub(super) fn from_schema(schema: &Value) -> Self {
        let mut facts = Self::default();
        let required: HashSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                facts.names.push(name.clone());
                if required.contains(name.as_str()) || property.get("default").is_some() {
                    facts.always_present.insert(name.clone());
                }
                if let Some(kind) = property.get("type").and_then(Value::as_str) {
                    facts.types.insert(name.clone(), kind.to_owned());
                }
            }
        }
        facts
    }

    pub(super) fn is_always_present(&self, name: &str) -> bool {
        self.always_present.contains(name)
    }

    fn is_list(&self, name: &str) -> bool {
        self.types.get(name).is_some_and(|kind| kind == "array")
    }
}

/// Builds the backend; `None` after recording diagnostics.
pub(super) fn build_command(
    wire: &Spanned<CommandWire>,
    tool_name: &str,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<CommandBackend> {
    let span = wire.span();
    let wire = wire.get_ref();
    let errors_before = checker.diagnostics.len();

    let program = program(wire, span, tool_name, facts, checker);
    let cwd = working_directory(wire, checker);
    let env = environment(wire, facts, checker);
    let inherit_env = inherit_env(wire, checker);
    let stdin = stdin_mode(wire, checker);
    let (timeout, max_output, success_codes) = limits(wire, checker);
    let stderr_log =
        wire.stderr_log.as_ref().and_then(|level| {
            let parsed = LogLevel::parse(level.get_ref());
            if parsed.is_none() {
                checker
                .error(format!("`{}` is not a log level", level.get_ref()), level.span())
                .suggest(suggest(level.get_ref(), LogLevel::ALL.map(LogLevel::as_str)))
                .hint("levels are debug, info, notice, warning, error, critical, alert, emergency");
            }
            parsed
        });
    if checker.diagnostics.len() > errors_before {
        return None;
    }
    Some(CommandBackend {
        program: program?,
        cwd,
        env,
        inherit_env,
        stdin,
        timeout,
        max_output,
        success_codes,
        events: wire.events.unwrap_or(false),
        stderr_log,
    })
}

fn program(
    wire: &CommandWire,
    span: Range<usize>,
    tool_name: &str,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Program> {
    let program = match (&wire.argv, &wire.script) {
        (Some(argv), None) => {
            if let Some(args) = &wire.args {
                checker.error(
                    "`args` goes with `script`; with `argv`, put the arguments in `argv`",
                    args.span(),
                );
            }
            let elements = parse_elements(argv.get_ref(), facts, checker);
            check_program(argv, &elements, checker);
            Some(Program::Argv(elements))
        }
        (None, Some(script)) => {
            let args = wire
                .args
                .as_ref()
                .map(|args| parse_elements(args.get_ref(), facts, checker))
                .unwrap_or_default();
            Some(Program::Script {
                shell: wire
                    .shell
                    .as_ref()
                    .map_or_else(|| "sh".to_owned(), |shell| shell.get_ref().clone()),
                script: script.get_ref().clone(),
                args,
                tool_name: tool_name.to_owned(),
            })
        }
        (Some(_), Some(script)) => {
            checker
                .error(
                    "a command has either `argv` or `script`, not both",
                    script.span(),
                )
                .hint("`argv` runs a program directly; `script` opts in to a shell");
            None
        }
        (None, None) => {
            checker
                .error(
                    "`[tools.command]` needs `argv` (or `script`, to opt in to a shell)",
                    span.start..span.start + 1,
                )
                .hint("for example: argv = [\"grep\", \"-i\", \"--\", \"{query}\", \"data.txt\"]");
            None
        }
    };
    if let (Some(shell), None) = (&wire.shell, &wire.script) {
        checker.error("`shell` only applies to `script`", shell.span());
    }

    program
}

fn working_directory(wire: &CommandWire, checker: &mut Checker) -> PathBuf {
    match &wire.cwd {
        Some(cwd) => {
            let resolved = checker.resolve(cwd.get_ref());
            if !resolved.is_dir() {
                checker.error(
                    format!(
                        "the working directory `{}` does not exist",
                        resolved.display()
                    ),
                    cwd.span(),
                );
            }
            resolved
        }
        None => checker.base_dir.clone(),
    }
}

fn environment(
    wire: &CommandWire,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Vec<(String, Template)> {
    let mut env = Vec::new();
    for (name, value) in wire.env.iter().flatten() {
        let valid = name
            .get_ref()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name
                .get_ref()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            checker.error(
                format!(
                    "`{}` is not a valid environment variable name",
                    name.get_ref()
                ),
                name.span(),
            );
            continue;
        }
        if let Some(template) = parse_template(value, facts, checker) {
            env.push((name.get_ref().clone(), template));
        }
    }

    env
}

fn inherit_env(wire: &CommandWire, checker: &mut Checker) -> InheritEnv {
    match wire
        .inherit_env
        .as_ref()
        .map(|value| (value.get_ref(), value.span()))
    {
        None | Some((toml::Value::Boolean(true), _)) => InheritEnv::All,
        Some((toml::Value::Boolean(false), _)) => InheritEnv::Nothing,
        Some((toml::Value::Array(names), span)) => {
            let names: Option<Vec<String>> = names
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect();
            names.map_or_else(
                || {
                    checker.error("`inherit-env` lists variable names as strings", span);
                    InheritEnv::All
                },
                InheritEnv::Only,
            )
        }
        Some((_, span)) => {
            checker.error(
                "`inherit-env` is `true`, `false` or a list of variable names",
                span,
            );
            InheritEnv::All
        }
    }
}

fn stdin_mode(wire: &CommandWire, checker: &mut Checker) -> StdinMode {
    match wire.stdin.as_ref() {
        None => StdinMode::Null,
        Some(mode) => match mode.get_ref().as_str() {
            "none" => StdinMode::Null,
            "json" => StdinMode::Json,
            other => {
                checker
                    .error(format!("unknown stdin mode `{other}`"), mode.span())
                    .suggest(suggest(other, ["none", "json"]))
                    .hint("`none` (the default) or `json` (all arguments as one JSON document)");
                StdinMode::Null
            }
        },
    }
}

/// The timeout, the output limit and the success codes.
fn limits(wire: &CommandWire, checker: &mut Checker) -> (Duration, usize, Vec<i32>) {
    let timeout = wire.timeout.as_ref().map_or(DEFAULT_TIMEOUT, |value| {
        parse_duration(value.get_ref()).unwrap_or_else(|problem| {
            checker.error(format!("invalid `timeout`: {problem}"), value.span());
            DEFAULT_TIMEOUT
        })
    });
    let max_output = wire
        .max_output
        .as_ref()
        .map_or(DEFAULT_MAX_OUTPUT, |value| {
            parse_size(value.get_ref()).unwrap_or_else(|problem| {
                checker.error(format!("invalid `max-output`: {problem}"), value.span());
                DEFAULT_MAX_OUTPUT
            })
        });
    let success_codes = match &wire.success_codes {
        None => vec![0],
        Some(codes) => {
            let parsed: Option<Vec<i32>> = codes
                .get_ref()
                .iter()
                .map(|code| {
                    i32::try_from(*code)
                        .ok()
                        .filter(|code| (0..=255).contains(code))
                })
                .collect();
            match parsed {
                Some(codes) if !codes.is_empty() => codes,
                _ => {
                    checker.error(
                        "`success-codes` lists exit codes from 0 to 255",
                        codes.span(),
                    );
                    vec![0]
                }
            }
        }
    };

    (timeout, max_output, success_codes)
}

/// The program must be fixed by the manifest, and a relative path must exist.
fn check_program(
    argv: &Spanned<Vec<Spanned<toml::Value>>>,
    elements: &[ArgvElement],
    checker: &mut Checker,
) {
    let Some(first) = argv.get_ref().first() else {
        checker.error(
            "`argv` is empty; its first element names the program",
            argv.span(),
        );
        return;
    };
    match elements.first() {
        Some(ArgvElement::Single(Repeated { templates, .. }))
            if templates
                .iter()
                .all(|template| template.placeholders().next().is_none()) =>
        {
            if let toml::Value::String(program) = first.get_ref()
                && program.contains('/')
                && !Path::new(program).is_absolute()
            {
                let resolved = checker.resolve(program);
                if !resolved.is_file() {
                    checker
                        .error(
                            format!("the program `{program}` does not exist"),
                            first.span(),
                        )
                        .hint(format!(
                            "relative paths resolve against the manifest's folder, here `{}`",
                            resolved.display()
                        ));
                }
            }
        }
        Some(_) => {
            checker
                .error(
                    "the program (the first element of `argv`) must be a plain string",
                    first.span(),
                )
                .hint("arguments can never choose the program; put placeholders in later elements");
        }
        None => {}
    }
}

/// Parses argv (or script `args`) elements: strings, groups (arrays) and flags (tables).
fn parse_elements(
    values: &[Spanned<toml::Value>],
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Vec<ArgvElement> {
    let mut elements = Vec::new();
    for value in values {
        let span = value.span();
        match value.get_ref() {
            toml::Value::String(text) => {
                let Some(template) = template_at(text, span.clone(), facts, checker) else {
                    continue;
                };
                for name in template.placeholders() {
                    if facts.names.iter().any(|known| known == name)
                        && !facts.always_present.contains(name)
                    {
                        checker
                            .error(format!("argument `{name}` is optional, so it cannot fill a plain element"), span.clone())
                            .hint(format!(
                                "put it in a group that is left out when `{name}` is absent, e.g. [\"--{name}\", \"{{{name}}}\"]"
                            ));
                    }
                }
                let repeat = declared_list(
                    &template.placeholders().collect::<Vec<_>>(),
                    span,
                    facts,
                    checker,
                );
                elements.push(ArgvElement::Single(Repeated {
                    templates: vec![template],
                    repeat,
                }));
            }
            toml::Value::Array(items) => {
                let mut templates = Vec::new();
                for item in items {
                    match item {
                        toml::Value::String(text) => {
                            if let Some(template) = template_at(text, span.clone(), facts, checker)
                            {
                                templates.push(template);
                            }
                        }
                        _ => {
                            checker.error("a group holds strings only", span.clone());
                        }
                    }
                }
                if templates
                    .iter()
                    .all(|template| template.placeholders().next().is_none())
                {
                    checker
                        .error("this group uses no argument, so it would always be included", span.clone())
                        .hint("a group is left out when an argument it uses is absent; use plain elements instead");
                }
                let names: Vec<&str> = templates.iter().flat_map(Template::placeholders).collect();
                let repeat = declared_list(&names, span, facts, checker);
                elements.push(ArgvElement::Group(Repeated { templates, repeat }));
            }
            toml::Value::Table(table) => {
                if let Some(flag) = parse_flag(table, span, facts, checker) {
                    elements.push(flag);
                }
            }
            _ => {
                checker
                    .error(
                        "an argv element is a string, a group (an array) or a flag (a table)",
                        span,
                    )
                    .hint("quote numbers and booleans: \"10\"");
            }
        }
    }
    elements
}

fn parse_flag(
    table: &toml::Table,
    span: Range<usize>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<ArgvElement> {
    let flag = table.get("flag").and_then(toml::Value::as_str);
    let argument = table.get("if").and_then(toml::Value::as_str);
    let unknown: Vec<&String> = table
        .keys()
        .filter(|key| !matches!(key.as_str(), "flag" | "if"))
        .collect();
    let (Some(flag), Some(argument), true) = (flag, argument, unknown.is_empty()) else {
        checker
            .error(
                "a flag element is a table with exactly `flag` and `if`",
                span,
            )
            .hint("for example: { flag = \"--all\", if = \"all\" }");
        return None;
    };
    if !facts.names.iter().any(|name| name == argument) {
        checker
            .error(
                format!("flag refers to undeclared argument `{argument}`"),
                span,
            )
            .suggest(suggest(argument, facts.names.iter().map(String::as_str)));
        return None;
    }
    if facts
        .types
        .get(argument)
        .is_some_and(|kind| kind != "boolean")
    {
        checker.error(
            format!("flag condition `{argument}` must be a boolean argument"),
            span,
        );
        return None;
    }
    Some(ArgvElement::Flag {
        flag: flag.to_owned(),
        argument: argument.to_owned(),
    })
}

/// The one argument an element repeats for: an argument the input schema pins to
/// `"type": "array"`. Any other argument fills its place once, whatever its value.
fn declared_list(
    names: &[&str],
    span: Range<usize>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<String> {
    let mut lists: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| facts.is_list(name))
        .collect();
    let mut seen = HashSet::new();
    lists.retain(|name| seen.insert(*name));
    if lists.len() > 1 {
        checker
            .error(
                format!(
                    "this element uses two list arguments (`{}` and `{}`); only one can repeat",
                    lists[0], lists[1]
                ),
                span,
            )
            .hint("split it into separate elements or groups");
    }
    lists.first().map(|name| (*name).to_owned())
}

fn parse_template(
    value: &Spanned<String>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Template> {
    template_at(value.get_ref(), value.span(), facts, checker)
}

/// Parses a template and checks that every placeholder names a declared argument.
pub(super) fn template_at(
    text: &str,
    span: Range<usize>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Template> {
    let template = match Template::parse(text) {
        Ok(template) => template,
        Err(error) => {
            checker.error(format!("invalid template: {error}"), span);
            return None;
        }
    };
    let mut ok = true;
    for name in template.placeholders() {
        if !facts.names.iter().any(|known| known == name) {
            ok = false;
            let diagnostic = checker.error(
                format!("template refers to undeclared argument `{name}`"),
                span.clone(),
            );
            diagnostic.suggest(suggest(name, facts.names.iter().map(String::as_str)));
            if facts.names.is_empty() {
                diagnostic.hint("this tool declares no arguments");
            }
        }
    }
    ok.then_some(template)
}
