//! `mcp-serve-sandbox __sandbox program args…`: the sandbox's trampoline on its own, a small
//! binary the server starts each sandboxed command with (quicker to `exec` than the server's
//! own, which does the same when this one is not installed beside it).

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args
        .nth(1)
        .is_some_and(|first| first == mcp_serve::sandbox::TRAMPOLINE)
    {
        return mcp_serve::sandbox::trampoline::run(args);
    }
    eprintln!(
        "{}mcp-serve-sandbox is started by mcp-serve for each sandboxed command, not by hand",
        mcp_serve::sandbox::FAILURE_PREFIX
    );
    ExitCode::from(mcp_serve::sandbox::EXIT_CONFINE_FAILED)
}
