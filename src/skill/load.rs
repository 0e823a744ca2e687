//! Reading a skill's folder: one walk through handles (each folder opened relative to its
//! parent with `O_NOFOLLOW | O_DIRECTORY`, each file with `O_NOFOLLOW`, never blocking on a
//! FIFO), so a link anywhere, or one swapped in while the walk runs, is refused rather than
//! followed; then the frontmatter of its `SKILL.md` checked against the Agent Skills rules.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde_json::{Map, Value};
use sha2::Digest as _;

use super::{ENTRY, File, MAX_BYTES, MAX_FILES, Skill};
use crate::resource::open;
use crate::secret::Redactor;

/// Folders a skill may nest.
const MAX_DEPTH: usize = 16;

/// The longest `description`, as Agent Skills bounds it.
const MAX_DESCRIPTION: usize = 1024;

/// Why a skill's folder cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot open the folder: {0}")]
    Folder(#[source] open::OpenError),
    #[error("`{0}` is a symbolic link; a skill's files are never read through one")]
    Link(String),
    #[error("`{0}` is neither a file nor a folder")]
    Special(String),
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("it has more than {MAX_FILES} files, the most a skill may have")]
    TooManyFiles,
    #[error("it has more than {MAX_FILES} folders")]
    TooManyFolders,
    #[error("`{0}` is not a UTF-8 name")]
    NotUtf8(String),
    #[error("its files add up to more than {MAX_BYTES} bytes, the most a skill may have")]
    TooBig,
    #[error("its folders nest deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("it has no `SKILL.md`")]
    NoEntry,
    #[error("`SKILL.md` {0}")]
    Frontmatter(String),
    #[error(
        "its name `{0}` is not a skill name: 1 to 64 lowercase letters, digits and single hyphens, not starting or ending with one"
    )]
    Name(String),
    #[error("its name `{name}` is not its folder's name, `{folder}`")]
    NotFolderName { name: String, folder: String },
}

/// The skill in `folder` (absolute, with no symbolic link on its path), each file's bytes
/// redacted by `redactor` before they are digested.
pub fn load(folder: &Path, redactor: &Redactor, scopes: Vec<String>) -> Result<Skill, LoadError> {
    let handle = open::folder(folder).map_err(LoadError::Folder)?;
    let readable = rustix::fs::openat(handle.as_fd(), ".", LIST, Mode::empty())
        .map_err(|errno| LoadError::Folder(open::OpenError::Io(errno.into())))?;
    let mut walk = Walk::default();
    walk.folder(readable.as_fd(), "", 0, redactor)?;
    let Walk {
        mut files, folders, ..
    } = walk;
    files.sort_by(|a, b| (a.path != ENTRY, &a.path).cmp(&(b.path != ENTRY, &b.path)));
    let entry = files
        .iter()
        .find(|file| file.path == ENTRY)
        .ok_or(LoadError::NoEntry)?;
    let frontmatter = frontmatter(&entry.bytes)?;
    let name = check(&frontmatter)?;
    let folder_name = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name != folder_name {
        return Err(LoadError::NotFolderName {
            name,
            folder: folder_name,
        });
    }
    Ok(Skill {
        name,
        frontmatter,
        files,
        folders,
        folder: folder.to_path_buf(),
        scopes,
    })
}

/// A folder to list: read, never following a link at its last component.
const LIST: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A file to read: as `resource::open` reads one, never following a link.
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

#[derive(Default)]
struct Walk {
    files: Vec<File>,
    folders: Vec<String>,
    bytes: u64,
}

