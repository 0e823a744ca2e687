//! What this kernel can enforce, probed once per load, and what a sandbox enforces on it.

use landlock::{ABI, AccessFs, LandlockStatus, Ruleset, RulesetAttr as _};

use super::{Network, Sandbox};

/// Lowers the Landlock ABI the server uses (never raises it): for testing how a tool
/// behaves on an older kernel, or without Landlock (`0`).
pub const ABI_OVERRIDE_VARIABLE: &str = "MCP_SERVE_LANDLOCK_ABI";

/// `0` turns off the read-only mount namespace (never on where the kernel has none): for
/// testing how a tool behaves without one (the metadata calls are then denied by seccomp).
pub const MOUNTS_OVERRIDE_VARIABLE: &str = "MCP_SERVE_MOUNT_NAMESPACES";

/// `0` turns off the call's own network namespace for a host list (never on where the kernel
/// has none): for testing how a tool is confined without one.
pub const NETWORK_OVERRIDE_VARIABLE: &str = "MCP_SERVE_NETWORK_NAMESPACES";

/// `0` turns off the call's own PID namespace (never on where the kernel has none): for
/// testing what outlives a call without one.
pub const PIDS_OVERRIDE_VARIABLE: &str = "MCP_SERVE_PID_NAMESPACES";

/// The kernel's support for each kind of confinement.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is a switch the kernel or the manifest sets"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI in use: the kernel's, lowered by [`ABI_OVERRIDE_VARIABLE`]; 0 for none.
    pub landlock_abi: i32,
    /// The kernel's own Landlock ABI.
    pub kernel_abi: i32,
    /// Seccomp filters.
    pub seccomp: bool,
    /// Unprivileged user namespaces (for a per-call process count).
    pub user_namespaces: bool,
    /// Mount namespaces: root with `CAP_SYS_ADMIN`, or anyone through a user namespace
    /// (for read-only mounts outside the write paths).
    pub mount_namespaces: bool,
    /// Network namespaces, the same way: a call with a host list gets one of its own.
    pub network_namespaces: bool,
    /// PID namespaces, the same way: every sandboxed call gets one of its own, so nothing it
    /// started outlives it (`sandbox::init`).
    pub pid_namespaces: bool,
    /// The server runs as root, whom the kernel exempts from the process limit.
    pub root: bool,
    /// A cgroup v2 subtree is delegated to the server ([`super::cgroup::probe`]).
    pub cgroups: bool,
}

impl Support {
    /// A kernel with every feature, for a server that is not root and has no cgroup: what
    /// unit tests assume when they build a policy.
    #[cfg(test)]
    pub const EVERYTHING: Self = Self {
        landlock_abi: 7,
        kernel_abi: 7,
        seccomp: true,
        user_namespaces: true,
        mount_namespaces: true,
        network_namespaces: true,
        pid_namespaces: true,
        root: false,
        cgroups: false,
    };

    /// Probes this kernel. Landlock's ABI is read by restricting a short-lived thread of
    /// our own (the crate exposes it only then); the server's other threads are untouched.
    pub fn detect() -> Self {
        let kernel_abi = std::thread::Builder::new()
            .name("landlock-probe".into())
            .spawn(landlock_abi)
            .map_or(0, |probe| probe.join().unwrap_or(0));
        let landlock_abi = std::env::var(ABI_OVERRIDE_VARIABLE)
            .ok()
            .and_then(|value| value.trim().parse::<i32>().ok())
            .map_or(kernel_abi, |lowered| lowered.clamp(0, kernel_abi));
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let root = nix::unistd::geteuid().is_root();
        let user_namespaces = user_namespaces(root);
        Self {
            landlock_abi,
            kernel_abi,
            seccomp: status.lines().any(|line| line.starts_with("Seccomp:")),
            user_namespaces,
            mount_namespaces: (user_namespaces || (root && admin(&status)))
                && std::env::var(MOUNTS_OVERRIDE_VARIABLE)
                    .map_or(true, |value| value.trim() != "0"),
            network_namespaces: (user_namespaces || (root && admin(&status)))
                && std::env::var(NETWORK_OVERRIDE_VARIABLE)
                    .map_or(true, |value| value.trim() != "0"),
            pid_namespaces: (user_namespaces || (root && admin(&status)))
                && std::env::var(PIDS_OVERRIDE_VARIABLE).map_or(true, |value| value.trim() != "0"),
            root,
            cgroups: super::cgroup::probe().is_ok(),
        }
    }

