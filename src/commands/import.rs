//! `mcp-serve import openapi`: writes the manifest (to stdout, or `-o FILE` with the JSON
//! Schema beside it) and tells a person on stderr exactly what was kept, what was dropped
//! and why, and which variables to set.

use crate::failure::Failure;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use crate::cli::OpenapiArgs;
use crate::openapi::emit::printable;
use crate::openapi::{self, Filters, Import, Options};

pub fn openapi(args: &OpenapiArgs) -> Result<String, Failure> {
    let text = read(&args.spec)?;
    if let Some(base) = &args.base_url
        && !(base.starts_with("http://") || base.starts_with("https://"))
    {
        return Err(Failure::new(format!(
            "--base-url `{base}` is not an http:// or https:// URL"
        )));
    }
    let mut options = Options {
        filters: Filters {
            include: args.include.clone(),
            exclude: args.exclude.clone(),
            tags: args.tag.clone(),
            methods: args.method.clone(),
            paths: args.path.clone(),
        },
        base_url: args.base_url.clone(),
        env_prefix: args.env_prefix.clone().unwrap_or_default(),
        no_output_schema: args.no_output_schema,
        max_output_schema: args.max_output_schema,
        project: args.project,
        max_items: args.max_items.and_then(|max| usize::try_from(max).ok()),
        server_name: args.name.clone(),
        command_line: command_line(),
    };
    if args.env_prefix.is_none() {
        // The server's name, so that two imported APIs never read the same variable.
        let document = openapi::Document::parse(&text)
            .map_err(|error| Failure::new(printable(&error.to_string())))?;
        options.env_prefix = format!("{}_", openapi::emit::server_name(&document, &options));
    }
    let import = openapi::import(&text, &options)
        .map_err(|error| Failure::new(printable(&error.to_string())))?;
    let destination = match &args.output {
        None => {
            super::print(&import.manifest);
            "stdout".to_owned()
        }
        Some(path) => {
            write(path, &import.manifest, args.force)?;
            format!("`{}` (and `tools.schema.json` beside it)", path.display())
        }
    };
    Ok(summary(&import, &destination, args.output.as_deref()))
}

fn read(spec: &Path) -> Result<String, Failure> {
    if spec == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| {
                Failure::new(format!(
                    "could not read the description from stdin: {error}"
                ))
            })?;
        return Ok(text);
    }
    std::fs::read_to_string(spec)
        .map_err(|error| Failure::new(format!("could not read `{}`: {error}", spec.display())))
}

fn write(path: &Path, manifest: &str, force: bool) -> Result<(), Failure> {
    if path.exists() && !force {
        return Err(Failure::new(format!("`{}` already exists", path.display()))
            .hint("pass `--force` to replace it"));
    }
    crate::userfile::write(path, manifest.as_bytes())
        .map_err(|error| Failure::new(error.to_string()))?;
    let schema = path.with_file_name("tools.schema.json");
    crate::userfile::write(&schema, crate::manifest::json_schema().as_bytes())
        .map_err(|error| Failure::new(error.to_string()))
}

/// The command as typed, for the manifest's header (arguments quoted when a shell needs it).
fn command_line() -> String {
    let mut words = vec!["mcp-serve".to_owned()];
    words.extend(
        std::env::args()
            .skip(1)
            .map(|word| without_userinfo(&word))
            .map(|word| {
                if !word.is_empty()
                    && word
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c))
                {
                    word
                } else {
                    format!("'{}'", word.replace('\'', r"'\''"))
                }
            }),
    );
    words.join(" ")
}

/// A URL's `user:password@` left out, so a credential in `--base-url` never reaches the
/// manifest's header comment.
fn without_userinfo(word: &str) -> String {
    let Some(scheme) = word.find("://") else {
        return word.to_owned();
    };
    let rest = &word[scheme + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}://{}", &word[..scheme], &rest[at + 1..]),
        None => word.to_owned(),
    }
}

fn summary(import: &Import, destination: &str, output: Option<&Path>) -> String {
    let mut out = String::new();
    let total = import.kept.len() + import.dropped.len();
    let _ = writeln!(
        out,
        "imported {} of {total} operations of \"{}\" {} (OpenAPI {}) to {destination}",
        import.kept.len(),
        printable(&import.title),
        printable(&import.version),
        printable(&import.openapi)
    );
    let width = import
        .kept
        .iter()
        .map(|tool| tool.name.len())
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "\nkept ({}):", import.kept.len());
    for tool in &import.kept {
        let _ = writeln!(
            out,
            "  {:width$}  {} {}",
            tool.name,
            tool.method,
            printable(&tool.path)
        );
    }
    for (by_filter, heading) in [(true, "not selected"), (false, "cannot be imported")] {
        let dropped: Vec<_> = import
            .dropped
            .iter()
            .filter(|dropped| dropped.by_filter == by_filter)
            .collect();
        if dropped.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{heading} ({}):", dropped.len());
        for dropped in dropped {
            let _ = writeln!(
                out,
                "  {}: {}",
                printable(&dropped.label),
                printable(&dropped.reason)
            );
        }
    }
    let noted: Vec<_> = import
        .kept
        .iter()
        .filter(|tool| !tool.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        let _ = writeln!(out, "\nnotes (also in the manifest, above each tool):");
        for tool in noted {
            for note in &tool.notes {
                let _ = writeln!(out, "  {}: {}", tool.name, printable(note));
            }
        }
    }
    if !import.secrets.is_empty() {
        let _ = writeln!(out, "\nset before serving:");
        let width = import
            .secrets
            .iter()
            .map(|secret| secret.variable.len())
            .max()
            .unwrap_or(0);
        for secret in &import.secrets {
            let _ = writeln!(
                out,
                "  {:width$}  {}",
                secret.variable,
                printable(&secret.explanation)
            );
        }
    }
    if let Some(path) = output {
        let _ = writeln!(out, "\nnext: `mcp-serve check --config {}`", path.display());
    }
    out
}
