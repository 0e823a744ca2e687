//! The namespaces a call gets, entered with one `unshare`:
//!
//! - a user namespace of its own, where it keeps its user and group ids, so that
//!   `RLIMIT_NPROC` counts this call's processes only (the kernel counts per user *per
//!   namespace*); also what lets a user other than root make the mount namespace;
//! - a mount namespace where every mount is read-only but the write paths: Landlock does not
//!   cover `chmod`, `chown`, `utime` and extended attributes, a read-only mount does
//!   (`EROFS`), for every file the call's user owns outside its write set;
//! - a PID namespace, whose first process (the init `init` starts) takes every process of
//!   the call with it when it ends.

use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag, OpenHow, ResolveFlag, openat2};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};

use super::Policy;

/// What [`enter`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entered {
    /// The call has its own user namespace, so `RLIMIT_NPROC` counts its processes only.
    pub counts_processes: bool,
    /// Everything but the write paths is mounted read-only.
    pub read_only: bool,
    /// This process's next child starts a PID namespace of its own, as its init.
    pub pid_namespace: bool,
}

impl Entered {
    /// As one argument for the trampoline's init, which [`Self::from_argument`] reads back.
    pub(super) fn to_argument(self) -> String {
        [
            (self.counts_processes, 'c'),
            (self.read_only, 'r'),
            (self.pid_namespace, 'p'),
        ]
        .into_iter()
        .map(|(on, letter)| if on { letter } else { '-' })
        .collect()
    }

    pub(super) fn from_argument(text: &str) -> Option<Self> {
        let mut letters = text.chars();
        let mut next = |letter| match letters.next() {
            Some(found) if found == letter => Some(true),
            Some('-') => Some(false),
            _ => None,
        };
        let entered = Self {
            counts_processes: next('c')?,
            read_only: next('r')?,
            pid_namespace: next('p')?,
        };
        letters.next().is_none().then_some(entered)
    }
}

