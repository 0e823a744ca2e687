//! Every process this server started, and whatever they left behind.
//!
//! A command runs in its own process group, and the group is killed when the call ends. A
//! process can leave the group (`setsid`, a double fork): then the group no longer finds
//! it. So the server makes itself a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): an
//! orphan anywhere below it is re-parented to the server instead of to init. Each call tags
//! its command's environment with a call id (`MCP_SERVE_CALL`); when the call ends, the
//! server kills the orphans carrying that call's id, round after round (an orphan's own
//! children become orphans when it dies), and reaps them. At exit it kills every orphan,
//! tagged or not. No daemon, no cgroup, no `unsafe`.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// The variable that tags a command (and everything it starts) with its call.
pub const CALL_VARIABLE: &str = "MCP_SERVE_CALL";

/// The variable that names this server process, unique even when its process id is reused,
/// for a command that keeps state per server (`examples/catalog.sh` does).
pub const INSTANCE_VARIABLE: &str = "MCP_SERVE_INSTANCE";

/// How long a process group gets between SIGTERM and SIGKILL.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Rounds of sweeping: each round kills the orphans found, whose children then become
/// orphans in turn.
const SWEEP_ROUNDS: usize = 20;

/// The server's processes: one value per server, shared by every call.
#[derive(Debug, Default)]
pub struct Processes {
    /// Commands' leaders, which tokio reaps; a sweep never touches them.
    leaders: Mutex<HashSet<i32>>,
    /// Process groups sent SIGTERM whose grace period has not run out yet.
    stopping: Mutex<Vec<Pid>>,
    /// Held for a whole sweep.
    sweeping: Mutex<()>,
    next_call: AtomicU64,
    instance: std::sync::OnceLock<String>,
    /// Our main thread's `children` file, opened once and read again from its start for
    /// every call (a path walk through `/proc` per call cost more than the read).
    children: std::sync::OnceLock<File>,
    /// Orphans are re-parented to us, so sweeps can find them.
    subreaper: bool,
}

/// What the server did to protect itself at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hardening {
    /// `PR_SET_DUMPABLE` is 0: a same-user process cannot read our memory or
    /// `/proc/<pid>/environ`, nor attach a debugger.
    pub non_dumpable: bool,
    /// `PR_SET_CHILD_SUBREAPER` is set.
    pub subreaper: bool,
}

impl Processes {
    /// For a process that runs commands: marks it non-dumpable and a child subreaper.
    pub fn supervising() -> (Self, Hardening) {
        let non_dumpable = nix::sys::prctl::set_dumpable(false)
            .map_err(|error| tracing::warn!(%error, "could not mark the server non-dumpable"))
            .is_ok();
        let subreaper = nix::sys::prctl::set_child_subreaper(true)
            .map_err(|error| {
                tracing::warn!(%error, "could not become a child subreaper: processes that leave their group may outlive their call");
            })
            .is_ok();
        let processes = Self {
            subreaper,
            ..Self::default()
        };
        (
            processes,
            Hardening {
                non_dumpable,
                subreaper,
            },
        )
    }

    /// This server process: its id and 64 random bits drawn when it started.
    pub fn instance(&self) -> &str {
        self.instance.get_or_init(|| {
            let mut bytes = [0_u8; 8];
            let _ = getrandom::fill(&mut bytes);
            format!("{}-{:016x}", std::process::id(), u64::from_be_bytes(bytes))
        })
    }

    /// A fresh id for one call's processes: this process's id (as in [`Self::instance`],
    /// read once rather than a system call per call) and a counter.
    pub fn call_id(&self) -> String {
        let call = self.next_call.fetch_add(1, Ordering::Relaxed);
        let pid = self.instance().split_once('-').map_or("0", |(pid, _)| pid);
        format!("{pid}-{call}")
    }

