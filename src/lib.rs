//! `mcp-serve` serves the tools a TOML manifest declares as a Model Context Protocol server.
//!
//! # Layout
//!
//! A call flows through the modules in one direction:
//!
//! ```text
//! manifest ──► registry ──► tool ──► backend ──► results ──► mcp (adapter) ──► transport
//!  (TOML)      (tools in     (validate,  (command)   (output     (rmcp: JSON-RPC,     (stdio)
//!               order)        defaults)               pipeline)   lifecycle, eras)
//! ```
//!
//! - [`manifest`] reads the TOML, reports every problem at once as a [`diagnostic`] pointing
//!   into the file, and builds the [`registry`]. Its `wire` shapes are never seen elsewhere.
//! - [`registry`] holds the server identity and the [`tool`]s in manifest order, with the
//!   `tools/list` answer for each protocol [`era`] built once.
//! - [`tool`] is the one call path: defaults, input validation against the compiled
//!   [`schema`], the [`backend`], then the output pipeline in [`results`].
//! - [`template`] is the only place argument values are turned into text for a backend; it
//!   fills whole argv elements and environment values, never a shell command line.
//! - [`backend`] runs commands in their own process group with limits and timeouts.
//! - [`mcp`] is the only module that knows rmcp, the official Rust SDK: it adapts the
//!   registry to rmcp's server handler and owns the stdio transport.
//! - [`cli`] parses the command line and [`run`] wires everything together for `main`.
//!
//! Errors are typed (`thiserror`) inside; `anyhow` appears only in [`run`].

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
