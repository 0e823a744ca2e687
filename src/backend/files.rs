//! Files a command writes into its per-call output directory.

use std::ffi::{CStr, OsStr};
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use rustix::fs::{Dir, FileType, Mode, OFlags};

use crate::connections::Shortage;
use crate::results::{OutputFile, OutputFiles, Stopped};

/// The regular files directly in `directory`, by name, within `budget` bytes in total and at
/// most `most` of them. Links and subdirectories are ignored: a link could point anywhere on
/// the machine. The directory is read only as far as it must be: it stops at the first
/// regular file past `most`, or once more than `most` other entries were skipped, so a
/// command that leaves 20,000 files costs no more than one that leaves `most + 1`; which
/// files are taken then is the directory's order, and the result says files were left out.
pub fn collect_files(
    directory: &Path,
    budget: usize,
    most: usize,
) -> Result<OutputFiles, FilesError> {
    let folder = rustix::fs::open(
        directory,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)?;
    let mut entries = Dir::new(folder).map_err(std::io::Error::from)?;
    let (mut names, mut skipped, mut examined, mut stopped) = (Vec::new(), 0, 0, None);
    while let Some(entry) = entries.read() {
        let entry = entry.map_err(std::io::Error::from)?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        examined += 1;
        match entry.file_type() {
            // Some file systems do not say; the handle will.
            FileType::RegularFile | FileType::Unknown => {
                if names.len() == most {
                    stopped = Some(Stopped::Files { most });
                    break;
                }
                names.push(name.to_owned());
            }
            _ => {
                skipped += 1;
                if skipped > most {
                    stopped = Some(Stopped::Others { most });
                    break;
                }
            }
        }
    }
    names.sort();
    let at = entries.fd().map_err(std::io::Error::from)?;
    let mut files = Vec::with_capacity(names.len());
    let mut used = 0_usize;
    for name in names {
        let shown = OsStr::from_bytes(name.to_bytes())
            .to_string_lossy()
            .into_owned();
        // Opened without following a link and without blocking on a FIFO, then checked on
        // the handle: a process of the call that outlived it may have swapped the file for
        // a link to something only the server can read since the listing.
        let Some(mut file) = open_beneath(at, &name)? else {
            continue;
        };
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            continue;
        }
        let before = used;
        used = used.saturating_add(usize::try_from(metadata.len()).unwrap_or(usize::MAX));
        if used > budget {
            return Err(FilesError::TooBig(budget));
        }
        let mut bytes = Vec::new();
        let left = u64::try_from(budget - before).unwrap_or(u64::MAX);
        (&mut file)
            .take(left.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|source| FilesError::Read {
                name: shown.clone(),
                source,
            })?;
        used = before + bytes.len();
        if used > budget {
            return Err(FilesError::TooBig(budget));
        }
        files.push(OutputFile { name: shown, bytes });
    }
    tracing::debug!(examined, taken = files.len(), stopped = ?stopped, "output files");
    Ok(OutputFiles {
        files,
        stopped,
        examined,
    })
}

/// Why a command's output files could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("`{name}`: {source}")]
    Read {
        name: String,
        source: std::io::Error,
    },
    #[error("together they are more than {0} bytes, the tool's limit")]
    TooBig(usize),
}

impl Shortage for FilesError {
    fn out_of_descriptors(&self) -> bool {
        match self {
            Self::Io(error) | Self::Read { source: error, .. } => error.out_of_descriptors(),
            Self::TooBig(_) => false,
        }
    }
}

/// `name` in the directory `at`, for reading, when it is not a link (`None`: a link, a
/// socket, one it may not read); out of descriptors is an error, never a file left out.
fn open_beneath(
    at: std::os::fd::BorrowedFd<'_>,
    name: &CStr,
) -> std::io::Result<Option<std::fs::File>> {
    match rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(Some(std::fs::File::from(fd))),
        Err(error) => {
            let error = std::io::Error::from(error);
            if error.out_of_descriptors() {
                Err(error)
            } else {
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::collect_files;
    use crate::results::Stopped;

    #[test]
    fn takes_regular_files_in_name_order_and_ignores_links() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("b.txt"), "b").expect("write");
        std::fs::write(dir.path().join("a.png"), "a").expect("write");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("c-link")).expect("symlink");
        let taken = collect_files(dir.path(), 100, 100).expect("files");
        let names: Vec<&str> = taken.files.iter().map(|file| file.name.as_str()).collect();
        assert_eq!(names, ["a.png", "b.txt"]);
        assert_eq!((taken.stopped, taken.examined), (None, 4));
        assert!(collect_files(dir.path(), 1, 100).is_err());
    }

    #[test]
    fn the_scan_stops_at_the_limit_however_many_entries_there_are() {
        let dir = tempfile::tempdir().expect("dir");
        for index in 0..20_000 {
            std::fs::write(dir.path().join(format!("f{index}")), "").expect("write");
        }
        let taken = collect_files(dir.path(), 1 << 20, 100).expect("files");
        eprintln!(
            "output files: 20,000 in the directory, {} entries read, {} taken",
            taken.examined,
            taken.files.len()
        );
        assert_eq!(taken.files.len(), 100);
        assert_eq!(taken.stopped, Some(Stopped::Files { most: 100 }));
        assert_eq!(taken.examined, 101, "one past the limit, and no further");
        let mut names: Vec<&str> = taken.files.iter().map(|file| file.name.as_str()).collect();
        let sorted = names.clone();
        names.sort_unstable();
        assert_eq!(names, sorted, "the files taken are in name order");

        // Entries that are never taken are bounded too.
        let links = tempfile::tempdir().expect("dir");
        for index in 0..5_000 {
            std::os::unix::fs::symlink("/etc/passwd", links.path().join(format!("l{index}")))
                .expect("symlink");
        }
        std::fs::write(links.path().join("real.txt"), "x").expect("write");
        let taken = collect_files(links.path(), 1 << 20, 10).expect("files");
        assert_eq!(taken.stopped, Some(Stopped::Others { most: 10 }));
        assert!(taken.examined <= 2 * 10 + 1, "{} read", taken.examined);
    }
}
