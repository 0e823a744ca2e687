//! The seccomp filter: a deny list of what no tool needs, and sockets when the network is
//! off or limited to ports. Denied calls fail with `EPERM` (the program sees an error, not a
//! kill); `clone3` fails with `ENOSYS`, so that the C library falls back to `clone`, whose
//! flags a filter can read; so do x32 system calls, which would match no rule.
//!
//! The program is one linear list of classic BPF written here: one comparison per denied
//! call, a short block per call whose arguments matter. seccompiler's compiler emits several
//! times as many instructions for the same rules, and the kernel loads the program into every
//! sandboxed command; `cargo test --lib the_filters_are_short -- --nocapture` prints this
//! one's length for each network rule. seccompiler still installs it (its `apply_filter`
//! keeps the `unsafe` system call out of this crate). A test runs the program in an
//! interpreter against a plain statement of the rules, over random calls.

use seccompiler::{BpfProgram, sock_filter};

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
    SYS_OPEN_TREE_ATTR,
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
    // Reading or moving other processes' memory and file tables (same user suffices).
    libc::SYS_kcmp,
    libc::SYS_process_madvise,
    libc::SYS_migrate_pages,
    libc::SYS_move_pages,
];

/// A listening socket: auto-bound by `listen` without `bind`, which Landlock's bind rule
/// does not see. Denied unless the network is open.
const LISTENING: &[i64] = &[libc::SYS_listen, libc::SYS_accept, libc::SYS_accept4];

/// What Landlock does not cover: modes, owners, times and extended attributes. Denied where
/// there is no read-only mount namespace to refuse them outside the write paths.
const METADATA: &[i64] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_fchmodat2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_SETXATTRAT,
    SYS_REMOVEXATTRAT,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chmod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lchown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utime,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utimes,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_futimesat,
];

/// `setxattrat` and `removexattrat` (Linux 6.13), the same number on every architecture;
/// the libc crate does not name them yet.
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

/// Calls that act on another process when their target is not 0 (this one): its priority,
/// I/O priority and scheduling. The server is another process of the same user. Each is
/// the call, the argument naming the target, and for the priorities the argument saying what
/// kind of target with the value meaning "every process of the user" (then 0 means the
/// user's own, the server's too).
const SELF_ONLY: &[(i64, u32, Option<Kind>)] = &[
    (libc::SYS_setpriority, 1, Some((0, 2))), // PRIO_USER
    (libc::SYS_ioprio_set, 1, Some((0, 3))),  // IOPRIO_WHO_USER
    (libc::SYS_sched_setscheduler, 0, None),
    (libc::SYS_sched_setparam, 0, None),
    (libc::SYS_sched_setattr, 0, None),
];

/// The argument saying what kind of target a priority call has, and the kind meaning every
/// process of the user.
type Kind = (u32, u32);

/// `ioctl`s no tool needs: pushing input into a terminal another process reads (`TIOCSTI`,
/// `TIOCLINUX`), and setting a file's inode flags or attributes (`chattr`: immutable,
/// append-only…; `FS_IOC_SETFLAGS`, its 32-bit form, `FS_IOC_FSSETXATTR`), which work on a
/// descriptor opened for reading and which Landlock does not cover.
const DENIED_IOCTLS: [u32; 5] = [0x5412, 0x541C, 0x4008_6602, 0x4004_6602, 0x401C_5820];

/// `open_tree_attr` (Linux 6.15), which the libc crate does not name yet: it can clone a
/// mount without its read-only flag.
const SYS_OPEN_TREE_ATTR: i64 = 467;

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP)
    .unsigned_abs();

/// The architecture this filter is written for, as `seccomp_data.arch` names it.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

// Classic BPF opcodes.
const LOAD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const AND: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const JUMP_EQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_AT_LEAST: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JUMP_ANY_BIT: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const EPERM: u32 = libc::EPERM.unsigned_abs();
const ENOSYS: u32 = libc::ENOSYS.unsigned_abs();

