//! `mcp-serve-sandbox __sandbox program args…`: the sandbox's trampoline on its own, a small
//! binary the server starts each sandboxed command with (quicker to `exec` than the server's
//! own, which does the same when this one is not installed beside it).

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(code) = mcp_serve::sandbox::trampoline::if_asked() {
        return code;
    }
    eprintln!(
        "{}mcp-serve-sandbox is started by mcp-serve for each sandboxed command, not by hand",
        mcp_serve::sandbox::FAILURE_PREFIX
    );
    ExitCode::from(mcp_serve::sandbox::EXIT_CONFINE_FAILED)
}
