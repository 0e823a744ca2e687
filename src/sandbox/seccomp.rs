//! The seccomp filter: a deny list of what no tool needs, and sockets when the network is
//! off. Denied calls fail with `EPERM` (the program sees an error, not a kill); `clone3`
//! fails with `ENOSYS`, so that the C library falls back to `clone`, whose flags a filter
//! can read.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
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

/// The filters for a policy, compiled once per tool at load and packed for the trampoline
/// (each instruction as one `u64`: code, jt, jf, k).
pub(crate) fn compile(network: &NetworkRule, root: bool) -> Result<Vec<Vec<u64>>, String> {
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
        NetworkRule::Any => {}
        // Only socketpair, which reaches nothing outside.
        NetworkRule::Nothing => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        NetworkRule::Ports(_) => port_rules(&mut rules)?,
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
    let mut programs = [deny, clone3]
        .into_iter()
        .map(|filter| BpfProgram::try_from(filter).map_err(|error| format!("seccomp: {error}")))
        .collect::<Result<Vec<_>, _>>()?;
    if cfg!(target_arch = "x86_64") {
        programs.push(x32_guard());
    }
    Ok(programs
        .iter()
        .map(|program| program.iter().map(pack).collect())
        .collect())
}

/// With a port list, only TCP and UDP over IPv4 and IPv6 (and netlink, which name
/// resolution uses) may be created: the port rules see `connect` on TCP only, so raw, SCTP,
/// DCCP and Multipath TCP sockets, UNIX sockets, and TCP Fast Open's connect-by-send are
/// denied.
fn port_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), String> {
    let dword = SeccompCmpArgLen::Dword;
    let family = |value: i32| (0, dword.clone(), SeccompCmpOp::Eq, mask(value));
    let kind = |value: i32| (1, dword.clone(), SeccompCmpOp::MaskedEq(0xf), mask(value));
    let mut socket = vec![rule(&[
        (0, dword.clone(), SeccompCmpOp::Ne, mask(libc::AF_INET)),
        (0, dword.clone(), SeccompCmpOp::Ne, mask(libc::AF_INET6)),
        (0, dword.clone(), SeccompCmpOp::Ne, mask(libc::AF_NETLINK)),
    ])?];
    for inet in [libc::AF_INET, libc::AF_INET6] {
        // 10 is the obsolete SOCK_PACKET.
        for denied in [libc::SOCK_RAW, libc::SOCK_DCCP, 10] {
            socket.push(rule(&[family(inet), kind(denied)])?);
        }
    }
    for protocol in [libc::IPPROTO_MPTCP, libc::IPPROTO_SCTP] {
        socket.push(rule(&[(
            2,
            dword.clone(),
            SeccompCmpOp::Eq,
            mask(protocol),
        )])?);
    }
    rules.insert(libc::SYS_socket, socket);
    let fast_open = mask(libc::MSG_FASTOPEN);
    for (call, flags) in [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ] {
        rules.insert(
            call,
            vec![rule(&[(
                flags,
                dword.clone(),
                SeccompCmpOp::MaskedEq(fast_open),
                fast_open,
            )])?],
        );
    }
    Ok(())
}

/// x32 system calls (numbers with bit 30 set) report the `x86_64` architecture and so match
/// none of the rules above: they fail with `ENOSYS`.
fn x32_guard() -> BpfProgram {
    const LOAD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0: seccomp_data.nr
    const JUMP_IF_AT_LEAST: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    const ERRNO: u32 = 0x0005_0000;
    const ALLOW: u32 = 0x7fff_0000;
    let instruction = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        instruction(LOAD_NR, 0, 0, 0),
        instruction(JUMP_IF_AT_LEAST, 0, 1, 0x4000_0000),
        instruction(RETURN, 0, 0, ERRNO | libc::ENOSYS.unsigned_abs()),
        instruction(RETURN, 0, 0, ALLOW),
    ]
}

fn pack(instruction: &sock_filter) -> u64 {
    (u64::from(instruction.code) << 48)
        | (u64::from(instruction.jt) << 40)
        | (u64::from(instruction.jf) << 32)
        | u64::from(instruction.k)
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "unpacking what `pack` packed"
)]
fn unpack(packed: u64) -> sock_filter {
    sock_filter {
        code: (packed >> 48) as u16,
        jt: (packed >> 40) as u8,
        jf: (packed >> 32) as u8,
        k: packed as u32,
    }
}

/// Installs packed filters on this thread (the trampoline has no other).
pub(super) fn install(filters: &[Vec<u64>]) -> Result<(), String> {
    for filter in filters {
        let program: BpfProgram = filter.iter().copied().map(unpack).collect();
        seccompiler::apply_filter(&program).map_err(|error| format!("seccomp: {error}"))?;
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
