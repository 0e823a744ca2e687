//! `mcp-serve` serves the tools a TOML manifest declares as a Model Context Protocol server.
//!
//! # Layout
//!
//! A call flows through the modules in one direction:
//!
//! ```text
//! manifest ──► registry ──► tool ──────► backend ─────────► results ──────► mcp (adapter) ──► transport
//!  (TOML,       (tools in    (defaults,   (command | http    (output          (rmcp: JSON-RPC,   (stdio |
//!   checked)     order)       validation,  | static)          pipeline,        lifecycle, eras)   Streamable
//!                             limits)                         content blocks)                     HTTP)
//! ```
//!
//! - [`manifest`] reads the TOML, reports every problem at once as a [`diagnostic`] pointing
//!   into the file, and builds the [`registry`]. Its `wire` shapes are never seen elsewhere
//!   (except to derive the manifest's JSON Schema).
//! - [`registry`] holds the server identity, the [`tool`]s in manifest order, and the
//!   resource store; `mcp` builds the `tools/list` answer of each protocol [`era`] once.
//! - [`tool`] is the one call path: defaults, input validation against the compiled
//!   [`schema`] (compiled at load when the author wrote it, on first use when we generated
//!   it), the tool's [`limit`], the [`backend`], then the output pipeline in [`results`]
//!   (content blocks, structured output, truncation, the resource store).
//! - [`template`] is the only place argument values become text for a command: whole argv
//!   elements and environment values, never a shell command line. HTTP requests are built in
//!   `backend::http` from structural sinks only, with [`secret`]s resolved at load and
//!   redacted from everything a tool returns.
//! - [`backend`] runs commands in their own process group (supervised on their own task, so
//!   a cancelled call still gets SIGTERM and a grace period), sends HTTP requests (through
//!   clients made on first use and shared by tools with the same redirect rules), or returns
//!   declared results. Running commands report progress and logs as [`events`].
//! - [`mcp`] is the only module that knows rmcp, the official Rust SDK: it adapts the
//!   registry to rmcp's server handler, forwards events as notifications, and owns the stdio
//!   and Streamable HTTP transports and their security layers.
//! - [`reload`] watches the manifest (`--watch`) and swaps the registry in whole.
//! - [`commands`] are the commands for people (`check`, `list`, `call`, `test`, `init`,
//!   `install`); [`cli`] parses the command line and [`run`] wires everything for `main`.
//! - Small pieces: [`units`] (durations and sizes), [`suggest`] (did you mean).
//!
//! `build.rs` only asks the linker to pack relocations (a smaller binary that starts with
//! less memory); the release profile is tuned the same way (README, Performance).
//!
//! Errors are typed (`thiserror`) inside; `anyhow` appears only in [`run`] (and in the
//! benchmark, `benches/perf/`, which measures all of this beside the machine's floor).

pub mod backend;
pub mod cli;
pub mod commands;
pub mod diagnostic;
pub mod era;
pub mod events;
pub mod limit;
pub mod manifest;
pub mod mcp;
pub mod registry;
pub mod reload;
pub mod results;
pub mod run;
pub mod schema;
pub mod secret;
pub mod suggest;
pub mod template;
pub mod tool;
pub mod units;
