//! Integration tests: the real binary over real pipes, with real child processes.
#![allow(
    clippy::needless_pass_by_value,
    reason = "helpers take `json!` values by value so call sites read naturally"
)]
// Built without a default feature, the tests that need it are left out (`#[cfg(feature)]`),
// and the helpers only they use go unused.
#![cfg_attr(
    not(all(feature = "redis", feature = "otlp", feature = "openapi")),
    allow(dead_code, unused_imports)
)]

mod harness;
mod http_harness;
mod schema_samples;
mod source_scan;
mod upstream;

mod apps;
mod apps_browser;
mod ask;
mod audit;
mod auth_clients;
mod bundle;
mod cli;
mod command_backend;
mod conformance;
mod connections;
mod cookbook;
mod discovery;
mod discovery_lists;
mod dist;
mod docs;
mod doors;
mod errors;
mod events;
mod frameworks;
mod hostile;
mod http;
mod http_backend;
mod http_styles;
mod image;
#[cfg(feature = "openapi")]
mod import_calls;
#[cfg(feature = "openapi")]
mod import_openapi;
mod input_required;
mod interop;
mod layers;
mod lean;
mod lifecycle;
mod lists;
mod long_running;
mod manifest_errors;
mod metrics;
mod modern_era;
mod oauth;
mod oauth_client;
mod oauth_scopes;
mod outgoing;
mod pipeline;
mod projection;
mod prompts;
mod properties;
mod rate_limits;
mod redaction;
mod redaction_edges;
mod resources;
mod rich_results;
mod safety_commands;
mod safety_http;
mod sandbox;
mod sandbox_cgroups;
mod sandbox_escapes;
mod sandbox_forwarding;
mod sandbox_fronting;
mod sandbox_network;
mod sandbox_shims;
#[cfg(feature = "redis")]
mod scale_out;
mod shared_schemas;
mod skills;
mod tasks;
mod tools;
mod toolset_endpoints;
mod toolsets;
#[cfg(feature = "otlp")]
mod traces;
mod userfiles;
