//! The manifest: a TOML file declaring the server and its tools, loaded into a [`Registry`].
//!
//! Loading happens in three steps. `document` parses the TOML (recovering after syntax
//! errors) and deserializes each table into the `wire` shapes on its own, so that one bad
//! tool does not hide the problems of the next. `tool`, `arguments` and `command` then check
//! the meaning (names, schemas, templates, paths) and build the domain types. Every problem
//! becomes a [`Diagnostic`]; all of them are reported together.

mod app;
mod arguments;
mod argv;
mod ask;
mod auth;
mod command;
mod document;
mod facts;
mod files;
pub use files::{Reference, Referenced, Use, references};
mod headers;
mod http;
#[cfg(feature = "openapi")]
pub(crate) use headers::is_header_name;
/// Headers a manifest can never set, and those only `argument-credentials` lets arguments fill
/// (for the importer, which names neither).
#[cfg(feature = "openapi")]
pub(crate) use http::{CREDENTIAL_HEADERS, FORBIDDEN_HEADERS};
mod identity;
mod json;
mod output;
mod project;
mod prompt;
mod rate;
mod resource;
mod sandbox;
mod schemas;
mod shared;
mod skill;
mod static_result;
mod task;
mod tool;
mod toolset;
mod upstream;
mod url;
mod wire;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::diagnostic::Diagnostic;
use crate::registry::Registry;
use crate::schema::{CompiledSchema, SchemaError};

/// Why a manifest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("could not read `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{rendered}")]
    Invalid {
        diagnostics: Vec<Diagnostic>,
        /// Every diagnostic rendered against the manifest, then a summary line.
        rendered: String,
    },
    /// It loads, but has no toolset the load was for ([`load_for`]).
    #[error(transparent)]
    Toolsets(#[from] crate::toolset::ToolsetError),
}

/// For a person: the diagnostics as rendered (each with its `error:` label), or the read
/// error.
impl From<ManifestError> for crate::failure::Failure {
    fn from(error: ManifestError) -> Self {
        match error {
            ManifestError::Invalid { rendered, .. } => Self::rendered(rendered),
            ManifestError::Read { .. } => Self::new(error.to_string()),
            ManifestError::Toolsets(error) => Self::from(error),
        }
    }
}

/// The JSON Schema of the manifest format, generated from the manifest's own types, for
/// TOML editors (`#:schema`) and `mcp-serve schema`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(wire::ManifestWire);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads and checks the manifest at `path`, its secrets resolved: what serving loads.
pub fn load(path: &Path) -> Result<Registry, ManifestError> {
    load_for(path, &crate::toolset::Selection::Every)
}

/// Like [`load`], cut to `toolsets` (`Registry::select`): what a server that serves them
/// loads. A tool outside them is not built (a server pays for what it serves; `check`
/// applies every rule to every tool): only its name and sets are read, and its
/// `[tools.http]` for the secrets it references, whose variables are withheld from every
/// command and whose values are redacted all the same. A secret only such tools need may
/// be unset.
pub fn load_for(
    path: &Path,
    toolsets: &crate::toolset::Selection,
) -> Result<Registry, ManifestError> {
    let (source, base_dir) = read(path)?;
    check(
        &source,
        &path.display().to_string(),
        &base_dir,
        None,
        toolsets,
    )
    .and_then(|(registry, _)| Ok(registry.select(toolsets)?))
}

/// A secret reference that could not be resolved while the manifest was checked without
/// its secrets: a variable that is not set, a file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsetSecret {
    /// Why, e.g. "the environment variable `API_TOKEN` is not set".
    pub reason: String,
    /// The manifest's lines that reference it (1-based), in order.
    pub lines: Vec<usize>,
}

/// Reads and checks the manifest at `path` as `check` and `list` do: every rule applies,
/// but a secret that is not there yet (only serving needs its value) is reported, not
/// refused; it stands as [`crate::secret::STAND_IN`] in the registry, which must never
/// serve.
pub fn load_without_secrets(path: &Path) -> Result<(Registry, Vec<UnsetSecret>), ManifestError> {
    let (source, base_dir) = read(path)?;
    check(
        &source,
        &path.display().to_string(),
        &base_dir,
        Some(Vec::new()),
        &crate::toolset::Selection::Every,
    )
    .map(|(registry, unset)| (registry, unset.unwrap_or_default()))
}

