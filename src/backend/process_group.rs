//! A command's process group: killed when the call ends, stopped gracefully (SIGTERM, a
//! grace period, SIGKILL) when the call is dropped, and never signalled once its leader is
//! reaped (the id could by then belong to someone else's group).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::processes::{Processes, TERMINATE_GRACE};

/// Kills the child's whole process group when dropped, unless its leader was reaped.
#[derive(Debug)]
pub(super) struct GroupGuard {
    group: Pid,
    /// Cleared when the leader is reaped: from then on the group id is not ours.
    armed: AtomicBool,
    processes: Arc<Processes>,
}

impl GroupGuard {
    pub(super) fn new(pid: u32, processes: Arc<Processes>) -> Self {
        Self {
            group: Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX)),
            armed: AtomicBool::new(true),
            processes,
        }
    }

    pub(super) fn signal(&self, signal: Signal) {
        if self.armed.load(Ordering::Acquire) {
            // ESRCH (nothing left in the group) is the normal case after a clean exit.
            let _ = killpg(self.group, signal);
        }
    }

    /// The leader has been reaped: never signal the group id again.
    pub(super) fn reaped(&self) {
        self.armed.store(false, Ordering::Release);
    }
}

impl Drop for GroupGuard {
    /// A call dropped mid-run (cancelled, or the server stopping): SIGTERM now, SIGKILL after
    /// the grace period, for whatever in the group is still there.
    fn drop(&mut self) {
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        let group = self.group;
        let _ = killpg(group, Signal::SIGTERM);
        self.processes.stopping(group);
        let processes = Arc::clone(&self.processes);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(TERMINATE_GRACE).await;
                    processes.finish_stopping(group);
                });
            }
            Err(_) => processes.finish_stopping(group),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;
    use std::sync::Arc;

    use nix::sys::signal::Signal;

    use super::GroupGuard;
    use crate::backend::processes::Processes;

    fn alive(child: &mut std::process::Child) -> bool {
        matches!(child.try_wait(), Ok(None))
    }

    #[test]
    fn a_group_is_never_signalled_once_its_leader_is_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep");
        // Stands in for a group id that now belongs to someone else.
        let guard = GroupGuard::new(child.id(), Arc::new(Processes::default()));
        guard.reaped();
        guard.signal(Signal::SIGKILL);
        drop(guard);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            alive(&mut child),
            "a reaped leader's group id was signalled"
        );

        let guard = GroupGuard::new(child.id(), Arc::new(Processes::default()));
        guard.signal(Signal::SIGKILL);
        let status = child.wait().expect("wait");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        guard.reaped();
    }
}
