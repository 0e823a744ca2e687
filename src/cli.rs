//! The command line.

use std::path::PathBuf;

use clap::{ArgAction, Parser};

/// Serve the tools a TOML manifest declares as a Model Context Protocol server.
///
/// With no options, serves `./tools.toml` over stdio, the way MCP hosts (Claude Desktop and
/// Code, Cursor, VS Code) launch servers. Logs go to stderr; stdout carries protocol messages
/// only.
#[derive(Debug, Parser)]
#[command(name = "mcp-serve", version, about, long_about)]
pub struct Cli {
    /// The manifest to serve [default: ./tools.toml]
    #[arg(short, long, value_name = "FILE", env = "MCP_SERVE_CONFIG")]
    pub config: Option<PathBuf>,

    /// More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,
}