/// Enters the namespaces `policy` asks for; `before_pid` runs after the others and before
/// the PID namespace is asked for (after which this process can start no thread). Some
/// containers forbid namespaces the probe thought available: then, unless
/// `policy.required`, the call runs with what it got (a PID namespace is the one most often
/// refused alone: the rest still helps), and the caller drops the process limit (it would
/// count every process of the user) and denies the metadata calls instead.
pub(super) fn enter(
    policy: &Policy,
    before_pid: impl FnOnce() -> Result<(), String>,
) -> Result<Entered, String> {
    let root = nix::unistd::geteuid().is_root();
    let mut flags = CloneFlags::empty();
    if policy.user_namespace {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    if policy.read_only {
        flags |= CloneFlags::CLONE_NEWNS;
    }
    if !root && (policy.read_only || policy.pid_namespace) {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    let none = Entered {
        counts_processes: false,
        read_only: false,
        pid_namespace: false,
    };
    // Read before the user namespace, where they are unmapped until the maps are written.
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    if let Err(error) = unshare(flags) {
        if policy.required {
            return Err(format!("could not create the call's namespaces: {error}"));
        }
        before_pid()?;
        return Ok(none);
    }
    if flags.contains(CloneFlags::CLONE_NEWUSER) {
        let write = |file: &str, text: String| {
            std::fs::write(format!("/proc/self/{file}"), text)
                .map_err(|error| format!("could not write /proc/self/{file}: {error}"))
        };
        write("setgroups", "deny".into())?;
        write("uid_map", format!("{uid} {uid} 1"))?;
        write("gid_map", format!("{gid} {gid} 1"))?;
    }
    let read_only = match policy.read_only.then(|| read_only_but(&policy.write)) {
        Some(Ok(())) => true,
        Some(Err(reason)) if policy.required => return Err(reason),
        None | Some(Err(_)) => false,
    };
    before_pid()?;
    let pid_namespace = policy.pid_namespace
        && match unshare(CloneFlags::CLONE_NEWPID) {
            Ok(()) => true,
            Err(error) if policy.required => {
                return Err(format!(
                    "could not create the call's PID namespace: {error}"
                ));
            }
            Err(_) => false,
        };
    Ok(Entered {
        counts_processes: policy.user_namespace,
        read_only,
        pid_namespace,
    })
}

/// Makes every mount of this (new) namespace read-only, then each write path writable again
/// as a bind mount of itself. Nothing propagates back to the server's namespace.
fn read_only_but(write: &[PathBuf]) -> Result<(), String> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|error| format!("could not make the mounts private: {error}"))?;
    let table = std::fs::read("/proc/self/mountinfo")
        .map_err(|error| format!("could not read /proc/self/mountinfo: {error}"))?;
    let table = mounts(&table);
    for entry in &table {
        remount(&entry.point, entry.flags | MsFlags::MS_RDONLY).map_err(|error| {
            format!(
                "could not make {} read-only: {error}",
                entry.point.display()
            )
        })?;
    }
    for path in write {
        // Opened as Landlock opens it: a symlink planted since load is refused, never
        // followed; the bind then names the opened file, not the path again.
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
        let open = || openat2(AT_FDCWD, path.as_path(), how);
        let fd = match open() {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => continue,
            Err(error) => return Err(format!("`{}`: {error}", path.display())),
        };
        let magic = |fd: &OwnedFd| PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let opened = magic(&fd);
        // The flags of the mount the path was on, as they were: a read-only one stays so.
        let flags = table
            .iter()
            .filter(|entry| path.starts_with(&entry.point))
            .max_by_key(|entry| entry.point.as_os_str().len())
            .map_or(MsFlags::empty(), |entry| entry.flags);
        mount(
            Some(&opened),
            &opened,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        // Opened again, the path is the new bind mount, which alone becomes writable.
        .and_then(|()| open())
        .and_then(|bound| remount(&magic(&bound), flags))
        .map_err(|error| format!("could not keep {} writable: {error}", path.display()))?;
    }
    Ok(())
}

fn remount(point: &Path, flags: MsFlags) -> nix::Result<()> {
    mount(
        None::<&str>,
        point,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | flags,
        None::<&str>,
    )
}

/// One mount: where, and the per-mount flags a remount must keep (the kernel locks those a
/// more privileged namespace set, and refuses a remount that would clear them).
#[derive(Debug, PartialEq, Eq)]
struct Mount {
    point: PathBuf,
    flags: MsFlags,
}

/// The mounts of a `/proc/self/mountinfo`, parents before children.
fn mounts(table: &[u8]) -> Vec<Mount> {
    table
        .split(|byte| *byte == b'\n')
        .filter_map(|line| {
            let mut fields = line.split(|byte| *byte == b' ');
            let point = fields.nth(4)?;
            let options = fields.next()?;
            let mut flags = MsFlags::empty();
            for option in options.split(|byte| *byte == b',') {
                flags |= match option {
                    b"ro" => MsFlags::MS_RDONLY,
                    b"nosuid" => MsFlags::MS_NOSUID,
                    b"nodev" => MsFlags::MS_NODEV,
                    b"noexec" => MsFlags::MS_NOEXEC,
                    b"noatime" => MsFlags::MS_NOATIME,
                    b"nodiratime" => MsFlags::MS_NODIRATIME,
                    b"relatime" => MsFlags::MS_RELATIME,
                    b"strictatime" => MsFlags::MS_STRICTATIME,
                    _ => MsFlags::empty(),
                };
            }
            Some(Mount {
                point: PathBuf::from(OsString::from_vec(unescape(point))),
                flags,
            })
        })
        .collect()
}

/// mountinfo writes a space, tab, newline and backslash in a path as `\040`, `\011`, `\012`
/// and `\134`.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut at = 0;
    while at < field.len() {
        let octal = field.get(at + 1..at + 4).filter(|digits| {
            field[at] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d))
        });
        if let Some(digits) = octal {
            let value = digits
                .iter()
                .fold(0_u32, |value, digit| value * 8 + u32::from(digit - b'0'));
            out.push(u8::try_from(value).unwrap_or(b'?'));
            at += 4;
        } else {
            out.push(field[at]);
            at += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_entered_reaches_the_init_as_it_was() {
        for bits in 0..8_u8 {
            let entered = Entered {
                counts_processes: bits & 1 != 0,
                read_only: bits & 2 != 0,
                pid_namespace: bits & 4 != 0,
            };
            assert_eq!(
                Entered::from_argument(&entered.to_argument()),
                Some(entered)
            );
        }
        for wrong in ["", "c", "cr", "crpx", "rcp", "c-?", "???"] {
            assert_eq!(Entered::from_argument(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn mountinfo_lines_give_the_point_and_the_flags_to_keep() {
        let table = b"22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
            23 22 0:5 / /dev rw,nosuid,noexec shared:2 - devtmpfs udev rw\n\
            24 22 0:6 / /mnt/my\\040disk ro,nodev,noatime - tmpfs t rw\n";
        let found = mounts(table);
        assert_eq!(
            found,
            [
                Mount {
                    point: "/".into(),
                    flags: MsFlags::MS_RELATIME
                },
                Mount {
                    point: "/dev".into(),
                    flags: MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC
                },
                Mount {
                    point: "/mnt/my disk".into(),
                    flags: MsFlags::MS_RDONLY | MsFlags::MS_NODEV | MsFlags::MS_NOATIME
                },
            ]
        );
        assert_eq!(unescape(br"a\134b\011"), b"a\\b\t");
        assert_eq!(unescape(br"trailing\04"), br"trailing\04");
    }
}