// Offsets in `struct seccomp_data`: the call's number, its architecture, and the low 32
// bits of argument `i` at `16 + 8 i`, the high ones 4 bytes further (little endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg(index: u32) -> u32 {
    16 + 8 * index
}
const fn arg_high(index: u32) -> u32 {
    20 + 8 * index
}

/// Where a jump goes: the next instruction, some further, or a verdict at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    Skip(u8),
    Allow,
    Deny,
    NoSys,
    Kill,
}

#[derive(Debug, Clone, Copy)]
struct Insn {
    code: u16,
    k: u32,
    yes: To,
    no: To,
}

const fn load(offset: u32) -> Insn {
    Insn {
        code: LOAD,
        k: offset,
        yes: To::Next,
        no: To::Next,
    }
}

const fn and(mask: u32) -> Insn {
    Insn {
        code: AND,
        k: mask,
        yes: To::Next,
        no: To::Next,
    }
}

const fn jump(code: u16, k: u32, yes: To, no: To) -> Insn {
    Insn { code, k, yes, no }
}

/// The filter for a policy, built once per tool at load and packed for the trampoline
/// (each instruction as one `u64`: code, jt, jf, k). `metadata` denies the metadata calls.
pub(crate) fn compile(
    network: &NetworkRule,
    root: bool,
    metadata: bool,
) -> Result<Vec<Vec<u64>>, String> {
    let program = assemble(&rules(network, root, metadata))?;
    Ok(vec![program.iter().map(pack).collect()])
}

/// A second filter denying the metadata calls only, for a call whose read-only mounts the
/// kernel refused after all.
pub(super) fn metadata_denied() -> Result<Vec<Vec<u64>>, String> {
    let mut program = vec![
        load(ARCH),
        jump(JUMP_EQ, AUDIT_ARCH, To::Next, To::Kill),
        load(NR),
    ];
    for call in METADATA {
        program.push(jump(JUMP_EQ, number(*call), To::Deny, To::Next));
    }
    let program = assemble(&program)?;
    Ok(vec![program.iter().map(pack).collect()])
}

fn rules(network: &NetworkRule, root: bool, metadata: bool) -> Vec<Insn> {
    let mut program = vec![
        load(ARCH),
        jump(JUMP_EQ, AUDIT_ARCH, To::Next, To::Kill),
        load(NR),
    ];
    if cfg!(target_arch = "x86_64") {
        program.push(jump(JUMP_AT_LEAST, 0x4000_0000, To::NoSys, To::Next));
    }
    for call in DENIED {
        program.push(jump(JUMP_EQ, number(*call), To::Deny, To::Next));
    }
    program.push(jump(JUMP_EQ, number(libc::SYS_clone3), To::NoSys, To::Next));
    block(
        &mut program,
        libc::SYS_clone,
        &[
            load(arg(0)),
            jump(JUMP_ANY_BIT, NAMESPACE_FLAGS, To::Deny, To::Allow),
        ],
    );
    for (call, target, kind) in SELF_ONLY {
        let mut body = Vec::new();
        if let Some((which, user)) = kind {
            body.extend([load(arg(*which)), jump(JUMP_EQ, *user, To::Deny, To::Next)]);
        }
        body.extend([load(arg(*target)), jump(JUMP_EQ, 0, To::Allow, To::Deny)]);
        block(&mut program, *call, &body);
    }
    let mut ioctls = vec![load(arg(1))];
    for (at, request) in DENIED_IOCTLS.iter().enumerate() {
        let otherwise = if at + 1 == DENIED_IOCTLS.len() {
            To::Allow
        } else {
            To::Next
        };
        ioctls.push(jump(JUMP_EQ, *request, To::Deny, otherwise));
    }
    block(&mut program, libc::SYS_ioctl, &ioctls);
    if metadata {
        for call in METADATA {
            program.push(jump(JUMP_EQ, number(*call), To::Deny, To::Next));
        }
    }
    if *network != NetworkRule::Any {
        for call in LISTENING {
            program.push(jump(JUMP_EQ, number(*call), To::Deny, To::Next));
        }
    }
    match network {
        NetworkRule::Any => {}
        NetworkRule::Nothing => {
            program.push(jump(JUMP_EQ, number(libc::SYS_socket), To::Deny, To::Next));
        }
        NetworkRule::Ports(_) => port_rules(&mut program, true),
        // Only TCP to the proxy: UDP would go around it where there is no namespace.
        NetworkRule::Hosts => port_rules(&mut program, false),
    }
    // Reading limits (`prlimit64` without a new one) stays allowed. Setting one: root could
    // raise its hard limits back, so never; anyone else only on itself (pid 0), never on
    // another process of the same user, such as the server.
    if root {
        program.push(jump(
            JUMP_EQ,
            number(libc::SYS_setrlimit),
            To::Deny,
            To::Next,
        ));
    }
    let setting = if root {
        vec![
            load(arg(2)),
            jump(JUMP_EQ, 0, To::Next, To::Deny),
            load(arg_high(2)),
            jump(JUMP_EQ, 0, To::Allow, To::Deny),
        ]
    } else {
        vec![
            load(arg(2)),
            jump(JUMP_EQ, 0, To::Next, To::Skip(2)),
            load(arg_high(2)),
            jump(JUMP_EQ, 0, To::Allow, To::Next),
            load(arg(0)),
            jump(JUMP_EQ, 0, To::Allow, To::Deny),
        ]
    };
    block(&mut program, libc::SYS_prlimit64, &setting);
    program
}

