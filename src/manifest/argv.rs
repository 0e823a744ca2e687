//! argv (and script `args`) elements: strings, groups and flags, checked against the tool's
//! arguments; which list argument an element repeats for is decided here, once.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::Checker;
use super::facts::{ArgumentFacts, template_at};
use crate::suggest::suggest;
use crate::template::{ArgvElement, Repeated, Template};

/// The program must be fixed by the manifest, and a relative path must exist.
pub(super) fn check_program(
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
                let resolved = checker.refer(program, super::Use::Program);
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

/// Records each literal element after the program (no placeholder, not a flag) that names a
/// file or folder beside the manifest: what the command reads, for a bundle to carry.
pub(super) fn refer_literals(argv: &Spanned<Vec<Spanned<toml::Value>>>, checker: &mut Checker) {
    for value in argv.get_ref().iter().skip(1) {
        if let toml::Value::String(text) = value.get_ref()
            && !text.is_empty()
            && !text.starts_with('-')
            && !text.contains('{')
            && !Path::new(text).is_absolute()
            && checker.resolve(text).exists()
        {
            checker.refer(text, super::Use::Argument);
        }
    }
}

/// Parses argv (or script `args`) elements: strings, groups (arrays) and flags (tables).
pub(super) fn parse_elements(
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
