//! A cgroup v2 of its own for each sandboxed call with `memory` or `processes`, where the
//! machine delegates one: `memory.max` (and `memory.swap.max = 0`, `memory.oom.group = 1`)
//! and `pids.max` count every process of the call together, the trampoline joins it before
//! it confines itself, and the server kills what is left in it (`cgroup.kill`) and removes it
//! after the call. Without delegation nothing changes.
//!
//! Where the calls' cgroups go ([`setup`], once per server, at the first call that needs
//! one), by the rules of cgroup v2 (a cgroup with processes cannot hand controllers to its
//! children, except the root):
//!
//! 1. the server's own cgroup, when it is the root or the server is alone in it (a
//!    container's only process, a `systemd-run --scope -p Delegate=yes`, a service with
//!    `Delegate=yes`): the server moves into a leaf `mcp-serve` of it and enables `memory`
//!    and `pids` for its children;
//! 2. otherwise a cgroup `mcp-serve-<pid>` beside the server's, when its parent is writable
//!    and hands out both controllers (root on most hosts, a delegated user manager).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// `0` turns cgroups off (to see how a manifest behaves without them).
pub const CGROUPS_OVERRIDE_VARIABLE: &str = "MCP_SERVE_CGROUPS";

const CONTROLLERS: [&str; 2] = ["memory", "pids"];

/// Why calls get no cgroup, or a call did not get its own. `Clone`: the probe and the
/// set-up are kept for the server's life.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CgroupError {
    #[error("turned off by {CGROUPS_OVERRIDE_VARIABLE}")]
    TurnedOff,
    #[error("no cgroup v2 hierarchy in /proc/self/cgroup")]
    NoHierarchy,
    #[error("no cgroup2 file system mounted")]
    NotMounted,
    #[error("`{}` does not get the memory and pids controllers (it has: {has})", .cgroup.display())]
    NoControllers { cgroup: PathBuf, has: String },
    #[error("`{}` is not delegated to this user (not writable)", .0.display())]
    NotDelegated(PathBuf),
    #[error("`{}` is not writable", .0.display())]
    NotWritable(PathBuf),
    #[error("`{}` is not writable with memory and pids enabled", .0.display())]
    ParentClosed(PathBuf),
    #[error("the server's cgroup is the root")]
    Root,
    #[error("`{}`: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    #[error("{0} (other processes share the server's cgroup)")]
    Shared(Box<CgroupError>),
    #[error("{first}; and beside it: {second}")]
    Neither {
        first: Box<CgroupError>,
        second: Box<CgroupError>,
    },
}

impl CgroupError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source: Arc::new(source),
        }
    }
}

/// Where calls' cgroups can go, as far as a look (no change) can tell: `Ok` the server's
/// cgroup, `Err` why not.
pub fn probe() -> &'static Result<PathBuf, CgroupError> {
    static PROBE: OnceLock<Result<PathBuf, CgroupError>> = OnceLock::new();
    PROBE.get_or_init(|| {
        if std::env::var(CGROUPS_OVERRIDE_VARIABLE).is_ok_and(|value| value.trim() == "0") {
            return Err(CgroupError::TurnedOff);
        }
        let own = own_cgroup()?;
        let available = read(&own.join("cgroup.controllers"));
        if !CONTROLLERS.iter().all(|wanted| has(&available, wanted)) {
            let has = match available.trim() {
                "" => "none",
                some => some,
            };
            return Err(CgroupError::NoControllers {
                cgroup: own,
                has: has.to_owned(),
            });
        }
        let parent = own
            .parent()
            .filter(|_| own.join("..").join("cgroup.procs").exists());
        if writable(&own) || parent.is_some_and(writable) {
            Ok(own)
        } else {
            Err(CgroupError::NotDelegated(own))
        }
    })
}

