//! `mcp-serve skill`: a `SKILL.md` on using the manifest's tools, from their titles,
//! descriptions, arguments and examples, for a person to edit and then serve with
//! `[[skills]]` (the `io.modelcontextprotocol/skills` extension, [`crate::skill`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::failure::Failure;
use crate::registry::Registry;

/// The longest `description` a skill may have (Agent Skills).
const MAX_DESCRIPTION: usize = 1024;

/// Writes `<folder>/<name>/SKILL.md`; `name` defaults to the server's name, made a skill
/// name. An existing file is kept unless `force`.
pub fn write(
    registry: &Registry,
    name: Option<&str>,
    folder: &Path,
    force: bool,
) -> Result<String, Failure> {
    let server = registry
        .server
        .implementation
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("tools");
    let name = match name {
        Some(name) => name.to_owned(),
        None => slug(server),
    };
    if !crate::skill::valid_name(&name) {
        return Err(Failure::new(format!(
            "`{name}` is not a skill name: 1 to 64 lowercase letters, digits and single hyphens; choose one with --name"
        )));
    }
    let path: PathBuf = folder.join(&name).join(crate::skill::ENTRY);
    if path.exists() && !force {
        return Err(Failure::new(format!(
            "`{}` exists; edit it, or pass --force to write it again",
            path.display()
        )));
    }
    crate::userfile::write(&path, render(registry, &name).as_bytes())
        .map_err(|error| Failure::new(error.to_string()))?;
    Ok(format!(
        "wrote `{}`\n\nedit it (what to call first, what to avoid), then serve it:\n\n[[skills]]\npath = \"{}\"\n",
        path.display(),
        folder.join(&name).display()
    ))
}

/// `name` as a skill name: lowercase ASCII letters and digits, other runs as one hyphen.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    for character in name.chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    slug.chars()
        .take(64)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// The `SKILL.md` text.
pub fn render(registry: &Registry, name: &str) -> String {
    let implementation = &registry.server.implementation;
    let title = implementation
        .get("title")
        .or_else(|| implementation.get("name"))
        .and_then(Value::as_str)
        .unwrap_or(name);
    let tools: Vec<String> = registry
        .tools()
        .map(|tool| {
            tool.definition
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(&tool.name)
                .to_owned()
        })
        .collect();
    let mut description = format!("Use the {title} tools: {}.", tools.join(", "));
    if description.chars().count() > MAX_DESCRIPTION {
        description = description
            .chars()
            .take(MAX_DESCRIPTION - 1)
            .collect::<String>()
            + "…";
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "---\nname: {name}\ndescription: {}\n---\n",
        yaml_string(&description)
    );
    let _ = writeln!(text, "# {title}\n");
    if let Some(about) = implementation.get("description").and_then(Value::as_str) {
        let _ = writeln!(text, "{about}\n");
    }
    if let Some(instructions) = &registry.server.instructions {
        let _ = writeln!(text, "{instructions}\n");
    }
    text.push_str("<!-- Say here what a model should know: which tool to call first, what the results mean, what to avoid. -->\n\n## Tools\n");
    for tool in registry.tools() {
        section(&mut text, tool);
    }
    text
}

fn section(text: &mut String, tool: &crate::tool::Tool) {
    let definition = &tool.definition;
    if !text.ends_with("\n\n") {
        text.push('\n');
    }
    let _ = write!(text, "### `{}`", tool.name);
    if let Some(title) = definition.get("title").and_then(Value::as_str) {
        let _ = write!(text, ": {title}");
    }
    text.push_str("\n\n");
    if let Some(description) = definition.get("description").and_then(Value::as_str) {
        let _ = writeln!(text, "{description}\n");
    }
    let schema = tool.input_schema.as_ref();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (argument, property) in properties {
            let kind = property
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("any");
            let needed = if required.contains(&argument.as_str()) {
                ", required"
            } else {
                ""
            };
            let _ = write!(text, "- `{argument}` ({kind}{needed}");
            for (key, shown) in [
                ("minimum", "at least"),
                ("maximum", "at most"),
                ("default", "default"),
                ("enum", "one of"),
            ] {
                if let Some(value) = property.get(key) {
                    let _ = write!(text, ", {shown} {value}");
                }
            }
            text.push(')');
            if let Some(about) = property.get("description").and_then(Value::as_str) {
                let _ = write!(text, ": {about}");
            }
            text.push('\n');
        }
        if !properties.is_empty() {
            text.push('\n');
        }
    }
    for example in &tool.examples {
        let arguments = Value::Object(example.arguments.clone());
        let _ = write!(text, "Example ({}): `{arguments}`", example.name);
        if let Some(expected) = example.text.as_ref().or(example.text_contains.as_ref()) {
            let _ = write!(text, " gives `{}`", expected.replace('\n', "⏎"));
        }
        text.push_str("\n\n");
    }
}

/// A YAML double-quoted scalar.
fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_become_skill_names() {
        assert_eq!(slug("catalog"), "catalog");
        assert_eq!(slug("My Tools!"), "my-tools");
        assert_eq!(slug("--a__b--"), "a-b");
        assert_eq!(slug("ÉÉ"), "");
        assert!(slug(&"x-".repeat(60)).len() <= 64);
        assert!(crate::skill::valid_name(&slug(&"x-".repeat(60))));
    }
}
