//! `mcp-serve __sandbox program args…`: confine this process as the policy in
//! `$MCP_SERVE_SANDBOX` says, then become the program. `main` runs it before parsing the
//! command line, so it costs one `exec` of this binary and a few system calls.
//!
//! When confining fails, it prints `mcp-serve sandbox: <reason>` on stderr and exits 125
//! (127 when the program does not exist, 126 when it cannot be executed), as `env` does.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::ExitCode;

use super::{
    EXIT_CONFINE_FAILED, FAILURE_PREFIX, POLICY_VARIABLE, Policy, limits, ruleset, seccomp,
};

/// Runs the trampoline with the arguments after `__sandbox`; returns only on failure.
pub fn run(mut args: impl Iterator<Item = OsString>) -> ExitCode {
    let Some(program) = args.next() else {
        return fail(EXIT_CONFINE_FAILED, "no program to run");
    };
    let policy = match std::env::var(POLICY_VARIABLE)
        .map_err(|error| format!("${POLICY_VARIABLE}: {error}"))
        .and_then(|text| {
            serde_json::from_str::<Policy>(&text)
                .map_err(|error| format!("${POLICY_VARIABLE}: {error}"))
        }) {
        Ok(policy) => policy,
        Err(reason) => return fail(EXIT_CONFINE_FAILED, &reason),
    };
    if let Err(reason) = confine(&policy) {
        return fail(EXIT_CONFINE_FAILED, &reason);
    }
    let error = std::process::Command::new(&program)
        .args(args)
        .env_remove(POLICY_VARIABLE)
        .exec();
    let status = if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    fail(status, &error.to_string())
}

/// Applies every restriction of `policy` to this process, in an order where each step
/// still has what it needs: the namespace first (it needs `/proc/self`), Landlock before
/// the open-files limit (it opens each path), seccomp last (it denies `unshare`).
pub fn confine(policy: &Policy) -> Result<(), String> {
    let mut limits = policy.limits;
    if policy.user_namespace
        && let Err(reason) = limits::own_user_namespace()
    {
        // Some containers forbid user namespaces the probe thought available: without one,
        // RLIMIT_NPROC would count every process of the user, so the limit is dropped.
        if policy.required {
            return Err(reason);
        }
        limits.processes = None;
    }
    nix::sys::prctl::set_no_new_privs()
        .map_err(|error| format!("could not set no_new_privs: {error}"))?;
    if policy.landlock_abi > 0 {
        ruleset::restrict(policy)?;
    }
    limits::apply(&limits)?;
    seccomp::install(&policy.seccomp)?;
    Ok(())
}

fn fail(status: u8, reason: &str) -> ExitCode {
    // Never a panic: stderr may be closed.
    let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{reason}");
    ExitCode::from(status)
}