/// The server's cgroup v2 folder, from `/proc/self/cgroup` and the cgroup2 mount.
fn own_cgroup() -> Result<PathBuf, CgroupError> {
    let cgroup = read(Path::new("/proc/self/cgroup"));
    let path = cgroup
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .ok_or(CgroupError::NoHierarchy)?;
    let mountinfo = read(Path::new("/proc/self/mountinfo"));
    let (root, mount) = mountinfo
        .lines()
        .find_map(|line| {
            let (fields, after) = line.split_once(" - ")?;
            after.starts_with("cgroup2 ").then_some(())?;
            let fields: Vec<&str> = fields.split(' ').collect();
            Some((fields.get(3)?.to_string(), fields.get(4)?.to_string()))
        })
        .ok_or(CgroupError::NotMounted)?;
    let relative = path.strip_prefix(root.as_str()).unwrap_or(path);
    let relative = relative.trim_start_matches('/');
    let mount = PathBuf::from(mount);
    Ok(if relative.is_empty() {
        mount
    } else {
        mount.join(relative)
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn has(list: &str, controller: &str) -> bool {
    list.split_whitespace().any(|name| name == controller)
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
        && nix::unistd::access(&dir.join("cgroup.procs"), nix::unistd::AccessFlags::W_OK).is_ok()
}

fn write(path: &Path, text: &str) -> Result<(), CgroupError> {
    std::fs::write(path, text).map_err(CgroupError::io(path))
}

static SETUP: OnceLock<Result<PathBuf, CgroupError>> = OnceLock::new();

/// At exit: removes the `mcp-serve-<pid>` cgroup made beside the server's (case 2), once
/// the calls' are gone. (In case 1 the server's own leaf stays: the server is in it.)
pub fn teardown() {
    if let Some(Ok(base)) = SETUP.get()
        && base
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("mcp-serve-"))
    {
        let _ = std::fs::remove_dir(base);
    }
}

/// The folder calls' cgroups are made in, set up at the first call (moving the server into
/// a leaf of its own cgroup when it may); `Err` says why there is none.
pub fn setup() -> &'static Result<PathBuf, CgroupError> {
    SETUP.get_or_init(|| {
        let own = probe().clone()?;
        let made = in_own(&own).or_else(|first| {
            beside(&own).map_err(|second| CgroupError::Neither {
                first: Box::new(first),
                second: Box::new(second),
            })
        });
        match &made {
            Ok(base) => tracing::info!(cgroups = %base.display(), "sandbox: each call with memory or processes gets a cgroup here"),
            Err(reason) => tracing::warn!(%reason, "sandbox: cgroups are delegated, but could not be set up; calls run without"),
        }
        made
    })
}

/// Case 1: the server moves into `own/mcp-serve` and enables the controllers in `own`.
fn in_own(own: &Path) -> Result<PathBuf, CgroupError> {
    if !writable(own) {
        return Err(CgroupError::NotWritable(own.to_path_buf()));
    }
    let enabled = read(&own.join("cgroup.subtree_control"));
    if CONTROLLERS.iter().all(|wanted| has(&enabled, wanted)) {
        return Ok(own.to_path_buf());
    }
    let leaf = own.join("mcp-serve");
    match std::fs::create_dir(&leaf) {
        Ok(()) => {}
        Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
        Err(error) => return Err(CgroupError::io(&leaf)(error)),
    }
    write(&leaf.join("cgroup.procs"), &std::process::id().to_string())?;
    let enable = CONTROLLERS.map(|name| format!("+{name}")).join(" ");
    write(&own.join("cgroup.subtree_control"), &enable).map_err(|error| {
        // Other processes share the cgroup: go back where the server was.
        let _ = write(&own.join("cgroup.procs"), &std::process::id().to_string());
        let _ = std::fs::remove_dir(&leaf);
        CgroupError::Shared(Box::new(error))
    })?;
    Ok(own.to_path_buf())
}

/// Case 2: `parent/mcp-serve-<pid>`, beside the server's cgroup.
fn beside(own: &Path) -> Result<PathBuf, CgroupError> {
    let parent = own.parent().ok_or(CgroupError::Root)?;
    let enabled = read(&parent.join("cgroup.subtree_control"));
    if !writable(parent) || !CONTROLLERS.iter().all(|wanted| has(&enabled, wanted)) {
        return Err(CgroupError::ParentClosed(parent.to_path_buf()));
    }
    let base = parent.join(format!("mcp-serve-{}", std::process::id()));
    std::fs::create_dir(&base).map_err(CgroupError::io(&base))?;
    write(
        &base.join("cgroup.subtree_control"),
        &CONTROLLERS.map(|name| format!("+{name}")).join(" "),
    )?;
    Ok(base)
}

/// The call's cgroup, when its sandbox has `memory` or `processes` and cgroups are
/// delegated here; without them, `Ok(None)`. A required sandbox fails the call rather than
/// run without the cgroup `check` promised; another runs as it would without delegation.
pub fn for_call(sandbox: &super::Sandbox) -> Result<Option<CallCgroup>, CgroupError> {
    let limits = sandbox.limits;
    if !sandbox.kernel.cgroups || (limits.memory.is_none() && limits.processes.is_none()) {
        return Ok(None);
    }
    // The trampoline, the PID namespace's init and the forwarder count too.
    let forwarding =
        sandbox.kernel.network_namespaces && matches!(sandbox.network, super::Network::Hosts(_));
    let ours = super::init::ours(sandbox.kernel.pid_namespaces, forwarding);
    let processes = limits.processes.map(|count| count.saturating_add(ours));
    let made = setup()
        .clone()
        .and_then(|base| CallCgroup::create(&base, limits.memory, processes));
    match made {
        Ok(call) => Ok(Some(call)),
        Err(reason) if sandbox.required => Err(reason),
        Err(reason) => {
            tracing::debug!(%reason, "sandbox: the call runs without a cgroup");
            Ok(None)
        }
    }
}

/// What the kernel counted in a call's cgroup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Events {
    /// Processes the OOM killer killed at `memory.max` (`memory.events` `oom_kill`).
    pub oom_kills: u64,
    /// Forks refused at `pids.max` (`pids.events` `max`).
    pub forks_refused: u64,
}

/// One call's cgroup; dropping it kills what is left in it and removes it.
#[derive(Debug)]
pub struct CallCgroup {
    path: PathBuf,
}

