//! Declared resources (`[[resources]]`) and resource templates (`[[resource-templates]]`):
//! contents given in the manifest or read from a file at each read. A template's variables
//! fill text, or name a file inside the template's folder and nowhere else. No file is ever
//! read through a symbolic link ([`open`]).

pub mod open;
pub mod page;

use std::fs::File;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::template::{Sink, Template};

/// The largest file a resource reads.
pub const MAX_FILE: u64 = 16 << 20;

/// The longest value of a template variable.
const MAX_VARIABLE: usize = 255;

/// Where a resource's contents come from.
#[derive(Debug, Clone)]
pub enum Source {
    Text(String),
    Blob(Vec<u8>),
    /// Read at each `resources/read`; text when the MIME type is textual. An absolute path
    /// (from the manifest's real folder), opened with no symbolic link followed on it.
    File(PathBuf),
    /// An MCP App's folder: its entry page with the files it names inline ([`page`]), made
    /// once when the manifest is loaded (again by `--watch` when the folder changes).
    Page {
        folder: PathBuf,
        document: std::sync::Arc<str>,
    },
}

/// One `[[resources]]` entry.
#[derive(Debug, Clone)]
pub struct DeclaredResource {
    pub uri: String,
    /// The `resources/list` entry.
    pub definition: Map<String, Value>,
    pub mime_type: String,
    pub source: Source,
    /// The OAuth scopes a caller needs to see and read it.
    pub scopes: Vec<String>,
    /// A tool's page (`[tools.app]`, [`crate::app`]): its `_meta.ui`, sent with what a read
    /// returns. Only a client that declares the extension sees and reads a page.
    pub app: Option<Map<String, Value>>,
}

/// What a read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    Text { mime_type: String, text: String },
    Blob { mime_type: String, bytes: Vec<u8> },
}

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The URI names no resource (or a template variable is not acceptable).
    #[error("{0}")]
    NotFound(String),
    /// The resource exists but could not be read.
    #[error("{0}")]
    Unreadable(String),
}

/// A piece of a URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Literal(String),
    Variable(String),
}

/// One declared variable of a template.
#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    /// Offered by `completion/complete`; with `closed`, the only values accepted.
    pub values: Vec<String>,
    pub closed: bool,
}

/// What a template serves.
#[derive(Debug, Clone)]
pub enum TemplateSource {
    /// Text with `{variable}` placeholders.
    Text(Template),
    /// A file: the rendered relative path beneath `directory` (a real, absolute folder, with
    /// no symbolic link on it), which must stay inside it.
    File { directory: PathBuf, path: Template },
}

/// One `[[resource-templates]]` entry.
#[derive(Debug, Clone)]
pub struct ResourceTemplate {
    pub uri_template: String,
    pub pieces: Vec<Piece>,
    pub variables: Vec<Variable>,
    /// The `resources/templates/list` entry.
    pub definition: Map<String, Value>,
    pub mime_type: String,
    /// The author named the MIME type; otherwise a file's is guessed from its name.
    pub mime_declared: bool,
    pub source: TemplateSource,
    /// The OAuth scopes a caller needs to see it and read what it serves.
    pub scopes: Vec<String>,
}

impl DeclaredResource {
    pub fn read(&self) -> Result<Contents, ReadError> {
        match &self.source {
            Source::Text(text) => Ok(Contents::Text {
                mime_type: self.mime_type.clone(),
                text: text.clone(),
            }),
            Source::Blob(bytes) => Ok(Contents::Blob {
                mime_type: self.mime_type.clone(),
                bytes: bytes.clone(),
            }),
            Source::File(path) => {
                let file = open::file(path).map_err(|error| match error {
                    open::OpenError::Link => ReadError::Unreadable(format!(
                        "`{}` is not read: its file, or a folder on its path, is a symbolic link, and a declared file is never read through one",
                        self.uri
                    )),
                    other => ReadError::NotFound(format!("no resource `{}`: {other}", self.uri)),
                })?;
                read_file(file, &self.mime_type, &self.uri)
            }
            Source::Page { document, .. } => Ok(Contents::Text {
                mime_type: self.mime_type.clone(),
                text: document.to_string(),
            }),
        }
    }
}

