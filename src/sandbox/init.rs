//! When the trampoline stays the program's parent: in a PID namespace of the call's own,
//! and in a network namespace of its own (whose forwarder, one thread of the trampoline's,
//! `netns` starts before the PID namespace).
//!
//! A PID namespace ends with its first process (its init): the kernel then kills every
//! other process in it. So everything a call started ends with the call, whatever it did to
//! its session, process group or environment (`setsid env -i … &`). `unshare(CLONE_NEWPID)`
//! puts the caller's next child, not the caller, in the namespace, and without `unsafe` a
//! child starts only by `exec`; so the trampoline, in its namespaces, [`start`]s itself
//! again as [`INIT`], which [`run`]s: it restricts itself (Landlock, the limits and seccomp
//! would forbid starting it afterwards), spawns the program, reaps whatever is re-parented
//! to it, and ends as soon as the program ends. In a network namespace alone it `exec`s the
//! program instead. The trampoline waits, and ends as the program ended.
//!
//! Signals: the trampoline holds the termination signals, which the program, in the same
//! process group, gets itself (a signal held is held in the children too, so the init lets
//! them go first). A namespace's init takes no signal it has no handler for, but SIGKILL
//! from outside: the server's SIGTERM reaches the program and no one else; its SIGKILL ends
//! all three, and with the init the namespace. The init cannot end by the signal that killed
//! the program (it would not be delivered), so it writes how the program ended to a pipe the
//! trampoline reads.
//!
//! Both are undumpable, so that the program, as the same user with no capabilities, cannot
//! open their descriptors (the pipe, which it could fill and so hang the call) through /proc.

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{ExitCode, ExitStatus};

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::sys::signal::{SigSet, Signal};

use super::namespace::Entered;
use super::trampoline::{fail, policy, restrict};
use super::{EXIT_CONFINE_FAILED, POLICY_VARIABLE, denied};

/// The hidden subcommand of the trampoline's second process:
/// `__sandbox_init STATUS_FD ENTERED program args…`.
pub(super) const INIT: &str = "__sandbox_init";

/// The tasks of ours that the call's process limit (and its cgroup's `pids.max`) leaves room
/// for: the trampoline and the init when it stays the program's parent, and the forwarder's
/// one thread (however many connections it forwards).
pub(super) fn ours(pid_namespace: bool, forwarding: bool) -> u64 {
    let parents = if pid_namespace {
        2
    } else {
        u64::from(forwarding)
    };
    parents + u64::from(forwarding)
}

/// The signals a trampoline that stays the program's parent holds.
const HELD: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// Holds [`HELD`] in this thread and every thread it starts from here on.
pub(super) fn hold_termination() -> Result<(), String> {
    held()
        .thread_block()
        .map_err(|error| format!("could not hold signals: {error}"))
}

fn held() -> SigSet {
    HELD.into_iter().collect()
}

/// In the trampoline, inside its namespaces: starts [`INIT`] with the program, waits for it,
/// and ends as the program ended.
pub(super) fn start(
    entered: Entered,
    program: &OsString,
    args: impl Iterator<Item = OsString>,
) -> Result<ExitCode, String> {
    hold_termination()?;
    let (from_init, to_trampoline) = nix::unistd::pipe2(OFlag::empty())
        .map_err(|error| format!("could not make the init's pipe: {error}"))?;
    close_on_exec(&from_init)?;
    let mut init = std::process::Command::new("/proc/self/exe")
        .arg(INIT)
        .arg(to_trampoline.as_raw_fd().to_string())
        .arg(entered.to_argument())
        .arg(program)
        .args(args)
        .spawn()
        .map_err(|error| format!("could not start the sandbox's init: {error}"))?;
    drop(to_trampoline);
    let status = init
        .wait()
        .map_err(|error| format!("could not wait for the sandbox's init: {error}"))?;
    // The init ends only once every process of its namespace has: no writer is left.
    let mut report = Vec::new();
    let _ = std::fs::File::from(from_init).read_to_end(&mut report);
    Ok(Ended::read(&report)
        .unwrap_or_else(|| Ended::of(status))
        .finish())
}

