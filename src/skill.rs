//! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640): folders of know-how,
//! each a `SKILL.md` (YAML frontmatter with a `name` and a `description`, then Markdown)
//! and the files beside it, served as `skill://<name>/<path>` resources with each file's
//! digest and size in the skill's manifest (`skills/list`, `skills/get`).
//!
//! A skill is read once, when the manifest is loaded ([`load`]): every file beneath its
//! folder through handles, with no symbolic link followed, within the extension's bounds
//! (512 files, 16 MiB), each file's secrets redacted before it is digested. What is served
//! is those bytes: a read returns exactly what the digest promises, whatever happens to the
//! folder after. `--watch` loads them again when the folder changes ([`fingerprint`]).

pub mod load;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use load::{LoadError, load};

/// The extension's identifier, in `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";

/// Files per skill (its `SKILL.md` included), as the extension bounds them.
pub const MAX_FILES: usize = 512;

/// Bytes per skill, all its files together.
pub const MAX_BYTES: u64 = 16 << 20;

/// The entry file of every skill.
pub const ENTRY: &str = "SKILL.md";

/// A folder's MIME type in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// A skill name as Agent Skills has them: 1 to 64 lowercase ASCII letters and digits in
/// runs joined by single hyphens.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
        })
}

/// One skill as loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// Its frontmatter `name`, its folder's name.
    pub name: String,
    /// The frontmatter as written, as JSON.
    pub frontmatter: Map<String, Value>,
    /// Every file, `SKILL.md` first, then in path order.
    pub files: Vec<File>,
    /// Every folder beneath the skill's own, as paths relative to it.
    pub folders: Vec<String>,
    /// The folder it was read from.
    pub folder: PathBuf,
    /// The OAuth scopes a caller needs to see and read it.
    pub scopes: Vec<String>,
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Relative to the skill's folder, `/`-separated.
    pub path: String,
    /// The bytes served, secrets redacted.
    pub bytes: Arc<[u8]>,
    /// `sha256:` and the lowercase hex SHA-256 of `bytes`.
    pub digest: String,
    pub mime_type: &'static str,
}

/// A folder's child, for `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Child<'a> {
    File(&'a File),
    Folder(String),
}

impl Skill {
    /// `skill://<name>`: the skill's folder; its files are beneath it.
    pub fn root(&self) -> String {
        format!("skill://{}", self.name)
    }

    /// The URI of its `SKILL.md`, which names the skill.
    pub fn uri(&self) -> String {
        self.file_uri(ENTRY)
    }

    /// The URI of the file or folder at `path` (relative, `/`-separated): each name
    /// percent-encoded but for RFC 3986's unreserved characters, so that two names are never
    /// one URI and no name reads as `..` to a client that decodes it.
    pub fn file_uri(&self, path: &str) -> String {
        format!("skill://{}/{}", self.name, encoded(path))
    }

    /// Its `SKILL.md` (always there: [`load`] refuses a skill without one).
    pub fn entry(&self) -> Option<&File> {
        self.files.iter().find(|file| file.path == ENTRY)
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The file `uri` names, if it is one of this skill's (by its URI exactly as listed).
    pub fn file(&self, uri: &str) -> Option<&File> {
        let path = self.relative(uri)?;
        self.files.iter().find(|file| encoded(&file.path) == path)
    }

    /// The children of the folder `uri` names (the skill's own, `skill://<name>`, or one
    /// beneath it, with no trailing `/`), in path order; `None` when it names no folder.
    pub fn children(&self, uri: &str) -> Option<Vec<Child<'_>>> {
        let folder = if uri == self.root() {
            ""
        } else {
            let path = self.relative(uri)?;
            self.folders
                .iter()
                .find(|folder| encoded(folder) == path)?
                .as_str()
        };
        let inside = |path: &str| -> Option<String> {
            let rest = if folder.is_empty() {
                path
            } else {
                path.strip_prefix(folder)?.strip_prefix('/')?
            };
            (!rest.is_empty() && !rest.contains('/')).then(|| rest.to_owned())
        };
        let mut children: Vec<(String, Child<'_>)> =
            self.files
                .iter()
                .filter_map(|file| inside(&file.path).map(|name| (name, Child::File(file))))
                .chain(self.folders.iter().filter_map(|path| {
                    inside(path).map(|name| (name, Child::Folder(path.clone())))
                }))
                .collect();
        children.sort_by(|a, b| a.0.cmp(&b.0));
        Some(children.into_iter().map(|(_, child)| child).collect())
    }

    fn relative<'u>(&self, uri: &'u str) -> Option<&'u str> {
        uri.strip_prefix("skill://")?
            .strip_prefix(self.name.as_str())?
            .strip_prefix('/')
    }
}

/// What a path's names may hold unencoded in a URI: RFC 3986's unreserved characters.
const ENCODED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `path` with each name percent-encoded (`/` between them kept).
fn encoded(path: &str) -> String {
    path.split('/')
        .map(|name| percent_encoding::utf8_percent_encode(name, ENCODED).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// A summary of what is beneath `folders` (each entry's path, kind, size and time), which
/// changes when a file is added, removed or written: what `--watch` compares.
pub fn fingerprint(folders: &[PathBuf]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for folder in folders {
        let mut stack = vec![folder.clone()];
        while let Some(path) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&path) else {
                path.hash(&mut hasher);
                continue;
            };
            let mut entries: Vec<_> = entries.flatten().collect();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                let Ok(metadata) = entry.path().symlink_metadata() else {
                    continue;
                };
                entry.path().hash(&mut hasher);
                metadata.len().hash(&mut hasher);
                metadata.modified().ok().hash(&mut hasher);
                metadata.file_type().is_dir().hash(&mut hasher);
                if metadata.file_type().is_dir() {
                    stack.push(entry.path());
                }
            }
        }
    }
    hasher.finish()
}