/// Splits `{name}` variables from literal text (RFC 6570 simple expansion only).
pub fn parse_uri_template(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Literal(rest[..open].to_owned()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("`{text}` has a `{{` without its `}}`"))?;
        let name = &after[..close];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "`{{{name}}}`: only simple variables (letters, digits, `_`, `-`) are supported"
            ));
        }
        if matches!(pieces.last(), Some(Piece::Variable(_))) {
            return Err(format!(
                "`{text}`: two variables need literal text between them"
            ));
        }
        pieces.push(Piece::Variable(name.to_owned()));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest.to_owned()));
    }
    Ok(pieces)
}

impl ResourceTemplate {
    /// The variables of `uri` when it matches this template: each value percent-decoded,
    /// non-empty, without `/`, NUL or control characters, not `.` or `..`.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut values = Map::new();
        let mut rest = uri;
        for (index, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Piece::Variable(name) => {
                    let end = match self.pieces.get(index + 1) {
                        Some(Piece::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    if raw.len() > 3 * MAX_VARIABLE {
                        return None;
                    }
                    let value = percent_encoding::percent_decode_str(raw)
                        .decode_utf8()
                        .ok()?
                        .into_owned();
                    if !acceptable(&value) {
                        return None;
                    }
                    values.insert(name.clone(), Value::String(value));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }

    /// Reads the resource `uri` names, its variables already matched.
    pub fn read(&self, uri: &str, values: &Map<String, Value>) -> Result<Contents, ReadError> {
        for variable in &self.variables {
            if let (true, Some(Value::String(value))) =
                (variable.closed, values.get(&variable.name))
                && !variable.values.contains(value)
            {
                return Err(ReadError::NotFound(format!(
                    "no resource `{uri}`: `{}` is one of {}",
                    variable.name,
                    variable.values.join(", ")
                )));
            }
        }
        match &self.source {
            TemplateSource::Text(template) => Ok(Contents::Text {
                mime_type: self.mime_type.clone(),
                // In a JSON document a value is the inside of a JSON string: it cannot end
                // the string (the template was checked at load to put each one in a string).
                text: template
                    .render(
                        values,
                        if crate::results::mime::is_json(&self.mime_type) {
                            Sink::JsonString
                        } else {
                            Sink::Display
                        },
                    )
                    .ok()
                    .flatten()
                    .unwrap_or_default(),
            }),
            TemplateSource::File { directory, path } => {
                let relative = path
                    .render(values, Sink::Display)
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                let not_found = || ReadError::NotFound(format!("no resource `{uri}`"));
                let file = confined(directory, &relative).ok_or_else(not_found)?;
                let mime_type = if self.mime_declared {
                    self.mime_type.clone()
                } else {
                    crate::results::mime::from_name(&relative)
                        .unwrap_or(&self.mime_type)
                        .to_owned()
                };
                read_file(file, &mime_type, uri)
            }
        }
    }

    /// Completion values for a variable.
    pub fn complete(&self, variable: &str, partial: &str) -> Option<Vec<String>> {
        let variable = self.variables.iter().find(|v| v.name == variable)?;
        let partial = partial.to_lowercase();
        Some(
            variable
                .values
                .iter()
                .filter(|value| value.to_lowercase().starts_with(&partial))
                .cloned()
                .collect(),
        )
    }
}

/// A variable's value: never empty, a dotfile, `.` or `..`, a path separator or a control
/// character.
fn acceptable(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_VARIABLE
        && !value.starts_with('.')
        && !value.contains('/')
        && !value.contains('\\')
        && !value.chars().any(char::is_control)
}

/// `relative` beneath `directory`, opened once, relative to the folder's handle, with no
/// symbolic link followed on the way (so a file swapped for a link out between a check and
/// the open cannot be served: there is no second open); `None` when it is not there, is a
/// link, or would leave the folder (`..`, an absolute path).
pub(crate) fn confined(directory: &Path, relative: &str) -> Option<File> {
    let relative = Path::new(relative);
    if relative.as_os_str().is_empty()
        || !relative
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)))
    {
        return None;
    }
    let folder = open::folder(directory).ok()?;
    open::file_beneath(folder.as_fd(), relative).ok()
}

