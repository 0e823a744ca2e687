//! The bundle's `manifest.json`, as the MCPB specification (manifest version 0.3, which the
//! official `mcpb` CLI validates) describes a binary server: its name and version from
//! `[server]`, how a host starts it (the bundled binary on the bundled manifest, each
//! `${env:NAME}` filled from a `user_config` entry), and the tools its `tools/list` serves.

use serde_json::{Map, Value, json};

use super::{BundleError, Options};
use crate::registry::Registry;
use crate::revision::Revision;

/// The manifest version written: the newest the specification calls stable.
const MANIFEST_VERSION: &str = "0.3";

/// The `manifest.json`, and what `server.json` repeats of it.
#[derive(Debug)]
pub(super) struct Described {
    pub(super) json: Value,
    pub(super) name: String,
    pub(super) version: String,
    pub(super) title: Option<String>,
    pub(super) description: String,
    pub(super) website: Option<String>,
    /// The variables the host asks for, each with its `user_config` key.
    pub(super) asked: Vec<String>,
    pub(super) notes: Vec<String>,
}

/// `manifest.json` for `registry`, bundled as `server/{manifest_name}`.
pub(super) fn manifest_json(
    registry: &Registry,
    manifest_name: &str,
    options: &Options,
) -> Result<Described, BundleError> {
    let implementation = &registry.server.implementation;
    let text = |key: &str| {
        implementation
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty())
            .map(str::to_owned)
    };
    let name = text("name").unwrap_or_else(|| "mcp-serve".to_owned());
    let mut notes = Vec::new();
    let version = text("version").unwrap_or_else(|| {
        notes.push("the manifest has no `[server] version`; the bundle says 0.1.0".to_owned());
        "0.1.0".to_owned()
    });
    // As the registry takes a version: one, not a range, at most 255 characters.
    if version.len() > 255
        || version.eq_ignore_ascii_case("latest")
        || version.contains(['^', '~', '>', '<', '=', '*', '|', ','])
        || version.contains(char::is_whitespace)
        || version
            .rsplit('.')
            .next()
            .is_some_and(|last| last.eq_ignore_ascii_case("x"))
    {
        return Err(BundleError::Refused(format!(
            "`[server] version` `{}` is not one version of at most 255 characters, e.g. 1.2.0",
            crate::registry::shown(&version)
        )));
    }
    let title = text("title");
    let description = text("description")
        .or_else(|| title.clone())
        .unwrap_or_else(|| format!("The {name} tools, served by mcp-serve"));
    if options.author.trim().is_empty() {
        return Err(BundleError::Refused(
            "a bundle names its author: --author 'Ada Lovelace'".to_owned(),
        ));
    }
    let (user_config, env, asked) = asked(registry);
    let mut args = vec![
        json!("--config"),
        json!(format!("${{__dirname}}/server/{manifest_name}")),
    ];
    if !options.toolsets.is_empty() {
        args.push(json!("--toolsets"));
        args.push(json!(options.toolsets.join(",")));
    }
    let tools = tools(registry);
    let mut document = json!({
        "manifest_version": MANIFEST_VERSION,
        "name": name,
        "version": version,
        "description": description,
        "long_description": format!(
            "{description}\n\nServed by mcp-serve from `server/{manifest_name}`: every call is \
             checked against its tool's schema before it runs. Built for Linux on x86_64."
        ),
        "author": {"name": options.author.trim()},
        "server": {
            "type": "binary",
            "entry_point": "bin/mcp-serve",
            "mcp_config": {
                "command": "${__dirname}/bin/mcp-serve",
                "args": args,
                "env": env,
            },
        },
        "tools": tools,
        "compatibility": {"platforms": ["linux"]},
    });
    if let Some(title) = &title {
        document["display_name"] = json!(title);
    }
    let website = text("websiteUrl");
    if let Some(website) = &website {
        document["homepage"] = json!(website);
    }
    if !user_config.is_empty() {
        document["user_config"] = Value::Object(user_config);
    }
    Ok(Described {
        json: document,
        name,
        version,
        title,
        description,
        website,
        asked,
        notes,
    })
}

/// Each `${env:NAME}` the manifest reads, as a `user_config` entry the host asks its user
/// for (sensitive, required) and the `mcp_config.env` entry that passes the answer on; and
/// the variables, in the manifest's order.
fn asked(registry: &Registry) -> (Map<String, Value>, Map<String, Value>, Vec<String>) {
    let mut user_config = Map::new();
    let mut env = Map::new();
    let mut asked = Vec::new();
    for variable in registry.withheld_env() {
        if env.contains_key(variable) {
            continue;
        }
        // The variable's own name: two that differ in case are two answers.
        let key = variable.clone();
        user_config.insert(
            key.clone(),
            json!({
                "type": "string",
                "title": variable,
                "description": format!("The secret the manifest reads as ${{env:{variable}}}; kept out of every result and log"),
                "sensitive": true,
                "required": true,
            }),
        );
        env.insert(variable.clone(), json!(format!("${{user_config.{key}}}")));
        asked.push(variable.clone());
    }
    (user_config, env, asked)
}

/// `manifest.json`'s `tools`: each served tool's name and description (else its title).
fn tools(registry: &Registry) -> Vec<Value> {
    served(registry)
        .into_iter()
        .map(|tool| {
            let mut entry = Map::new();
            for key in ["name", "description"] {
                if let Some(value) = tool.get(key) {
                    entry.insert(key.to_owned(), value.clone());
                }
            }
            if !entry.contains_key("description")
                && let Some(title) = tool.get("title")
            {
                entry.insert("description".to_owned(), title.clone());
            }
            Value::Object(entry)
        })
        .collect()
}

/// The tools a stdio client of the bundled server lists: the manifest's, or in discovery
/// mode discovery's own.
fn served(registry: &Registry) -> Vec<Map<String, Value>> {
    if registry.server.discovery {
        crate::discovery::definitions(registry).into()
    } else {
        registry.listing(Revision::V2025_06, false)
    }
}
