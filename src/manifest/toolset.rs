//! `[[toolsets]]` and each tool's `toolsets`: which named sets each tool is in.
//!
//! A manifest either declares its sets (`[[toolsets]]`, with a title, a description and
//! members by name or glob), and then a tool may only name declared ones (a typo is an
//! error, not a new set), or declares none, and then the names tools give are the sets.
//! Every member named outright must be a tool, every glob must match one, and every set
//! must have a member. Every glob of every set is matched against each tool name once, in
//! one pass (`globset`), so the cost grows with the tools and the globs, not their product.

use std::collections::{BTreeSet, HashMap};

use toml::Spanned;

use super::Checker;
use super::wire::{ToolWire, ToolsetWire};
use crate::suggest::suggest;
use crate::toolset::{EVERY_TOOL, Toolset};

/// A set as it is gathered: its members by tool index (so in manifest order).
struct Gathered {
    set: Toolset,
    /// Where its name is written.
    name: Spanned<String>,
    /// Its `tools` listed something, whose mistakes are reported where they are.
    listed: bool,
    members: BTreeSet<usize>,
}

/// The sets found so far, and where each is by name.
#[derive(Default)]
struct Sets {
    gathered: Vec<Gathered>,
    by_name: HashMap<String, usize>,
}

impl Sets {
    fn add(
        &mut self,
        set: Toolset,
        name: &Spanned<String>,
        listed: bool,
        members: BTreeSet<usize>,
    ) -> usize {
        self.by_name.insert(set.name.clone(), self.gathered.len());
        self.gathered.push(Gathered {
            set,
            name: name.clone(),
            listed,
            members,
        });
        self.gathered.len() - 1
    }
}

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
    let mut sets = declared(wires, &names, complete, checker);
    named_by_tools(&mut sets, tools, !wires.is_empty(), checker);
    sets.gathered
        .into_iter()
        .filter_map(|gathered| {
            let Gathered {
                mut set,
                name,
                listed,
                members,
            } = gathered;
            if members.is_empty() {
                if complete && !listed {
                    checker
                        .error(format!("toolset `{}` has no tools", set.name), name.span())
                        .hint("name tools in its `tools`, or add its name to tools' `toolsets`");
                }
                return None;
            }
            set.tools = members
                .into_iter()
                .map(|tool| names[tool].to_owned())
                .collect();
            Some(set)
        })
        .collect()
}

/// The `[[toolsets]]` tables, with the members their `tools` name or match.
fn declared(wires: &[ToolsetWire], names: &[&str], complete: bool, checker: &mut Checker) -> Sets {
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, i))
        .collect();
    let mut sets = Sets::default();
    // Each glob, with the set it belongs to and where it is written.
    let mut globs: Vec<(usize, &Spanned<String>)> = Vec::new();
    let mut builder = globset::GlobSetBuilder::new();
    for wire in wires {
        if !valid_name(&wire.name, checker) {
            continue;
        }
        if sets.by_name.contains_key(wire.name.get_ref()) {
            checker
                .error(
                    format!("duplicate toolset name `{}`", wire.name.get_ref()),
                    wire.name.span(),
                )
                .hint("toolset names must be unique; list all its tools in one `[[toolsets]]`");
            continue;
        }
        let at = sets.gathered.len();
        let mut members = BTreeSet::new();
        for entry in wire.tools.iter().flatten() {
            let text = entry.get_ref();
            if !text.contains(['*', '?', '[', '{']) {
                match index.get(text.as_str()) {
                    Some(tool) => {
                        members.insert(*tool);
                    }
                    None if complete => {
                        checker
                            .error(
                                format!("toolset member `{text}` is not a tool"),
                                entry.span(),
                            )
                            .suggest(suggest(text, names.iter().copied()));
                    }
                    None => {}
                }
                continue;
            }
            match globset::Glob::new(text) {
                Ok(glob) => {
                    builder.add(glob);
                    globs.push((at, entry));
                }
                Err(error) => {
                    checker.error(
                        format!(
                            "toolset member `{text}` is not a valid glob: {}",
                            error.kind()
                        ),
                        entry.span(),
                    );
                }
            }
        }
        let listed = wire.tools.as_ref().is_some_and(|tools| !tools.is_empty());
        sets.add(described(wire), &wire.name, listed, members);
    }
    match_globs(
        &mut sets.gathered,
        &globs,
        &builder,
        names,
        complete,
        checker,
    );
    sets
}

/// Adds each tool to the sets its `toolsets` names; without `[[toolsets]]` (`declared` is
/// false) a name is a new set.
fn named_by_tools(sets: &mut Sets, tools: &[ToolWire], declared: bool, checker: &mut Checker) {
    for (position, tool) in tools.iter().enumerate() {
        for named in tool.toolsets.iter().flatten() {
            let at = match sets.by_name.get(named.get_ref()) {
                Some(at) => *at,
                None if declared => {
                    let known = sets
                        .gathered
                        .iter()
                        .map(|gathered| gathered.set.name.as_str());
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
                    let set = Toolset {
                        name: named.get_ref().clone(),
                        title: None,
                        description: None,
                        tools: Vec::new(),
                    };
                    sets.add(set, named, false, BTreeSet::new())
                }
            };
            sets.gathered[at].members.insert(position);
        }
    }
}

fn described(wire: &ToolsetWire) -> Toolset {
    Toolset {
        name: wire.name.get_ref().clone(),
        title: wire.title.clone(),
        description: wire.description.clone(),
        tools: Vec::new(),
    }
}

/// Adds the tools each glob matches to its set; a glob that matches none is an error.
fn match_globs(
    sets: &mut [Gathered],
    globs: &[(usize, &Spanned<String>)],
    builder: &globset::GlobSetBuilder,
    names: &[&str],
    complete: bool,
    checker: &mut Checker,
) {
    if globs.is_empty() {
        return;
    }
    let matcher = match builder.build() {
        Ok(matcher) => matcher,
        Err(error) => {
            checker.error(format!("the toolsets' globs: {error}"), globs[0].1.span());
            return;
        }
    };
    let mut used = vec![false; globs.len()];
    let mut found = Vec::new();
    for (tool, name) in names.iter().enumerate() {
        matcher.matches_into(name, &mut found);
        for glob in &found {
            used[*glob] = true;
            sets[globs[*glob].0].members.insert(tool);
        }
    }
    for ((_, entry), used) in globs.iter().zip(used) {
        if !used && complete {
            checker
                .error(
                    format!("toolset member `{}` matches no tool", entry.get_ref()),
                    entry.span(),
                )
                .hint("a glob over tool names: `*` any characters, `?` one, `[abc]` one of them, `[!abc]` none of them, `{a,b}` either");
        }
    }
}

/// 1 to 64 letters, digits, `_` and `-`: a name that stands in a comma list and in a URL
/// path segment as it is. [`EVERY_TOOL`] is `--toolsets`' own word.
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
    } else if text == EVERY_TOOL {
        checker
            .error(
                format!("a toolset cannot be called `{EVERY_TOOL}`"),
                name.span(),
            )
            .hint("`--toolsets all` serves every tool, whatever the manifest's default");
        return false;
    }
    fits
}
