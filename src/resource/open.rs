//! Opening a resource's file without following a symbolic link anywhere on its path.
//!
//! Where the kernel has `openat2` (Linux 5.6), one call does it: `RESOLVE_NO_SYMLINKS`, and
//! inside a template's folder `RESOLVE_BENEATH` too, relative to the folder's handle. Where it
//! does not (`ENOSYS`, or a seccomp profile that answers `EPERM`), each folder on the path is
//! opened in turn with `O_NOFOLLOW | O_DIRECTORY` relative to the one before, then the file
//! with `O_NOFOLLOW`. Either way a path is resolved once, by the kernel, on handles: nothing
//! is checked by name and then opened again, so a writer swapping a file for a link between
//! the two cannot win. Whether the result is a regular file is for the caller to ask the
//! handle (`File::metadata` is `fstat`).

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Why a path could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A symbolic link stands where the path names a file or a folder.
    #[error("a symbolic link stands on the path")]
    Link,
    /// The path leaves the folder it must stay beneath (`..`, or an absolute path).
    #[error("the path leaves its folder")]
    Escapes,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl OpenError {
    /// Nothing is there (or a file stands where a folder should).
    pub fn is_missing(&self) -> bool {
        matches!(self, Self::Io(error) if matches!(
            error.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        ))
    }
}

/// How a path is resolved: with `openat2`, or one component at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    Openat2,
    Walk,
}

/// Set once `openat2` answered `ENOSYS`: the kernel does not have it, so it is not asked again.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// An absolute path to a folder, as a handle (`O_PATH`) to open files beneath.
pub fn folder(path: &Path) -> Result<OwnedFd, OpenError> {
    with_fallback(|strategy| folder_with(strategy, path))
}

/// An absolute path to a file, opened for reading (without blocking on a FIFO) when no
/// symbolic link stands anywhere on it. `..` is allowed: it names a real parent.
pub fn file(path: &Path) -> Result<File, OpenError> {
    with_fallback(|strategy| file_with(strategy, path))
}

/// `relative` (plain names only) beneath `folder`, opened for reading when no symbolic link
/// stands anywhere on it.
pub fn file_beneath(folder: BorrowedFd<'_>, relative: &Path) -> Result<File, OpenError> {
    with_fallback(|strategy| file_beneath_with(strategy, folder, relative))
}

fn with_fallback<T>(open: impl Fn(Strategy) -> Result<T, Resolved>) -> Result<T, OpenError> {
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match open(Strategy::Openat2) {
            Err(Resolved::Unsupported { cache }) => {
                if cache {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
            }
            other => return other.map_err(Resolved::into_error),
        }
    }
    open(Strategy::Walk).map_err(Resolved::into_error)
}

/// An outcome inside this module: `openat2` may be missing, which callers never see.
#[derive(Debug)]
pub(crate) enum Resolved {
    Unsupported { cache: bool },
    Failed(OpenError),
}

impl Resolved {
    fn into_error(self) -> OpenError {
        match self {
            Self::Unsupported { .. } => OpenError::Io(std::io::Error::from(Errno::NOSYS)),
            Self::Failed(error) => error,
        }
    }
}

impl From<OpenError> for Resolved {
    fn from(error: OpenError) -> Self {
        Self::Failed(error)
    }
}

/// A folder on the path, as a handle only (search permission is enough). `openat2` leaves
/// out `O_NOFOLLOW`: with `O_PATH` it would hand back the link itself, where
/// `RESOLVE_NO_SYMLINKS` refuses it.
const DIRECTORY: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// The file itself: read, never blocking on a FIFO, never becoming the controlling terminal.
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

pub(crate) fn folder_with(strategy: Strategy, path: &Path) -> Result<OwnedFd, Resolved> {
    if !path.is_absolute() {
        return Err(OpenError::Escapes.into());
    }
    match strategy {
        Strategy::Openat2 => openat2(CWD, path, DIRECTORY, ResolveFlags::NO_SYMLINKS),
        Strategy::Walk => walk(None, path, false, None),
    }
}

pub(crate) fn file_with(strategy: Strategy, path: &Path) -> Result<File, Resolved> {
    if !path.is_absolute() {
        return Err(OpenError::Escapes.into());
    }
    match strategy {
        Strategy::Openat2 => openat2(CWD, path, READ, ResolveFlags::NO_SYMLINKS),
        Strategy::Walk => walk(None, path, false, Some(READ)),
    }
    .map(File::from)
}

pub(crate) fn file_beneath_with(
    strategy: Strategy,
    folder: BorrowedFd<'_>,
    relative: &Path,
) -> Result<File, Resolved> {
    if !relative
        .components()
        .all(|part| matches!(part, Component::Normal(_)))
    {
        return Err(OpenError::Escapes.into());
    }
    match strategy {
        Strategy::Openat2 => openat2(
            folder,
            relative,
            READ,
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        ),
        Strategy::Walk => walk(Some(folder), relative, true, Some(READ)),
    }
    .map(File::from)
}

