//! Files a command writes into its per-call output directory.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use crate::results::OutputFile;

/// The regular files directly in `directory`, by name, within `budget` bytes in total.
/// Links and subdirectories are ignored: a link could point anywhere on the machine.
pub fn collect_files(directory: &Path, budget: usize) -> Result<Vec<OutputFile>, String> {
    let mut entries: Vec<_> = std::fs::read_dir(directory)
        .map_err(|error| error.to_string())?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    let mut files = Vec::with_capacity(entries.len());
    let mut used = 0_usize;
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Opened without following a link and without blocking on a FIFO, then checked on
        // the handle: a process of the call that outlived it may have swapped the file for
        // a link to something only the server can read since the listing.
        let Ok(mut file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(entry.path())
        else {
            continue;
        };
        let metadata = file.metadata().map_err(|error| error.to_string())?;
        if !metadata.is_file() {
            continue;
        }
        let before = used;
        used = used.saturating_add(usize::try_from(metadata.len()).unwrap_or(usize::MAX));
        if used > budget {
            return Err(format!(
                "together they are more than {budget} bytes, the tool's limit"
            ));
        }
        let mut bytes = Vec::new();
        let left = u64::try_from(budget - before).unwrap_or(u64::MAX);
        (&mut file)
            .take(left.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|error| format!("`{name}`: {error}"))?;
        used = before + bytes.len();
        if used > budget {
            return Err(format!(
                "together they are more than {budget} bytes, the tool's limit"
            ));
        }
        files.push(OutputFile { name, bytes });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::collect_files;

    #[test]
    fn takes_regular_files_in_name_order_and_ignores_links() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("b.txt"), "b").expect("write");
        std::fs::write(dir.path().join("a.png"), "a").expect("write");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("c-link")).expect("symlink");
        let files = collect_files(dir.path(), 100).expect("files");
        let names: Vec<&str> = files.iter().map(|file| file.name.as_str()).collect();
        assert_eq!(names, ["a.png", "b.txt"]);
        assert!(collect_files(dir.path(), 1).is_err());
    }
}
