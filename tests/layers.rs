//! The crate's layers are a checked fact. `src/lib.rs` states the layer order in its
//! `## Layers` table; this test reads that table and every file under `src/`, and fails when a
//! module imports one in a layer above its own, when the modules import each other in a cycle,
//! or when a module is in no layer. `MCP_SERVE_LAYERS_SRC` points it at another tree (for
//! example an old commit's `src/`, checked against today's table).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::harness::repo_root;

/// Modules that are one unit and may import each other: the command line's argument types
/// (`cli`) name the value types of the commands that take them (`commands`).
const ONE_UNIT: [(&str, &str); 1] = [("cli", "commands")];

/// The layer of each top-level module, from lib.rs's table (the lowest layer is 1).
fn layers(lib: &str) -> BTreeMap<String, u32> {
    let start = lib
        .find("//! ## Layers")
        .expect("lib.rs has a `## Layers` section");
    let table = &lib[start..];
    let open = table.find("//! ```text\n").expect("the layers table") + "//! ```text\n".len();
    let close = table[open..].find("//! ```").expect("a closed table");
    let mut layers = BTreeMap::new();
    for line in table[open..open + close].lines() {
        let mut words = line.trim_start_matches("//!").split_whitespace();
        let Some(number) = words.next() else { continue };
        let number: u32 = number
            .parse()
            .expect("each row starts with its layer's number");
        let _name = words.next().expect("each row names its layer");
        for module in words {
            let before = layers.insert(module.to_owned(), number);
            assert!(before.is_none(), "`{module}` is in two layers");
        }
    }
    layers
}

/// Every `.rs` file under `root`, with the top-level module it belongs to.
fn files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let relative = path.strip_prefix(root).expect("beneath src/");
                let first = relative
                    .components()
                    .next()
                    .expect("a component")
                    .as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned();
                found.push((first, path));
            }
        }
    }
    found.sort();
    found
}

/// The top-level modules a file names through `crate::` (in paths and in `use crate::{…}`
/// groups), comments left out.
fn imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut named = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The group up to its closing brace; each item at its top names a module first.
            let mut depth = 0;
            let end = group
                .char_indices()
                .find(|&(_, character)| {
                    depth += match character {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth < 0
                })
                .map_or(group.len(), |(at, _)| at);
            let mut depth = 0;
            let mut item = String::new();
            for character in group[..end].chars().chain([',']) {
                match character {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let head = item.trim().split("::").next().unwrap_or_default();
                        if !head.is_empty()
                            && head.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                        {
                            named.insert(head.to_owned());
                        }
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(character);
            }
        } else {
            let word: String = rest
                .chars()
                .take_while(|character| character.is_ascii_lowercase() || *character == '_')
                .collect();
            if !word.is_empty() {
                named.insert(word);
            }
        }
    }
    named
}

/// What is wrong with `src`'s imports against the table: upward imports, modules in no
/// layer, and cycles.
fn violations(src: &Path, layers: &BTreeMap<String, u32>) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in files(src) {
        if matches!(module.as_str(), "lib" | "main" | "bin") {
            continue;
        }
        let Some(&own) = layers.get(&module) else {
            wrong.push(format!("`{module}` ({}) is in no layer", path.display()));
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("a source file");
        for target in imports(&text) {
            if target == module {
                continue;
            }
            let Some(&theirs) = layers.get(&target) else {
                continue; // a name that is not a module of ours (`crate::VERSION`)
            };
            if theirs > own {
                wrong.push(format!(
                    "{}: `{module}` (layer {own}) imports `{target}` (layer {theirs})",
                    path.strip_prefix(src).unwrap_or(&path).display()
                ));
            }
            edges.entry(module.clone()).or_default().insert(target);
        }
    }
    for (a, b) in ONE_UNIT {
        edges.entry(a.to_owned()).or_default().remove(b);
    }
    wrong.extend(cycles(&edges).into_iter().map(|cycle| {
        format!(
            "the modules import each other in a cycle: {}",
            cycle.join(" → ")
        )
    }));
    wrong
}

/// Each cycle found by a depth-first walk, as the path that closes it.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn walk(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            found.push(cycle);
            return;
        }
        if !done.insert(node.to_owned()) {
            return;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            walk(next, edges, path, done, found);
        }
        path.pop();
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        walk(node, edges, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

fn table() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).expect("lib.rs");
    layers(&lib)
}

#[test]
fn every_module_imports_only_its_own_layer_and_those_below() {
    let src = std::env::var_os("MCP_SERVE_LAYERS_SRC")
        .map_or_else(|| repo_root().join("src"), PathBuf::from);
    let wrong = violations(&src, &table());
    assert!(
        wrong.is_empty(),
        "the layers are broken:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_table_names_every_module_lib_rs_declares() {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).expect("lib.rs");
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').to_owned())
        .collect();
    let tabled: BTreeSet<String> = table().into_keys().collect();
    assert_eq!(
        declared, tabled,
        "lib.rs's modules and its layers table differ"
    );
}

/// The control: a tree with an upward import, a cycle and a module in no layer is refused,
/// each named.
#[test]
fn an_upward_import_a_cycle_and_an_unlayered_module_are_each_found() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let src = dir.path();
    std::fs::create_dir(src.join("low")).expect("low/");
    std::fs::write(src.join("low.rs"), "mod inner;\n").expect("low.rs");
    // An upward import, in a nested file and a `use crate::{…}` group.
    std::fs::write(
        src.join("low/inner.rs"),
        "use crate::{high::Thing, mid};\n// crate::ignored in a comment\n",
    )
    .expect("inner.rs");
    std::fs::write(src.join("mid.rs"), "use crate::peer::X;\n").expect("mid.rs");
    std::fs::write(src.join("peer.rs"), "fn f() { crate::mid::g(); }\n").expect("peer.rs");
    std::fs::write(src.join("high.rs"), "use crate::low::inner;\n").expect("high.rs");
    std::fs::write(src.join("stray.rs"), "\n").expect("stray.rs");
    let layers: BTreeMap<String, u32> = [("low", 1), ("mid", 2), ("peer", 2), ("high", 3)]
        .into_iter()
        .map(|(name, layer)| (name.to_owned(), layer))
        .collect();
    let wrong = violations(src, &layers).join("\n");
    assert!(
        wrong.contains("`low` (layer 1) imports `high` (layer 3)"),
        "{wrong}"
    );
    assert!(
        wrong.contains("`low` (layer 1) imports `mid` (layer 2)"),
        "{wrong}"
    );
    assert!(wrong.contains("cycle: mid → peer → mid"), "{wrong}");
    assert!(wrong.contains("`stray`"), "{wrong}");
    assert!(!wrong.contains("ignored"), "{wrong}");
    assert!(
        !wrong.contains("`high` (layer 3) imports"),
        "a downward import is allowed: {wrong}"
    );
}
