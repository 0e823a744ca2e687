//! `[[resources]]` and `[[resource-templates]]`: URIs checked, contents from `text`, `blob`
//! or a file (which must exist at load, with no symbolic link on its path, and is read again
//! at each read), template variables declared and their placeholders checked, a file
//! template's folder checked against the places it must never serve, and a JSON text
//! template checked to put each placeholder inside a string.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::Checker;
use super::facts::{ArgumentFacts, template_at};
use super::identity::icons_json;
use super::wire::{ResourceTemplateWire, ResourceWire};
use crate::resource::open::{self, OpenError};
use crate::resource::{
    DeclaredResource, Piece, ResourceTemplate, Source, TemplateSource, Variable, parse_uri_template,
};
use crate::results::mime;
use crate::template::{Sink, Template};

/// Checks every declared resource; the ones with problems are left out.
pub(super) fn build_resources(
    wires: &[ResourceWire],
    checker: &mut Checker,
) -> Vec<DeclaredResource> {
    let mut seen = HashSet::new();
    wires
        .iter()
        .filter_map(|wire| {
            let uri = wire.uri.get_ref().clone();
            if !uri.contains(':') {
                checker.error(
                    format!("`{uri}` is not a URI (it has no scheme)"),
                    wire.uri.span(),
                );
                return None;
            }
            if !seen.insert(uri.clone()) {
                checker.error(format!("duplicate resource `{uri}`"), wire.uri.span());
                return None;
            }
            build_resource(wire, uri, checker)
        })
        .collect()
}

fn build_resource(
    wire: &ResourceWire,
    uri: String,
    checker: &mut Checker,
) -> Option<DeclaredResource> {
    let span = wire.uri.span();
    let (source, mime_type) = match (&wire.text, &wire.blob, &wire.file) {
        (Some(text), None, None) => (
            Source::Text(text.clone()),
            wire.mime_type
                .clone()
                .unwrap_or_else(|| "text/plain".into()),
        ),
        (None, Some(blob), None) => match BASE64.decode(blob.trim()) {
            Ok(bytes) => {
                let mime_type = wire.mime_type.clone().unwrap_or_else(|| {
                    mime::sniff(&bytes)
                        .unwrap_or("application/octet-stream")
                        .to_owned()
                });
                (Source::Blob(bytes), mime_type)
            }
            Err(error) => {
                checker.error(format!("`blob` is not base64: {error}"), span);
                return None;
            }
        },
        (None, None, Some(file)) => declared_file(file, wire.mime_type.as_ref(), checker)?,
        _ => {
            checker.error(
                "a resource has one of `text`, `blob` (base64) and `file`",
                span,
            );
            return None;
        }
    };
    let mut definition = Map::new();
    definition.insert("uri".into(), json!(uri));
    definition.insert("name".into(), json!(wire.name));
    if let Some(title) = &wire.title {
        definition.insert("title".into(), json!(title));
    }
    if let Some(description) = &wire.description {
        definition.insert("description".into(), json!(description));
    }
    definition.insert("mimeType".into(), json!(mime_type));
    match &source {
        Source::Text(text) => {
            definition.insert("size".into(), json!(text.len()));
        }
        Source::Blob(bytes) => {
            definition.insert("size".into(), json!(bytes.len()));
        }
        Source::File(_) | Source::Page { .. } => {}
    }
    if let Some(icons) = &wire.icons {
        definition.insert("icons".into(), icons_json(icons, checker));
    }
    if let Some(annotations) = &wire.annotations {
        let mut value = Map::new();
        if let Some(audience) = &annotations.audience {
            value.insert("audience".into(), json!(audience));
        }
        if let Some(priority) = annotations.priority {
            value.insert("priority".into(), json!(priority));
        }
        if let Some(modified) = &annotations.last_modified {
            value.insert("lastModified".into(), json!(modified));
        }
        definition.insert("annotations".into(), Value::Object(value));
    }
    let scopes = super::auth::scopes(wire.scopes.as_ref(), checker);
    Some(DeclaredResource {
        uri,
        definition,
        mime_type,
        source,
        scopes,
        app: None,
    })
}

