//! The output pipeline: what a backend produced becomes an MCP tool result (text, structured
//! content checked against the output schema, images, audio, resources), then is shaped for
//! the revision of the client that asked.

mod captured;
pub mod content;
pub mod mime;
pub mod project;
pub mod response;
pub mod store;

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::revision::Revision;
use crate::schema::CompiledSchema;
pub use captured::Captured;
pub use content::Content;
use store::Keeper;

/// How a command's stdout maps to a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputMode {
    /// One text block; over the size limit, the middle is cut out.
    Text,
    /// A JSON document: `structuredContent` plus the JSON as a text block.
    Json,
    /// A JSON document `{ "content": [...], "structuredContent"?: …, "isError"?: bool }` that
    /// gives the result in full.
    Content,
    /// Binary stdout as one block of this kind; the MIME type is declared or sniffed.
    Binary {
        kind: BinaryKind,
        mime_type: Option<String>,
    },
}

impl OutputMode {
    /// Only text can be cut short meaningfully; other modes need the whole output.
    pub fn truncates(&self) -> bool {
        matches!(self, Self::Text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    Image,
    Audio,
    Resource,
}

/// How files a command writes into its output directory become blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilesMode {
    /// Each file is embedded: images and audio as such, everything else as a resource.
    Embed,
    /// Each file is kept in the resource store and linked.
    Link,
}

/// The most output files a tool takes unless its `max-files` says otherwise.
pub const DEFAULT_MAX_FILES: usize = 100;

/// The largest `max-files` a manifest may give.
pub const MAX_FILES_LIMIT: usize = 10_000;

/// What becomes of the files a command leaves in its output directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilesSpec {
    pub mode: FilesMode,
    /// The most files taken (`max-files`); the scan stops there and the result says so.
    pub max: usize,
}

/// Everything the pipeline needs to know about one tool.
#[derive(Debug, Clone)]
pub struct OutputSpec {
    pub tool: String,
    pub mode: OutputMode,
    pub files: Option<FilesSpec>,
    /// Keep the whole stdout as a resource when it is cut short.
    pub keep_full_output: bool,
    /// How JSON output is narrowed and capped before the output schema is checked.
    pub shape: project::Shape,
}

/// A file from the command's output directory.
#[derive(Debug)]
pub struct OutputFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The files taken from a command's output directory, by name.
#[derive(Debug, Default)]
pub struct OutputFiles {
    pub files: Vec<OutputFile>,
    /// Why the directory was read no further, when it was not read to its end.
    pub stopped: Option<Stopped>,
    /// Entries of the directory read (`.` and `..` aside): at most twice the limit, plus one.
    pub examined: usize,
}

/// Why an output directory was read no further: the result says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// There were more regular files than the tool takes.
    Files { most: usize },
    /// More entries than that were links, folders or other things that are never taken.
    Others { most: usize },
}

impl Stopped {
    /// The note at the end of the result.
    fn note(self) -> String {
        match self {
            Self::Files { most } => format!(
                "[… more files left out: this tool takes at most {most} file{} from its output directory (`max-files`) …]",
                if most == 1 { "" } else { "s" }
            ),
            Self::Others { most } => format!(
                "[… the output directory was read no further: more than {most} of its entries are links or folders, which are never taken (`max-files`) …]"
            ),
        }
    }
}

/// An revision-neutral tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

/// The `content` output mode's document.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ContentDocument {
    content: Vec<Content>,
    #[serde(default)]
    structured_content: Option<Value>,
    #[serde(default)]
    is_error: bool,
}