/// With a port list, only TCP and UDP over IPv4 and IPv6 (and netlink, which name
/// resolution uses) may be created: the port rules see `connect` on TCP only, so raw, SCTP,
/// DCCP and Multipath TCP sockets, UNIX sockets, and TCP Fast Open's connect-by-send are
/// denied; so are UDP sockets unless `datagrams`.
fn port_rules(program: &mut Vec<Insn>, datagrams: bool) {
    let dgram = [jump(
        JUMP_EQ,
        unsigned(libc::SOCK_DGRAM),
        To::Deny,
        To::Next,
    )];
    let body = [
        &[
            load(arg(0)),
            jump(JUMP_EQ, unsigned(libc::AF_NETLINK), To::Allow, To::Next),
            jump(JUMP_EQ, unsigned(libc::AF_INET), To::Skip(1), To::Next),
            jump(JUMP_EQ, unsigned(libc::AF_INET6), To::Next, To::Deny),
            load(arg(1)),
            and(0xf),
        ][..],
        &dgram[..usize::from(!datagrams)],
        &[
            jump(JUMP_EQ, unsigned(libc::SOCK_RAW), To::Deny, To::Next),
            jump(JUMP_EQ, unsigned(libc::SOCK_DCCP), To::Deny, To::Next),
            // The obsolete SOCK_PACKET.
            jump(JUMP_EQ, 10, To::Deny, To::Next),
            load(arg(2)),
            jump(JUMP_EQ, unsigned(libc::IPPROTO_MPTCP), To::Deny, To::Next),
            jump(JUMP_EQ, unsigned(libc::IPPROTO_SCTP), To::Deny, To::Allow),
        ][..],
    ]
    .concat();
    block(program, libc::SYS_socket, &body);
    let fast_open = unsigned(libc::MSG_FASTOPEN);
    for (call, flags) in [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ] {
        block(
            program,
            call,
            &[
                load(arg(flags)),
                jump(JUMP_ANY_BIT, fast_open, To::Deny, To::Allow),
            ],
        );
    }
}

/// `body` runs for `call` only and ends in verdicts; other calls skip it and find the call's
/// number loaded again.
fn block(program: &mut Vec<Insn>, call: i64, body: &[Insn]) {
    let skip = u8::try_from(body.len()).unwrap_or(u8::MAX);
    program.push(jump(JUMP_EQ, number(call), To::Next, To::Skip(skip)));
    program.extend_from_slice(body);
    program.push(load(NR));
}

fn number(call: i64) -> u32 {
    u32::try_from(call).unwrap_or(u32::MAX)
}

fn unsigned(value: i32) -> u32 {
    value.unsigned_abs()
}

