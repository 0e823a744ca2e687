//! What a bundle carries besides its `manifest.json`: the manifest and every file and folder
//! it names, beneath its folder as they are beneath the manifest's, and the binaries.
//!
//! A path the manifest names must lie beneath the manifest's folder, as the real path the
//! kernel resolves: a program, schema, static file, resource, template folder, literal
//! argument or relative sandbox path outside it refuses the bundle (the bundle would not
//! work elsewhere, or would carry a file its author did not mean to ship). An absolute
//! sandbox path or working directory (`/usr`, `/proc`) is the host's, never bundled. No link
//! is followed inside a folder, and a `${file:…}` secret refuses the bundle: a secret is
//! asked of the user who installs it, never shipped.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::manifest::{Reference, Use};

/// The most files one bundle takes, and the most bytes of them (the binaries aside).
const MAX_FILES: usize = 20_000;
const MAX_BYTES: u64 = 2 << 30;

/// One entry of the zip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path in the zip, `/`-separated.
    pub name: String,
    /// Where its bytes are read from; `None` for an empty file (a folder's [`KEEP`]).
    pub source: Option<PathBuf>,
    /// Its permission bits.
    pub mode: u32,
    pub size: u64,
}

/// The empty file that keeps a folder in the bundle: a host unpacks files only (the official
/// `mcpb unpack` fails on a folder's own entry), and a folder a tool writes into must exist.
pub(super) const KEEP: &str = ".keep";

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
    #[error("`{0}` is a symbolic link: a bundle follows none")]
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
    #[error("`{0}` is not UTF-8; a bundle's paths must be")]
    Name(PathBuf),
    #[error("the manifest names more than {MAX_FILES} files or {} GiB beneath its folder; name narrower folders", MAX_BYTES >> 30)]
    TooMuch,
    #[error("the server binary `{path}` cannot be read: {source}")]
    Binary {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The manifest and what it names, beneath `server/`.
pub(super) fn gather(
    base_dir: &Path,
    manifest_name: &str,
    references: &[Reference],
) -> Result<Vec<Entry>, ContentsError> {
    // What tools write into is carried empty, even inside a folder that is carried whole.
    let written: Vec<PathBuf> = references
        .iter()
        .filter(|reference| reference.used == Use::SandboxWrite)
        .filter_map(|reference| std::fs::canonicalize(&reference.path).ok())
        .filter(|real| real.is_dir() && real.starts_with(base_dir))
        .collect();
    let mut gathered = Gathered {
        base_dir,
        written: &written,
        entries: Vec::new(),
        bytes: 0,
    };
    gathered.file(&base_dir.join(manifest_name))?;
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
        // The manifest's folder itself is the bundle's `server/`, there already.
        if real == base_dir {
            continue;
        }
        gathered.any(&real)?;
    }
    Ok(gathered.entries)
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
                source: Some(path.to_owned()),
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

/// Opens a gathered file for reading, following no link at its last step.
pub(super) fn open(path: &Path) -> Result<std::fs::File, ContentsError> {
    nix::fcntl::open(
        path,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map(std::fs::File::from)
    .map_err(|errno| ContentsError::Read {
        path: path.to_owned(),
        source: std::io::Error::from(errno),
    })
}

struct Gathered<'a> {
    base_dir: &'a Path,
    /// The folders tools write into, carried empty.
    written: &'a [PathBuf],
    entries: Vec<Entry>,
    bytes: u64,
}

impl Gathered<'_> {
    /// Its name in the zip: `server/` and its path beneath the manifest's folder.
    fn name(&self, path: &Path) -> Result<String, ContentsError> {
        let relative = path.strip_prefix(self.base_dir).unwrap_or(path);
        let relative = relative
            .to_str()
            .ok_or_else(|| ContentsError::Name(path.to_owned()))?;
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

    fn any(&mut self, path: &Path) -> Result<(), ContentsError> {
        let meta = std::fs::symlink_metadata(path).map_err(|source| ContentsError::Read {
            path: path.to_owned(),
            source,
        })?;
        if meta.file_type().is_symlink() {
            return Err(ContentsError::Link(path.to_owned()));
        }
        if meta.is_dir() && self.written.iter().any(|folder| folder == path) {
            return self.folder(path);
        }
        if meta.is_dir() {
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
                self.any(&child)?;
            }
            if self.entries.len() == before {
                self.folder(path)?;
            }
            return Ok(());
        }
        if meta.is_file() {
            return self.file(path);
        }
        // A socket, a pipe, a device: nothing a bundle can carry.
        Ok(())
    }

    /// A folder, empty in the bundle (what a tool writes into at run time, or an empty
    /// folder the manifest names).
    fn folder(&mut self, path: &Path) -> Result<(), ContentsError> {
        let name = self.name(path)?;
        self.push(Entry {
            name: format!("{name}/{KEEP}"),
            source: None,
            mode: 0o644,
            size: 0,
        })
    }

    fn file(&mut self, path: &Path) -> Result<(), ContentsError> {
        let meta = std::fs::symlink_metadata(path).map_err(|source| ContentsError::Read {
            path: path.to_owned(),
            source,
        })?;
        if meta.file_type().is_symlink() {
            return Err(ContentsError::Link(path.to_owned()));
        }
        let name = self.name(path)?;
        self.push(Entry {
            name,
            source: Some(path.to_owned()),
            // Its execute bits kept; never writable by others.
            mode: if meta.mode() & 0o111 == 0 {
                0o644
            } else {
                0o755
            },
            size: meta.len(),
        })
    }
}
