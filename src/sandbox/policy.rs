//! One call's policy: the tool's [`Sandbox`] with the system paths and the call's own
//! directories added, in the form the trampoline applies.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Limits, Network, Sandbox};

/// Everything the trampoline needs, as JSON in [`super::POLICY_VARIABLE`].
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is a switch the kernel or the manifest sets"
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// The Landlock ABI to use; 0 skips Landlock.
    pub landlock_abi: i32,
    /// Also grant the system's paths ([`super::SYSTEM_EXECUTE`] …), symlinks and all.
    pub system: bool,
    /// The paths below were canonical when the server loaded them: the trampoline refuses to
    /// follow a symlink anywhere in them (one may have been planted since).
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub execute: Vec<PathBuf>,
    pub network: NetworkRule,
    pub limits: Limits,
    /// Count processes in a user namespace of the call's own (needed for `processes`).
    pub user_namespace: bool,
    /// Mount everything but the write paths read-only, in a mount namespace of the call's own.
    pub read_only: bool,
    /// Run the program in a PID namespace of the call's own, beneath an init of ours
    /// (`sandbox::init`), so that nothing it starts outlives it.
    #[serde(default)]
    pub pid_namespace: bool,
    /// Packed seccomp filters, compiled at load (empty: none).
    pub seccomp: Vec<Vec<u64>>,
    /// Fail rather than run with less than declared.
    pub required: bool,
    /// The call's cgroup, which the trampoline joins first ([`super::cgroup`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<PathBuf>,
    /// With a host list: how this call reaches the egress proxy.
    #[serde(default)]
    pub proxy: Option<Route>,
}

/// How a call with a host list reaches the egress proxy: at `127.0.0.1:port`, where its
/// `HTTPS_PROXY` points, and nowhere else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The call's token, which the forwarder writes first on each connection (so the
    /// program's proxy URL carries none).
    pub token: String,
    /// The proxy's TCP port: on the host's loopback, and (in a namespace) the port the
    /// trampoline listens on inside it.
    pub port: u16,
    /// In a network namespace of the call's own (where user namespaces exist), whose
    /// loopback the trampoline forwards to this Unix socket of the proxy.
    pub namespace: Option<PathBuf>,
}

impl Policy {
    /// With a host list in a network namespace of the call's own: the route, and the
    /// proxy's socket its forwarders connect to.
    pub fn namespace_route(&self) -> Option<(&Route, &Path)> {
        let route = self.proxy.as_ref()?;
        Some((route, route.namespace.as_deref()?))
    }
}

/// The network part of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkRule {
    Any,
    Nothing,
    Ports(Vec<u16>),
    /// Through the egress proxy only ([`Policy::proxy`]).
    Hosts,
}

impl NetworkRule {
    /// One rule of each kind, for tests that must hold for all of them.
    #[cfg(test)]
    pub fn each() -> [Self; 4] {
        [
            Self::Any,
            Self::Nothing,
            Self::Ports(vec![443]),
            Self::Hosts,
        ]
    }
}

/// The call's own places the sandbox must let the command use.
#[derive(Debug, Default)]
pub struct CallPaths<'a> {
    /// `$MCP_SERVE_OUTPUT_DIR`.
    pub output_dir: Option<&'a Path>,
    /// `$TMPDIR` with `{temp-dir}`.
    pub temp_dir: Option<&'a Path>,
    /// `$MCP_SERVE_EVENTS`.
    pub events_pipe: Option<&'a Path>,
    /// The call's cgroup, whose `pids.max` then counts its processes.
    pub cgroup: Option<&'a Path>,
    /// The call's allowance at the egress proxy (with a host list).
    pub egress: Option<&'a crate::egress::Grant>,
}

impl Sandbox {
    /// The policy for one call.
    pub fn policy(&self, call: &CallPaths<'_>) -> Policy {
        let mut read = self.read.clone();
        let mut write = self.write.clone();
        let mut execute = self.execute.clone();
        execute.extend(self.program.iter().cloned());
        if self.shims {
            execute.extend(self.launch.execute.iter().cloned());
            read.extend(self.launch.read.iter().cloned());
        }
        write.extend(
            [call.output_dir, call.temp_dir, call.events_pipe]
                .into_iter()
                .flatten()
                .map(Path::to_path_buf),
        );
        // A cgroup's pids.max counts the call's processes, root's too; otherwise
        // RLIMIT_NPROC in a user namespace of the call's own.
        let processes = self.limits.processes.is_some()
            && self.kernel.counts_processes()
            && call.cgroup.is_none();
        let proxy = call.egress.map(|grant| Route {
            token: grant.token.clone(),
            port: grant.port,
            namespace: self.kernel.network_namespaces.then(|| grant.socket.clone()),
        });
        // A network namespace is made in a user namespace where there are any (root with
        // CAP_SYS_ADMIN may make one without).
        let user_namespace = processes
            || (self.kernel.user_namespaces
                && proxy
                    .as_ref()
                    .is_some_and(|route| route.namespace.is_some()));
        Policy {
            landlock_abi: self.kernel.landlock_abi,
            system: self.system,
            read,
            write,
            execute,
            network: self.network_rule(),
            limits: Limits {
                processes: self.limits.processes.filter(|_| processes),
                ..self.limits
            },
            user_namespace,
            read_only: self.kernel.mount_namespaces,
            pid_namespace: self.kernel.pid_namespaces,
            seccomp: self.filters.to_vec(),
            required: self.required,
            cgroup: call.cgroup.map(Path::to_path_buf),
            proxy,
        }
    }