/// A declared `file`: opened now with no symbolic link on its path (as it will be at each
/// read), a regular file, its type guessed from its first bytes unless `mime_type` is given.
pub(super) fn declared_file(
    file: &toml::Spanned<String>,
    mime_type: Option<&String>,
    checker: &mut Checker,
) -> Option<(Source, String)> {
    let written = file.get_ref();
    let path = lexical(&checker.refer(written, super::Use::Resource));
    let opened = match open::file(&path) {
        Ok(opened) => opened,
        Err(OpenError::Link) => {
            let real = std::fs::canonicalize(&path).ok();
            let diagnostic = checker.error(
                format!(
                    "`{written}` is a symbolic link, or a folder on its path is; a declared file is never read through one"
                ),
                file.span(),
            );
            if let Some(real) = real {
                diagnostic.hint(format!("name the file itself: `{}`", real.display()));
            }
            return None;
        }
        Err(error) => {
            checker.error(
                format!("could not read `{}`: {error}", path.display()),
                file.span(),
            );
            return None;
        }
    };
    if !opened.metadata().is_ok_and(|metadata| metadata.is_file()) {
        checker.error(
            format!("`{}` is not a regular file", path.display()),
            file.span(),
        );
        return None;
    }
    let mut head = Vec::new();
    let _ = opened.take(512).read_to_end(&mut head);
    let mime_type = mime_type
        .cloned()
        .unwrap_or_else(|| mime::guess(written, &head).to_owned());
    Some((Source::File(path), mime_type))
}

/// Checks every resource template; the ones with problems are left out. `source` is the
/// manifest's text, for the secret files it names.
pub(super) fn build_templates(
    wires: &[ResourceTemplateWire],
    source: &str,
    checker: &mut Checker,
) -> Vec<ResourceTemplate> {
    let secrets = if wires.iter().any(|wire| wire.file.is_some()) {
        secret_files(source, &checker.base_dir)
    } else {
        Vec::new()
    };
    wires
        .iter()
        .filter_map(|wire| build_template(wire, &secrets, checker))
        .collect()
}

fn build_template(
    wire: &ResourceTemplateWire,
    secrets: &[(String, PathBuf)],
    checker: &mut Checker,
) -> Option<ResourceTemplate> {
    let errors_before = checker.diagnostics.len();
    let span = wire.uri_template.span();
    let uri_template = wire.uri_template.get_ref().clone();
    let pieces = parse_uri_template(&uri_template)
        .map_err(|problem| checker.error(format!("invalid URI template: {problem}"), span.clone()))
        .ok()?;
    let names: Vec<String> = pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name.clone()),
            Piece::Literal(_) => None,
        })
        .collect();
    for declared in wire.variables.keys() {
        if !names.contains(declared.get_ref()) {
            checker.error(
                format!(
                    "`{}` is not a variable of `{uri_template}`",
                    declared.get_ref()
                ),
                declared.span(),
            );
        }
    }
    let variables: Vec<Variable> = names
        .iter()
        .map(|name| {
            let spec = wire
                .variables
                .iter()
                .find(|(declared, _)| declared.get_ref() == name)
                .map(|(_, spec)| spec);
            let choices = spec.and_then(|spec| spec.choices.as_ref());
            Variable {
                name: name.clone(),
                values: choices
                    .map(|choices| choices.get_ref().clone())
                    .or_else(|| spec.and_then(|spec| spec.complete.clone()))
                    .unwrap_or_default(),
                closed: choices.is_some(),
            }
        })
        .collect();
    let facts = ArgumentFacts {
        always_present: names.iter().cloned().collect(),
        types: names
            .iter()
            .map(|name| (name.clone(), "string".to_owned()))
            .collect(),
        names,
    };
    let source = template_source(wire, &facts, secrets, checker)?;
    let mime_type = wire.mime_type.clone().unwrap_or_else(|| match &source {
        TemplateSource::Text(_) => "text/plain".into(),
        TemplateSource::File { .. } => {
            mime::from_name(wire.file.as_ref().map_or("", |f| f.get_ref()))
                .unwrap_or("application/octet-stream")
                .to_owned()
        }
    });
    let mut definition = Map::new();
    definition.insert("uriTemplate".into(), json!(uri_template));
    definition.insert("name".into(), json!(wire.name));
    if let Some(title) = &wire.title {
        definition.insert("title".into(), json!(title));
    }
    if let Some(description) = &wire.description {
        definition.insert("description".into(), json!(description));
    }
    if wire.mime_type.is_some() || matches!(source, TemplateSource::Text(_)) {
        definition.insert("mimeType".into(), json!(mime_type));
    }
    if let Some(icons) = &wire.icons {
        definition.insert("icons".into(), icons_json(icons, checker));
    }
    let scopes = super::auth::scopes(wire.scopes.as_ref(), checker);
    (checker.diagnostics.len() == errors_before).then_some(ResourceTemplate {
        uri_template,
        pieces,
        variables,
        definition,
        mime_type,
        mime_declared: wire.mime_type.is_some(),
        source,
        scopes,
    })
}

