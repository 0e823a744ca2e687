//! `mcp-serve init`: a commented starter manifest that passes `check`, with the manifest's
//! JSON Schema beside it for editors.

use crate::failure::Failure;
use std::path::Path;

const HEADER: &str = r#"#:schema ./tools.schema.json
# mcp-serve manifest: each [[tools]] table is one tool an AI host can call.
# Check it with `mcp-serve check`, try a tool with `mcp-serve call greet name=Ada`,
# and serve it with `mcp-serve --config tools.toml`. docs/manifest.md has every key.

[server]
name = "my-tools"
version = "0.1.0"
"#;

const COMMAND_TOOL: &str = r#"
[[tools]]
name = "greet"
title = "Greet someone"
description = "Say hello to a person by name"
annotations = { read-only = true, open-world = false }

# Arguments are required unless they have a default or say `optional = true`.
[tools.arguments.name]
type = "string"
description = "Who to greet"
max-length = 100

[tools.command]
# No shell: each element is one argv entry, and `{name}` can never add or split entries.
# `--` keeps a name that starts with `-` from reading as an option.
argv = ["printf", "--", "Hello, %s!\n", "{name}"]
timeout = "10s"

# The kernel confines the command (Linux; `mcp-serve check` shows what yours enforces): it
# reads nothing but the system's programs and libraries, writes nothing, reaches no network,
# and gets bounded memory and CPU time. List folders in `read` and `write` as a tool needs.
[tools.sandbox]
read = []
write = []
network = false
memory = "256MiB"
cpu = "10s"

[[tools.examples]]
arguments = { name = "Ada" }
text = "Hello, Ada!"
"#;

const HTTP_TOOL: &str = r#"
[[tools]]
name = "github-repo"
title = "GitHub repository"
description = "Look up a public GitHub repository"
annotations = { read-only = true, open-world = true }

[tools.arguments.owner]
type = "string"
pattern = "^[A-Za-z0-9-]+$"

[tools.arguments.repo]
type = "string"
pattern = "^[A-Za-z0-9._-]+$"

[tools.http]
# The host is written out; arguments fill path segments, percent-encoded.
url = "https://api.github.com/repos/{owner}/{repo}"
# For private repositories, add a token from the environment:
# headers = { Authorization = "Bearer ${env:GITHUB_TOKEN}" }
headers = { Accept = "application/vnd.github+json" }
response-pointer = ""
timeout = "15s"
"#;

const APP: &str = r#"
# An MCP App (docs/apps.md): hosts that render them (Claude, VS Code, Cursor, …) show
# greet.html with the result, and its button calls `greet` again through the host. Other
# hosts get the text alone.
[tools.app]
page = "greet.html"
"#;

/// The starter page of `--app`.
const PAGE: &str = include_str!("init/greet.html");

/// What the starter holds.
#[derive(Debug, Clone, Copy, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one flag of `init` each, read once"
)]
pub struct Starter {
    pub command_tool: bool,
    pub http_tool: bool,
    /// A page for the command tool (which it implies).
    pub app: bool,
    pub force: bool,
}

/// The starter manifest's text.
pub fn starter(choice: Starter) -> String {
    let mut text = HEADER.to_owned();
    if choice.command_tool || choice.app || !choice.http_tool {
        text.push_str(COMMAND_TOOL);
        if choice.app {
            text.push_str(APP);
        }
    }
    if choice.http_tool {
        text.push_str(HTTP_TOOL);
    }
    text
}

/// Writes the manifest and the schema beside it (and the page, with `--app`); refuses to
/// overwrite unless `force`.
pub fn write(path: &Path, choice: Starter) -> Result<String, Failure> {
    let page = path.with_file_name("greet.html");
    for target in [Some(path), choice.app.then_some(page.as_path())]
        .into_iter()
        .flatten()
    {
        if target.exists() && !choice.force {
            return Err(
                Failure::new(format!("`{}` already exists", target.display()))
                    .hint("pass `--force` to replace it"),
            );
        }
    }
    let schema = path.with_file_name("tools.schema.json");
    crate::userfile::write(path, starter(choice).as_bytes())
        .map_err(|error| Failure::new(error.to_string()))?;
    crate::userfile::write(&schema, crate::manifest::json_schema().as_bytes())
        .map_err(|error| Failure::new(error.to_string()))?;
    if choice.app {
        crate::userfile::write(&page, PAGE.as_bytes())
            .map_err(|error| Failure::new(error.to_string()))?;
    }
    Ok(format!(
        "wrote `{}` and `{}`\n\nnext: `mcp-serve check --config {0}`, then `mcp-serve call greet name=Ada --config {0}`\n",
        path.display(),
        schema.display()
    ))
}