    /// `processes` is enforced: in a user namespace of its own, a non-root user's
    /// `RLIMIT_NPROC` counts that call's processes only; root is exempt from the limit.
    pub fn counts_processes(&self) -> bool {
        self.user_namespaces && !self.root
    }

    /// What `check` says of cgroups: where the calls' go, or why there are none.
    pub fn cgroups_text(&self) -> String {
        match super::cgroup::probe() {
            Ok(own) if self.cgroups => format!("yes (delegated: `{}`)", own.display()),
            Ok(_) => "no".to_owned(),
            Err(reason) => format!("no ({reason})"),
        }
    }

    /// One line for `check` and the log.
    pub fn summary(&self) -> String {
        let landlock = match (self.landlock_abi, self.kernel_abi) {
            (0, 0) => "no Landlock".to_owned(),
            (0, kernel) => format!("Landlock ABI {kernel}, turned off by {ABI_OVERRIDE_VARIABLE}"),
            (used, kernel) if used < kernel => {
                format!("Landlock ABI {kernel}, used as ABI {used} ({ABI_OVERRIDE_VARIABLE})")
            }
            (used, _) => format!("Landlock ABI {used}"),
        };
        format!(
            "{landlock}; seccomp {}; user namespaces {}; mount namespaces {}; PID namespaces {}; cgroups {}{}",
            yes(self.seccomp),
            yes(self.user_namespaces),
            yes(self.mount_namespaces),
            yes(self.pid_namespaces),
            self.cgroups_text(),
            if self.root { "; running as root" } else { "" }
        )
    }
}

fn yes(available: bool) -> &'static str {
    if available { "yes" } else { "no" }
}

fn landlock_abi() -> i32 {
    let status = Ruleset::default()
        .handle_access(AccessFs::Execute)
        .and_then(Ruleset::create)
        .and_then(landlock::RulesetCreated::restrict_self);
    match status.map(|status| status.landlock) {
        Ok(LandlockStatus::Available {
            kernel_abi: Some(abi),
            ..
        }) => abi,
        Ok(LandlockStatus::Available { effective_abi, .. }) => abi_number(effective_abi),
        _ => 0,
    }
}

/// The number of a known ABI.
pub(super) fn abi_number(abi: ABI) -> i32 {
    (1..=32)
        .find(|number| ABI::from(*number) == abi)
        .unwrap_or(0)
}

/// `CAP_SYS_ADMIN` (bit 21) among the effective capabilities of a `/proc/self/status`.
fn admin(status: &str) -> bool {
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 21) != 0)
}

fn user_namespaces(root: bool) -> bool {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let most = read("/proc/sys/user/max_user_namespaces")
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let unprivileged = read("/proc/sys/kernel/unprivileged_userns_clone")
        .is_none_or(|text| text.trim() != "0")
        && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .is_none_or(|text| text.trim() != "1");
    most > 0 && (root || unprivileged)
}

/// What one sandbox enforces on this kernel, and what it declares but cannot get.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Enforcement {
    pub enforced: Vec<String>,
    pub missing: Vec<String>,
}

