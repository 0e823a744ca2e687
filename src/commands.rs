//! The commands for people (`check`, `list`, `call`, `completions`); serving is in `run`.
//! They print for a terminal: results on stdout, messages on stderr in the style of STYLE.md.

pub mod answer;
pub mod bundle;
pub mod call;
pub mod call_task;
pub mod check;
#[cfg(feature = "openapi")]
pub mod import;
/// Without the `openapi` feature, `import openapi` says the importer was left out.
#[cfg(not(feature = "openapi"))]
#[path = "commands/import_unbuilt.rs"]
pub mod import;
pub mod init;
pub mod install;
pub mod list;
pub mod search;
pub mod size;
pub mod skill;
pub mod tasks;
pub mod test;

/// Exit code for a tool error from `call`, or findings from `check`.
pub const EXIT_FAILURE: u8 = 1;

pub use crate::failure::{color, label};

/// Writes a command's output to stdout (a broken pipe, as in `| head`, is not an error).
pub fn print(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `mcp-serve completions SHELL`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut command, "mcp-serve", out);
}