    /// The network part of the policy.
    pub fn network_rule(&self) -> NetworkRule {
        match &self.network {
            Network::Any => NetworkRule::Any,
            Network::Nothing => NetworkRule::Nothing,
            Network::Ports(endpoints) => {
                let mut ports: Vec<u16> = endpoints.iter().map(|e| e.port).collect();
                ports.sort_unstable();
                ports.dedup();
                NetworkRule::Ports(ports)
            }
            Network::Hosts(_) => NetworkRule::Hosts,
        }
    }

    /// Compiles this sandbox's seccomp filters (none when it has `seccomp = false` or the
    /// kernel has no seccomp); done once, at load.
    pub fn compile_filters(&mut self) -> Result<(), String> {
        self.filters = if self.seccomp && self.kernel.seccomp {
            std::sync::Arc::new(super::seccomp::compile(
                &self.network_rule(),
                self.kernel.root,
                !self.kernel.mount_namespaces,
            )?)
        } else {
            std::sync::Arc::default()
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Endpoint, Support};

    fn sandbox(kernel: Support) -> Sandbox {
        Sandbox {
            read: vec!["/srv/data".into()],
            write: vec![],
            execute: vec![],
            program: Some("/srv/bin/tool".into()),
            shims: true,
            launch: crate::sandbox::shims::Launch::default(),
            system: true,
            temp_dir: true,
            network: Network::Ports(vec![
                Endpoint {
                    host: "a.example".into(),
                    port: 443,
                },
                Endpoint {
                    host: "b.example".into(),
                    port: 443,
                },
                Endpoint {
                    host: "127.0.0.1".into(),
                    port: 8080,
                },
            ]),
            limits: Limits {
                processes: Some(8),
                ..Limits::default()
            },
            seccomp: true,
            required: false,
            kernel,
            filters: std::sync::Arc::default(),
        }
    }

    #[test]
    fn a_call_gets_its_own_paths_the_system_and_the_ports_once() {
        let kernel = Support::EVERYTHING;
        let mut confined = sandbox(kernel);
        confined.compile_filters().expect("filters");
        let policy = confined.policy(&CallPaths {
            output_dir: Some(Path::new("/tmp/call/output")),
            temp_dir: Some(Path::new("/tmp/call/tmp")),
            events_pipe: None,
            cgroup: None,
            egress: None,
        });
        assert_eq!(policy.read, [PathBuf::from("/srv/data")]);
        assert!(policy.system);
        assert_eq!(policy.execute, [PathBuf::from("/srv/bin/tool")]);
        assert_eq!(policy.seccomp.len(), 1);
        assert!(policy.write.contains(&PathBuf::from("/tmp/call/output")));
        assert!(policy.write.contains(&PathBuf::from("/tmp/call/tmp")));
        assert!(!policy.write.iter().any(|path| path.starts_with("/srv")));
        assert_eq!(policy.network, NetworkRule::Ports(vec![443, 8080]));
        assert!(policy.user_namespace);
        assert_eq!(policy.limits.processes, Some(8));

        // Root cannot be limited by RLIMIT_NPROC, and a kernel without seccomp gets none.
        let root = Support {
            root: true,
            seccomp: false,
            ..kernel
        };
        let mut confined = sandbox(root);
        confined.compile_filters().expect("filters");
        let policy = confined.policy(&CallPaths::default());
        assert!(!policy.user_namespace);
        assert_eq!(policy.limits.processes, None);
        assert!(policy.seccomp.is_empty());
        let missing = sandbox(root).enforcement().missing;
        assert!(
            missing.iter().any(|line| line.starts_with("processes 8")),
            "{missing:?}"
        );
        assert!(
            missing.iter().any(|line| line.starts_with("seccomp")),
            "{missing:?}"
        );
    }

    #[test]
    fn the_seccomp_filters_compile_for_every_network_rule() {
        for network in NetworkRule::each() {
            for root in [false, true] {
                let filters =
                    crate::sandbox::seccomp::compile(&network, root, root).expect("compiles");
                assert_eq!(filters.len(), 1);
                assert!(filters.iter().all(|filter| !filter.is_empty()));
            }
        }
    }
}
