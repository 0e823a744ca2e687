use std::process::ExitCode;

fn main() -> ExitCode {
    // A sandboxed command starts as this binary: confine, then exec, before anything else.
    let mut args = std::env::args_os();
    if args
        .nth(1)
        .is_some_and(|first| first == mcp_serve::sandbox::TRAMPOLINE)
    {
        return mcp_serve::sandbox::trampoline::run(args);
    }
    mcp_serve::run::run(&mcp_serve::cli::Cli::from_env())
}
