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

use std::io::{Read as _, Write as _};

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
    let referenced = crate::manifest::references(manifest)?;
    let selection = crate::toolset::Selection::of(&options.toolsets);
    let registry = referenced
        .registry
        .select(&selection)
        .map_err(|error| BundleError::Refused(error.to_string()))?;
    let server_json_path = options.output.with_file_name("server.json");
    for path in [&options.output, &server_json_path] {
        if path.exists() && !options.force {
            return Err(BundleError::Exists(path.clone()));
        }
    }
    let manifest_name = manifest
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| BundleError::Refused("the manifest's file name is not UTF-8".into()))?;
    let mut entries =
        contents::gather(&referenced.base_dir, manifest_name, &referenced.references)?;
    entries.extend(contents::binaries(&options.binary)?);
    let described = mcpb::manifest_json(&registry, manifest_name, options)?;
    let zipped = zip_bytes(&described.json, &entries)?;
    let sha256 = crate::hex::lower(&sha2::Sha256::digest(&zipped));
    crate::userfile::write(&options.output, &zipped)?;
    let server = server_json::document(&described, options, &sha256);
    let mut text = serde_json::to_string_pretty(&server.json).unwrap_or_default();
    text.push('\n');
    crate::userfile::write(&server_json_path, text.as_bytes())?;
    let mut notes = described.notes;
    notes.extend(server.notes);
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

/// The zip's bytes, made in memory (a bundle is about the size of the binary it carries)
/// and written by [`crate::userfile::write`], all at once or not at all.
fn zip_bytes(manifest_json: &serde_json::Value, entries: &[Entry]) -> Result<Vec<u8>, BundleError> {
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
    let mut buffer = vec![0; 1 << 16];
    for entry in entries {
        // A large binary (a debug build is hundreds of megabytes) is compressed quickly.
        let level = if entry.size > 64 << 20 { 1 } else { 6 };
        zip.start_file(
            entry.name.as_str(),
            options
                .unix_permissions(entry.mode)
                .compression_level(Some(level)),
        )?;
        let Some(source) = &entry.source else {
            continue;
        };
        let mut file = contents::open(source)?;
        loop {
            let read =
                file.read(&mut buffer)
                    .map_err(|source_error| contents::ContentsError::Read {
                        path: source.clone(),
                        source: source_error,
                    })?;
            if read == 0 {
                break;
            }
            zip.write_all(&buffer[..read])
                .map_err(zip::result::ZipError::Io)?;
        }
    }
    Ok(zip.finish()?.into_inner())
}