/// Reads an opened resource file: only a regular file (asked of the handle, never by
/// name), at most [`MAX_FILE`] bytes.
fn read_file(file: File, mime_type: &str, uri: &str) -> Result<Contents, ReadError> {
    let mut bytes = bounded(file, MAX_FILE).map_err(|unread| match unread {
        Unread::NotAFile => ReadError::NotFound(format!("no resource `{uri}`")),
        Unread::TooBig => ReadError::Unreadable(format!("`{uri}` is larger than {MAX_FILE} bytes")),
        Unread::Io(error) => ReadError::Unreadable(format!("`{uri}`: {error}")),
    })?;
    if crate::results::mime::is_textual(mime_type) {
        match String::from_utf8(bytes) {
            Ok(text) => {
                return Ok(Contents::Text {
                    mime_type: mime_type.to_owned(),
                    text,
                });
            }
            Err(error) => bytes = error.into_bytes(),
        }
    }
    Ok(Contents::Blob {
        mime_type: mime_type.to_owned(),
        bytes,
    })
}

/// Why [`bounded`] read nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unread {
    #[error("not a regular file")]
    NotAFile,
    #[error("larger than its bound")]
    TooBig,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The bytes of an opened file, when it is a regular file (asked of the handle, never by
/// name) of at most `limit` bytes: what every declared file, page and skill file is read by.
pub(crate) fn bounded(file: File, limit: u64) -> Result<Vec<u8>, Unread> {
    use std::io::Read as _;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Unread::NotAFile);
    }
    if metadata.len() > limit {
        return Err(Unread::TooBig);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Unread::TooBig);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(uri: &str, source: TemplateSource) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri.into(),
            pieces: parse_uri_template(uri).expect("template"),
            variables: vec![],
            definition: Map::new(),
            mime_type: "text/plain".into(),
            mime_declared: true,
            source,
            scopes: Vec::new(),
        }
    }

    #[test]
    fn uris_match_templates_and_hostile_values_never_do() {
        let t = template(
            "docs://{section}/{page}.md",
            TemplateSource::Text(Template::parse("{section}:{page}").expect("text")),
        );
        let values = t.matches("docs://guide/intro%20page.md").expect("matches");
        assert_eq!(values["section"], "guide");
        assert_eq!(values["page"], "intro page");
        for uri in [
            "docs://guide/..md",
            "docs://../x.md",
            "docs://guide/%2e%2e.md",
            "docs://guide/a%2fb.md",
            "docs://guide/a%00b.md",
            "docs:///x.md",
            "docs://guide/x.txt",
            "other://guide/x.md",
            "docs://guide/x.md/more",
        ] {
            assert!(t.matches(uri).is_none(), "{uri}");
        }
        assert!(parse_uri_template("a://{x}{y}").is_err());
        assert!(parse_uri_template("a://{x").is_err());
        assert!(parse_uri_template("a://{+x}").is_err());
    }

    #[test]
    fn a_file_template_reads_inside_its_folder_only() {
        let dir = tempfile::tempdir().expect("dir");
        let docs = dir.path().join("docs");
        std::fs::create_dir(&docs).expect("docs");
        std::fs::write(docs.join("intro.md"), "# Intro").expect("intro");
        std::fs::write(dir.path().join("secret.txt"), "secret").expect("secret");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), docs.join("leak.md"))
            .expect("symlink");
        let t = template(
            "docs://{page}",
            TemplateSource::File {
                directory: docs,
                path: Template::parse("{page}").expect("path"),
            },
        );
        let read = |uri: &str| t.matches(uri).map(|values| t.read(uri, &values));
        assert_eq!(
            read("docs://intro.md"),
            Some(Ok(Contents::Text {
                mime_type: "text/plain".into(),
                text: "# Intro".into()
            }))
        );
        assert!(matches!(
            read("docs://leak.md"),
            Some(Err(ReadError::NotFound(_)))
        ));
        assert!(matches!(
            read("docs://missing.md"),
            Some(Err(ReadError::NotFound(_)))
        ));
        assert_eq!(read("docs://..%2fsecret.txt"), None);
    }
}
