//! `[[toolsets]]` and each tool's `toolsets`: which named sets each tool is in.
//!
//! A manifest either declares its sets (`[[toolsets]]`, with a title, a description and
//! members by name or glob), and then a tool may only name declared ones (a typo is an
//! error, not a new set), or declares none, and then the names tools give are the sets.
//! Every member named outright must be a tool, every glob must match one, and every set
//! must have a member.

use toml::Spanned;

use super::Checker;
use super::wire::{ToolWire, ToolsetWire};
use crate::suggest::suggest;
use crate::toolset::Toolset;

/// The sets, declared ones first, each with its members in manifest order. When a tool's
/// table could not be read (`complete` is false), members are not checked against the
/// tools: its name would be reported missing beside the real error.
pub(super) fn build_toolsets(
    wires: &[ToolsetWire],
    tools: &[ToolWire],
    complete: bool,
    checker: &mut Checker,
) -> Vec<Toolset> {
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool.name.get_ref().as_str())
        .collect();
    // Each set, where its name is written, and whether its `tools` listed anything (whose
    // mistakes are reported where they are).
    let mut sets: Vec<(Toolset, Spanned<String>, bool)> = Vec::new();
    for wire in wires {
        if !valid_name(&wire.name, checker) {
            continue;
        }
        if sets
            .iter()
            .any(|(set, _, _)| &set.name == wire.name.get_ref())
        {
            checker
                .error(
                    format!("duplicate toolset name `{}`", wire.name.get_ref()),
                    wire.name.span(),
                )
                .hint("toolset names must be unique; list all its tools in one `[[toolsets]]`");
            continue;
        }
        let mut members = Vec::new();
        for entry in wire.tools.iter().flatten() {
            members.extend(matching(entry, &names, complete, checker));
        }
        let set = Toolset {
            name: wire.name.get_ref().clone(),
            title: wire.title.clone(),
            description: wire.description.clone(),
            tools: members,
        };
        let listed = wire.tools.as_ref().is_some_and(|tools| !tools.is_empty());
        sets.push((set, wire.name.clone(), listed));
    }
    let declared = !wires.is_empty();
    for tool in tools {
        for named in tool.toolsets.iter().flatten() {
            let found = sets
                .iter()
                .position(|(set, _, _)| &set.name == named.get_ref());
            let index = match found {
                Some(index) => index,
                None if declared => {
                    let known = sets.iter().map(|(set, _, _)| set.name.as_str());
                    checker
                        .error(
                            format!(
                                "tool `{}` names toolset `{}`, which `[[toolsets]]` does not declare",
                                tool.name.get_ref(),
                                named.get_ref()
                            ),
                            named.span(),
                        )
                        .suggest(suggest(named.get_ref(), known))
                        .hint("declare it in a `[[toolsets]]` table, or name a declared one");
                    continue;
                }
                None => {
                    if !valid_name(named, checker) {
                        continue;
                    }
                    sets.push((
                        Toolset {
                            name: named.get_ref().clone(),
                            title: None,
                            description: None,
                            tools: Vec::new(),
                        },
                        named.clone(),
                        false,
                    ));
                    sets.len() - 1
                }
            };
            sets[index].0.tools.push(tool.name.get_ref().clone());
        }
    }
    sets.into_iter()
        .filter_map(|(mut set, name, listed)| {
            // Manifest order, each tool once, whichever way it joined.
            set.tools = names
                .iter()
                .filter(|tool| set.tools.iter().any(|member| member == *tool))
                .map(|tool| (*tool).to_owned())
                .collect();
            if set.tools.is_empty() {
                if !complete || listed {
                    return None;
                }
                checker
                    .error(format!("toolset `{}` has no tools", set.name), name.span())
                    .hint("name tools in its `tools`, or add its name to tools' `toolsets`");
                return None;
            }
            Some(set)
        })
        .collect()
}

/// The tools an entry of a set's `tools` names: a tool's name, or a glob over names.
fn matching(
    entry: &Spanned<String>,
    names: &[&str],
    complete: bool,
    checker: &mut Checker,
) -> Vec<String> {
    let text = entry.get_ref();
    if !text.contains(['*', '?', '[']) {
        if names.contains(&text.as_str()) {
            return vec![text.clone()];
        }
        if !complete {
            return Vec::new();
        }
        checker
            .error(
                format!("toolset member `{text}` is not a tool"),
                entry.span(),
            )
            .suggest(suggest(text, names.iter().copied()));
        return Vec::new();
    }
    let pattern = match glob::Pattern::new(text) {
        Ok(pattern) => pattern,
        Err(error) => {
            checker.error(
                format!("toolset member `{text}` is not a valid glob: {}", error.msg),
                entry.span(),
            );
            return Vec::new();
        }
    };
    let found: Vec<String> = names
        .iter()
        .filter(|name| pattern.matches(name))
        .map(|name| (*name).to_owned())
        .collect();
    if found.is_empty() && complete {
        checker
            .error(
                format!("toolset member `{text}` matches no tool"),
                entry.span(),
            )
            .hint("a glob matches tool names: `*` any characters, `?` one, `[abc]` one of them");
    }
    found
}

/// 1 to 64 letters, digits, `_` and `-`: a name that stands in a comma list and in a URL
/// path segment as it is.
fn valid_name(name: &Spanned<String>, checker: &mut Checker) -> bool {
    let text = name.get_ref();
    let fits = (1..=64).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if !fits {
        checker
            .error(
                format!("toolset name `{text}` is not 1 to 64 letters, digits, `_` or `-`"),
                name.span(),
            )
            .hint("e.g. `issues` or `pull-requests`");
    }
    fits
}
