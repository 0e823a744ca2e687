//! `mcp-serve bundle`: writes the manifest's MCP Bundle and `server.json` ([`crate::bundle`])
//! and tells a person what went in, what a host will ask its user, and what to fill in.

use std::fmt::Write as _;
use std::path::Path;

use crate::bundle::{BundleError, Options};
use crate::cli::BundleArgs;
use crate::failure::Failure;

pub fn write(manifest: &Path, args: &BundleArgs, toolsets: &[String]) -> Result<String, Failure> {
    let binary = std::env::current_exe()
        .map_err(|error| Failure::new(format!("could not find this program's binary: {error}")))?;
    let options = Options {
        output: args.output.clone(),
        author: args.author.clone(),
        registry_name: args.registry_name.clone(),
        url: args.url.clone(),
        toolsets: toolsets.to_vec(),
        force: args.force,
        binary,
    };
    let written = crate::bundle::write(manifest, &options).map_err(|error| match error {
        BundleError::Manifest(error) => Failure::from(error),
        BundleError::Exists(_) => Failure::new(error.to_string()).hint("pass --force to replace it"),
        BundleError::Contents(_) => Failure::new(error.to_string())
            .hint("a bundle carries the manifest's folder as the manifest names it; `mcp-serve check` shows each path"),
        other => Failure::new(other.to_string()),
    })?;
    let mut out = format!(
        "wrote {} ({} files, {:.1} MiB, sha256 {})\nwrote {}\n",
        written.bundle.display(),
        written.files,
        mebibytes(written.bytes),
        written.sha256,
        written.server_json.display()
    );
    if written.asked.is_empty() {
        out.push_str("the host asks its user for nothing\n");
    } else {
        let _ = writeln!(
            out,
            "the host asks its user for: {} (each kept secret)",
            written.asked.join(", ")
        );
    }
    for note in &written.notes {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(
        out,
        "check it with `npx @anthropic-ai/mcpb unpack {} DIR && npx @anthropic-ai/mcpb validate DIR`",
        written.bundle.display()
    );
    Ok(out)
}

/// A size for a person, in MiB: the precision an `f64` loses is far below the tenth shown.
#[expect(clippy::cast_precision_loss, reason = "shown to a tenth of a MiB")]
fn mebibytes(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}
