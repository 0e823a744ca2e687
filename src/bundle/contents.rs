//! What a bundle carries besides its `manifest.json`: the manifest and every file and folder
//! it names, beneath its folder as they are beneath the manifest's, and the binaries.
//!
//! A path the manifest names must lie beneath the manifest's folder with no link on the way:
//! a program, schema, static file, resource, template folder, literal argument or relative
//! sandbox path outside it, or reached through a link, refuses the bundle (the bundle would
//! not work elsewhere, or would carry a file its author did not mean to ship). An absolute
//! sandbox path or working directory (`/usr`, `/proc`) is the host's, never bundled. Inside a
//! carried folder no link is followed, and a sandbox `write` folder is carried empty. A
//! `${file:…}` secret refuses the bundle: a secret is asked of the user who installs it,
//! never shipped.
//!
//! Files are read when the zip is written, each opened beneath the manifest's folder by
//! handle with no link anywhere on its path (`resource::open`), so a folder swapped for a
//! link after the walk cannot bring in a file from elsewhere, and one that is no longer a
//! regular file (a FIFO) refuses the bundle rather than blocking it.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use crate::manifest::{Reference, Use};

/// The most files one bundle takes, and the most bytes of them (the binaries aside).
const MAX_FILES: usize = 20_000;
const MAX_BYTES: u64 = 2 << 30;

/// The empty file that keeps a folder in the bundle: a host unpacks files only (the official
/// `mcpb unpack` fails on a folder's own entry), and a folder a tool writes into must exist.
pub(super) const KEEP: &str = ".keep";

/// One entry of the zip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path in the zip, `/`-separated.
    pub name: String,
    pub source: Source,
    /// Its permission bits.
    pub mode: u32,
    pub size: u64,
}

/// Where an entry's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file at this path beneath the manifest's folder.
    Beneath(PathBuf),
    /// A binary of this program, by its absolute path.
    Binary(PathBuf),
    /// No bytes: a folder's [`KEEP`].
    Empty,
}