impl CallCgroup {
    /// Makes the call's cgroup beneath `base` with its limits.
    pub fn create(
        base: &Path,
        memory: Option<u64>,
        processes: Option<u64>,
    ) -> Result<Self, CgroupError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = base.join(format!(
            "call-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path).map_err(CgroupError::io(&path))?;
        let call = Self { path };
        if let Some(bytes) = memory {
            write(&call.path.join("memory.max"), &bytes.to_string())?;
            // Swap would let it hold more than its limit; one process out of memory ends
            // the call, not a random one of its processes.
            let _ = write(&call.path.join("memory.swap.max"), "0");
            let _ = write(&call.path.join("memory.oom.group"), "1");
        }
        if let Some(count) = processes {
            write(&call.path.join("pids.max"), &count.to_string())?;
        }
        Ok(call)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the kernel counted so far.
    pub fn events(&self) -> Events {
        let count = |file: &str, key: &str| {
            read(&self.path.join(file))
                .lines()
                .find_map(|line| line.strip_prefix(key)?.trim().parse().ok())
                .unwrap_or(0)
        };
        Events {
            oom_kills: count("memory.events", "oom_kill "),
            forks_refused: count("pids.events", "max "),
        }
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        // Whatever is left (a process that left its group and cleared its environment)
        // dies with the call; the cgroup can go once its processes are gone.
        if let Ok(mut kill) = std::fs::OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.kill"))
        {
            use std::io::Write as _;
            let _ = kill.write_all(b"1");
        }
        let busy = |path: &Path| {
            std::fs::remove_dir(path)
                .is_err_and(|error| error.raw_os_error() == Some(nix::libc::EBUSY))
        };
        if !busy(&self.path) {
            return;
        }
        // Killed processes take a moment to exit; the call does not wait for them.
        let path = std::mem::take(&mut self.path);
        std::thread::spawn(move || {
            for _ in 0..200 {
                std::thread::sleep(std::time::Duration::from_millis(5));
                if !busy(&path) {
                    return;
                }
            }
            tracing::warn!(cgroup = %path.display(), "sandbox: a call's cgroup still has processes; left in place");
        });
    }
}

/// Moves this process (the trampoline, before it confines itself) into `cgroup`.
/// Its error crosses to the server as the trampoline's text.
pub(super) fn join(cgroup: &Path) -> Result<(), String> {
    write(
        &cgroup.join("cgroup.procs"),
        &std::process::id().to_string(),
    )
    .map_err(|error| format!("could not join the call's cgroup: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_cgroup_gets_its_limits_reports_its_events_and_is_removed() {
        // A folder standing in for a cgroup v2 one: the files the kernel would make.
        let base = tempfile::tempdir().expect("temp");
        let call = CallCgroup::create(base.path(), Some(64 << 20), Some(16)).expect("create");
        let path = call.path().to_path_buf();
        assert_eq!(read(&path.join("memory.max")), "67108864");
        assert_eq!(read(&path.join("pids.max")), "16");
        assert_eq!(read(&path.join("memory.oom.group")), "1");
        std::fs::write(
            path.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n",
        )
        .expect("events");
        std::fs::write(path.join("pids.events"), "max 5\n").expect("events");
        assert_eq!(
            call.events(),
            Events {
                oom_kills: 2,
                forks_refused: 5
            }
        );
        // (A real cgroup's files go with it; here they are removed first.)
        for file in std::fs::read_dir(&path).expect("list").flatten() {
            std::fs::remove_file(file.path()).expect("remove");
        }
        drop(call);
        assert!(!path.exists());
        let unlimited = CallCgroup::create(base.path(), None, None).expect("create");
        assert!(!unlimited.path().join("memory.max").exists());
        assert_ne!(unlimited.path(), path, "each call its own");
    }

    /// Where this process may make a cgroup v2 (root in a container, with or without
    /// controllers): the call cgroup's mechanics, joined, killed and removed for real.
    #[test]
    fn a_real_call_cgroup_is_joined_and_whatever_is_left_in_it_killed_and_removed() {
        let Some(own) = own_cgroup().ok().filter(|own| writable(own)) else {
            eprintln!("SKIPPED: no writable cgroup v2 here");
            return;
        };
        let call = match CallCgroup::create(&own, None, None) {
            Ok(call) => call,
            Err(reason) => {
                eprintln!(
                    "SKIPPED: no cgroup can be made in `{}`: {reason}",
                    own.display()
                );
                return;
            }
        };
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep");
        let pid = child.id();
        std::fs::write(call.path().join("cgroup.procs"), pid.to_string()).expect("join");
        assert_eq!(
            read(&call.path().join("cgroup.procs")).trim(),
            pid.to_string()
        );
        let path = call.path().to_path_buf();
        let killable = path.join("cgroup.kill").exists();
        drop(call);
        let status = child.wait().expect("wait");
        if killable {
            assert_eq!(
                std::os::unix::process::ExitStatusExt::signal(&status),
                Some(9),
                "cgroup.kill ended what was left"
            );
            // The removal retries on its own thread until the killed process is gone.
            for _ in 0..400 {
                if !path.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert!(!path.exists(), "removed after its process was gone");
        }
    }
}
