//! The one way a file is written for a person: host configurations (`install`), manifests
//! and their schema (`init`, `import -o`), a call's saved content (`call`).
//!
//! A file a person keeps (their `~/.claude.json`, with every other server and project in it)
//! must be either as it was or as we meant it, never half of each. So the bytes go to a new
//! file beside the target, are flushed to the disk, take the target's mode and owner, and
//! are renamed over it (a rename within one folder is atomic); then the folder is flushed so
//! the rename itself survives a crash. A target that is a symlink (a dotfiles checkout) is
//! written where it points, and the link is kept. A failure at any step (a full disk, a
//! quota, `ulimit -f`) leaves the target untouched and no temporary file behind.
//!
//! `tests/userfiles.rs` reads `src/` and fails on any other write of a file, so a new command
//! that writes for a person cannot skip this.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a file could not be written; the target is as it was.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("could not create the folder `{}`: {source}", .path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write `{}`: {source}; it was left as it was", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "could not write `{}`: its {size} bytes are more than this process may write to a file \
         (`ulimit -f`: {limit} bytes); it was left as it was",
        .path.display()
    )]
    TooBig {
        path: PathBuf,
        size: usize,
        limit: u64,
    },
    #[error("`{}` is a chain of more than {LINKS} symlinks", .0.display())]
    Links(PathBuf),
}

/// How many symlinks a target may be behind, as the kernel's own limit for a path.
const LINKS: usize = 40;

/// Writes `bytes` to `path` atomically (see the module's note); creates missing folders. A
/// new file gets the mode a plain create would (0666 less the umask).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_with(path, bytes, 0o666)
}

/// The same, a new file readable by its owner only (0600): a host's configuration, which
/// holds other servers' tokens.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_with(path, bytes, 0o600)
}

fn write_with(path: &Path, bytes: &[u8], new_mode: u32) -> Result<(), WriteError> {
    let target = resolve(path)?;
    let folder = match target.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&folder).map_err(|source| WriteError::Folder {
        path: folder.clone(),
        source,
    })?;
    let failed = |source| WriteError::Write {
        path: path.to_owned(),
        source,
    };
    // Past `ulimit -f` the kernel kills the writer (SIGXFSZ) part way through; say so instead,
    // before anything is written.
    if let Ok((limit, _)) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE)
        && limit != nix::sys::resource::RLIM_INFINITY
        && bytes.len() as u64 > limit
    {
        return Err(WriteError::TooBig {
            path: path.to_owned(),
            size: bytes.len(),
            limit,
        });
    }
    let existing = std::fs::metadata(&target).ok();
    // A file its owner made read-only is not replaced behind its back (a rename would).
    if existing.is_some() && nix::unistd::access(&target, nix::unistd::AccessFlags::W_OK).is_err() {
        return Err(WriteError::Write {
            path: path.to_owned(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
    }
    // A new file gets `new_mode` less the umask; an existing one keeps its own, set exactly
    // below, since the umask would have narrowed it.
    let mode = existing
        .as_ref()
        .map_or(new_mode, |meta| meta.mode() & 0o7777);
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
    let mut temporary = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(&folder)
        .map_err(failed)?;
    let file = temporary.as_file_mut();
    file.write_all(bytes).map_err(failed)?;
    if let Some(meta) = &existing {
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(failed)?;
        if meta.uid() != file.metadata().map_err(failed)?.uid() {
            // Root writing a person's file (`sudo mcp-serve install`) leaves it theirs; where
            // we may not change the owner, the file is ours, as a plain write would not be.
            std::os::unix::fs::fchown(&*file, Some(meta.uid()), Some(meta.gid())).ok();
        }
    }
    file.sync_all().map_err(failed)?;
    temporary
        .persist(&target)
        .map_err(|error| failed(error.error))?;
    // The rename is durable once the folder is; a folder that cannot be opened or synced (some
    // network file systems) has the file all the same.
    if let Ok(folder) = std::fs::File::open(&folder) {
        folder.sync_all().ok();
    }
    Ok(())
}

/// The file `path` names after following symlinks, dangling ones included (writing through a
/// dangling link creates its target, as a plain write would).
fn resolve(path: &Path) -> Result<PathBuf, WriteError> {
    let mut current = path.to_owned();
    for _ in 0..LINKS {
        match std::fs::read_link(&current) {
            Ok(next) => {
                current = match current.parent() {
                    Some(parent) if next.is_relative() => parent.join(next),
                    _ => next,
                };
            }
            Err(_) => return Ok(current),
        }
    }
    Err(WriteError::Links(path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_and_nothing_is_left_beside_it() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("sub/config.json");
        write(&path, b"{}\n").expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"{}\n");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["config.json"]);
    }

    #[test]
    fn an_existing_file_keeps_its_mode() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("secret.json");
        std::fs::write(&path, "old").expect("old");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("mode");
        write(&path, b"new").expect("write");
        let meta = std::fs::metadata(&path).expect("meta");
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).expect("read"), b"new");
    }

    #[test]
    fn a_new_host_config_is_its_owners_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(".claude.json");
        write_private(&path, b"{}").expect("write");
        assert_eq!(std::fs::metadata(&path).expect("meta").mode() & 0o077, 0);
    }

    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let real = dir.path().join("dotfiles/claude.json");
        std::fs::create_dir_all(real.parent().expect("parent")).expect("dotfiles");
        std::fs::write(&real, "old").expect("old");
        let link = dir.path().join(".claude.json");
        std::os::unix::fs::symlink("dotfiles/claude.json", &link).expect("link");
        write(&link, b"new").expect("write");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("link meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).expect("real"), b"new");
    }

    #[test]
    fn a_loop_of_links_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink(&b, &a).expect("a");
        std::os::unix::fs::symlink(&a, &b).expect("b");
        assert!(matches!(write(&a, b"x"), Err(WriteError::Links(_))));
    }
}