/// `__sandbox_init STATUS_FD ENTERED program args…`, started by [`start`].
pub(super) fn run(mut args: impl Iterator<Item = OsString>) -> ExitCode {
    let parsed = (|| {
        let fd: RawFd = args.next()?.to_str()?.parse().ok()?;
        let entered = Entered::from_argument(args.next()?.to_str()?)?;
        Some((fd, entered, args.next()?))
    })();
    let Some((fd, entered, program)) = parsed else {
        return fail(
            EXIT_CONFINE_FAILED,
            "the sandbox's init was started wrongly",
        );
    };
    let Some(report) = inherited(fd) else {
        return fail(EXIT_CONFINE_FAILED, "the sandbox's init has no pipe");
    };
    // Before anything else, no process of the call's user can reach this one's descriptors
    // (the pipe) or memory through /proc.
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        return fail(
            EXIT_CONFINE_FAILED,
            &format!("could not be undumpable: {error}"),
        );
    }
    let confined = policy()
        .and_then(|policy| {
            held()
                .thread_unblock()
                .map_err(|error| format!("could not let signals go: {error}"))
                .map(|()| policy)
        })
        .and_then(|policy| {
            let ours = ours(entered.pid_namespace, policy.namespace_route().is_some());
            restrict(&policy, entered, ours)
        });
    if let Err(reason) = confined {
        return fail(EXIT_CONFINE_FAILED, &reason);
    }
    let mut command = std::process::Command::new(&program);
    command.args(args).env_remove(POLICY_VARIABLE);
    let error = if entered.pid_namespace {
        match command.spawn() {
            Ok(child) => {
                let ended = reap_until(child.id());
                let _ = (&report).write_all(&ended.write());
                return ended.finish_as_init();
            }
            Err(error) => error,
        }
    } else {
        // The pipe is close-on-exec: the trampoline sees the program's own status.
        command.exec()
    };
    let (status, reason) = denied::exec_failure(&program, &error);
    fail(status, &reason)
}

/// Reaps every child (the program, and whatever is re-parented to this init) until the
/// program has ended. (rustix's status keeps any signal, real-time ones too.)
fn reap_until(program: u32) -> Ended {
    loop {
        match rustix::process::wait(rustix::process::WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get().unsigned_abs() == program => {
                return match (status.exit_status(), status.terminating_signal()) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(signal)) => Ended::Signaled(signal),
                    (None, None) => continue,
                };
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            // No child left, yet the program was not seen ending.
            Err(_) => return Ended::Exited(i32::from(EXIT_CONFINE_FAILED)),
        }
    }
}

/// The pipe's end this process inherited as descriptor `fd`, opened again (close-on-exec)
/// and the inherited descriptor closed, so that the program does not inherit it.
fn inherited(fd: RawFd) -> Option<std::fs::File> {
    if fd <= 2 {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/proc/self/fd/{fd}"))
        .ok()?;
    nix::unistd::close(fd).ok()?;
    Some(file)
}

fn close_on_exec(fd: &OwnedFd) -> Result<(), String> {
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map(drop)
        .map_err(|error| format!("could not keep the init's pipe to itself: {error}"))
}

/// How the program ended, for the trampoline to end the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Exited(i32),
    Signaled(i32),
}

impl Ended {
    fn of(status: ExitStatus) -> Self {
        status.code().map_or_else(
            || Self::Signaled(status.signal().unwrap_or(libc::SIGKILL)),
            Self::Exited,
        )
    }

    /// As a line on the pipe; [`Self::read`] reads it back.
    fn write(self) -> Vec<u8> {
        match self {
            Self::Exited(code) => format!("exit {code}\n"),
            Self::Signaled(signal) => format!("signal {signal}\n"),
        }
        .into_bytes()
    }

    fn read(line: &[u8]) -> Option<Self> {
        let line = std::str::from_utf8(line).ok()?.strip_suffix('\n')?;
        let (kind, number) = line.split_once(' ')?;
        let number = number.parse().ok()?;
        match kind {
            "exit" => Some(Self::Exited(number)),
            "signal" => Some(Self::Signaled(number)),
            _ => None,
        }
    }

    /// Ends this process the same way: with the exit code, or by the same signal (with no
    /// core file of ours); 128 + the signal if it does not end it. The standard library's
    /// handlers for SIGSEGV and SIGBUS put the default back when a signal is not a stack
    /// overflow, so the second one ends this process; SIGPIPE, which it ignores, and the
    /// real-time signals (which nix cannot name) end it as 128 + the signal.
    fn finish(self) -> ExitCode {
        if let Self::Signaled(number) = self
            && let Ok(signal) = Signal::try_from(number)
        {
            let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
            let mut one = SigSet::empty();
            one.add(signal);
            let _ = one.thread_unblock();
            for _ in 0..2 {
                let _ = nix::sys::signal::raise(signal);
            }
        }
        self.finish_as_init()
    }

    /// A namespace's init cannot end by a signal it sends itself: the exit code, or 128 +
    /// the signal.
    fn finish_as_init(self) -> ExitCode {
        let code = match self {
            Self::Exited(code) => code,
            Self::Signaled(signal) => 128 + signal,
        };
        ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::Ended;

    #[test]
    fn how_the_program_ended_crosses_the_pipe_unchanged() {
        for ended in [
            Ended::Exited(0),
            Ended::Exited(255),
            Ended::Signaled(9),
            Ended::Signaled(31),
        ] {
            assert_eq!(Ended::read(&ended.write()), Some(ended));
        }
        for wrong in [&b""[..], b"exit 3", b"exit x\n", b"quit 3\n", b"signal\n"] {
            assert_eq!(Ended::read(wrong), None);
        }
    }
}
