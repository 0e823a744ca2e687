use std::process::ExitCode;

fn main() -> ExitCode {
    // A sandboxed command may start as this binary (when mcp-serve-sandbox is not beside it).
    if let Some(code) = mcp_serve::sandbox::trampoline::if_asked() {
        return code;
    }
    // A projection (`project`) runs in this binary started as its worker.
    if let Some(code) = mcp_serve::results::project::worker::if_asked() {
        return code;
    }
    mcp_serve::run::run(&mcp_serve::cli::Cli::from_env())
}
