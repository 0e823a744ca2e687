//! The Landlock ruleset of one policy: every file system right handled, then granted beneath
//! the policy's paths; TCP by port; scopes from ABI 6.

use std::os::fd::OwnedFd;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible as _, NetPort, PathBeneath,
    Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, RulesetStatus, Scope,
};
use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::{SFlag, fstat};

use super::{NetworkRule, Policy, SYSTEM_EXECUTE, SYSTEM_READ, SYSTEM_WRITE};

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
        NetworkRule::Ports(_) | NetworkRule::Hosts => {
            Some(AccessNet::BindTcp | AccessNet::ConnectTcp)
        }
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
    let system: [&[&str]; 3] = if policy.system {
        [SYSTEM_READ, SYSTEM_EXECUTE, SYSTEM_WRITE]
    } else {
        [&[], &[], &[]]
    };
    let grants = [
        (&policy.read, system[0], read),
        (&policy.execute, system[1], execute),
        (&policy.write, system[2], write),
    ];
    for (paths, system, access) in grants {
        let declared = paths.iter().map(|path| (path.as_path(), Follow::Never));
        let system = system
            .iter()
            .map(|path| (Path::new(*path), Follow::Symlinks));
        for (path, follow) in declared.chain(system) {
            if let Some(rule) = beneath(path, follow, access, abi)? {
                created = created.add_rule(rule).map_err(failed)?;
            }
        }
    }
    // With a host list, the proxy's port (on the host's loopback, or the trampoline's in
    // the call's own namespace) is the one place to connect to.
    let ports = match (&policy.network, &policy.proxy) {
        (NetworkRule::Ports(ports), _) => ports.clone(),
        (NetworkRule::Hosts, Some(route)) => vec![route.port],
        _ => Vec::new(),
    };
    if abi >= ABI::V4 {
        for port in &ports {
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

/// How a path may be resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    /// The system's own paths (`/lib64` may link to `usr/lib64`).
    Symlinks,
    /// Paths canonical at load: a symlink in them now was planted since, perhaps by another
    /// tool, to widen this one; it is refused, never followed.
    Never,
}

/// A rule for `path`; `None` when it does not exist (it grants nothing then). A file gets
/// the rights that apply to files.
fn beneath(
    path: &Path,
    follow: Follow,
    access: BitFlags<AccessFs>,
    abi: ABI,
) -> Result<Option<PathBeneath<OwnedFd>>, String> {
    let resolve = match follow {
        Follow::Symlinks => ResolveFlag::empty(),
        Follow::Never => ResolveFlag::RESOLVE_NO_SYMLINKS,
    };
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(resolve);
    let fd = match openat2(AT_FDCWD, path, how) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(None),
        Err(Errno::ELOOP) => {
            return Err(format!(
                "`{}` has become a symlink since the server loaded its manifest; it is not followed",
                path.display()
            ));
        }
        Err(error) => return Err(format!("`{}`: {error}", path.display())),
    };
    let stat = fstat(&fd).map_err(|error| format!("`{}`: {error}", path.display()))?;
    let is_dir = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(abi)
    };
    Ok(Some(PathBeneath::new(fd, access)))
}
