//! Resource limits, and the user namespace that makes the process limit count one call.

use nix::sys::resource::{Resource, setrlimit};

use super::Limits;

/// Moves this process into a new user namespace where it keeps its own user and group
/// ids. `RLIMIT_NPROC` is counted per user *per namespace*, so the limit then counts this
/// call's processes, not every process of the server's user.
pub(super) fn own_user_namespace() -> Result<(), String> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER)
        .map_err(|error| format!("could not create a user namespace: {error}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text)
            .map_err(|error| format!("could not write /proc/self/{file}: {error}"))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

/// Sets each declared limit, soft and hard (so the program cannot raise it back). CPU time
/// gets one more second hard: the kernel sends SIGXCPU at the soft limit, which tells this
/// limit apart from other deaths, and SIGKILL at the hard one.
pub(super) fn apply(limits: &Limits) -> Result<(), String> {
    let set = |resource: Resource, name: &str, soft: u64, hard: u64| {
        setrlimit(resource, soft, hard)
            .map_err(|error| format!("could not set the {name} limit: {error}"))
    };
    if let Some(bytes) = limits.memory {
        set(Resource::RLIMIT_DATA, "memory", bytes, bytes)?;
    }
    if let Some(seconds) = limits.cpu {
        set(Resource::RLIMIT_CPU, "CPU time", seconds, seconds + 1)?;
    }
    if let Some(count) = limits.processes {
        set(Resource::RLIMIT_NPROC, "process", count, count)?;
    }
    if let Some(bytes) = limits.file_size {
        set(Resource::RLIMIT_FSIZE, "file size", bytes, bytes)?;
    }
    if let Some(count) = limits.open_files {
        set(Resource::RLIMIT_NOFILE, "open files", count, count)?;
    }
    Ok(())
}
