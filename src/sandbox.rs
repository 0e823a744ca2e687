//! Kernel confinement for command tools (`[tools.sandbox]`, `[server.sandbox]`): what a
//! command may read, write, execute and connect to, and how much it may use. No daemon, no
//! container, no `unsafe` in this crate.
//!
//! The server cannot restrict a child between `fork` and `exec` without `unsafe`, so a
//! sandboxed command starts as the [`trampoline`] (`mcp-serve-sandbox __sandbox program
//! args…`, a small binary installed beside the server's, else the server's own binary: the
//! [`launcher`]). It reads the call's [`Policy`] from its environment,
//! confines itself, then `exec`s the real program, which inherits every restriction:
//!
//! 1. every descriptor but 0, 1 and 2 closed, whatever the server inherited; with `memory`
//!    or `processes` where cgroup v2 is delegated, into the call's own cgroup (`cgroup`:
//!    `memory.max`, `pids.max` for the whole call);
//! 2. its own namespaces (`namespace`): a mount namespace where everything but the write
//!    paths is read-only (so no `chmod`, `utime` or xattr outside them), and with
//!    `processes`, a user namespace, so that `RLIMIT_NPROC` counts this call's processes only;
//!    with a host list, a network namespace with only loopback, forwarded to the egress
//!    proxy by one thread of the trampoline, under none of the program's limits (`netns`);
//!    a PID namespace, so that nothing the call starts outlives it. In
//!    either, the trampoline stays the program's parent: it starts itself again (`init`),
//!    which takes steps 3 to 6 itself and, as the PID namespace's init, spawns the program
//!    (or `exec`s it, in a network namespace alone);
//! 3. `no_new_privs`, always;
//! 4. Landlock: file system rights beneath the declared paths, TCP connect and bind by
//!    port, and (ABI 6) no signals or abstract sockets out of the sandbox (`ruleset`);
//! 5. resource limits: memory (`RLIMIT_DATA`), CPU time, file size, open files;
//! 6. a seccomp filter denying what no tool needs, sockets when the network is off, a
//!    listening socket unless the network is open, and the metadata calls where there are
//!    no read-only mounts (`seccomp`).
//!
//! `support` probes once per load what this kernel enforces, so that `check`, the log and
//! `required = true` tell the truth about each tool. At load, [`shims`] follows the program's
//! `#!` lines and version-manager shims to what it needs to start (granted read and
//! execute); when it still cannot start, `denied` names the path refused.

pub mod cgroup;
mod denied;
mod init;
pub mod launcher;
mod limits;
mod namespace;
mod netns;
pub mod policy;
mod ruleset;
mod seccomp;
pub mod shims;
mod support;
pub mod trampoline;

use std::path::PathBuf;

pub use denied::explain as explain_denied;
pub use policy::{NetworkRule, Policy, Route};
pub use support::{
    ABI_OVERRIDE_VARIABLE, Enforcement, MOUNTS_OVERRIDE_VARIABLE, NETWORK_OVERRIDE_VARIABLE,
    PIDS_OVERRIDE_VARIABLE, Support,
};

/// The variables that point a command with a host list at the egress proxy.
pub const PROXY_VARIABLES: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The variables that would send some hosts around the proxy, cleared for such a command.
pub const NO_PROXY_VARIABLES: &[&str] = &["NO_PROXY", "no_proxy"];

/// The hidden subcommand that confines itself and runs the program.
pub const TRAMPOLINE: &str = "__sandbox";

/// The variable carrying a call's policy to the trampoline (removed before the program runs).
pub const POLICY_VARIABLE: &str = "MCP_SERVE_SANDBOX";

/// What the trampoline prints first on stderr when it, not the program, failed.
pub const FAILURE_PREFIX: &str = "mcp-serve sandbox: ";

/// Exit status of a trampoline that could not confine itself (as `env` and `timeout` do).
pub const EXIT_CONFINE_FAILED: u8 = 125;

/// The system's programs and libraries, readable and executable unless `system = false`.
pub const SYSTEM_EXECUTE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// System files most programs read: the dynamic loader's cache, users, time zone, name
/// resolution and certificates. Nothing secret.
pub const SYSTEM_READ: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/resolv.conf",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// Devices any program may write.
pub const SYSTEM_WRITE: &[&str] = &["/dev/null", "/dev/full"];

/// One tool's sandbox, checked at load.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is a switch of the manifest"
)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Read files and list directories beneath these.
    pub read: Vec<PathBuf>,
    /// Read, create, change and remove beneath these.
    pub write: Vec<PathBuf>,
    /// Read and execute beneath these.
    pub execute: Vec<PathBuf>,
    /// The program itself, readable and executable (resolved at load).
    pub program: Option<PathBuf>,
    /// Grant what the program starts through: its `#!` interpreters and the version
    /// managers' shims ([`shims`]), read and execute only.
    pub shims: bool,
    /// What the program starts through, found at load.
    pub launch: shims::Launch,
    /// Also the system's programs and libraries ([`SYSTEM_EXECUTE`], [`SYSTEM_READ`]).
    pub system: bool,
    /// `{temp-dir}`: each call gets a private temporary directory (`TMPDIR`).
    pub temp_dir: bool,
    pub network: Network,
    pub limits: Limits,
    /// Deny what no tool needs (ptrace, mount, bpf, modules, keyrings…).
    pub seccomp: bool,
    /// Refuse to serve the tool unless everything declared is enforced.
    pub required: bool,
    /// What this kernel can enforce.
    pub kernel: Support,
    /// The seccomp filters, compiled at load ([`Sandbox::compile_filters`]).
    pub filters: std::sync::Arc<Vec<Vec<u64>>>,
}

