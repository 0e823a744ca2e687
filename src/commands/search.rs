//! `mcp-serve search`: the tools that best match what a person describes, best first
//! (`discovery`), among those the chosen toolsets serve.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::cli::SearchArgs;
use crate::discovery::Index;
use crate::registry::Registry;

/// The text to print.
pub fn render(registry: &Registry, args: &SearchArgs) -> String {
    let query = args.query.join(" ");
    let found = Index::new(registry).search(&query, usize::from(args.limit), |_| true);
    let text = |name: &str, key: &str| {
        registry
            .tool(name)
            .and_then(|tool| tool.definition.get(key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned()
    };
    if args.json {
        let tools: Vec<Value> = found
            .iter()
            .map(|found| {
                json!({
                    "name": found.name,
                    "title": text(&found.name, "title"),
                    "description": text(&found.name, "description"),
                    "score": found.score,
                })
            })
            .collect();
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "query": query, "tools": tools }))
                .unwrap_or_default()
        );
    }
    if found.is_empty() {
        return format!("no tool matches `{query}`\n");
    }
    let width = found
        .iter()
        .map(|found| found.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (rank, found) in found.iter().enumerate() {
        let title = text(&found.name, "title");
        let about = if title.is_empty() {
            text(&found.name, "description")
        } else {
            title
        };
        let about = about.lines().next().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:>2}. {:width$}  {:5.2}  {about}",
            rank + 1,
            found.name,
            found.score
        );
    }
    out
}