    /// Spawns `command` and records its leader, under the lock a sweep takes, so a sweep
    /// never mistakes a command that has just started (or just died) for an orphan.
    pub fn spawn(
        &self,
        command: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        let mut leaders = self
            .leaders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let child = command.spawn()?;
        if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
            leaders.insert(pid);
        }
        Ok(child)
    }

    /// The leader was reaped (or handed to tokio's orphan reaper).
    pub fn forget_leader(&self, pid: u32) {
        if let (Ok(mut leaders), Ok(pid)) = (self.leaders.lock(), i32::try_from(pid)) {
            leaders.remove(&pid);
        }
    }

    /// Kills and reaps the orphans tagged with `call`, and reaps untagged zombies. Returns
    /// how many processes were killed.
    pub fn sweep(&self, call: &str) -> usize {
        if !self.subreaper {
            return 0;
        }
        let tag = format!("{CALL_VARIABLE}={call}");
        self.sweep_matching(|pid| environ_has(pid, &tag))
    }

    /// Whether any child of ours is not a command's leader: an orphan to sweep (or a zombie
    /// to reap). Cheap: it reads only our tasks' `children` files.
    pub fn has_orphans(&self) -> bool {
        if !self.subreaper {
            return false;
        }
        let leaders = self
            .leaders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The kernel re-parents an orphan to the subreaper's first live thread, the main
        // one: only its `children` file needs reading (one read, not a scan).
        match self.children_file().map(read_from_start) {
            Some(Ok(children)) => String::from_utf8_lossy(&children)
                .split_ascii_whitespace()
                .filter_map(|pid| pid.parse::<i32>().ok())
                .any(|pid| !leaders.contains(&pid)),
            // No `children` files: only a full sweep can tell.
            _ => true,
        }
    }

    /// The main thread's `children` file; an open that fails (no such file, no descriptor
    /// left) is tried again next time.
    fn children_file(&self) -> Option<&File> {
        if let Some(file) = self.children.get() {
            return Some(file);
        }
        let file = File::open(format!("/proc/self/task/{}/children", std::process::id())).ok()?;
        Some(self.children.get_or_init(|| file))
    }

    /// At exit: kills every orphan still here, tagged or not.
    pub fn sweep_all(&self) -> usize {
        if !self.subreaper {
            return 0;
        }
        self.sweep_matching(|_| true)
    }

    fn sweep_matching(&self, matches: impl Fn(i32) -> bool) -> usize {
        // One sweep at a time: only a sweep reaps a process that is not a leader, so while
        // this lock is held an orphan found alive stays at least a zombie, and its pid
        // cannot be reused before it is signalled.
        let _sweeping = self
            .sweeping
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut killed = 0;
        for _ in 0..SWEEP_ROUNDS {
            let alive: Vec<i32> = {
                // Under the lock `spawn` takes, so a command that has just started (or
                // already died) is known as a leader, never taken for an orphan.
                let leaders = self
                    .leaders
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let mut alive = Vec::new();
                for orphan in orphans() {
                    if leaders.contains(&orphan.pid) {
                        continue;
                    }
                    if orphan.zombie {
                        // Ours to reap: nothing else waits for it.
                        let _ = waitpid(Pid::from_raw(orphan.pid), Some(WaitPidFlag::WNOHANG));
                    } else {
                        alive.push(orphan.pid);
                    }
                }
                alive
            };
            let found: Vec<i32> = alive.into_iter().filter(|pid| matches(*pid)).collect();
            if found.is_empty() {
                break;
            }
            for pid in found {
                let pid = Pid::from_raw(pid);
                // It may lead a group of its own (after `setsid`): end that too.
                let _ = killpg(pid, Signal::SIGKILL);
                let _ = kill(pid, Signal::SIGKILL);
                killed += 1;
            }
            // Let them die; the next round reaps them and finds their orphaned children.
            std::thread::sleep(Duration::from_millis(5));
        }
        if killed > 0 {
            tracing::info!(killed, "killed processes that had left their call's group");
        }
        killed
    }

    /// Remembers a group that got SIGTERM, for the SIGKILL after its grace period.
    pub(super) fn stopping(&self, group: Pid) {
        if let Ok(mut stopping) = self.stopping.lock() {
            stopping.push(group);
        }
    }

    /// The grace period of `group` is over: SIGKILL, unless it was already finished.
    pub(super) fn finish_stopping(&self, group: Pid) {
        let mut stopping = self
            .stopping
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(index) = stopping.iter().position(|pending| *pending == group) {
            stopping.swap_remove(index);
            let _ = killpg(group, Signal::SIGKILL);
        }
    }

    /// At exit: gives groups still stopping the rest of a grace period, kills them, then
    /// kills every orphan, so no command outlives the server.
    pub fn stop_remaining(&self) {
        let pending: Vec<Pid> = self
            .stopping
            .lock()
            .map(|stopping| stopping.clone())
            .unwrap_or_default();
        let deadline = std::time::Instant::now() + TERMINATE_GRACE;
        while !pending.is_empty()
            && std::time::Instant::now() < deadline
            && pending.iter().any(|group| killpg(*group, None).is_ok())
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        for group in pending {
            self.finish_stopping(group);
        }
        self.sweep_all();
    }
}

/// All of a `/proc` file, read from its start with `pread`: the kernel makes its text anew
/// for a read at offset 0, so one open file serves every call.
fn read_from_start(file: &File) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0_u8; 256];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            bytes.resize(bytes.len() * 2, 0);
        }
        let read = file.read_at(&mut bytes[filled..], filled as u64)?;
        if read == 0 {
            bytes.truncate(filled);
            return Ok(bytes);
        }
        filled += read;
    }
}

/// A child of this process, as `/proc` shows it.
struct Orphan {
    pid: i32,
    zombie: bool,
}

/// This process's children (the leaders tokio owns among them), from each thread's
/// `children` file, or from a scan of `/proc` where the kernel has no such files.
fn orphans() -> Vec<Orphan> {
    let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    let candidates: Vec<i32> = match children_files() {
        Some(children) => children,
        None => std::fs::read_dir("/proc")
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
                    .collect()
            })
            .unwrap_or_default(),
    };
    candidates
        .into_iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (state, parent) = parse_stat(&stat)?;
            (parent == me).then_some(Orphan {
                pid,
                zombie: state == 'Z',
            })
        })
        .collect()
}