fn read(path: &Path) -> Result<(String, PathBuf), ManifestError> {
    let source = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_owned(),
        source,
    })?;
    let base_dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let base_dir = std::fs::canonicalize(&base_dir).unwrap_or(base_dir);
    Ok((source, base_dir))
}

/// Checks manifest text; `shown_path` is how diagnostics name the file and `base_dir` is
/// where relative paths in it resolve.
pub fn parse(source: &str, shown_path: &str, base_dir: &Path) -> Result<Registry, ManifestError> {
    let every = crate::toolset::Selection::Every;
    check(source, shown_path, base_dir, None, &every).map(|(registry, _)| registry)
}

/// Like [`parse`], without the secrets, as [`load_without_secrets`] does.
pub fn parse_without_secrets(
    source: &str,
    shown_path: &str,
    base_dir: &Path,
) -> Result<(Registry, Vec<UnsetSecret>), ManifestError> {
    let every = crate::toolset::Selection::Every;
    check(source, shown_path, base_dir, Some(Vec::new()), &every)
        .map(|(registry, unset)| (registry, unset.unwrap_or_default()))
}

fn check(
    source: &str,
    shown_path: &str,
    base_dir: &Path,
    unset_secrets: Option<Vec<(crate::secret::SecretError, Range<usize>)>>,
    toolsets: &crate::toolset::Selection,
) -> Result<(Registry, Option<Vec<UnsetSecret>>), ManifestError> {
    check_recording(source, shown_path, base_dir, unset_secrets, toolsets, None)
}

/// [`check`], adding every path the manifest names to `references` when given.
fn check_recording(
    source: &str,
    shown_path: &str,
    base_dir: &Path,
    unset_secrets: Option<Vec<(crate::secret::SecretError, Range<usize>)>>,
    toolsets: &crate::toolset::Selection,
    references: Option<&mut Vec<Reference>>,
) -> Result<(Registry, Option<Vec<UnsetSecret>>), ManifestError> {
    let mut checker = Checker {
        references: references.is_some().then(Vec::new),
        toolsets: toolsets.clone(),
        unchosen: std::collections::HashSet::new(),
        diagnostics: Vec::new(),
        base_dir: base_dir.to_owned(),
        constraints: HashMap::new(),
        withheld_env: Vec::new(),
        kernel: None,
        launches: HashMap::new(),
        oauth: false,
        identity_used: false,
        compile: if unset_secrets.is_some() {
            Compile::All
        } else {
            Compile::Written
        },
        unset_secrets,
        source: source.to_owned(),
        shared: std::sync::Arc::default(),
    };
    let registry = document::load(source, &mut checker);
    if let (Some(out), Some(found)) = (references, checker.references.take()) {
        out.extend(found);
    }
    match registry {
        Some(registry) if checker.diagnostics.is_empty() => {
            let unset = checker
                .unset_secrets
                .map(|found| unset_by_reason(found, source));
            Ok((registry, unset))
        }
        _ => {
            checker
                .diagnostics
                .sort_by_key(|diagnostic| diagnostic.span.as_ref().map_or(0, |span| span.start));
            let mut rendered = String::new();
            for diagnostic in &checker.diagnostics {
                rendered.push_str(&diagnostic.render(shown_path, source));
                rendered.push('\n');
            }
            let count = checker.diagnostics.len();
            let _ = write!(
                rendered,
                "error: could not load `{shown_path}` due to {count} previous error{}",
                if count == 1 { "" } else { "s" }
            );
            Err(ManifestError::Invalid {
                diagnostics: checker.diagnostics,
                rendered,
            })
        }
    }
}

/// The unset secrets, one per reason, with the lines that need each.
fn unset_by_reason(
    found: Vec<(crate::secret::SecretError, Range<usize>)>,
    source: &str,
) -> Vec<UnsetSecret> {
    let mut out: Vec<UnsetSecret> = Vec::new();
    for (error, span) in found {
        let reason = error.to_string();
        let line = source[..span.start.min(source.len())].matches('\n').count() + 1;
        match out.iter_mut().find(|unset| unset.reason == reason) {
            Some(unset) => {
                if !unset.lines.contains(&line) {
                    unset.lines.push(line);
                }
            }
            None => out.push(UnsetSecret {
                reason,
                lines: vec![line],
            }),
        }
    }
    out
}