/// The verdicts, after the program; it falls through to the first.
const VERDICTS: [(To, u32); 4] = [
    (To::Allow, RET_ALLOW),
    (To::Deny, RET_ERRNO | EPERM),
    (To::NoSys, RET_ERRNO | ENOSYS),
    (To::Kill, RET_KILL_PROCESS),
];

/// Resolves the jumps (all forward) and appends the verdicts.
fn assemble(program: &[Insn]) -> Result<BpfProgram, String> {
    let end = program.len();
    let offset = |at: usize, to: To| -> Result<u8, String> {
        let target = match to {
            To::Next => return Ok(0),
            To::Skip(count) => return Ok(count),
            verdict => {
                end + VERDICTS
                    .iter()
                    .position(|(v, _)| *v == verdict)
                    .unwrap_or(0)
            }
        };
        u8::try_from(target - at - 1).map_err(|_| "seccomp: the filter is too long".to_owned())
    };
    let mut out = Vec::with_capacity(end + VERDICTS.len());
    for (at, insn) in program.iter().enumerate() {
        out.push(sock_filter {
            code: insn.code,
            jt: offset(at, insn.yes)?,
            jf: offset(at, insn.no)?,
            k: insn.k,
        });
    }
    out.extend(VERDICTS.iter().map(|(_, k)| sock_filter {
        code: RETURN,
        jt: 0,
        jf: 0,
        k: *k,
    }));
    Ok(out)
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// One system call as the filter sees it.
    #[derive(Debug, Clone)]
    struct Call {
        nr: u32,
        arch: u32,
        args: [u64; 6],
    }

    impl Call {
        fn word(&self, offset: u32) -> u32 {
            match offset {
                NR => self.nr,
                ARCH => self.arch,
                _ => {
                    let index = usize::try_from((offset - 16) / 8).expect("index");
                    let value = self.args[index];
                    if (offset - 16).is_multiple_of(8) {
                        u32::try_from(value & 0xffff_ffff).expect("low")
                    } else {
                        u32::try_from(value >> 32).expect("high")
                    }
                }
            }
        }
    }

    /// Runs a classic BPF program the way the kernel does, for the opcodes it uses.
    fn run(program: &[sock_filter], call: &Call) -> u32 {
        let mut accumulator = 0_u32;
        let mut at = 0;
        loop {
            let insn = &program[at];
            let taken =
                |condition: bool| at + 1 + usize::from(if condition { insn.jt } else { insn.jf });
            at = match insn.code {
                LOAD => {
                    accumulator = call.word(insn.k);
                    at + 1
                }
                AND => {
                    accumulator &= insn.k;
                    at + 1
                }
                JUMP_EQ => taken(accumulator == insn.k),
                JUMP_AT_LEAST => taken(accumulator >= insn.k),
                JUMP_ANY_BIT => taken(accumulator & insn.k != 0),
                RETURN => return insn.k,
                other => panic!("unexpected opcode {other:#x}"),
            };
        }
    }

    /// The rules, stated plainly.
    fn expected(network: &NetworkRule, root: bool, metadata: bool, call: &Call) -> u32 {
        let (allow, deny, nosys) = (RET_ALLOW, RET_ERRNO | EPERM, RET_ERRNO | ENOSYS);
        let nr = i64::from(call.nr);
        let low = |index: usize| call.args[index] & 0xffff_ffff;
        if call.arch != AUDIT_ARCH {
            return RET_KILL_PROCESS;
        }
        if cfg!(target_arch = "x86_64") && call.nr >= 0x4000_0000 {
            return nosys;
        }
        if DENIED.contains(&nr) {
            return deny;
        }
        if nr == libc::SYS_clone3 {
            return nosys;
        }
        if nr == libc::SYS_clone {
            return if call.args[0] & u64::from(NAMESPACE_FLAGS) != 0 {
                deny
            } else {
                allow
            };
        }
        for (call_nr, target, kind) in SELF_ONLY {
            if nr == *call_nr {
                let everyone = kind.is_some_and(|(which, user)| {
                    low(usize::try_from(which).expect("index")) == u64::from(user)
                });
                let other = low(usize::try_from(*target).expect("index")) != 0;
                return if everyone || other { deny } else { allow };
            }
        }
        if nr == libc::SYS_ioctl {
            return if DENIED_IOCTLS.map(u64::from).contains(&low(1)) {
                deny
            } else {
                allow
            };
        }
        if metadata && METADATA.contains(&nr) {
            return deny;
        }
        if *network != NetworkRule::Any && LISTENING.contains(&nr) {
            return deny;
        }
        let fast_open = u64::from(unsigned(libc::MSG_FASTOPEN));
        match network {
            NetworkRule::Nothing if nr == libc::SYS_socket => return deny,
            NetworkRule::Any | NetworkRule::Nothing => {}
            NetworkRule::Ports(_) | NetworkRule::Hosts => {
                let family = |value: i32| u64::from(unsigned(value));
                if nr == libc::SYS_socket {
                    if low(0) == family(libc::AF_NETLINK) {
                        return allow;
                    }
                    let inet = [family(libc::AF_INET), family(libc::AF_INET6)].contains(&low(0));
                    let kind = low(1) & 0xf;
                    let bad_kind = [family(libc::SOCK_RAW), family(libc::SOCK_DCCP), 10]
                        .contains(&kind)
                        || (*network == NetworkRule::Hosts && kind == family(libc::SOCK_DGRAM));
                    let bad_protocol =
                        [family(libc::IPPROTO_MPTCP), family(libc::IPPROTO_SCTP)].contains(&low(2));
                    return if inet && !bad_kind && !bad_protocol {
                        allow
                    } else {
                        deny
                    };
                }
                for (call_nr, flags) in [
                    (libc::SYS_sendto, 3),
                    (libc::SYS_sendmsg, 2),
                    (libc::SYS_sendmmsg, 3),
                ] {
                    if nr == call_nr {
                        return if low(flags) & fast_open != 0 {
                            deny
                        } else {
                            allow
                        };
                    }
                }
            }
        }
        if root && nr == libc::SYS_setrlimit {
            return deny;
        }
        if nr == libc::SYS_prlimit64 {
            return if call.args[2] == 0 || (!root && low(0) == 0) {
                allow
            } else {
                deny
            };
        }
        allow
    }

    fn interesting_numbers() -> Vec<u32> {
        let mut numbers: Vec<u32> = DENIED
            .iter()
            .chain(METADATA)
            .chain(LISTENING)
            .chain(SELF_ONLY.iter().map(|(nr, _, _)| nr))
            .map(|nr| number(*nr))
            .collect();
        numbers.extend(
            [
                libc::SYS_clone,
                libc::SYS_clone3,
                libc::SYS_ioctl,
                libc::SYS_socket,
                libc::SYS_sendto,
                libc::SYS_sendmsg,
                libc::SYS_sendmmsg,
                libc::SYS_setrlimit,
                libc::SYS_prlimit64,
                libc::SYS_read,
                libc::SYS_openat,
                libc::SYS_connect,
            ]
            .map(number),
        );
        let x32: Vec<u32> = numbers.iter().map(|nr| nr | 0x4000_0000).collect();
        numbers.extend(x32);
        numbers
    }

    fn interesting_args() -> Vec<u64> {
        let mut values = vec![
            0,
            1,
            2,
            3,
            6,
            10,
            16,
            17,
            132,
            262,
            0x5412,
            0x541C,
            0x4008_6602,
            0x401C_5820,
            0x1_0000_5412,
            u64::MAX,
            1 << 32,
        ];
        values.extend(
            [
                libc::AF_INET,
                libc::AF_INET6,
                libc::AF_UNIX,
                libc::AF_NETLINK,
                libc::AF_PACKET,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK,
                libc::MSG_FASTOPEN,
                libc::MSG_FASTOPEN | libc::MSG_NOSIGNAL,
                libc::CLONE_NEWUSER | libc::SIGCHLD,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                libc::CLONE_NEWNET,
            ]
            .map(|value| u64::from(value.unsigned_abs())),
        );
        values
    }

    fn calls() -> impl Strategy<Value = Call> {
        let nr = prop_oneof![3 => prop::sample::select(interesting_numbers()), 1 => any::<u32>()];
        let arch = prop_oneof![9 => Just(AUDIT_ARCH), 1 => any::<u32>()];
        let arg = prop_oneof![3 => prop::sample::select(interesting_args()), 1 => any::<u64>()];
        (
            nr,
            arch,
            [
                arg.clone(),
                arg.clone(),
                arg.clone(),
                arg.clone(),
                arg.clone(),
                arg,
            ],
        )
            .prop_map(|(nr, arch, args)| Call { nr, arch, args })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever the call, the filter's verdict is the rules' verdict, for every policy.
        #[test]
        fn the_filter_decides_as_the_rules_say(call in calls()) {
            for network in [NetworkRule::Any, NetworkRule::Nothing, NetworkRule::Ports(vec![443]), NetworkRule::Hosts] {
                for (root, metadata) in [(false, false), (true, false), (false, true), (true, true)] {
                    let program = assemble(&rules(&network, root, metadata)).expect("assembles");
                    prop_assert_eq!(
                        run(&program, &call),
                        expected(&network, root, metadata, &call),
                        "{:?} root={} metadata={} {:?}", network, root, metadata, call
                    );
                }
            }
            let second = assemble(&{
                let mut program = vec![load(ARCH), jump(JUMP_EQ, AUDIT_ARCH, To::Next, To::Kill), load(NR)];
                program.extend(METADATA.iter().map(|call| jump(JUMP_EQ, number(*call), To::Deny, To::Next)));
                program
            }).expect("assembles");
            let packed = metadata_denied().expect("compiles");
            let unpacked: Vec<sock_filter> = packed[0].iter().copied().map(unpack).collect();
            prop_assert_eq!(&unpacked, &second);
            let verdict = if call.arch != AUDIT_ARCH {
                RET_KILL_PROCESS
            } else if METADATA.contains(&i64::from(call.nr)) {
                RET_ERRNO | EPERM
            } else {
                RET_ALLOW
            };
            prop_assert_eq!(run(&second, &call), verdict);
        }
    }

    /// Every combination of the values that matter, for every call whose arguments the
    /// filter reads (random calls above rarely line up a family, a type and a protocol).
    #[test]
    fn the_filter_decides_as_the_rules_say_for_every_combination_that_matters() {
        let calls = [
            libc::SYS_clone,
            libc::SYS_ioctl,
            libc::SYS_setpriority,
            libc::SYS_ioprio_set,
            libc::SYS_sched_setscheduler,
            libc::SYS_socket,
            libc::SYS_sendto,
            libc::SYS_sendmsg,
            libc::SYS_sendmmsg,
            libc::SYS_prlimit64,
            libc::SYS_setrlimit,
            libc::SYS_clone3,
        ];
        let values = interesting_args();
        let mut checked = 0_u64;
        for network in NetworkRule::each() {
            for root in [false, true] {
                let program = assemble(&rules(&network, root, root)).expect("assembles");
                for nr in calls {
                    for a0 in &values {
                        for a1 in &values {
                            for a2 in &values {
                                for a3 in [0, u64::from(unsigned(libc::MSG_FASTOPEN))] {
                                    let call = Call {
                                        nr: number(nr),
                                        arch: AUDIT_ARCH,
                                        args: [*a0, *a1, *a2, a3, 0, 0],
                                    };
                                    assert_eq!(
                                        run(&program, &call),
                                        expected(&network, root, root, &call),
                                        "{network:?} root={root} {call:?}"
                                    );
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        eprintln!("seccomp: {checked} calls decided as the rules say");
    }

    #[test]
    fn the_filters_are_short_and_survive_packing() {
        for network in NetworkRule::each() {
            let program = assemble(&rules(&network, true, true)).expect("assembles");
            eprintln!("{network:?}: {} instructions", program.len());
            assert!(program.len() < 160, "{} instructions", program.len());
            let packed = compile(&network, true, true).expect("compiles");
            let unpacked: Vec<sock_filter> = packed[0].iter().copied().map(unpack).collect();
            assert_eq!(unpacked, program);
        }
    }
}
