//! A command's process group: killed when the call ends, stopped gracefully (SIGTERM, a
//! grace period, SIGKILL) when the call is dropped, and never left behind at exit.

use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long a process group gets between SIGTERM and SIGKILL.
pub(super) const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Kills the child's whole process group when dropped, unless disarmed after a clean reap.
#[derive(Debug)]
pub(super) struct GroupGuard {
    group: Pid,
    armed: std::sync::atomic::AtomicBool,
}

impl GroupGuard {
    pub(super) fn new(pid: u32) -> Self {
        Self {
            group: Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX)),
            armed: std::sync::atomic::AtomicBool::new(true),
        }
    }

    pub(super) fn signal(&self, signal: Signal) {
        if self.armed.load(std::sync::atomic::Ordering::Acquire) {
            // ESRCH (nothing left in the group) is the normal case after a clean exit.
            let _ = killpg(self.group, signal);
        }
    }

    pub(super) fn disarm(&self) {
        self.armed
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

impl Drop for GroupGuard {
    /// A call dropped mid-run (cancelled, or the server stopping): SIGTERM now, SIGKILL after
    /// the grace period, for whatever in the group is still there.
    fn drop(&mut self) {
        if !self.armed.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let group = self.group;
        let _ = killpg(group, Signal::SIGTERM);
        if let Ok(mut stopping) = STOPPING.lock() {
            stopping.push(group);
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(TERMINATE_GRACE).await;
                    finish_stopping(group);
                });
            }
            Err(_) => finish_stopping(group),
        }
    }
}

/// Groups sent SIGTERM whose grace period has not run out yet.
static STOPPING: std::sync::Mutex<Vec<Pid>> = std::sync::Mutex::new(Vec::new());

fn finish_stopping(group: Pid) {
    let mut stopping = STOPPING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(index) = stopping.iter().position(|pending| *pending == group) {
        stopping.swap_remove(index);
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// At exit: gives groups still stopping the rest of a grace period, then kills them, so no
/// command outlives the server.
pub fn stop_remaining() {
    let pending: Vec<Pid> = STOPPING
        .lock()
        .map(|stopping| stopping.clone())
        .unwrap_or_default();
    if pending.is_empty() {
        return;
    }
    let deadline = std::time::Instant::now() + TERMINATE_GRACE;
    while std::time::Instant::now() < deadline
        && pending.iter().any(|group| killpg(*group, None).is_ok())
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    for group in pending {
        finish_stopping(group);
    }
}