impl ToolResult {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            structured: None,
            is_error: false,
        }
    }

    /// A tool execution error the model can read and act on.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// Builds the result from a command's successful output and files.
    pub fn from_command(
        stdout: Captured,
        files: OutputFiles,
        spec: &OutputSpec,
        output_schema: Option<&CompiledSchema>,
        store: &Keeper<'_>,
    ) -> Self {
        let mut result = match &spec.mode {
            OutputMode::Text => Self::from_text(stdout, spec, store),
            OutputMode::Json => match serde_json::from_slice::<Value>(&stdout.head) {
                Ok(value) => Self::structured(value, output_schema),
                Err(error) => Self::error(format!("the tool's output is not valid JSON: {error}")),
            },
            OutputMode::Content => Self::from_document(&stdout.head, output_schema),
            OutputMode::Binary { kind, mime_type } => {
                let mime_type = mime_type
                    .as_deref()
                    .or_else(|| mime::sniff(&stdout.head))
                    .unwrap_or("application/octet-stream")
                    .to_owned();
                Self::from_binary(stdout.head, *kind, &mime_type, &spec.tool)
            }
        };
        if result.is_error {
            return result;
        }
        if let Some(files_spec) = spec.files {
            // Empty stdout says nothing when files carry the answer.
            if !files.files.is_empty()
                && matches!(result.content.as_slice(), [Content::Text { text, .. }] if text.is_empty())
            {
                result.content.clear();
            }
            for file in files.files {
                result
                    .content
                    .push(file_block(file, files_spec.mode, &spec.tool, store));
            }
            if let Some(stopped) = files.stopped {
                result.content.push(Content::text(stopped.note()));
            }
        }
        result
    }

    fn from_text(stdout: Captured, spec: &OutputSpec, store: &Keeper<'_>) -> Self {
        if !stdout.is_truncated() {
            return Self::text(trim_trailing_newlines(&String::from_utf8_lossy(
                &stdout.head,
            )));
        }
        let shown = (stdout.head.len() + stdout.tail.len()) as u64;
        let left_out = stdout.total - shown;
        let head = String::from_utf8_lossy(&stdout.head);
        let tail = String::from_utf8_lossy(&stdout.tail);
        let what = if stdout.stopped_early {
            format!(
                "the command wrote more than {} bytes and was stopped there",
                stdout.total
            )
        } else {
            format!(
                "the output was {} bytes, more than this tool's limit",
                stdout.total
            )
        };
        let mut text = format!(
            "{}\n\n[… {left_out} bytes left out: {what} …]\n\n{}",
            head.trim_end_matches('\u{FFFD}'),
            trim_trailing_newlines(tail.trim_start_matches('\u{FFFD}'))
        );
        let mut result = Self::text(String::new());
        if let Some(path) = stdout.kept.filter(|_| spec.keep_full_output) {
            match store.keep_file(&path, &format!("{}-output.txt", spec.tool), "text/plain") {
                Some(link) => {
                    let _ = write!(
                        text,
                        "

[the whole output is the resource {}]",
                        link.uri
                    );
                    result.content.push(Content::ResourceLink(link));
                }
                None => text.push_str("\n\n[the whole output was too large to keep]"),
            }
        }
        result.content[0] = Content::text(text);
        result
    }

    fn from_binary(bytes: Vec<u8>, kind: BinaryKind, mime_type: &str, tool: &str) -> Self {
        let block = match kind {
            BinaryKind::Image if mime_type.starts_with("image/") => {
                Content::media(&bytes, mime_type)
            }
            BinaryKind::Audio if mime_type.starts_with("audio/") => {
                Content::media(&bytes, mime_type)
            }
            BinaryKind::Resource => {
                Content::embedded(format!("mcp-serve://output/{tool}"), bytes, mime_type)
            }
            _ => {
                return Self::error(format!(
                    "the tool's output is `{mime_type}`, not {}",
                    if kind == BinaryKind::Image {
                        "an image"
                    } else {
                        "audio"
                    }
                ));
            }
        };
        Self {
            content: vec![block],
            structured: None,
            is_error: false,
        }
    }

    /// The `content` mode: the command gives the whole result as JSON; it is checked
    /// before it can leave.
    fn from_document(stdout: &[u8], output_schema: Option<&CompiledSchema>) -> Self {
        let document: ContentDocument = match serde_json::from_slice(stdout) {
            Ok(document) => document,
            Err(error) => {
                return Self::error(format!(
                    "the tool's output is not a valid content document: {error}"
                ));
            }
        };
        for (index, block) in document.content.iter().enumerate() {
            if let Err(problem) = block.check() {
                return Self::error(format!(
                    "the tool's output is not a valid content document: content[{index}]: {problem}"
                ));
            }
        }
        let mut result = Self {
            content: document.content,
            structured: None,
            is_error: document.is_error,
        };
        if let Some(value) = document.structured_content {
            if !result.is_error
                && let Some(problem) = output_problem(&value, output_schema)
            {
                return Self::error(problem);
            }
            let has_text = result
                .content
                .iter()
                .any(|block| matches!(block, Content::Text { .. }));
            if !has_text {
                result.content.push(Content::text(value.to_string()));
            }
            result.structured = Some(value);
        } else if output_schema.is_some() && !result.is_error {
            return Self::error(
                "the tool declares an output schema but its output has no `structuredContent`",
            );
        }
        result
    }

    /// A structured result, checked against the output schema before it can leave.
    pub fn structured(value: Value, output_schema: Option<&CompiledSchema>) -> Self {
        if let Some(problem) = output_problem(&value, output_schema) {
            return Self::error(problem);
        }
        Self {
            content: vec![Content::text(value.to_string())],
            structured: Some(value),
            is_error: false,
        }
    }

    /// Shapes the result for a client of `revision`. `schema_wrapped` says whether the tool's
    /// output schema is advertised wrapped to 2025-06 and 2025-11 clients, so listing and result agree.
    #[must_use]
    pub fn for_revision(mut self, revision: Revision, schema_wrapped: bool) -> Self {
        match revision {
            Revision::V2026_07 => {}
            Revision::V2025_06 => {
                if let Some(value) = self.structured.take() {
                    self.structured = Some(if schema_wrapped || !value.is_object() {
                        let mut wrapper = Map::new();
                        wrapper.insert("result".into(), value);
                        Value::Object(wrapper)
                    } else {
                        value
                    });
                }
            }
            Revision::V2025_03 | Revision::V2024_11 => {
                if let Some(value) = self.structured.take() {
                    // The JSON must reach the client somehow: as text, if no block carries it.
                    if !self
                        .content
                        .iter()
                        .any(|block| matches!(block, Content::Text { .. }))
                    {
                        self.content.push(Content::text(value.to_string()));
                    }
                }
            }
        }
        if revision != Revision::V2026_07 {
            self.content = self
                .content
                .into_iter()
                .map(|block| block.for_revision(revision))
                .collect();
        }
        self
    }
}

