//! Resource limits (the process limit counts one call in its own user namespace, `namespace`).

use nix::sys::resource::{Resource, setrlimit};

use super::Limits;

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
