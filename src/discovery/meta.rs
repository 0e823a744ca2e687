//! Discovery's own tools: what `tools/list` holds in discovery mode ([`definitions`]), what
//! a call of one asks ([`Meta::of`]), and their answers ([`answer`], [`added`]).

use serde_json::{Map, Value, json};

use super::Found;
use crate::registry::Registry;
use crate::results::ToolResult;

/// The tool that finds tools.
pub const FIND: &str = "find_tools";
/// The tool that calls a found tool.
pub const CALL: &str = "call_tool";
/// The tool that adds tools to one connection's own list.
pub const ADD: &str = "add_tools";
/// The names discovery takes for its own tools.
pub const META: [&str; 3] = [FIND, CALL, ADD];

/// The most tools [`ADD`] puts in one connection's list, all its calls together: more
/// would bring back the list discovery mode keeps short.
pub const MAX_ADDED: usize = 128;
/// The most names one [`ADD`] call takes, of tools and of toolsets each.
const MAX_NAMED: usize = 64;
/// The most toolset names `add_tools`' schema lists as the values `toolsets` may take.
const MAX_LISTED_SETS: usize = 64;

/// A tool of `registry` named as one of discovery's own, which discovery mode refuses.
pub fn taken(registry: &Registry) -> Option<&'static str> {
    META.into_iter().find(|name| registry.tool(name).is_some())
}

/// The most tools one `find_tools` answer holds.
pub(super) const MAX_FOUND: usize = 20;
/// How many it holds unless asked.
const DEFAULT_FOUND: usize = 5;

/// What `tools/list` holds in discovery mode: [`FIND`], [`CALL`] and, last, [`ADD`], which
/// only a connection that lasts is offered (stdio, a 2025 session). It does not say how many
/// tools there are: a caller may see fewer than the manifest holds.
pub fn definitions(registry: &Registry) -> [Map<String, Value>; 3] {
    let object = |value: Value| match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut add = json!({
        "type": "object",
        "properties": {
            "tools": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": MAX_NAMED,
                      "description": format!("Names of tools, as `{FIND}` gave them")},
        },
        "additionalProperties": false
    });
    let sets = registry.toolsets();
    if !sets.is_empty() {
        let mut names: Vec<&str> = sets.iter().map(|set| set.name.as_str()).collect();
        let mut items = json!({"type": "string", "minLength": 1});
        if names.len() <= MAX_LISTED_SETS {
            names.truncate(MAX_LISTED_SETS);
            items["enum"] = json!(names);
        }
        add["properties"]["toolsets"] = json!({
            "type": "array", "items": items, "maxItems": MAX_NAMED,
            "description": "Names of toolsets: each adds every tool of the set"
        });
    }
    [
        object(json!({
            "name": FIND,
            "title": "Find tools",
            "description": format!(
                "Search this server's tools by what they do. Answers with the best matches, \
                 each with its name, description and input schema; call one with `{CALL}` \
                 (or by its name)."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                              "description": "What the tool should do, in words: `create an issue`"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_FOUND, "default": DEFAULT_FOUND,
                              "description": "How many tools to answer with"}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })),
        object(json!({
            "name": CALL,
            "title": "Call a tool",
            "description": format!(
                "Call one of this server's tools, found with `{FIND}`, by its name, with the \
                 arguments its input schema asks for. Answers with that tool's result."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The tool's name, as `find_tools` gave it"},
                    "arguments": {"type": "object", "description": "The tool's arguments"}
                },
                "required": ["name"],
                "additionalProperties": false
            }
        })),
        object(json!({
            "name": ADD,
            "title": "Add tools to the list",
            "description": format!(
                "Add tools found with `{FIND}`, or whole toolsets, to this connection's tool \
                 list, so that they can be called directly; the server then says the list \
                 changed. At most {MAX_ADDED} tools in all."
            ),
            "inputSchema": add,
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        })),
    ]
}

/// A call of one of discovery's own tools, as its arguments ask.
#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    Find {
        query: String,
        limit: usize,
    },
    Call {
        name: String,
        arguments: Option<Map<String, Value>>,
    },
    Add {
        tools: Vec<String>,
        toolsets: Vec<String>,
    },
}