fn output_problem(value: &Value, output_schema: Option<&CompiledSchema>) -> Option<String> {
    let violations = output_schema?.violations(value, "output");
    (!violations.is_empty()).then(|| {
        format!(
            "the tool's output does not match its output schema:\n{}",
            violations.join("\n")
        )
    })
}

fn file_block(file: OutputFile, mode: FilesMode, tool: &str, store: &Keeper<'_>) -> Content {
    let mime_type = mime::guess(&file.name, &file.bytes);
    match mode {
        FilesMode::Embed if mime_type.starts_with("image/") && mime_type != "image/svg+xml" => {
            Content::media(&file.bytes, mime_type)
        }
        FilesMode::Embed if mime_type.starts_with("audio/") => {
            Content::media(&file.bytes, mime_type)
        }
        FilesMode::Embed => Content::embedded(
            format!(
                "mcp-serve://output/{tool}/{}",
                percent_encoding::utf8_percent_encode(
                    &file.name,
                    percent_encoding::NON_ALPHANUMERIC
                )
            ),
            file.bytes,
            mime_type,
        ),
        FilesMode::Link => match store.keep_bytes(&file.bytes, &file.name, mime_type) {
            Some(link) => Content::ResourceLink(link),
            None => Content::text(format!("[`{}` was too large to keep]", file.name)),
        },
    }
}

fn trim_trailing_newlines(text: &str) -> String {
    text.trim_end_matches(['\n', '\r']).to_owned()
}

#[cfg(test)]
mod tests;
