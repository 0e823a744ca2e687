//! The MCP adapter: the only module that knows rmcp, the official Rust SDK.
//!
//! rmcp owns JSON-RPC, both lifecycles (the `initialize` handshake of
//! 2024-11-05 to 2025-11-25 and the per-request `_meta` of 2026-07-28) and version
//! negotiation. This module adapts the [`Registry`](crate::registry::Registry) to rmcp's
//! server handler (`handler`), converts our results to rmcp's types (`convert`) and owns the
//! stdio transport (`stdio`), which works around rmcp's silence on invalid JSON, and the
//! Streamable HTTP transport (`http`) with its security layers.

mod access;
mod apps;
mod convert;
pub use convert::task_result;
mod discovery;
mod elicit;
mod handler;
pub mod http;
mod listing;
mod mrtr;
mod notify;
mod outgoing;
mod pieces;
mod prompts;
mod resources;
mod skills;
mod state;
mod stdio;
mod subscriptions;
mod tasks;
mod traced;

pub use mrtr::{StateKeyError, state_codec};
pub use state::{DefinitionError, Handler, HandlerOptions};
pub use stdio::serve_stdio;

/// The address an HTTP request came from (in its extensions).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub std::net::SocketAddr);