fn openat2(
    at: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Resolved> {
    match rustix::fs::openat2(at, path, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOSYS) => Err(Resolved::Unsupported { cache: true }),
        // Some container profiles deny system calls they do not know with EPERM; nothing
        // this module asks for can fail so for another reason.
        Err(Errno::PERM) => Err(Resolved::Unsupported { cache: false }),
        // A link on the path (`RESOLVE_NO_SYMLINKS`), and `O_NOFOLLOW` on the last one.
        Err(Errno::LOOP) => Err(OpenError::Link.into()),
        // `RESOLVE_BENEATH`: the path would leave the folder.
        Err(Errno::XDEV) => Err(OpenError::Escapes.into()),
        Err(errno) => Err(OpenError::Io(errno.into()).into()),
    }
}

/// One component at a time: every folder with `O_NOFOLLOW | O_DIRECTORY` relative to the
/// one before (from `/` for an absolute path), then the last with `leaf | O_NOFOLLOW` (or as
/// a folder, when `leaf` is `None`). `beneath` refuses `..` and a root.
fn walk(
    start: Option<BorrowedFd<'_>>,
    path: &Path,
    beneath: bool,
    leaf: Option<OFlags>,
) -> Result<OwnedFd, Resolved> {
    let mut current: Option<OwnedFd> = None;
    let parts: Vec<Component<'_>> = path
        .components()
        .filter(|part| !matches!(part, Component::CurDir))
        .collect();
    for (index, part) in parts.iter().enumerate() {
        let last = index + 1 == parts.len();
        let at = current.as_ref().map(AsFd::as_fd).or(start).unwrap_or(CWD);
        let name: &Path = match part {
            Component::RootDir if !beneath && index == 0 => Path::new("/"),
            Component::ParentDir if !beneath => Path::new(".."),
            Component::Normal(name) => Path::new(*name),
            _ => return Err(OpenError::Escapes.into()),
        };
        let flags = match leaf {
            Some(flags) if last => flags,
            _ => DIRECTORY,
        } | OFlags::NOFOLLOW;
        let opened = rustix::fs::openat(at, name, flags, Mode::empty())
            .map_err(|errno| classify(at, name, errno))?;
        current = Some(opened);
    }
    match current {
        Some(fd) => Ok(fd),
        // An empty path: the start itself.
        None => Err(OpenError::Escapes.into()),
    }
}

