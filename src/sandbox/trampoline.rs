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
    EXIT_CONFINE_FAILED, FAILURE_PREFIX, POLICY_VARIABLE, Policy, cgroup, denied, limits,
    namespace, netns, ruleset, seccomp,
};

/// Runs the trampoline with the arguments after `__sandbox`; returns only on failure.
/// When this process was started as the trampoline (`BINARY __sandbox program args…`), runs
/// it: confine, then `exec`, before anything else. Both binaries ask this first.
pub fn if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    args.nth(1)
        .is_some_and(|first| first == super::TRAMPOLINE)
        .then(|| run(args))
}

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
    let mut command = std::process::Command::new(&program);
    command.args(args).env_remove(POLICY_VARIABLE);
    // In its own network namespace, the program needs this process to forward for it.
    let error = if in_namespace(&policy) {
        match netns::run_child(&mut command) {
            Ok(ended) => return ended,
            Err(error) => error,
        }
    } else {
        command.exec()
    };
    let (status, reason) = denied::exec_failure(&program, &error);
    fail(status, &reason)
}

/// Applies every restriction of `policy` to this process, in an order where each step
/// still has what it needs: descriptors closed first, then the namespaces (they need
/// `/proc/self`), Landlock before the open-files limit (it opens each path), seccomp last
/// (it denies `unshare` and `mount`).
pub fn confine(policy: &Policy) -> Result<(), String> {
    close_inherited()?;
    if let Some(cgroup) = &policy.cgroup {
        // Before the namespaces: in a user namespace of its own the cgroup's files are no
        // longer its user's.
        cgroup::join(cgroup)?;
    }
    let entered = namespace::enter(policy)?;
    let mut limits = policy.limits;
    if !entered.counts_processes {
        limits.processes = None;
    }
    if let Some(route) = &policy.proxy
        && let Some(socket) = &route.namespace
    {
        netns::enter(route, socket)?;
    }
    if nix::unistd::geteuid().is_root() {
        drop_capabilities()?;
    }
    nix::sys::prctl::set_no_new_privs()
        .map_err(|error| format!("could not set no_new_privs: {error}"))?;
    if policy.landlock_abi > 0 {
        ruleset::restrict(policy)?;
    }
    limits::apply(&limits)?;
    seccomp::install(&policy.seccomp)?;
    if policy.read_only && !entered.read_only && !policy.seccomp.is_empty() {
        // No read-only mounts after all: no metadata changes anywhere, then.
        seccomp::install(&seccomp::metadata_denied()?)?;
    }
    Ok(())
}

/// Root keeps every capability through `exec` while they are in its bounding set: with
/// `CAP_SYS_ADMIN` a program could clone a mount without its read-only flag, with
/// `CAP_NET_ADMIN` reconfigure the host's network, with `CAP_LINUX_IMMUTABLE` make a file
/// immutable. Emptied after the namespaces and the cgroup (which need them), the program
/// starts with none.
fn drop_capabilities() -> Result<(), String> {
    use caps::CapSet;
    for set in [CapSet::Ambient, CapSet::Inheritable, CapSet::Bounding] {
        caps::clear(None, set)
            .map_err(|error| format!("could not drop the capabilities ({set:?}): {error}"))?;
    }
    Ok(())
}

/// Closes every descriptor but stdin, stdout and stderr, whatever the server inherited from
/// whoever started it: the program must not read a file through a descriptor its rules do
/// not cover. (The descriptors this process opens later are close-on-exec.)
fn close_inherited() -> Result<(), String> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|error| format!("could not list /proc/self/fd: {error}"))?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in listed {
        // The listing's own descriptor is gone by now (EBADF): nothing to close.
        match nix::unistd::close(fd) {
            Ok(()) | Err(nix::errno::Errno::EBADF) => {}
            Err(error) => return Err(format!("could not close descriptor {fd}: {error}")),
        }
    }
    Ok(())
}

fn in_namespace(policy: &Policy) -> bool {
    policy
        .proxy
        .as_ref()
        .is_some_and(|route| route.namespace.is_some())
}

fn fail(status: u8, reason: &str) -> ExitCode {
    // Never a panic: stderr may be closed.
    let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{reason}");
    ExitCode::from(status)
}