impl Meta {
    /// The meta call `name` with `arguments` makes; `Ok(None)` when `name` is no meta tool;
    /// `Err` with the reason, for a tool error the model can act on, when its arguments do
    /// not fit its schema.
    pub fn of(name: &str, arguments: Option<&Map<String, Value>>) -> Result<Option<Self>, String> {
        let empty = Map::new();
        let arguments = arguments.unwrap_or(&empty);
        let unknown = |allowed: &[&str]| {
            arguments
                .keys()
                .find(|key| !allowed.contains(&key.as_str()))
                .map(|key| format!("`{name}` takes no argument `{key}`"))
        };
        match name {
            FIND => {
                if let Some(reason) = unknown(&["query", "limit"]) {
                    return Err(reason);
                }
                let query = match arguments.get("query") {
                    Some(Value::String(query))
                        if !query.trim().is_empty() && query.chars().count() <= 1000 =>
                    {
                        query.clone()
                    }
                    _ => {
                        return Err(
                            "`query` is the words that say what the tool should do (1 to 1000 characters)"
                                .to_owned(),
                        );
                    }
                };
                let limit = match arguments.get("limit") {
                    None | Some(Value::Null) => DEFAULT_FOUND,
                    Some(limit) => limit
                        .as_u64()
                        .and_then(|limit| usize::try_from(limit).ok())
                        .filter(|limit| (1..=MAX_FOUND).contains(limit))
                        .ok_or_else(|| {
                            format!("`limit` is a whole number from 1 to {MAX_FOUND}")
                        })?,
                };
                Ok(Some(Self::Find { query, limit }))
            }
            CALL => {
                if let Some(reason) = unknown(&["name", "arguments"]) {
                    return Err(reason);
                }
                let Some(Value::String(name)) = arguments.get("name") else {
                    return Err(
                        "`name` is the name of the tool to call, as `find_tools` gave it"
                            .to_owned(),
                    );
                };
                let arguments = match arguments.get("arguments") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(arguments)) => Some(arguments.clone()),
                    Some(_) => {
                        return Err("`arguments` is an object of the tool's arguments".to_owned());
                    }
                };
                if META.contains(&name.as_str()) {
                    return Err(format!("`{CALL}` calls the server's tools, not `{name}`"));
                }
                Ok(Some(Self::Call {
                    name: name.clone(),
                    arguments,
                }))
            }
            ADD => {
                if let Some(reason) = unknown(&["tools", "toolsets"]) {
                    return Err(reason);
                }
                let names = |key: &str| -> Result<Vec<String>, String> {
                    let wrong = || format!("`{key}` is a list of at most {MAX_NAMED} names");
                    match arguments.get(key) {
                        None | Some(Value::Null) => Ok(Vec::new()),
                        Some(Value::Array(names)) if names.len() <= MAX_NAMED => names
                            .iter()
                            .map(|name| match name {
                                Value::String(name) if !name.is_empty() => Ok(name.clone()),
                                _ => Err(wrong()),
                            })
                            .collect(),
                        Some(_) => Err(wrong()),
                    }
                };
                let (tools, toolsets) = (names("tools")?, names("toolsets")?);
                if tools.is_empty() && toolsets.is_empty() {
                    return Err(format!(
                        "name `tools` (as `{FIND}` gave them) or `toolsets` to add"
                    ));
                }
                Ok(Some(Self::Add { tools, toolsets }))
            }
            _ => Ok(None),
        }
    }
}

/// `find_tools`' answer: the tools found, each with its name, title, description and input
/// schema, as structured content and its JSON text.
pub fn answer(registry: &Registry, found: &[Found]) -> ToolResult {
    let tools: Vec<Value> = found
        .iter()
        .filter_map(|found| registry.tool(&found.name))
        .map(|tool| {
            let mut entry = Map::new();
            let definition = tool.whole_definition();
            for key in ["name", "title", "description", "inputSchema"] {
                if let Some(value) = definition.get(key) {
                    entry.insert(key.to_owned(), value.clone());
                }
            }
            Value::Object(entry)
        })
        .collect();
    ToolResult::structured(json!({ "tools": tools }), None)
}

/// [`ADD`]'s answer: `listed`, this connection's additions so far, takes the tools `tools`
/// and `toolsets` name that `visible` lets through (the caller's scopes), in the order
/// named, each once. Nothing is added unless all of them can be: a name that is no tool
/// (or none the caller may call), a set the registry lacks, or more than [`MAX_ADDED`] in
/// all is a tool error. Returns the answer and whether the list changed.
pub fn added(
    registry: &Registry,
    listed: &mut Vec<String>,
    tools: &[String],
    toolsets: &[String],
    visible: impl Fn(&str) -> bool,
) -> (ToolResult, bool) {
    let shown = crate::registry::shown;
    let mut new: Vec<String> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for name in tools {
        if META.contains(&name.as_str()) || registry.tool(name).is_none() || !visible(name) {
            missing.push(format!("`{}`", shown(name)));
        } else if !listed.contains(name) && !new.contains(name) {
            new.push(name.clone());
        }
    }
    for set in toolsets {
        match registry.toolsets().iter().find(|known| &known.name == set) {
            Some(known) => {
                for name in known.tools.iter().filter(|name| visible(name)) {
                    if !listed.contains(name) && !new.contains(name) {
                        new.push(name.clone());
                    }
                }
            }
            None => missing.push(format!("toolset `{}`", shown(set))),
        }
    }
    if !missing.is_empty() {
        let reason = format!(
            "nothing was added: no {} here; `{FIND}` finds tools by what they do",
            missing.join(", ")
        );
        return (ToolResult::error(reason), false);
    }
    if listed.len() + new.len() > MAX_ADDED {
        let reason = format!(
            "nothing was added: the list would hold {} added tools, and it holds at most \
             {MAX_ADDED}; add fewer, or call tools with `{CALL}`",
            listed.len() + new.len()
        );
        return (ToolResult::error(reason), false);
    }
    let changed = !new.is_empty();
    listed.extend(new.iter().cloned());
    let text = if changed {
        format!(
            "Added to your tool list: {}. Call them by name.",
            new.join(", ")
        )
    } else {
        "They were in your tool list already.".to_owned()
    };
    let mut result = ToolResult::structured(json!({ "added": new, "listed": listed }), None);
    result
        .content
        .insert(0, crate::results::Content::text(text));
    (result, changed)
}