/// Why opening `name` failed: a link, when one stands there (asked without following it,
/// only to say so; nothing is opened by this name again).
fn classify(at: BorrowedFd<'_>, name: &Path, errno: Errno) -> Resolved {
    let link = matches!(errno, Errno::LOOP | Errno::NOTDIR)
        && rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink);
    if link {
        OpenError::Link.into()
    } else {
        OpenError::Io(errno.into()).into()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::os::fd::AsFd as _;
    use std::path::Path;

    use super::{OpenError, Resolved, Strategy, file_beneath_with, file_with, folder_with};

    const STRATEGIES: [Strategy; 2] = [Strategy::Openat2, Strategy::Walk];

    fn text(opened: Result<std::fs::File, Resolved>) -> Result<String, String> {
        match opened {
            Ok(mut file) => {
                let mut text = String::new();
                file.read_to_string(&mut text).map_err(|e| e.to_string())?;
                Ok(text)
            }
            Err(Resolved::Failed(OpenError::Link)) => Err("link".into()),
            Err(Resolved::Failed(OpenError::Escapes)) => Err("escapes".into()),
            Err(Resolved::Failed(error)) if error.is_missing() => Err("missing".into()),
            Err(other) => Err(format!("{other:?}")),
        }
    }

    /// `root/` with `docs/a.md`, `docs/sub/b.md`, a secret beside `docs`, and links out of it
    /// in every place a link can stand.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        let root = std::fs::canonicalize(dir.path()).expect("real");
        let link = |target: &Path, at: &str| {
            std::os::unix::fs::symlink(target, root.join(at)).expect("link");
        };
        std::fs::create_dir_all(root.join("docs/sub")).expect("docs");
        std::fs::write(root.join("docs/a.md"), "a").expect("a");
        std::fs::write(root.join("docs/sub/b.md"), "b").expect("b");
        std::fs::write(root.join("secret.txt"), "secret").expect("secret");
        link(&root.join("secret.txt"), "docs/leaf-out");
        link(Path::new("../secret.txt"), "docs/leaf-relative");
        link(&root.join("docs/a.md"), "docs/leaf-in");
        link(&root, "docs/folder-out");
        link(&root.join("docs/sub"), "docs/folder-in");
        link(&root.join("docs"), "docs-link");
        dir
    }

    #[test]
    fn beneath_a_folder_only_plain_paths_without_links_open() {
        let dir = tree();
        let root = std::fs::canonicalize(dir.path()).expect("real");
        let mut tried = 0;
        for strategy in STRATEGIES {
            let docs = folder_with(strategy, &root.join("docs")).expect("docs");
            let open = |relative: &str| {
                text(file_beneath_with(
                    strategy,
                    docs.as_fd(),
                    Path::new(relative),
                ))
            };
            let expected: [(&str, Result<&str, &str>); 10] = [
                ("a.md", Ok("a")),
                ("sub/b.md", Ok("b")),
                ("leaf-out", Err("link")),
                ("leaf-relative", Err("link")),
                // A link that stays inside is refused too: no link is ever followed.
                ("leaf-in", Err("link")),
                ("folder-out/secret.txt", Err("link")),
                ("folder-in/b.md", Err("link")),
                ("../secret.txt", Err("escapes")),
                ("/etc/passwd", Err("escapes")),
                ("missing.md", Err("missing")),
            ];
            for (relative, want) in expected {
                assert_eq!(
                    open(relative),
                    want.map(str::to_owned).map_err(str::to_owned),
                    "{strategy:?} {relative}"
                );
                tried += 1;
            }
            assert!(matches!(
                folder_with(strategy, &root.join("docs-link")),
                Err(Resolved::Failed(OpenError::Link))
            ));
        }
        eprintln!("open beneath: {tried} paths, both strategies agree");
    }

    #[test]
    fn an_absolute_file_opens_only_with_no_link_on_its_path() {
        let dir = tree();
        let root = std::fs::canonicalize(dir.path()).expect("real");
        for strategy in STRATEGIES {
            let open = |relative: &str| text(file_with(strategy, &root.join(relative)));
            assert_eq!(open("docs/a.md"), Ok("a".into()), "{strategy:?}");
            assert_eq!(open("docs/sub/../a.md"), Ok("a".into()), "{strategy:?}");
            assert_eq!(open("docs/leaf-in"), Err("link".into()), "{strategy:?}");
            assert_eq!(open("docs-link/a.md"), Err("link".into()), "{strategy:?}");
            assert_eq!(
                open("docs/folder-out/secret.txt"),
                Err("link".into()),
                "{strategy:?}"
            );
            assert_eq!(open("docs/none.md"), Err("missing".into()), "{strategy:?}");
            assert_eq!(
                text(file_with(strategy, Path::new("docs/a.md"))),
                Err("escapes".into())
            );
        }
    }

    #[test]
    fn both_strategies_hold_against_a_file_swapped_for_a_link() {
        const OPENS: usize = 20_000;
        let dir = tree();
        let root = std::fs::canonicalize(dir.path()).expect("real");
        std::fs::write(root.join("docs/race.md"), "public").expect("race");
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("docs/.other"))
            .expect("link");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, docs) = (std::sync::Arc::clone(&stop), root.join("docs"));
            std::thread::spawn(move || {
                let mut swaps = 0_u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && swaps < 50_000_000 {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        docs.join(".other"),
                        rustix::fs::CWD,
                        docs.join("race.md"),
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .expect("swap");
                    swaps += 1;
                }
                swaps
            })
        };
        // Both ways of opening and the control take turns, so that all three meet the same
        // swaps: [public, refused, leaked] for each.
        let handles = STRATEGIES.map(|strategy| {
            (
                strategy,
                folder_with(strategy, &root.join("docs")).expect("docs"),
            )
        });
        let mut counts = [[0_usize; 3]; 2];
        let mut followed = 0;
        for _ in 0..OPENS {
            for ((strategy, docs), count) in handles.iter().zip(&mut counts) {
                match text(file_beneath_with(
                    *strategy,
                    docs.as_fd(),
                    Path::new("race.md"),
                )) {
                    Ok(text) if text == "public" => count[0] += 1,
                    Ok(_) => count[2] += 1,
                    Err(_) => count[1] += 1,
                }
            }
            // The control: opening by name, following links, gets the secret.
            if std::fs::read_to_string(root.join("docs/race.md")).is_ok_and(|t| t == "secret") {
                followed += 1;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let swaps = writer.join().expect("writer");
        eprintln!(
            "open race over {swaps} swaps: [public, refused, leaked] Openat2 {:?}, Walk {:?}; following links, {followed} of {OPENS} got the secret",
            counts[0], counts[1]
        );
        for ((strategy, _), [public, refused, leaked]) in handles.iter().zip(counts) {
            assert_eq!(leaked, 0, "{strategy:?}");
            assert!(
                public > 0 && refused > 0,
                "{strategy:?}: the swap was seen both ways"
            );
        }
        assert!(followed > 0);
    }
}
