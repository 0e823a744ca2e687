//! `mcp-serve __sandbox program args…`: confine this process as the policy in
//! `$MCP_SERVE_SANDBOX` says, then become the program. `main` runs it before parsing the
//! command line, so it costs one `exec` of this binary and a few system calls. In a PID or
//! network namespace of the call's own it stays the program's parent, and starts itself
//! once more (`init`) to restrict itself and start the program.
//!
//! When confining fails, it prints `mcp-serve sandbox: <reason>` on stderr and exits 125
//! (127 when the program does not exist, 126 when it cannot be executed), as `env` does.
//!
//! Its steps (here, `init`, `namespace`, `netns`, `ruleset`, `seccomp`, `limits`,
//! `cgroup::join`) return `Result<_, String>` on purpose: the reason is a message for a
//! person that crosses to the server as that one line of text, where no type survives.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::ExitCode;

use super::namespace::Entered;
use super::{
    EXIT_CONFINE_FAILED, FAILURE_PREFIX, POLICY_VARIABLE, Policy, cgroup, denied, init, limits,
    namespace, netns, ruleset, seccomp,
};

/// When this process was started as the trampoline (`BINARY __sandbox program args…`), or
/// as the process it starts when it stays the program's parent (`init::INIT`), runs it
/// before anything else.
/// Both binaries ask this first.
pub fn if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let first = args.nth(1)?;
    if first == super::TRAMPOLINE {
        Some(run(args))
    } else if first == init::INIT {
        Some(init::run(args))
    } else {
        None
    }
}

/// Runs the trampoline with the arguments after `__sandbox`.
pub fn run(mut args: impl Iterator<Item = OsString>) -> ExitCode {
    let Some(program) = args.next() else {
        return fail(EXIT_CONFINE_FAILED, "no program to run");
    };
    let entered = match policy().and_then(|policy| Ok((enter(&policy)?, policy))) {
        Ok(entered) => entered,
        Err(reason) => return fail(EXIT_CONFINE_FAILED, &reason),
    };
    let (entered, policy) = entered;
    // In its own PID or network namespace, this process stays the program's parent (and
    // forwards, in a network namespace), and starts the init, which starts the program.
    if entered.pid_namespace || policy.namespace_route().is_some() {
        return init::start(entered, &program, args)
            .unwrap_or_else(|reason| fail(EXIT_CONFINE_FAILED, &reason));
    }
    if let Err(reason) = restrict(&policy, entered, 0) {
        return fail(EXIT_CONFINE_FAILED, &reason);
    }
    let error = std::process::Command::new(&program)
        .args(args)
        .env_remove(POLICY_VARIABLE)
        .exec();
    let (status, reason) = denied::exec_failure(&program, &error);
    fail(status, &reason)
}

/// The call's policy, from [`POLICY_VARIABLE`].
pub(super) fn policy() -> Result<Policy, String> {
    let text =
        std::env::var(POLICY_VARIABLE).map_err(|error| format!("${POLICY_VARIABLE}: {error}"))?;
    serde_json::from_str(&text).map_err(|error| format!("${POLICY_VARIABLE}: {error}"))
}

/// The first half, what needs this process's privileges: descriptors closed first, then
/// the cgroup and the namespaces (they need `/proc/self`), the network namespace and its
/// forwarder before the PID namespace (after which no thread starts).
fn enter(policy: &Policy) -> Result<Entered, String> {
    close_inherited()?;
    if let Some(cgroup) = &policy.cgroup {
        // Before the namespaces: in a user namespace of its own the cgroup's files are no
        // longer its user's.
        cgroup::join(cgroup)?;
    }
    namespace::enter(policy, || {
        // Where it stays the program's parent, no process of the call's user reaches its
        // descriptors or memory through /proc (an `exec` makes the program dumpable again).
        nix::sys::prctl::set_dumpable(false)
            .map_err(|error| format!("could not be undumpable: {error}"))?;
        let Some((route, socket)) = policy.namespace_route() else {
            return Ok(());
        };
        netns::enter()?;
        // The forwarder holds them too; the init lets them go before it starts the program.
        init::hold_termination()?;
        netns::forward(route, socket)
    })
}

/// The second half, in the process that starts the program: capabilities dropped,
/// `no_new_privs`, Landlock before the limits (it opens each path), seccomp last (it denies
/// `unshare` and `mount`). The process limit leaves room for `ours`, the processes of the
/// sandbox's own in the call's user namespace.
pub(super) fn restrict(policy: &Policy, entered: Entered, ours: u64) -> Result<(), String> {
    let mut limits = policy.limits;
    limits.processes = limits
        .processes
        .filter(|_| entered.counts_processes)
        .map(|count| count.saturating_add(ours));
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

pub(super) fn fail(status: u8, reason: &str) -> ExitCode {
    // Never a panic: stderr may be closed.
    let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{reason}");
    ExitCode::from(status)
}
