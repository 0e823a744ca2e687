//! One call's policy: the tool's [`Sandbox`] with the system paths and the call's own
//! directories added, in the form the trampoline applies.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Limits, Network, SYSTEM_EXECUTE, SYSTEM_READ, SYSTEM_WRITE, Sandbox};

/// Everything the trampoline needs, as JSON in [`super::POLICY_VARIABLE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// The Landlock ABI to use; 0 skips Landlock.
    pub landlock_abi: i32,
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub execute: Vec<PathBuf>,
    pub network: NetworkRule,
    pub limits: Limits,
    /// Count processes in a user namespace of the call's own (needed for `processes`).
    pub user_namespace: bool,
    pub seccomp: bool,
    /// Fail rather than run with less than declared.
    pub required: bool,
}

/// The network part of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkRule {
    Any,
    Nothing,
    Ports(Vec<u16>),
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
}

impl Sandbox {
    /// The policy for one call.
    pub fn policy(&self, call: &CallPaths<'_>) -> Policy {
        let mut read = self.read.clone();
        let mut write = self.write.clone();
        let mut execute = self.execute.clone();
        if self.system {
            execute.extend(existing(SYSTEM_EXECUTE));
            read.extend(existing(SYSTEM_READ));
            write.extend(existing(SYSTEM_WRITE));
        }
        execute.extend(self.program.iter().cloned());
        write.extend(
            [call.output_dir, call.temp_dir, call.events_pipe]
                .into_iter()
                .flatten()
                .map(Path::to_path_buf),
        );
        let processes = self.limits.processes.is_some() && self.kernel.counts_processes();
        Policy {
            landlock_abi: self.kernel.landlock_abi,
            read,
            write,
            execute,
            network: match &self.network {
                Network::Any => NetworkRule::Any,
                Network::Nothing => NetworkRule::Nothing,
                Network::Ports(endpoints) => {
                    let mut ports: Vec<u16> = endpoints.iter().map(|e| e.port).collect();
                    ports.sort_unstable();
                    ports.dedup();
                    NetworkRule::Ports(ports)
                }
            },
            limits: Limits {
                processes: self.limits.processes.filter(|_| processes),
                ..self.limits
            },
            user_namespace: processes,
            seccomp: self.seccomp && self.kernel.seccomp,
            required: self.required,
        }
    }
}

/// The system paths; the trampoline skips those this system lacks (a path that does not
/// exist grants nothing).
fn existing(paths: &'static [&'static str]) -> impl Iterator<Item = PathBuf> {
    paths.iter().map(PathBuf::from)
}
