//! The seccomp filter: a deny list of what no tool needs, and sockets when the network is
//! off. Denied calls fail with `EPERM` (the program sees an error, not a kill); `clone3`
//! fails with `ENOSYS`, so that the C library falls back to `clone`, whose flags a filter
//! can read.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::NetworkRule;

/// Debugging, mounting, kernel code, keyrings, namespaces, clocks and the like.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_bpf,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_perf_event_open,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_syslog,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_vhangup,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_fanotify_init,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: &[i32] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The filters to install, in order.
pub(super) fn filters(network: &NetworkRule, root: bool) -> Result<Vec<BpfProgram>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|error| format!("seccomp: {error}"))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|call| (*call, Vec::new())).collect();
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|flag| {
                rule(&[(
                    0,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(mask(*flag)),
                    mask(*flag),
                )])
            })
            .collect::<Result<_, _>>()?,
    );
    match network {
        // Only socketpair, which reaches nothing outside.
        NetworkRule::Nothing => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        // Raw packets bypass every port rule.
        NetworkRule::Ports(_) | NetworkRule::Any => {
            rules.insert(
                libc::SYS_socket,
                vec![rule(&[(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    mask(libc::AF_PACKET),
                )])?],
            );
        }
    }
    if root {
        // Root could raise the hard limits back; reading them (`prlimit64` without a new
        // limit) stays allowed.
        rules.insert(libc::SYS_setrlimit, Vec::new());
        rules.insert(
            libc::SYS_prlimit64,
            vec![rule(&[(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)])?],
        );
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.unsigned_abs()),
        arch,
    )
    .map_err(|error| format!("seccomp: {error}"))?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS.unsigned_abs()),
        arch,
    )
    .map_err(|error| format!("seccomp: {error}"))?;
    [deny, clone3]
        .into_iter()
        .map(|filter| BpfProgram::try_from(filter).map_err(|error| format!("seccomp: {error}")))
        .collect()
}

/// Installs the filters on this thread (the trampoline has no other).
pub(super) fn install(filters: &[BpfProgram]) -> Result<(), String> {
    for filter in filters {
        seccompiler::apply_filter(filter).map_err(|error| format!("seccomp: {error}"))?;
    }
    Ok(())
}

fn mask(value: i32) -> u64 {
    u64::from(value.unsigned_abs())
}

fn rule(conditions: &[(u8, SeccompCmpArgLen, SeccompCmpOp, u64)]) -> Result<SeccompRule, String> {
    let conditions = conditions
        .iter()
        .map(|(index, length, op, value)| {
            SeccompCondition::new(*index, length.clone(), op.clone(), *value)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("seccomp: {error}"))?;
    SeccompRule::new(conditions).map_err(|error| format!("seccomp: {error}"))
}