/// `/proc/self/task/*/children` (Linux 3.5+ with `CONFIG_PROC_CHILDREN`).
fn children_files() -> Option<Vec<i32>> {
    let mut children = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("children");
        let text = std::fs::read_to_string(path).ok()?;
        children.extend(
            text.split_ascii_whitespace()
                .filter_map(|pid| pid.parse::<i32>().ok()),
        );
    }
    Some(children)
}

/// The state and parent pid from `/proc/<pid>/stat` (the name may hold spaces and `)`).
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let (_, rest) = stat.rsplit_once(") ")?;
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

/// Whether the process's environment holds exactly `entry` (`NAME=value`).
fn environ_has(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ
            .split(|byte| *byte == 0)
            .any(|item| item == entry.as_bytes())
    })
}

/// Waits until `pid` (our child) has exited, without reaping it: while it is a zombie its
/// pid, and so its process group id, cannot be reused, so the group can still be signalled
/// safely.
pub async fn exited(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    // A pidfd is readable once the process has exited, and polling it reaps nothing: no
    // SIGCHLD handler, no polling loop. Kernels before 5.3 (or a seccomp policy that refuses
    // `pidfd_open`) fall back below. No PIDFD_NONBLOCK: it only matters to `waitid` on the
    // pidfd, and kernels before 5.10 refuse it.
    let Some(pid) = rustix::process::Pid::from_raw(raw) else {
        return;
    };
    match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
        Ok(pidfd) => {
            // Deprecated because another `T` could change its descriptor under the reactor
            // (tokio pull request 8587); an `OwnedFd` cannot, and the replacement is `unsafe`.
            #[allow(deprecated)]
            let registered =
                tokio::io::unix::AsyncFd::with_interest(pidfd, tokio::io::Interest::READABLE);
            if let Ok(pidfd) = registered {
                let _ = pidfd.readable().await;
                return;
            }
        }
        // Already reaped: nothing to wait for.
        Err(rustix::io::Errno::SRCH) => return,
        Err(_) => {}
    }
    exited_by_signal(raw).await;
}

/// [`exited`] without pidfds: SIGCHLD, and `waitid` without reaping.
async fn exited_by_signal(raw: i32) {
    let mut children = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child()).ok();
    loop {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match nix::sys::wait::waitid(nix::sys::wait::Id::Pid(Pid::from_raw(raw)), flags) {
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR) => {}
            // Exited (a zombie now), or already reaped, or not ours: nothing to wait for.
            Ok(_) | Err(_) => return,
        }
        // SIGCHLD says some child changed; the timer covers a signal we missed.
        let tick = tokio::time::sleep(Duration::from_millis(100));
        match children.as_mut() {
            Some(children) => {
                tokio::select! {
                    _ = children.recv() => {}
                    () = tick => {}
                }
            }
            None => tick.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{exited, exited_by_signal, parse_stat, read_from_start};

    #[tokio::test]
    async fn an_exit_is_awaited_without_reaping_the_process() {
        for by_signal in [false, true] {
            let mut child = tokio::process::Command::new("sleep")
                .arg("0.3")
                .spawn()
                .expect("sleep");
            let pid = child.id().expect("pid");
            let started = Instant::now();
            if by_signal {
                exited_by_signal(i32::try_from(pid).expect("pid")).await;
            } else {
                exited(pid).await;
            }
            assert!(
                started.elapsed() >= Duration::from_millis(250),
                "returned before the exit (signal: {by_signal})"
            );
            // Still a zombie: its pid, and so its group id, cannot be reused yet.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
            assert_eq!(parse_stat(&stat).map(|(state, _)| state), Some('Z'));
            child.wait().await.expect("reaped");
            assert!(std::fs::metadata(format!("/proc/{pid}")).is_err());
        }
    }

    #[test]
    fn a_proc_file_read_again_from_its_start_is_current() {
        // This thread's: the test's child is its child, not the main thread's.
        let children = std::fs::File::open("/proc/thread-self/children").expect("children file");
        let text = |file| String::from_utf8(read_from_start(file).expect("read")).expect("text");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = child.id().to_string();
        let listed = |text: &str| text.split_ascii_whitespace().any(|item| item == pid);
        assert!(listed(&text(&children)), "a running child is listed");
        // Twice from the same file: the second read starts over rather than at its end.
        assert!(listed(&text(&children)), "a second read lists it again");
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert!(!listed(&text(&children)), "a reaped child is gone");
    }

    #[test]
    fn stat_lines_parse_even_with_odd_names() {
        assert_eq!(parse_stat("123 (a b) c) S 45 123 123 0"), Some(('S', 45)));
        assert_eq!(parse_stat("9 (z) Z 1 9 9"), Some(('Z', 1)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
