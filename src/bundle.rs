//! `mcp-serve bundle`: a manifest shipped as its own MCP server, an MCP Bundle (`.mcpb`,
//! the zip Claude Desktop installs with a click) and the `server.json` that lists it in the
//! official MCP Registry.
//!
//! ```text
//! NAME.mcpb                       (a zip; entries in this order)
//!   manifest.json                 what a host reads: the server, how to start it, what to ask
//!   bin/mcp-serve                 this binary (and bin/mcp-serve-sandbox, when beside it)
//!   server/MANIFEST.toml          the manifest, and beside it every file it names
//! server.json                     beside NAME.mcpb: the registry's entry for it
//! ```
//!
//! What goes in is what the manifest names ([`crate::manifest::references`]), each beneath
//! its folder ([`contents`]); a secret is never bundled: each `${env:NAME}` becomes a
//! `user_config` entry the host asks its user for, marked sensitive, and a `${file:…}`
//! secret refuses the bundle ([`mcpb`]). Both files are written by [`crate::userfile`]:
//! whole, or not at all.

mod contents;
mod mcpb;
mod server_json;

use std::io::Write as _;
use std::os::fd::AsFd as _;

use std::path::{Path, PathBuf};

use sha2::Digest as _;

pub use contents::Entry;

/// What `mcp-serve bundle` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `.mcpb` to write; `server.json` goes beside it.
    pub output: PathBuf,
    /// The bundle's author (`author.name`).
    pub author: String,
    /// The registry name, `io.github.USER/NAME`.
    pub registry_name: Option<String>,
    /// Where the bundle will be downloaded from (a release asset's URL).
    pub url: Option<String>,
    /// The toolsets the bundled server serves (`--toolsets`), none for its default.
    pub toolsets: Vec<String>,
    /// Replace existing output files.
    pub force: bool,
    /// The server binary to bundle (this one, normally).
    pub binary: PathBuf,
}

/// What was written.
#[derive(Debug)]
pub struct Written {
    pub bundle: PathBuf,
    pub server_json: PathBuf,
    /// Files in the bundle, `manifest.json` and the binaries included.
    pub files: usize,
    /// The bundle's size in bytes.
    pub bytes: u64,
    /// The bundle's SHA-256, as `server.json` gives it.
    pub sha256: String,
    /// The variables the host asks its user for.
    pub asked: Vec<String>,
    /// What a person should know: placeholders to fill, paths left out.
    pub notes: Vec<String>,
}

/// Why no bundle was written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(transparent)]
    Contents(#[from] contents::ContentsError),
    #[error("`{0}` exists; pass --force to replace it")]
    Exists(PathBuf),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Write(#[from] crate::userfile::WriteError),
    #[error("could not write the bundle: {0}")]
    Zip(#[from] zip::result::ZipError),
}

/// Writes the bundle of the manifest at `manifest`, and its `server.json`.
pub fn write(manifest: &Path, options: &Options) -> Result<Written, BundleError> {
    let server_json_path = options.output.with_file_name("server.json");
    let named_server_json = options
        .output
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.eq_ignore_ascii_case("server.json"));
    if named_server_json {
        return Err(BundleError::Refused(
            "the bundle cannot be called server.json: that is the name of the registry entry written beside it".into(),
        ));
    }
    server_json::check(options)?;
    let referenced = crate::manifest::references(manifest)?;
    let selection = crate::toolset::Selection::of(&options.toolsets);
    let registry = referenced
        .registry
        .select(&selection)
        .map_err(|error| BundleError::Refused(error.to_string()))?;
    refuse_existing(&[&options.output, &server_json_path], options.force)?;
    let manifest_name = manifest
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| BundleError::Refused("the manifest's file name is not UTF-8".into()))?;
    // The outputs, as real paths, never go in themselves.
    let excluded: Vec<PathBuf> = [&options.output, &server_json_path]
        .iter()
        .filter_map(|path| {
            let folder = path
                .parent()
                .filter(|folder| !folder.as_os_str().is_empty());
            let folder = std::fs::canonicalize(folder.unwrap_or_else(|| Path::new("."))).ok()?;
            Some(folder.join(path.file_name()?))
        })
        .collect();
    let gathering = contents::gather(
        &referenced.base_dir,
        manifest_name,
        &referenced.references,
        &excluded,
        registry.door_redactor(),
    )?;
    let mut entries = gathering.entries;
    entries.extend(contents::binaries(&options.binary)?);
    let described = mcpb::manifest_json(&registry, manifest_name, options)?;
    let zipped = zip_bytes(
        &described.json,
        &entries,
        &referenced.base_dir,
        registry.door_redactor(),
    )?;
    let sha256 = crate::hex::lower(&sha2::Sha256::digest(&zipped));
    // Again, just before writing: the bundle took a while to make.
    refuse_existing(&[&options.output, &server_json_path], options.force)?;
    let server = server_json::document(&described, options, &sha256);
    let mut text = serde_json::to_string_pretty(&server.json).unwrap_or_default();
    text.push('\n');
    // The entry first, then what it names: a bundle never stands without its entry, and an
    // entry whose bundle could not be written is taken back.
    crate::userfile::write(&server_json_path, text.as_bytes())?;
    if let Err(error) = crate::userfile::write(&options.output, &zipped) {
        let _ = std::fs::remove_file(&server_json_path);
        return Err(error.into());
    }
    let mut notes = described.notes;
    notes.extend(server.notes);
    if gathering.skipped > 0 {
        notes.push(format!(
            "{} special file(s) (sockets, pipes, devices) in carried folders were left out: a bundle carries files",
            gathering.skipped
        ));
    }
    Ok(Written {
        bundle: options.output.clone(),
        server_json: server_json_path,
        files: entries.len() + 1,
        bytes: zipped.len() as u64,
        sha256,
        asked: described.asked,
        notes,
    })
}