impl Sandbox {
    /// What this sandbox enforces here: files, network, limits, then the process itself.
    pub fn enforcement(&self) -> Enforcement {
        let kernel = &self.kernel;
        let abi = kernel.landlock_abi;
        let mut out = Enforcement::default();
        if abi >= 1 {
            out.enforced
                .push(format!("files: {} (Landlock ABI {abi})", self.paths_text()));
            if abi < 3 {
                out.missing
                    .push("truncating files (needs Landlock ABI 3, Linux 6.2)".into());
            }
        } else {
            out.missing
                .push("file rules (the kernel has no Landlock)".into());
        }
        if abi < 6 {
            out.missing.push(
                "no signals or abstract UNIX sockets out of the sandbox: it could signal the server (needs Landlock ABI 6, Linux 6.12)".into(),
            );
        }
        if let Some(line) = self.launch_text() {
            out.enforced.push(line);
        }
        self.network_enforcement(&mut out);
        self.metadata_enforcement(&mut out);
        let limits = &self.limits;
        let memory = |bytes: u64| {
            let text = super::bytes_text(bytes);
            if kernel.cgroups {
                format!("{text} (per process RLIMIT_DATA, and the whole call's cgroup memory.max)")
            } else {
                text
            }
        };
        let mut set: Vec<String> = [
            ("memory", limits.memory.map(memory)),
            ("cpu", limits.cpu.map(|seconds| format!("{seconds}s"))),
            ("file-size", limits.file_size.map(super::bytes_text)),
            (
                "open-files",
                limits.open_files.map(|count| count.to_string()),
            ),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|value| format!("{name} {value}")))
        .collect();
        if let Some(count) = limits.processes {
            if kernel.cgroups {
                set.push(format!("processes {count} (the call's cgroup pids.max)"));
            } else if kernel.counts_processes() {
                set.push(format!("processes {count}"));
            } else if kernel.root {
                out.missing.push(format!(
                    "processes {count} (the kernel exempts root from RLIMIT_NPROC; run the server as a user)"
                ));
            } else {
                out.missing.push(format!(
                    "processes {count} (needs unprivileged user namespaces)"
                ));
            }
        }
        if !set.is_empty() {
            out.enforced.push(format!("limits: {}", set.join(", ")));
        }
        let mut process = vec!["descriptors 3 and up closed", "no_new_privs"];
        if self.seccomp {
            if kernel.seccomp {
                process.push("seccomp (no ptrace, mount, bpf, modules, keyrings, namespaces)");
            } else {
                out.missing.push("seccomp (not in this kernel)".into());
            }
        }
        if abi >= 6 {
            process.push("no signals or abstract sockets out of the sandbox");
        }
        out.enforced
            .push(format!("process: {}", process.join("; ")));
        out
    }

    /// `chmod`, `chown`, `utime` and extended attributes, which Landlock does not cover.
    fn metadata_enforcement(&self, out: &mut Enforcement) {
        if self.kernel.mount_namespaces {
            out.enforced.push(
                "metadata: everything but the write paths mounted read-only, so no chmod, chown, utime or xattr there (a mount namespace)".into(),
            );
        } else if self.seccomp && self.kernel.seccomp {
            out.enforced.push(
                "metadata: no chmod, chown, utime or xattr anywhere, the write paths too (seccomp; no mount namespaces here)".into(),
            );
        } else {
            out.missing.push(
                "metadata: chmod, chown, utime and xattr on any file the user owns (needs mount namespaces or seccomp)".into(),
            );
        }
    }

    fn network_enforcement(&self, out: &mut Enforcement) {
        let abi = self.kernel.landlock_abi;
        let seccomp = self.seccomp && self.kernel.seccomp;
        match &self.network {
            Network::Any => {}
            Network::Nothing => {
                let mut how = Vec::new();
                if seccomp {
                    how.push("no sockets but socketpair, no listening (seccomp)");
                }
                if abi >= 4 {
                    how.push("no TCP connect or bind (Landlock)");
                }
                if how.is_empty() {
                    out.missing.push(
                        "network = false (needs Landlock ABI 4, Linux 6.7, or seccomp)".into(),
                    );
                } else {
                    out.enforced
                        .push(format!("network: none: {}", how.join("; ")));
                }
            }
            Network::Ports(endpoints) => {
                let list: Vec<String> = endpoints
                    .iter()
                    .map(|e| format!("{}:{}", e.host, e.port))
                    .collect();
                if abi >= 4 {
                    out.enforced.push(format!(
                        "network: TCP connect to ports of {} only, by port not host; no TCP bind (Landlock); UDP not restricted",
                        list.join(", ")
                    ));
                    if seccomp {
                        out.enforced.push(
                            "network: no raw, SCTP, DCCP, Multipath TCP or UNIX sockets, no TCP Fast Open, no listening (seccomp)".into(),
                        );
                    } else {
                        out.missing.push(
                            "network list: raw, Multipath TCP and UNIX sockets and TCP Fast Open bypass the port rules (needs seccomp)".into(),
                        );
                    }
                } else {
                    out.missing.push(format!(
                        "network = [{}] (needs Landlock ABI 4, Linux 6.7)",
                        list.join(", ")
                    ));
                }
            }
            Network::Hosts(allowance) => self.hosts_enforcement(allowance, out),
        }
    }

    /// A host list: the proxy, and what keeps a program that ignores it off the network.
    fn hosts_enforcement(&self, allowance: &crate::egress::Allowance, out: &mut Enforcement) {
        let abi = self.kernel.landlock_abi;
        let seccomp = self.seccomp && self.kernel.seccomp;
        let list: Vec<String> = allowance.rules.iter().map(ToString::to_string).collect();
        out.enforced.push(format!(
            "network: only {} through the server's egress proxy (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; CONNECT and plain HTTP; names resolved by the proxy, private and loopback addresses only when listed as addresses)",
            list.join(", ")
        ));
        if self.kernel.network_namespaces {
            out.enforced.push(
                "network: a network namespace of its own with only loopback, forwarded to the proxy: a program that ignores the proxy variables gets no network".into(),
            );
        } else if abi >= 4 {
            out.enforced.push(
                "network: TCP connect to the proxy's port only (Landlock): a program that ignores the proxy variables gets no network, but for that port on other hosts".into(),
            );
            out.missing.push(
                "a network namespace (needs user namespaces): a program may connect directly to the proxy's port number on any host".into(),
            );
        } else {
            out.missing.push(format!(
                "network = [{}] without the proxy (needs user namespaces, or Landlock ABI 4, Linux 6.7): a program that ignores the proxy variables reaches any host",
                list.join(", ")
            ));
        }
        if seccomp {
            out.enforced.push(
                "network: no UDP, raw, SCTP, DCCP, Multipath TCP or UNIX sockets, no TCP Fast Open (seccomp)".into(),
            );
        } else if self.kernel.network_namespaces {
            out.missing
                .push("network list: UNIX sockets are not denied (needs seccomp)".into());
        } else {
            out.missing.push(
                "network list: UDP, raw, Multipath TCP and UNIX sockets and TCP Fast Open bypass the proxy (needs seccomp)".into(),
            );
        }
    }

    /// What the program starts through and what that grants, when it is more than the
    /// program itself.
    fn launch_text(&self) -> Option<String> {
        let launch = &self.launch;
        let beyond: Vec<&std::path::PathBuf> = launch
            .execute
            .iter()
            .filter(|path| Some(*path) != self.program.as_ref())
            .collect();
        if !self.shims || (beyond.is_empty() && launch.read.is_empty()) {
            return None;
        }
        let show = |paths: &[&std::path::PathBuf]| {
            paths
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let chain: Vec<&std::path::PathBuf> = launch.chain.iter().collect();
        let mut text = format!(
            "starts through: {}; read and execute {}",
            show(&chain).replace(", ", " → "),
            if beyond.is_empty() {
                "nothing more".to_owned()
            } else {
                show(&beyond)
            }
        );
        if !launch.read.is_empty() {
            let read: Vec<&std::path::PathBuf> = launch.read.iter().collect();
            text.push_str(&format!("; read {}", show(&read)));
        }
        if !launch.found.is_empty() {
            text.push_str(&format!(" ({})", launch.found.join("; ")));
        }
        Some(text)
    }

    fn paths_text(&self) -> String {
        let list = |paths: &[std::path::PathBuf]| {
            if paths.is_empty() {
                "nothing".to_owned()
            } else {
                paths
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let mut text = format!("read {}; write {}", list(&self.read), list(&self.write));
        if !self.execute.is_empty() {
            text.push_str(&format!("; execute {}", list(&self.execute)));
        }
        if let Some(program) = &self.program {
            text.push_str(&format!("; runs `{}`", program.display()));
        }
        if self.temp_dir {
            text.push_str("; a private {temp-dir}");
        }
        if self.system {
            text.push_str("; the system's programs and libraries");
        }
        text
    }
}