/// Collects diagnostics while the manifest is checked.
struct Checker {
    diagnostics: Vec<Diagnostic>,
    base_dir: PathBuf,
    /// Argument constraints compiled for checking enums and defaults, by their JSON text:
    /// manifests repeat the same shapes (`limit`, `path`, …), and compiling is the slow part
    /// of a load.
    constraints: HashMap<String, Result<Rc<CompiledSchema>, SchemaError>>,
    /// Environment variables that hold the manifest's secrets: no command sees them.
    withheld_env: Vec<String>,
    /// What this kernel can confine, probed when the first sandbox is checked.
    kernel: Option<crate::sandbox::Support>,
    /// What each sandboxed program starts through, by program and folder: tools that run the
    /// same shim ask its version manager once.
    launches: HashMap<(PathBuf, PathBuf), crate::sandbox::shims::Launch>,
    /// `[server.auth]` is set: tokens name callers, so `scopes` and `{auth.…}` mean something.
    oauth: bool,
    /// A template of the tool being checked used `{auth.…}`.
    identity_used: bool,
    /// Checking without secrets (`check`, `list`): the references that could not be
    /// resolved, and where; `None` when they are errors (serving).
    unset_secrets: Option<Vec<(crate::secret::SecretError, Range<usize>)>>,
    /// The manifest's text, for the secret files it names (no folder that holds one is
    /// ever read from).
    source: String,
    /// The toolsets the load is for, and the tools they leave out, whose unset secrets are
    /// stood in for (`load_for`).
    toolsets: crate::toolset::Selection,
    unchosen: std::collections::HashSet<String>,
    /// The paths the manifest names, when the load is for a bundle ([`references`]).
    references: Option<Vec<Reference>>,
    /// `[schemas]`, which tools' schemas may use.
    shared: std::sync::Arc<crate::schema::shared::Shared>,
    /// When tools' schemas are compiled.
    compile: Compile,
}

/// When a load compiles tools' schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compile {
    /// Every one now, those that use `[schemas]` too (`check`, `list`, an import's own
    /// check), so that one that does not compile is an error.
    All,
    /// Author-written ones now, so their errors are load errors; those that use
    /// `[schemas]` and generated ones on the first call that needs them (serving).
    Written,
    /// Every one on the first call that needs it: serving a manifest of
    /// [`DEFER_COMPILES_FROM`] tools or more.
    OnUse,
}

/// From how many tools a server compiles each tool's schemas on the first call that needs
/// them rather than at load (`check` compiles them all, whatever the size).
pub(crate) const DEFER_COMPILES_FROM: usize = 1_000;

impl Checker {
    /// Records an error and returns it for hints to be added.
    fn error(&mut self, message: impl Into<String>, span: Range<usize>) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::new(message, Some(span)));
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// What this kernel can confine (probed once per load).
    fn kernel(&mut self) -> crate::sandbox::Support {
        *self
            .kernel
            .get_or_insert_with(crate::sandbox::Support::detect)
    }

    fn resolve(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    /// Resolves the secret references in `text` (at `span`), each value passed through
    /// `encode`. Without secrets, one that is not there is recorded and stands as
    /// [`crate::secret::STAND_IN`].
    fn secret(
        &mut self,
        text: &str,
        span: &Range<usize>,
        encode: impl Fn(&str) -> String,
    ) -> Result<(String, crate::secret::Used), crate::secret::SecretError> {
        let mut unset = Vec::new();
        let lenient = self.unset_secrets.is_some();
        let resolved = crate::secret::resolve_checked(
            text,
            &self.base_dir,
            encode,
            lenient.then_some(&mut unset),
        );
        if let Some(found) = &mut self.unset_secrets {
            found.extend(unset.into_iter().map(|error| (error, span.clone())));
        }
        // A bundle never carries a secret file: each is recorded as the parsed value names
        // it (an escape such as `\u0024{file:…}` reads as what it is).
        if self.references.is_some()
            && let Ok((_, used)) = &resolved
        {
            for written in used.files.clone() {
                self.refer(&written, Use::SecretFile);
            }
        }
        resolved
    }

    /// Whether the last [`Self::secret`] call stood in for anything: `count` is the number
    /// of unset references recorded before it.
    fn unset_count(&self) -> usize {
        self.unset_secrets.as_ref().map_or(0, Vec::len)
    }
}