/// What a command may reach over the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// Anything (no restriction).
    Any,
    /// Nothing: no sockets but `socketpair`.
    Nothing,
    /// TCP connections to these ports only (the kernel checks ports, not hosts): a list of
    /// ports, `*:port` and IP literals only.
    Ports(Vec<Endpoint>),
    /// These hosts only, through the server's egress proxy ([`crate::egress`]): a list that
    /// names a host. The command has no network of its own (`netns`).
    Hosts(std::sync::Arc<crate::egress::Allowance>),
}

/// `host:port` as the manifest wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

/// Resource limits; `None` leaves the server's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Bytes of private writable memory (`RLIMIT_DATA`).
    pub memory: Option<u64>,
    /// Seconds of CPU time (`RLIMIT_CPU`).
    pub cpu: Option<u64>,
    /// Processes of this call at once (`RLIMIT_NPROC` in its own user namespace).
    pub processes: Option<u64>,
    /// Bytes in one file written (`RLIMIT_FSIZE`).
    pub file_size: Option<u64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
}

/// A limit the command hit, told apart from other failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    Memory(u64),
    Cpu(u64),
    Processes(u64),
    FileSize(u64),
    OpenFiles(u64),
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Memory(bytes) => write!(f, "its memory limit of {}", bytes_text(*bytes)),
            Self::Cpu(seconds) => write!(f, "its CPU time limit of {seconds}s"),
            Self::Processes(count) => write!(f, "its limit of {count} processes"),
            Self::FileSize(bytes) => write!(f, "its file size limit of {}", bytes_text(*bytes)),
            Self::OpenFiles(count) => write!(f, "its limit of {count} open files"),
        }
    }
}

impl Limits {
    /// Which limit a failed command hit: what its cgroup counted (an OOM kill at
    /// `memory.max`, a fork refused at `pids.max`), the signal the kernel sends for CPU time
    /// and file size, or what the program said on stderr when an allocation, a fork or an
    /// open failed.
    pub fn exceeded(
        &self,
        signal: Option<i32>,
        stderr: &str,
        cgroup: cgroup::Events,
    ) -> Option<Exceeded> {
        if let (Some(bytes), true) = (self.memory, cgroup.oom_kills > 0) {
            return Some(Exceeded::Memory(bytes));
        }
        if let (Some(count), true) = (self.processes, cgroup.forks_refused > 0) {
            return Some(Exceeded::Processes(count));
        }
        if let (Some(seconds), Some(libc::SIGXCPU)) = (self.cpu, signal) {
            return Some(Exceeded::Cpu(seconds));
        }
        if let (Some(bytes), Some(libc::SIGXFSZ)) = (self.file_size, signal) {
            return Some(Exceeded::FileSize(bytes));
        }
        let said = |needles: &[&str]| needles.iter().any(|needle| stderr.contains(needle));
        if let Some(bytes) = self.memory
            && said(&[
                "Cannot allocate memory",
                "cannot allocate memory",
                "out of memory",
                "Out of memory",
                "MemoryError",
                "memory exhausted",
                "bad_alloc",
                "memory allocation of",
                "failed to allocate",
                "Failed to reserve",
            ])
        {
            return Some(Exceeded::Memory(bytes));
        }
        if let Some(count) = self.processes
            && said(&[
                "Resource temporarily unavailable",
                "fork: retry",
                "Cannot fork",
                "can't fork",
                "cannot fork",
            ])
        {
            return Some(Exceeded::Processes(count));
        }
        if let Some(count) = self.open_files
            && said(&["Too many open files"])
        {
            return Some(Exceeded::OpenFiles(count));
        }
        None
    }
}

/// `512 MiB`, `1 GiB`, `100 B`.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_told_apart_by_signal_or_by_what_the_program_said() {
        let limits = Limits {
            memory: Some(64 << 20),
            cpu: Some(2),
            processes: Some(8),
            file_size: Some(1 << 20),
            open_files: Some(32),
        };
        let none = cgroup::Events::default();
        assert_eq!(
            limits.exceeded(Some(libc::SIGXCPU), "", none),
            Some(Exceeded::Cpu(2))
        );
        assert_eq!(
            limits.exceeded(Some(libc::SIGXFSZ), "", none),
            Some(Exceeded::FileSize(1 << 20))
        );
        assert_eq!(
            limits.exceeded(None, "Traceback…\nMemoryError\n", none),
            Some(Exceeded::Memory(64 << 20))
        );
        assert_eq!(
            limits.exceeded(None, "sh: 1: Cannot fork\n", none),
            Some(Exceeded::Processes(8))
        );
        assert_eq!(
            limits.exceeded(None, "cat: x: Too many open files\n", none),
            Some(Exceeded::OpenFiles(32))
        );
        assert_eq!(limits.exceeded(Some(libc::SIGSEGV), "boom", none), None);
        // A cgroup's count names its limit whatever the program said (SIGKILL, nothing).
        let killed = cgroup::Events {
            oom_kills: 1,
            forks_refused: 0,
        };
        assert_eq!(
            limits.exceeded(Some(libc::SIGKILL), "", killed),
            Some(Exceeded::Memory(64 << 20))
        );
        let refused = cgroup::Events {
            oom_kills: 0,
            forks_refused: 3,
        };
        assert_eq!(
            limits.exceeded(None, "", refused),
            Some(Exceeded::Processes(8))
        );
        assert_eq!(Limits::default().exceeded(None, "", killed), None);
        // A limit that was not set is never blamed.
        assert_eq!(
            Limits::default().exceeded(Some(libc::SIGXCPU), "MemoryError", none),
            None
        );
        assert_eq!(
            Exceeded::Memory(512 << 20).to_string(),
            "its memory limit of 512 MiB"
        );
    }
}