/// Why the manifest's files cannot be bundled.
#[derive(Debug, thiserror::Error)]
pub enum ContentsError {
    #[error("the {} `{written}` is outside the manifest's folder (`{}`): a bundle carries what is beneath it", used.describe(), folder.display())]
    Escapes {
        written: String,
        used: Use,
        folder: PathBuf,
    },
    #[error(
        "the manifest reads the secret file `{0}`: a bundle never carries a secret; use `${{env:NAME}}`, which the host asks its user for"
    )]
    SecretFile(String),
    #[error("`{0}` is a symbolic link, or is reached through one: a bundle follows none")]
    Link(PathBuf),
    #[error("the {} `{written}` cannot be read: {source}", used.describe())]
    Missing {
        written: String,
        used: Use,
        #[source]
        source: std::io::Error,
    },
    #[error("could not read `{path}`: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{0}` changed while it was bundled (it is no regular file now)")]
    Changed(PathBuf),
    #[error(
        "`{0}` holds the value of a secret the manifest references: a bundle never carries a secret"
    )]
    HoldsSecret(PathBuf),
    #[error("`{0}` is not UTF-8, or holds a `\\` or a control character; a bundle's paths may not")]
    Name(PathBuf),
    #[error(
        "the name of `{0}` holds the value of a secret the manifest references: a bundle never carries a secret"
    )]
    NameHoldsSecret(PathBuf),
    #[error("the manifest names more than {MAX_FILES} files or {} GiB beneath its folder; name narrower folders", MAX_BYTES >> 30)]
    TooMuch,
    #[error("the server binary `{path}` cannot be read: {source}")]
    Binary {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What goes in beneath `server/`, and how many special files (sockets, pipes, devices) in
/// carried folders were left out.
pub(super) struct Gathering {
    pub(super) entries: Vec<Entry>,
    pub(super) skipped: usize,
}

/// The manifest and what it names, beneath `server/`; never a file of `excluded` (the
/// bundle being written and its `server.json`, were they beneath a carried folder), nor a
/// name that holds a secret `redactor` knows.
pub(super) fn gather(
    base_dir: &Path,
    manifest_name: &str,
    references: &[Reference],
    excluded: &[PathBuf],
    redactor: &crate::secret::Redactor,
) -> Result<Gathering, ContentsError> {
    // What tools write into is carried empty, even inside a folder that is carried whole.
    let written: Vec<PathBuf> = references
        .iter()
        .filter(|reference| reference.used == Use::SandboxWrite)
        .filter_map(|reference| std::fs::canonicalize(&reference.path).ok())
        .filter(|real| real.is_dir() && real.starts_with(base_dir) && real != base_dir)
        .collect();
    let mut gathered = Gathered {
        base_dir,
        written: &written,
        excluded,
        redactor,
        entries: Vec::new(),
        bytes: 0,
        skipped: 0,
    };
    gathered.any(&base_dir.join(manifest_name), true)?;
    for reference in references {
        if reference.used == Use::SecretFile {
            return Err(ContentsError::SecretFile(reference.written.clone()));
        }
        let host_path =
            Path::new(&reference.written).is_absolute() || reference.written.starts_with("~/");
        if host_path
            && matches!(
                reference.used,
                Use::Sandbox | Use::SandboxWrite | Use::WorkingDirectory
            )
        {
            continue;
        }
        let real =
            std::fs::canonicalize(&reference.path).map_err(|source| ContentsError::Missing {
                written: reference.written.clone(),
                used: reference.used,
                source,
            })?;
        if !real.starts_with(base_dir) {
            return Err(ContentsError::Escapes {
                written: reference.written.clone(),
                used: reference.used,
                folder: base_dir.to_owned(),
            });
        }
        // A link on the way: the bundle would carry its target under the target's name,
        // and the manifest, which names the link, would not find it.
        if real != lexical(&reference.path) {
            return Err(ContentsError::Link(reference.path.clone()));
        }
        // The manifest's folder itself is the bundle's `server/`, there already.
        if real == base_dir {
            continue;
        }
        gathered.any(&real, true)?;
    }
    Ok(Gathering {
        entries: gathered.entries,
        skipped: gathered.skipped,
    })
}

/// `path` with `.` dropped and each `..` taking off the name before it, as the kernel would
/// resolve it were there no link.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The server binary, and the sandbox trampoline when it is beside it.
pub(super) fn binaries(binary: &Path) -> Result<Vec<Entry>, ContentsError> {
    let mut entries = Vec::new();
    let trampoline = binary.with_file_name(crate::sandbox::launcher::NAME);
    for (path, name, required) in [
        (binary, "bin/mcp-serve", true),
        (trampoline.as_path(), "bin/mcp-serve-sandbox", false),
    ] {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => entries.push(Entry {
                name: name.to_owned(),
                source: Source::Binary(path.to_owned()),
                mode: 0o755,
                size: meta.len(),
            }),
            _ if !required => {}
            Ok(_) => {
                return Err(ContentsError::Binary {
                    path: path.to_owned(),
                    source: std::io::Error::other("not a file"),
                });
            }
            Err(source) => {
                return Err(ContentsError::Binary {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
    Ok(entries)
}

/// The bytes of a file beneath the manifest's folder (`folder` its handle), opened with no
/// link on its path and without blocking, which must still be a regular file, and must hold
/// no secret `redactor` knows.
pub(super) fn read_beneath(
    folder: std::os::fd::BorrowedFd<'_>,
    base_dir: &Path,
    relative: &Path,
    redactor: &crate::secret::Redactor,
) -> Result<Vec<u8>, ContentsError> {
    let path = base_dir.join(relative);
    let file =
        crate::resource::open::file_beneath(folder, relative).map_err(|error| match error {
            crate::resource::open::OpenError::Link | crate::resource::open::OpenError::Escapes => {
                ContentsError::Link(path.clone())
            }
            crate::resource::open::OpenError::Io(source) => ContentsError::Read {
                path: path.clone(),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| ContentsError::Read {
        path: path.clone(),
        source,
    })?;
    if !meta.is_file() {
        return Err(ContentsError::Changed(path));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_BYTES), &mut bytes).map_err(
        |source| ContentsError::Read {
            path: path.clone(),
            source,
        },
    )?;
    if redactor.finds(&bytes) {
        return Err(ContentsError::HoldsSecret(path));
    }
    Ok(bytes)
}

/// A binary's bytes.
pub(super) fn read_binary(path: &Path) -> Result<Vec<u8>, ContentsError> {
    std::fs::read(path).map_err(|source| ContentsError::Binary {
        path: path.to_owned(),
        source,
    })
}

struct Gathered<'a> {
    base_dir: &'a Path,
    /// The folders tools write into, carried empty.
    written: &'a [PathBuf],
    excluded: &'a [PathBuf],
    redactor: &'a crate::secret::Redactor,
    entries: Vec<Entry>,
    bytes: u64,
    skipped: usize,
}

impl Gathered<'_> {
    /// Its path beneath the manifest's folder.
    fn relative<'p>(&self, path: &'p Path) -> &'p Path {
        path.strip_prefix(self.base_dir).unwrap_or(path)
    }

    /// Its name in the zip: `server/` and its path beneath the manifest's folder.
    fn name(&self, path: &Path) -> Result<String, ContentsError> {
        let relative = self
            .relative(path)
            .to_str()
            .filter(|name| !name.contains(|c: char| c == '\\' || c.is_control()))
            .ok_or_else(|| ContentsError::Name(path.to_owned()))?;
        if self.redactor.finds(relative.as_bytes()) {
            return Err(ContentsError::NameHoldsSecret(path.to_owned()));
        }
        Ok(format!("server/{relative}"))
    }

    fn push(&mut self, entry: Entry) -> Result<(), ContentsError> {
        if self.entries.iter().any(|known| known.name == entry.name) {
            return Ok(());
        }
        self.bytes += entry.size;
        if self.entries.len() >= MAX_FILES || self.bytes > MAX_BYTES {
            return Err(ContentsError::TooMuch);
        }
        self.entries.push(entry);
        Ok(())
    }

    /// A file or folder; `named` when the manifest names it, not met in a folder's walk.
    fn any(&mut self, path: &Path, named: bool) -> Result<(), ContentsError> {
        let meta = std::fs::symlink_metadata(path).map_err(|source| ContentsError::Read {
            path: path.to_owned(),
            source,
        })?;
        if meta.file_type().is_symlink() {
            return Err(ContentsError::Link(path.to_owned()));
        }
        let written = self.written.iter().any(|folder| path.starts_with(folder));
        if meta.is_dir() {
            if written {
                return self.folder(path);
            }
            let before = self.entries.len();
            let mut children: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|source| ContentsError::Read {
                    path: path.to_owned(),
                    source,
                })?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect();
            children.sort();
            for child in children {
                self.any(&child, false)?;
            }
            if self.entries.len() == before {
                self.folder(path)?;
            }
            return Ok(());
        }
        // What a tool wrote goes in only when the manifest names it outright (a declared
        // resource kept there); a socket, a pipe or a device never.
        if !meta.is_file() {
            self.skipped += 1;
            return Ok(());
        }
        if (written && !named) || self.excluded.iter().any(|out| out == path) {
            return Ok(());
        }
        let name = self.name(path)?;
        self.push(Entry {
            name,
            source: Source::Beneath(self.relative(path).to_owned()),
            // Its execute bits kept; never writable by others.
            mode: if meta.mode() & 0o111 == 0 {
                0o644
            } else {
                0o755
            },
            size: meta.len(),
        })
    }

    /// A folder, empty in the bundle (what a tool writes into at run time, or an empty
    /// folder the manifest names).
    fn folder(&mut self, path: &Path) -> Result<(), ContentsError> {
        let name = self.name(path)?;
        self.push(Entry {
            name: format!("{name}/{KEEP}"),
            source: Source::Empty,
            mode: 0o644,
            size: 0,
        })
    }
}