/// Where a template's contents come from: text, or a file inside the folder its `file`
/// names before the first placeholder.
fn template_source(
    wire: &ResourceTemplateWire,
    facts: &ArgumentFacts,
    secrets: &[(String, PathBuf)],
    checker: &mut Checker,
) -> Option<TemplateSource> {
    let span = wire.uri_template.span();
    match (&wire.text, &wire.file) {
        (Some(text), None) => {
            let template = template_at(text.get_ref(), text.span(), facts, checker)?;
            if wire.mime_type.as_deref().is_some_and(mime::is_json) && !strings_only(&template) {
                checker
                    .error(
                        "a JSON text template is JSON with each placeholder inside a string",
                        text.span(),
                    )
                    .hint("values are encoded as the inside of a JSON string, for example: text = '{{\"name\": \"{name}\"}}'");
                return None;
            }
            Some(TemplateSource::Text(template))
        }
        (None, Some(file)) => {
            let (directory, relative) = template_folder(file, secrets, checker)?;
            Some(TemplateSource::File {
                directory,
                path: template_at(&relative, file.span(), facts, checker)?,
            })
        }
        _ => {
            checker.error(
                "a resource template has `text` or `file`, one of them",
                span,
            );
            None
        }
    }
}

/// Whether the template is JSON with every placeholder inside a string: filled with a
/// control character (which JSON allows only escaped, inside a string), it must parse.
fn strings_only(template: &Template) -> bool {
    let probe: serde_json::Map<String, Value> = template
        .placeholders()
        .map(|name| (name.to_owned(), Value::String("\u{1}".into())))
        .collect();
    template
        .render(&probe, Sink::JsonString)
        .ok()
        .flatten()
        .is_some_and(|text| serde_json::from_str::<Value>(&text).is_ok())
}

/// A file template's folder (real, absolute, with no symbolic link on it) and the path
/// beneath it, after the folder rule: it is what `file` names before the component of the
/// first placeholder, with repeated `/` and `.` components collapsed and no `..` anywhere,
/// and it is never `/`, the manifest's folder or one that holds it, nor a folder that holds
/// one of the manifest's secret files.
fn template_folder(
    file: &toml::Spanned<String>,
    secrets: &[(String, PathBuf)],
    checker: &mut Checker,
) -> Option<(PathBuf, String)> {
    const EXAMPLE: &str = "for example: file = \"docs/{page}\" serves files inside docs/ only";
    let text = file.get_ref();
    let absolute = text.starts_with('/');
    let parts: Vec<&str> = text
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if text.contains("{{") || parts.contains(&"..") {
        checker
            .error(
                "a file template's path has no `..` and no escaped braces",
                file.span(),
            )
            .hint(EXAMPLE);
        return None;
    }
    let first = parts
        .iter()
        .position(|part| part.contains('{'))
        .unwrap_or(parts.len().saturating_sub(1));
    let (folder_parts, rest) = parts.split_at(first);
    if folder_parts.is_empty() {
        let why = if absolute {
            "`/`"
        } else {
            "the manifest's folder: it names its own folder before the first placeholder"
        };
        checker
            .error(format!("a file template cannot serve {why}"), file.span())
            .hint(EXAMPLE);
        return None;
    }
    let shown = format!(
        "{}{}",
        if absolute { "/" } else { "" },
        folder_parts.join("/")
    );
    let written: PathBuf = folder_parts.iter().collect();
    let directory = lexical(&if absolute {
        Path::new("/").join(&written)
    } else {
        checker.refer(&written.to_string_lossy(), super::Use::Template)
    });
    let home =
        std::fs::canonicalize(&checker.base_dir).unwrap_or_else(|_| checker.base_dir.clone());
    open_folder(&directory, &shown, &home, secrets, file.span(), checker)?;
    // Both sides real: a folder opened with no link on it is its own real path, and the
    // manifest's folder is compared as the kernel sees it too.
    let real = std::fs::canonicalize(&directory).unwrap_or_else(|_| directory.clone());
    if let Some(place) = forbidden(&real, &home, secrets) {
        let why = match place {
            Forbidden::Root => "`/`".to_owned(),
            Forbidden::Home => format!("`{shown}`: it is the manifest's folder"),
            Forbidden::HoldsHome => format!("`{shown}`: it holds the manifest's folder"),
            Forbidden::HoldsSecret(secret) => {
                format!("`{shown}`: it holds `{secret}`, a secret file of the manifest")
            }
        };
        let hint = if matches!(place, Forbidden::HoldsSecret(_)) {
            "keep secret files outside the folders that resources serve"
        } else {
            EXAMPLE
        };
        checker
            .error(format!("a file template cannot serve {why}"), file.span())
            .hint(hint);
        return None;
    }
    Some((real, rest.join("/")))
}

