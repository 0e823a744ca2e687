//! `mcp-serve install HOST`: adds this server to a host's configuration, with absolute paths
//! to the binary and the manifest (hosts start servers from anywhere, often `/`; a relative
//! path is the top cause of "spawn ENOENT"), keeping the rest of the file as it was. With
//! `--via uvx` or `--via npx` the host starts the published package instead, pinned to this
//! build's version, the way hosts' own examples start servers.

use crate::failure::Failure;
use std::path::{Path, PathBuf};

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::registry::Registry;

/// Hosts we know how to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
}

impl Host {
    /// The host's user-level configuration file.
    pub fn config_path(self, home: &Path) -> PathBuf {
        let config_dir = || {
            if cfg!(target_os = "macos") {
                home.join("Library/Application Support")
            } else {
                std::env::var_os("XDG_CONFIG_HOME")
                    .map_or_else(|| home.join(".config"), PathBuf::from)
            }
        };
        match self {
            Self::ClaudeDesktop => config_dir().join("Claude/claude_desktop_config.json"),
            Self::ClaudeCode => home.join(".claude.json"),
            Self::Cursor => home.join(".cursor/mcp.json"),
            Self::Vscode => config_dir().join("Code/User/mcp.json"),
        }
    }

    /// The key the servers live under.
    fn servers_key(self) -> &'static str {
        match self {
            Self::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    fn entry(self, launch: &Launch, manifest: &Path) -> Value {
        let mut args = launch.args.clone();
        args.extend(["--config".to_owned(), manifest.display().to_string()]);
        args.extend(launch.after.iter().cloned());
        match self {
            Self::ClaudeDesktop | Self::Cursor => {
                json!({"command": launch.command, "args": args})
            }
            Self::ClaudeCode | Self::Vscode => {
                json!({"type": "stdio", "command": launch.command, "args": args})
            }
        }
    }
}

/// How the host starts the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Via {
    /// This binary, by its absolute path
    #[default]
    Path,
    /// `uvx mcp-serve@VERSION`: the wheel from the Python package index, cached by uv
    Uvx,
    /// `npx -y mcp-serve@VERSION`: the npm package and its platform binary
    Npx,
}

/// The command and the arguments before `--config` that start the server, and those after
/// it (the toolsets chosen when it was installed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    pub after: Vec<String>,
}

/// How the host is to start the server: through what, with which toolsets chosen.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    pub via: Via,
    /// `--toolsets` as given to `install`: the host's server serves the same.
    pub toolsets: &'a [String],
}

impl Launch {
    /// `binary` is this program's absolute path (for [`Via::Path`]); the packages are pinned
    /// to this build's own name and version, so the host runs what was installed.
    pub fn new(via: Via, binary: &Path) -> Self {
        let package = concat!(env!("CARGO_PKG_NAME"), "@", env!("CARGO_PKG_VERSION"));
        let (command, args) = match via {
            Via::Path => (binary.display().to_string(), vec![]),
            Via::Uvx => ("uvx".to_owned(), vec![package.to_owned()]),
            Via::Npx => ("npx".to_owned(), vec!["-y".to_owned(), package.to_owned()]),
        };
        Self {
            command,
            args,
            after: Vec::new(),
        }
    }
}

/// Whether an entry was written by `install` (by any version, by any `--via`): it starts an
/// `mcp-serve` binary, or the package through uvx or npx, on a manifest. Anything else under
/// the same name is another server's, which only `--force` replaces.
fn is_ours(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|args| args.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let program = Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    let package = |arg: &&str| *arg == "mcp-serve" || arg.starts_with("mcp-serve@");
    let starts_us =
        program == "mcp-serve" || (matches!(program, "uvx" | "npx") && args.iter().any(package));
    starts_us && args.contains(&"--config")
}

/// Adds or updates the server `name`; returns what to tell the user. With `dry_run`, only
/// the snippet is returned and nothing is written. An entry of another server under `name`
/// is left alone unless `force`; no message ever shows what an entry held before (its `env`
/// may hold a token), and updating our own entry keeps what the person added to it (`env`,
/// `cwd`, a host's own keys).
pub fn install(
    host: Host,
    name: &str,
    launch: &Launch,
    manifest: &Path,
    home: &Path,
    dry_run: bool,
    force: bool,
) -> Result<String, Failure> {
    let entry = host.entry(launch, manifest);
    let key = host.servers_key();
    if dry_run {
        let snippet = json!({ key: { name: entry } });
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&snippet).unwrap_or_default()
        ));
    }
    let path = host.config_path(home);
    let mut document = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Ok(text) => serde_json::from_str::<Value>(&text).map_err(|error| {
            Failure::new(format!(
                "`{}` is not valid JSON ({error}); it was left as it is",
                path.display()
            ))
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(error) => {
            return Err(Failure::new(format!(
                "could not read `{}`: {error}",
                path.display()
            )));
        }
    };
    let Some(root) = document.as_object_mut() else {
        return Err(Failure::new(format!(
            "`{}` does not hold a JSON object; it was left as it is",
            path.display()
        )));
    };
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(Failure::new(format!(
            "`{key}` in `{}` is not an object; it was left as it is",
            path.display()
        )));
    };
    let verb = match servers.get_mut(name) {
        None => {
            servers.insert(name.to_owned(), entry.clone());
            "added"
        }
        Some(previous) if is_ours(previous) => {
            let mut updated = previous.clone();
            if let (Some(fields), Some(ours)) = (updated.as_object_mut(), entry.as_object()) {
                fields.extend(ours.iter().map(|(key, value)| (key.clone(), value.clone())));
            }
            if updated == *previous {
                return Ok(format!(
                    "`{name}` is already in `{}`; nothing changed\n",
                    path.display()
                ));
            }
            *previous = updated;
            "updated"
        }
        Some(_) if !force => {
            return Err(Failure::new(format!(
                "`{name}` in `{}` is another server's entry, not one mcp-serve wrote; \
                 it was left as it is",
                path.display()
            ))
            .hint("pass `--name NAME` to add this server beside it, or `--force` to replace it"));
        }
        Some(previous) => {
            *previous = entry.clone();
            "replaced another server's entry with"
        }
    };
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    crate::userfile::write_private(&path, text.as_bytes())
        .map_err(|error| Failure::new(error.to_string()))?;
    Ok(format!(
        "{verb} `{name}` in `{}`:\n{}\nrestart the host to load it\n",
        path.display(),
        serde_json::to_string_pretty(&entry).unwrap_or_default()
    ))
}

/// Runs `mcp-serve install`: `Err` is a message for the user (exit 2).
pub fn command(
    registry: &Registry,
    manifest: &Path,
    host: Host,
    start: Start<'_>,
    name: Option<&str>,
    dry_run: bool,
    force: bool,
) -> Result<ExitCode, Failure> {
    let name = name.map_or_else(
        || {
            registry
                .server
                .implementation
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("mcp-serve")
                .to_owned()
        },
        str::to_owned,
    );
    let absolute = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let binary = std::env::current_exe()
        .map(|binary| absolute(&binary))
        .map_err(|error| Failure::new(format!("cannot find this program's path: {error}")))?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| Failure::new("HOME is not set"))?;
    let mut launch = Launch::new(start.via, &binary);
    if !start.toolsets.is_empty() {
        launch.after = vec!["--toolsets".to_owned(), start.toolsets.join(",")];
    }
    let message = install(
        host,
        &name,
        &launch,
        &absolute(manifest),
        &home,
        dry_run,
        force,
    )?;
    if dry_run {
        super::print(&message);
    } else {
        eprint!("{message}");
    }
    Ok(ExitCode::SUCCESS)
}
