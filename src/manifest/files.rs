//! The files and folders a manifest names beside it, as its checks resolve them: what a
//! bundle must carry for the manifest to work elsewhere ([`references`]).
//!
//! Every check that resolves a written path does it through [`Checker::refer`], which
//! records it with what it is for, and every `${file:…}` secret is recorded as the check of
//! secrets resolves it, in the parsed value. A literal `argv` element (no placeholder) that names a file or
//! folder beside the manifest is recorded too: `python3 progress.py` needs `progress.py`.

use std::path::{Path, PathBuf};

use super::{Checker, ManifestError, UnsetSecret};
use crate::registry::Registry;

/// What a manifest uses a path for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Use {
    /// A command's program (`argv[0]` with a `/`).
    Program,
    /// A literal `argv` element naming a file or folder that exists.
    Argument,
    /// A command's `cwd`.
    WorkingDirectory,
    /// An `input-schema-file` or `output-schema-file`.
    Schema,
    /// A static result's `file`.
    Content,
    /// A sandbox's `read` or `execute` path.
    Sandbox,
    /// A sandbox's `write` path: where a tool writes at run time.
    SandboxWrite,
    /// A declared resource's `file`.
    Resource,
    /// A resource template's folder.
    Template,
    /// A `${file:…}` secret.
    SecretFile,
    /// A skill's folder (`[[skills]]`).
    Skill,
}

impl Use {
    /// How a person reads it: "program", "schema file", ….
    pub fn describe(self) -> &'static str {
        match self {
            Self::Program => "program",
            Self::Argument => "argument",
            Self::WorkingDirectory => "working directory",
            Self::Schema => "schema file",
            Self::Content => "static content file",
            Self::Sandbox => "sandbox path",
            Self::SandboxWrite => "sandbox write path",
            Self::Resource => "resource file",
            Self::Template => "resource template folder",
            Self::SecretFile => "secret file",
            Self::Skill => "skill folder",
        }
    }
}

/// One path a manifest names: as written, and as resolved against the manifest's folder
/// (`.` components dropped; `..` kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub written: String,
    pub path: PathBuf,
    pub used: Use,
}

/// What a manifest is, checked without its secrets, and every path it names, each once per
/// use, in the order the checks met them.
#[derive(Debug)]
pub struct Referenced {
    pub registry: Registry,
    pub unset: Vec<UnsetSecret>,
    /// The manifest's folder, as the kernel sees it.
    pub base_dir: PathBuf,
    pub references: Vec<Reference>,
}

/// Reads and checks the manifest at `path` as `check` does, and lists the paths it names.
pub fn references(path: &Path) -> Result<Referenced, ManifestError> {
    let (source, base_dir) = super::read(path)?;
    let mut references = Vec::new();
    let (registry, unset) = super::check_recording(
        &source,
        &path.display().to_string(),
        &base_dir,
        Some(Vec::new()),
        &crate::toolset::Selection::Every,
        Some(&mut references),
    )?;
    let mut seen = std::collections::HashSet::new();
    references.retain(|reference| seen.insert((reference.path.clone(), reference.used)));
    Ok(Referenced {
        registry,
        unset: unset.unwrap_or_default(),
        base_dir,
        references,
    })
}

impl Checker {
    /// `written` resolved against the manifest's folder, recorded as used for `used` when
    /// the check records paths.
    pub(super) fn refer(&mut self, written: &str, used: Use) -> PathBuf {
        let path = self.resolve(written);
        if let Some(references) = self.references.as_mut() {
            references.push(Reference {
                written: written.to_owned(),
                path: path
                    .components()
                    .filter(|part| !matches!(part, std::path::Component::CurDir))
                    .collect(),
                used,
            });
        }
        path
    }
}
