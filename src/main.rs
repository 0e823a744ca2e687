use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    mcp_serve::run::run(&mcp_serve::cli::Cli::parse())
}
