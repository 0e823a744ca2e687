//! How big a client's `tools/list` answer is, in bytes and approximate tokens, for `list`
//! and `check`, and the budget `check` warns above.

use serde_json::{Map, Value, json};

use crate::registry::Registry;
use crate::revision::Revision;
use crate::toolset::Toolset;

/// Hosts warn when a server's tools take more than about this many tokens of the model's
/// context (Claude Code at 25,000), and a model's choice of tool degrades well before.
pub const BUDGET_TOKENS: usize = 25_000;

/// The revisions whose answers are measured, with the version each is named by.
pub const MEASURED: [(Revision, &str); 3] = [
    (Revision::V2024_11, "2024-11-05"),
    (Revision::V2025_06, "2025-11-25"),
    (Revision::V2026_07, "2026-07-28"),
];

/// The size of one `tools/list` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ListSize {
    pub tools: usize,
    /// The compact JSON of `{"tools": [...]}`.
    pub bytes: usize,
    /// About a token per 4 bytes of JSON, as tokenizers of these models read it.
    pub tokens: usize,
}

/// Each served tool's entry in one revision's `tools/list`, measured once: the sizes of the
/// whole list and of every toolset's are sums of these.
#[derive(Debug)]
pub struct Sizes {
    /// Each tool's entry's bytes; `None` for a tool such a client does not see.
    entries: Vec<Option<usize>>,
    position: std::collections::HashMap<String, usize>,
}

impl Sizes {
    pub fn new(registry: &Registry, revision: Revision) -> Self {
        // One entry at a time: a manifest of thousands of tools is never held whole. As a
        // client that renders no MCP Apps lists them (most do not), which does not see a
        // tool only a page may call.
        let entries = registry
            .tools()
            .map(|tool| {
                tool.definition_to(revision, false).map(|definition| {
                    let mut counted = Counted(0);
                    serde_json::to_writer(&mut counted, &definition).map_or(0, |()| counted.0)
                })
            })
            .collect();
        let position = registry
            .tools()
            .enumerate()
            .map(|(index, tool)| (tool.name.clone(), index))
            .collect();
        Self { entries, position }
    }

    /// The answer a client of that revision gets.
    pub fn whole(&self) -> ListSize {
        ListSize::of(self.entries.iter().flatten().copied())
    }

    /// What the list would be with `set`'s tools only.
    pub fn of(&self, set: &Toolset) -> ListSize {
        ListSize::of(
            set.tools
                .iter()
                .filter_map(|tool| self.position.get(tool))
                .filter_map(|index| self.entries[*index]),
        )
    }
}

/// Counts the bytes written to it.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ListSize {
    /// `{"tools":[` … `]}` around these entries, a comma between each two.
    fn of(entries: impl Iterator<Item = usize>) -> Self {
        let (count, sum) = entries.fold((0_usize, 0_usize), |(count, sum), bytes| {
            (count + 1, sum + bytes)
        });
        let bytes = 12 + sum + count.saturating_sub(1);
        Self {
            tools: count,
            bytes,
            tokens: bytes.div_ceil(4),
        }
    }

    pub fn over_budget(&self) -> bool {
        self.tokens > BUDGET_TOKENS
    }

    /// `12 tools, 4.5 KiB, ~1,180 tokens`.
    pub fn describe(&self) -> String {
        format!(
            "{} tool{}, {}, ~{} tokens",
            self.tools,
            if self.tools == 1 { "" } else { "s" },
            crate::units::size_text(u64::try_from(self.bytes).unwrap_or(u64::MAX)),
            thousands(self.tokens)
        )
    }
}

/// Each revision's `tools/list` size, whole and per toolset (`--format json`).
pub fn report(registry: &Registry) -> Value {
    let mut out = Map::new();
    for (revision, version) in MEASURED {
        let sizes = Sizes::new(registry, revision);
        let toolsets: Map<String, Value> = registry
            .toolsets()
            .iter()
            .map(|set| (set.name.clone(), json!(sizes.of(set))))
            .collect();
        let mut entry = json!(sizes.whole());
        entry["toolsets"] = Value::Object(toolsets);
        out.insert(version.to_owned(), entry);
    }
    Value::Object(out)
}

/// Why the served `tools/list` is over [`BUDGET_TOKENS`], naming the toolsets that are
/// over it alone; `None` when it fits.
pub fn over_budget(registry: &Registry) -> Option<String> {
    let sizes = Sizes::new(registry, Revision::V2025_06);
    let whole = sizes.whole();
    if !whole.over_budget() {
        return None;
    }
    let mut message = format!(
        "tools/list is {}, over the {} tokens hosts warn at",
        whole.describe(),
        thousands(BUDGET_TOKENS)
    );
    let sets = registry.toolsets();
    if sets.is_empty() {
        message.push_str("; group the tools into toolsets and serve some with --toolsets");
        return Some(message);
    }
    message.push_str("; serve fewer with --toolsets (`mcp-serve list` shows each one's size)");
    let over: Vec<&str> = sets
        .iter()
        .filter(|set| sizes.of(set).over_budget())
        .map(|set| set.name.as_str())
        .collect();
    if !over.is_empty() {
        message.push_str(&format!("; over it alone: {}", over.join(", ")));
    }
    Some(message)
}

fn thousands(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let size = ListSize {
            tools: 1,
            bytes: 4001,
            tokens: 1001,
        };
        assert_eq!(size.describe(), "1 tool, 3.9 KiB, ~1,001 tokens");
        assert!(!size.over_budget());
    }

    #[test]
    fn the_size_is_the_length_of_the_answer_a_client_gets() {
        let registry = crate::manifest::parse(
            r#"
[[tools]]
name = "a"
description = "the first"
toolsets = ["one"]
[tools.static]
content = [{ type = "text", text = "a" }]

[[tools]]
name = "b"
toolsets = ["two"]
[tools.static]
content = [{ type = "text", text = "b" }]
"#,
            "tools.toml",
            std::path::Path::new("/"),
        )
        .expect("loads");
        for (revision, _) in MEASURED {
            let listing = registry.listing(revision, false);
            let whole =
                serde_json::to_vec(&serde_json::json!({ "tools": listing })).expect("serializes");
            let sizes = Sizes::new(&registry, revision);
            let size = sizes.whole();
            assert_eq!((size.tools, size.bytes), (2, whole.len()));
            let one = &registry.toolsets()[0];
            let alone = serde_json::to_vec(&serde_json::json!({ "tools": [listing[0].clone()] }))
                .expect("serializes");
            let size = sizes.of(one);
            assert_eq!((size.tools, size.bytes), (1, alone.len()));
        }
    }
}