impl Walk {
    /// Reads every entry of the folder `at` (at `prefix` in the skill), files and then
    /// folders beneath it. Names starting with `.` are left out, as hosts and packagers do.
    fn folder(
        &mut self,
        at: BorrowedFd<'_>,
        prefix: &str,
        depth: usize,
        redactor: &Redactor,
    ) -> Result<(), LoadError> {
        if depth > MAX_DEPTH {
            return Err(LoadError::TooDeep);
        }
        let read = |source: Errno| LoadError::Read {
            path: if prefix.is_empty() {
                ".".into()
            } else {
                prefix.into()
            },
            source: source.into(),
        };
        let mut names = Vec::new();
        for entry in Dir::read_from(at).map_err(read)? {
            let entry = entry.map_err(read)?;
            let Ok(name) = entry.file_name().to_str() else {
                return Err(LoadError::NotUtf8(format!(
                    "{prefix}/{}",
                    entry.file_name().to_string_lossy()
                )));
            };
            if name.starts_with('.') {
                continue;
            }
            names.push(name.to_owned());
        }
        names.sort();
        for name in names {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let stat = rustix::fs::statat(at, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|errno| LoadError::Read {
                    path: path.clone(),
                    source: errno.into(),
                })?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    if self.folders.len() >= MAX_FILES {
                        return Err(LoadError::TooManyFolders);
                    }
                    let child = opened(at, &name, LIST, &path)?;
                    self.folders.push(path.clone());
                    self.folder(child.as_fd(), &path, depth + 1, redactor)?;
                }
                FileType::RegularFile => {
                    let file = opened(at, &name, READ, &path)?;
                    self.file(file, path, redactor)?;
                }
                FileType::Symlink => return Err(LoadError::Link(path)),
                _ => return Err(LoadError::Special(path)),
            }
        }
        Ok(())
    }

    fn file(&mut self, file: OwnedFd, path: String, redactor: &Redactor) -> Result<(), LoadError> {
        if self.files.len() >= MAX_FILES {
            return Err(LoadError::TooManyFiles);
        }
        // What was opened, asked of the handle, whatever now stands at the name.
        let left = MAX_BYTES.saturating_sub(self.bytes);
        let bytes = crate::resource::bounded(std::fs::File::from(file), left).map_err(
            |unread| match unread {
                crate::resource::Unread::NotAFile => LoadError::Special(path.clone()),
                crate::resource::Unread::TooBig => LoadError::TooBig,
                crate::resource::Unread::Io(source) => LoadError::Read {
                    path: path.clone(),
                    source,
                },
            },
        )?;
        let bytes = redactor.redact_bytes(bytes);
        self.bytes += bytes.len() as u64;
        if self.bytes > MAX_BYTES {
            return Err(LoadError::TooBig);
        }
        let mime_type =
            crate::results::mime::from_name(&path).unwrap_or("application/octet-stream");
        self.files.push(File {
            digest: format!(
                "sha256:{}",
                crate::hex::lower(&sha2::Sha256::digest(&bytes))
            ),
            bytes: Arc::from(bytes),
            mime_type,
            path,
        });
        Ok(())
    }
}

/// `name` in the folder `at`, with `flags` (which hold `O_NOFOLLOW`): a link swapped in
/// since the entry was read is refused here, as it is when read.
fn opened(at: BorrowedFd<'_>, name: &str, flags: OFlags, path: &str) -> Result<OwnedFd, LoadError> {
    rustix::fs::openat(at, name, flags, Mode::empty()).map_err(|errno| match errno {
        Errno::LOOP => LoadError::Link(path.to_owned()),
        Errno::NOTDIR => LoadError::Special(path.to_owned()),
        other => LoadError::Read {
            path: path.to_owned(),
            source: other.into(),
        },
    })
}

/// The YAML between the first two `---` lines of `SKILL.md`, as a JSON object.
fn frontmatter(bytes: &[u8]) -> Result<Map<String, Value>, LoadError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| LoadError::Frontmatter("is not UTF-8".into()))?
        .trim_start_matches('\u{feff}');
    let missing = || {
        LoadError::Frontmatter("does not start with YAML frontmatter between `---` lines".into())
    };
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(missing)?;
    let end = rest
        .match_indices("---")
        .find(|(at, _)| {
            (*at == 0 || rest[..*at].ends_with('\n'))
                && matches!(rest[at + 3..].chars().next(), None | Some('\n' | '\r'))
        })
        .map(|(at, _)| at)
        .ok_or_else(missing)?;
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 100_000,
            max_nodes: 100_000,
            max_depth: 64,
        },
    };
    let value: Value =
        serde_saphyr::from_str_with_options(&rest[..end], options).map_err(|error| {
            LoadError::Frontmatter(format!(
                "has frontmatter that is not YAML: {}",
                first_line(&error.to_string())
            ))
        })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(LoadError::Frontmatter(
            "has frontmatter that is not a mapping".into(),
        )),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The frontmatter's `name`, once it and the rest are checked.
fn check(frontmatter: &Map<String, Value>) -> Result<String, LoadError> {
    let Some(Value::String(name)) = frontmatter.get("name") else {
        return Err(LoadError::Frontmatter(
            "has no `name` in its frontmatter".into(),
        ));
    };
    if !super::valid_name(name) {
        return Err(LoadError::Name(name.clone()));
    }
    match frontmatter.get("description") {
        Some(Value::String(description))
            if !description.trim().is_empty() && description.chars().count() <= MAX_DESCRIPTION => {
        }
        _ => {
            return Err(LoadError::Frontmatter(format!(
                "needs a `description` in its frontmatter, of 1 to {MAX_DESCRIPTION} characters"
            )));
        }
    }
    if let Some(Value::Object(metadata)) = frontmatter.get("metadata")
        && let Some(key) = metadata
            .keys()
            .find(|key| key.starts_with("io.modelcontextprotocol/"))
    {
        return Err(LoadError::Frontmatter(format!(
            "has `metadata.{key}`: keys starting `io.modelcontextprotocol/` are reserved"
        )));
    }
    Ok(name.clone())
}