/// An output that is there is refused without `--force`; one that is a link (dangling or
/// not: writing would follow it wherever it points) or a folder is refused always.
fn refuse_existing(paths: &[&PathBuf], force: bool) -> Result<(), BundleError> {
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if meta.file_type().is_symlink() || meta.is_dir() {
            return Err(BundleError::Refused(format!(
                "`{}` is a {}: a bundle and its server.json are written to plain files only",
                path.display(),
                if meta.is_dir() {
                    "folder"
                } else {
                    "symbolic link"
                }
            )));
        }
        if !force {
            return Err(BundleError::Exists((*path).clone()));
        }
    }
    Ok(())
}

/// The zip's bytes, made in memory (a bundle is about the size of the binary it carries)
/// and written by [`crate::userfile::write`], all at once or not at all. Each file beneath
/// the manifest's folder is opened by handle beneath it, and refused if it holds a secret
/// `redactor` knows (one the author had set while bundling).
fn zip_bytes(
    manifest_json: &serde_json::Value,
    entries: &[Entry],
    base_dir: &Path,
    redactor: &crate::secret::Redactor,
) -> Result<Vec<u8>, BundleError> {
    let folder =
        crate::resource::open::folder(base_dir).map_err(|error| contents::ContentsError::Read {
            path: base_dir.to_owned(),
            source: std::io::Error::other(error.to_string()),
        })?;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // A fixed date for every entry: the same inputs make the same bytes, hence the same
    // `fileSha256`.
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .large_file(false);
    let mut json = serde_json::to_vec_pretty(manifest_json).unwrap_or_default();
    json.push(b'\n');
    zip.start_file("manifest.json", options.unix_permissions(0o644))?;
    zip.write_all(&json).map_err(zip::result::ZipError::Io)?;
    for entry in entries {
        let bytes = match &entry.source {
            contents::Source::Beneath(relative) => {
                contents::read_beneath(folder.as_fd(), base_dir, relative, redactor)?
            }
            contents::Source::Binary(path) => contents::read_binary(path)?,
            contents::Source::Empty => Vec::new(),
        };
        // A large binary (a debug build is hundreds of megabytes) is compressed quickly.
        let level = if bytes.len() > 64 << 20 { 1 } else { 6 };
        zip.start_file(
            entry.name.as_str(),
            options
                .unix_permissions(entry.mode)
                .compression_level(Some(level)),
        )?;
        zip.write_all(&bytes).map_err(zip::result::ZipError::Io)?;
    }
    Ok(zip.finish()?.into_inner())
}
