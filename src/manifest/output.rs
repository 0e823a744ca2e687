//! How a command's output becomes a result: `output`, `mime-type`, `files`, `max-files`,
//! `keep-output`.

use super::Checker;
use super::wire::CommandWire;
use crate::results::{
    BinaryKind, DEFAULT_MAX_FILES, FilesMode, FilesSpec, MAX_FILES_LIMIT, OutputMode, OutputSpec,
};
use crate::suggest::suggest;

const MODES: [&str; 6] = ["text", "json", "content", "image", "audio", "resource"];

/// The output spec of a command tool; `has_schema` says whether an output schema is declared.
pub(super) fn output_spec(
    tool: &str,
    wire: &CommandWire,
    has_schema: bool,
    checker: &mut Checker,
) -> OutputSpec {
    let mode = match &wire.output {
        None if has_schema => OutputMode::Json,
        None => OutputMode::Text,
        Some(mode) => match mode.get_ref().as_str() {
            "text" => OutputMode::Text,
            "json" => OutputMode::Json,
            "content" => OutputMode::Content,
            kind @ ("image" | "audio" | "resource") => OutputMode::Binary {
                kind: match kind {
                    "image" => BinaryKind::Image,
                    "audio" => BinaryKind::Audio,
                    _ => BinaryKind::Resource,
                },
                mime_type: wire.mime_type.as_ref().map(|mime| mime.get_ref().clone()),
            },
            other => {
                checker
                    .error(format!("unknown output mode `{other}`"), mode.span())
                    .suggest(suggest(other, MODES))
                    .hint(format!(
                        "modes are {}",
                        MODES.map(|mode| format!("`{mode}`")).join(", ")
                    ));
                OutputMode::Text
            }
        },
    };
    if has_schema
        && !matches!(mode, OutputMode::Json | OutputMode::Content)
        && let Some(key) = &wire.output
    {
        checker
            .error(
                "a tool with an output schema must use `output = \"json\"` or `\"content\"`",
                key.span(),
            )
            .hint("structured output is checked against the schema; other output cannot be");
    }
    if let Some(mime) = &wire.mime_type {
        if !matches!(mode, OutputMode::Binary { .. }) {
            checker.error(
                "`mime-type` applies to `image`, `audio` and `resource` output",
                mime.span(),
            );
        } else if !mime.get_ref().contains('/') {
            checker.error(
                format!(
                    "`{}` is not a MIME type such as `image/png`",
                    mime.get_ref()
                ),
                mime.span(),
            );
        }
    }
    let files = files_spec(wire, checker);
    if wire.keep_output == Some(true) && mode != OutputMode::Text {
        checker
            .error(
                "`keep-output` applies to `text` output, the only kind that is cut short",
                wire.output.as_ref().map_or(0..0, toml::Spanned::span),
            )
            .hint("other output modes fail when the output is over `max-output`");
    }
    OutputSpec {
        tool: tool.to_owned(),
        mode,
        files,
        keep_full_output: wire.keep_output.unwrap_or(false),
        shape: crate::results::project::Shape::default(),
    }
}

/// `files` and `max-files`: what becomes of the files the command leaves, and how many.
fn files_spec(wire: &CommandWire, checker: &mut Checker) -> Option<FilesSpec> {
    let files_mode = wire.files.as_ref().and_then(|files| match files.get_ref().as_str() {
        "embed" => Some(FilesMode::Embed),
        "link" => Some(FilesMode::Link),
        other => {
            checker
                .error(format!("unknown `files` mode `{other}`"), files.span())
                .suggest(suggest(other, ["embed", "link"]))
                .hint("`embed` puts each file in the result; `link` keeps it as a resource and links to it");
            None
        }
    });
    let max = match &wire.max_files {
        None => DEFAULT_MAX_FILES,
        Some(value) => {
            if wire.files.is_none() {
                checker
                    .error("`max-files` applies with `files`", value.span())
                    .hint(
                        "`files = \"embed\"` or `\"link\"` gives the command a directory for files",
                    );
            }
            usize::try_from(*value.get_ref())
                .ok()
                .filter(|max| (1..=MAX_FILES_LIMIT).contains(max))
                .unwrap_or_else(|| {
                    checker.error(
                        format!("`max-files` is a number of files from 1 to {MAX_FILES_LIMIT}"),
                        value.span(),
                    );
                    DEFAULT_MAX_FILES
                })
        }
    };
    files_mode.map(|mode| FilesSpec { mode, max })
}
