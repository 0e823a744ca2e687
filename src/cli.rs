//! The command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, Parser};

use crate::units::{parse_duration_text, parse_size_text};

/// Serve the tools a TOML manifest declares as a Model Context Protocol server.
///
/// With no options, serves `./tools.toml` over stdio, the way MCP hosts (Claude Desktop and
/// Code, Cursor, VS Code) launch servers. Logs go to stderr; stdout carries protocol messages
/// only. With `--http`, serves Streamable HTTP instead.
#[derive(Debug, Parser)]
#[command(name = "mcp-serve", version, about, long_about)]
pub struct Cli {
    /// The manifest to serve [default: ./tools.toml]
    #[arg(short, long, value_name = "FILE", env = "MCP_SERVE_CONFIG")]
    pub config: Option<PathBuf>,

    /// More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,

    /// At most this many tool calls run at once; more fail fast with a tool error
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls: u32,

    /// Calls that may wait for a free slot when --max-calls are running; beyond, calls fail fast
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub queue: usize,

    /// Reload the manifest when it changes (a broken edit keeps the previous tools), and tell
    /// clients that the tool list changed
    #[arg(long)]
    pub watch: bool,

    /// For a call that asked for progress: report it is still running after this long without
    /// progress (0 turns heartbeats off)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_heartbeat)]
    pub heartbeat: Duration,

    #[command(flatten)]
    pub http: HttpArgs,
}

fn parse_heartbeat(text: &str) -> Result<Duration, String> {
    if text.trim() == "0" {
        Ok(Duration::ZERO)
    } else {
        parse_duration_text(text)
    }
}

/// Streamable HTTP options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Streamable HTTP")]
pub struct HttpArgs {
    /// Serve Streamable HTTP on this address instead of stdio (port 0 picks a free port)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// The MCP endpoint's path
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http")]
    pub path: String,

    /// Give legacy (2025) clients sessions: a GET stream and resumable responses. The 2026
    /// protocol is always stateless
    #[arg(long, requires = "http")]
    pub sessions: bool,

    /// With --sessions: the most sessions open at once
    #[arg(long, value_name = "N", default_value_t = 100, requires = "sessions")]
    pub max_sessions: usize,

    /// With --sessions: close a session after this long without requests
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration_text, requires = "sessions")]
    pub session_idle: Duration,

    /// Answer with application/json (not an SSE stream) when no notification precedes the result
    #[arg(long, requires = "http")]
    pub json_response: bool,

    /// Accept this Host header (repeatable); default: the loopback names, plus the bound address
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,

    /// Accept this Origin, e.g. `https://app.example.com:443` or `http://localhost:*` (repeatable);
    /// default when bound to loopback: localhost origins; requests without Origin always pass
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this environment variable
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "auth_token_file",
        requires = "http"
    )]
    pub auth_token_env: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this file
    #[arg(long, value_name = "PATH", requires = "http")]
    pub auth_token_file: Option<PathBuf>,

    /// Serve a non-loopback address without a token (when something in front authenticates)
    #[arg(long, requires = "http")]
    pub allow_unauthenticated: bool,

    /// The largest request body accepted
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = parse_size_text, requires = "http")]
    pub max_body: usize,

    /// How long a client may take to send request headers, and how long an idle connection stays open
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration_text, requires = "http")]
    pub header_timeout: Duration,

    /// On SIGTERM or SIGINT, how long in-flight calls get to finish before they are stopped
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration_text, requires = "http")]
    pub shutdown_grace: Duration,
}
