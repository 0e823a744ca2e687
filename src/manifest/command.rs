//! `[tools.command]`: what runs (`argv`, or `script` with `args`, elements checked in
//! [`super::argv`]) and the process settings: cwd, environment, stdin, limits.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::Checker;
use super::argv::{check_program, parse_elements, refer_literals};
use super::facts::{ArgumentFacts, parse_template};
use super::wire::CommandWire;
use crate::backend::command::{CommandBackend, InheritEnv, Program, StdinMode};
use crate::events::LogLevel;
use crate::suggest::suggest;
use crate::template::Template;
use crate::units::{parse_duration, parse_size};

pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(super) const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

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
        sandbox: None,
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
            if checker.references.is_some() {
                refer_literals(argv, checker);
            }
            Some(Program::Argv(elements))
        }
        (None, Some(script)) => {
            let args = wire
                .args
                .as_ref()
                .map(|args| parse_elements(args.get_ref(), facts, checker))
                .unwrap_or_default();
            // A shell named by a relative path is a file beside the manifest, as a program is.
            if let Some(shell) = &wire.shell
                && shell.get_ref().contains('/')
                && !Path::new(shell.get_ref()).is_absolute()
            {
                checker.refer(shell.get_ref(), super::Use::Program);
            }
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
            let resolved = checker.refer(cwd.get_ref(), super::Use::WorkingDirectory);
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
            if is_loader_variable(name.get_ref()) && template.placeholders().next().is_some() {
                checker
                    .error(
                        format!(
                            "`{}` tells the dynamic loader what code to run: an argument can never fill it",
                            name.get_ref()
                        ),
                        value.span(),
                    )
                    .hint("it would run the caller's choice of code in the program (and before a sandbox confines it); write a fixed value");
                continue;
            }
            env.push((name.get_ref().clone(), template));
        }
    }

    env
}

/// Variables that make the dynamic loader (glibc's or musl's) load or tune code.
fn is_loader_variable(name: &str) -> bool {
    name.starts_with("LD_") || name == "GLIBC_TUNABLES" || name == "MALLOC_CONF"
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
