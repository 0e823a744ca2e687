//! Files a command writes into its per-call output directory.

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
        let size = entry.metadata().map_err(|error| error.to_string())?.len();
        used = used.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
        if used > budget {
            return Err(format!(
                "together they are more than {budget} bytes, the tool's limit"
            ));
        }
        let bytes = std::fs::read(entry.path()).map_err(|error| format!("`{name}`: {error}"))?;
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
