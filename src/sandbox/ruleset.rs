//! The Landlock ruleset of one policy: every file system right handled, then granted beneath
//! the policy's paths; TCP by port; scopes from ABI 6.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible as _, NetPort, PathBeneath,
    PathFd, Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, RulesetStatus, Scope,
};

use super::{NetworkRule, Policy};

/// Restricts this process (and what it executes) to the policy.
pub(super) fn restrict(policy: &Policy) -> Result<(), String> {
    let abi = ABI::from(policy.landlock_abi);
    let level = if policy.required {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let failed = |error: landlock::RulesetError| format!("Landlock: {error}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(abi))
        .map_err(failed)?;
    let network = match &policy.network {
        NetworkRule::Any => None,
        NetworkRule::Nothing => Some(AccessNet::from_all(abi)),
        NetworkRule::Ports(_) => Some(AccessNet::BindTcp | AccessNet::ConnectTcp),
    };
    if let Some(network) = network.filter(|_| abi >= ABI::V4) {
        ruleset = ruleset.handle_access(network).map_err(failed)?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(failed)?;
    }
    let mut created = ruleset.create().map_err(failed)?;
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let execute = read | AccessFs::Execute;
    let write = (AccessFs::from_all(abi) & !AccessFs::Execute)
        & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let grants = [
        (&policy.read, read),
        (&policy.execute, execute),
        (&policy.write, write),
    ];
    for (paths, access) in grants {
        for path in paths {
            if let Some(rule) = beneath(path, access, abi)? {
                created = created.add_rule(rule).map_err(failed)?;
            }
        }
    }
    if let (NetworkRule::Ports(ports), true) = (&policy.network, abi >= ABI::V4) {
        for port in ports {
            created = created
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(failed)?;
        }
    }
    let status = created.restrict_self().map_err(failed)?;
    if policy.required && status.ruleset != RulesetStatus::FullyEnforced {
        return Err("Landlock could not enforce the whole sandbox, which is required".into());
    }
    Ok(())
}

/// A rule for `path`; `None` when it does not exist (it grants nothing then). A file gets
/// the rights that apply to files.
fn beneath(
    path: &Path,
    access: BitFlags<AccessFs>,
    abi: ABI,
) -> Result<Option<PathBeneath<PathFd>>, String> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("`{}`: {error}", path.display())),
    };
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(abi)
    };
    let fd = PathFd::new(path).map_err(|error| format!("`{}`: {error}", path.display()))?;
    Ok(Some(PathBeneath::new(fd, access)))
}