/// A multipart file part's folder and the path beneath it, by the same rule as a file
/// template's (`file = "uploads/{path}"`: never `/`, the manifest's folder or one that holds
/// it or a secret file, never reached through a symbolic link).
pub(super) fn upload_folder(
    file: &toml::Spanned<String>,
    checker: &mut Checker,
) -> Option<(PathBuf, String)> {
    let secrets = secret_files(&checker.source, &checker.base_dir);
    let before = checker.diagnostics.len();
    let found = template_folder(file, &secrets, checker);
    // The rule is the file templates'; the messages name what is being checked.
    for diagnostic in &mut checker.diagnostics[before..] {
        diagnostic.message = diagnostic
            .message
            .replace("a file template's", "a file part's")
            .replace("a file template", "a file part");
        for hint in &mut diagnostic.hints {
            *hint = hint
                .replace(
                    "file = \"docs/{page}\" serves files inside docs/ only",
                    "file = \"uploads/{path}\" reads files inside uploads/ only",
                )
                .replace("resources serve", "tools read or serve");
        }
    }
    found
}

/// Opens a template's folder as it will be at each read, with no symbolic link on its path;
/// `None`, with a diagnostic at `span`, when it cannot be.
fn open_folder(
    directory: &Path,
    shown: &str,
    home: &Path,
    secrets: &[(String, PathBuf)],
    span: std::ops::Range<usize>,
    checker: &mut Checker,
) -> Option<()> {
    match open::folder(directory) {
        Ok(_) => Some(()),
        Err(OpenError::Link) => {
            let real = std::fs::canonicalize(directory).ok();
            let diagnostic = checker.error(
                format!(
                    "`{shown}` is a symbolic link, or a folder on its path is; a file template's folder is never reached through one"
                ),
                span.clone(),
            );
            match real {
                Some(real) if forbidden(&real, home, secrets).is_some() => {
                    diagnostic.hint(format!(
                        "it leads to `{}`, which a file template cannot serve either",
                        real.display()
                    ));
                }
                Some(real) => {
                    diagnostic.hint(format!("name the folder itself: `{}`", real.display()));
                }
                None => {}
            }
            None
        }
        Err(error) if error.is_missing() => {
            checker.error(
                format!("the folder `{}` does not exist", directory.display()),
                span.clone(),
            );
            None
        }
        Err(error) => {
            checker.error(
                format!(
                    "could not open the folder `{}`: {error}",
                    directory.display()
                ),
                span,
            );
            None
        }
    }
}

/// A folder a file template must never serve.
enum Forbidden<'a> {
    Root,
    /// The manifest's own folder.
    Home,
    /// A folder the manifest's folder is inside.
    HoldsHome,
    /// A folder a secret file (as written) is inside.
    HoldsSecret(&'a str),
}

/// Why the real folder `real` must not be served, if it must not; `home` is the manifest's
/// real folder.
fn forbidden<'a>(
    real: &Path,
    home: &Path,
    secrets: &'a [(String, PathBuf)],
) -> Option<Forbidden<'a>> {
    if real == Path::new("/") {
        Some(Forbidden::Root)
    } else if home == real {
        Some(Forbidden::Home)
    } else if home.starts_with(real) {
        Some(Forbidden::HoldsHome)
    } else {
        secrets
            .iter()
            .find(|(_, path)| path.starts_with(real))
            .map(|(written, _)| Forbidden::HoldsSecret(written))
    }
}

/// The files the manifest's `${file:PATH}` secrets name, as written and as real paths (or
/// as resolved, where they do not exist). Found in the whole text, comments too: a reference
/// found in a comment only makes the folder rule stricter.
fn secret_files(source: &str, base_dir: &Path) -> Vec<(String, PathBuf)> {
    source
        .match_indices("${file:")
        .filter_map(|(start, marker)| {
            let rest = &source[start + marker.len()..];
            let written = &rest[..rest.find(['}', '\n'])?];
            let path = lexical(&base_dir.join(written));
            let real = std::fs::canonicalize(&path).unwrap_or(path);
            Some((written.to_owned(), real))
        })
        .collect()
}

/// `path` with `.` components and repeated `/` collapsed (`..` kept: it names a real
/// parent, and the kernel resolves it).
pub(super) fn lexical(path: &Path) -> PathBuf {
    path.components()
        .filter(|part| !matches!(part, Component::CurDir))
        .collect()
}
