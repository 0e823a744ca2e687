//! `[tools.static]`: a declared result, its blocks checked (and files read) at load.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use toml::Spanned;

use super::Checker;
use super::facts::{ArgumentFacts, template_at};
use super::json::toml_to_json;
use super::wire::{BlockWire, ContentAnnotationsWire, StaticWire};
use crate::backend::static_result::{StaticBlock, StaticResult};
use crate::results::content::{Annotations, Audience, EmbeddedResource, ResourceLink};
use crate::results::{Content, mime};
use crate::schema::CompiledSchema;
use crate::suggest::suggest;

const KINDS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

pub(super) fn build_static(
    wire: &Spanned<StaticWire>,
    facts: &ArgumentFacts,
    output_schema: Option<&CompiledSchema>,
    checker: &mut Checker,
) -> Option<StaticResult> {
    let errors_before = checker.diagnostics.len();
    let span = wire.span();
    let wire = wire.get_ref();
    let blocks: Vec<StaticBlock> = wire
        .content
        .iter()
        .filter_map(|block| build_block(block, facts, checker))
        .collect();
    let structured = wire.structured_content.as_ref().and_then(|value| {
        let json = toml_to_json(value.get_ref());
        if let (Some(json), Some(schema)) = (&json, output_schema)
            && let Some(problem) = schema.violations(json, "structured-content").first()
        {
            checker.error(
                format!("`structured-content` does not match the output schema: {problem}"),
                value.span(),
            );
        }
        json
    });
    if output_schema.is_some() && structured.is_none() && !wire.is_error {
        checker
            .error("this tool declares an output schema, so its static result needs `structured-content`", span.start..span.start + 1)
            .hint("add `structured-content = { … }` to `[tools.static]`");
    }
    if wire.content.is_empty() && structured.is_none() {
        checker.error(
            "a static result needs `content` blocks or `structured-content`",
            span.start..span.start + 1,
        );
    }
    (checker.diagnostics.len() == errors_before).then_some(StaticResult {
        blocks,
        structured,
        is_error: wire.is_error,
    })
}

pub(super) fn build_block(
    block: &Spanned<BlockWire>,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<StaticBlock> {
    let span = block.span();
    let wire = block.get_ref();
    let annotations = wire
        .annotations
        .as_ref()
        .and_then(|annotations| convert_annotations(annotations, span.clone(), checker));
    let kind = wire.kind.get_ref().as_str();
    let content = match kind {
        "text" => {
            let Some(text) = &wire.text else {
                checker.error("a text block needs `text`", span);
                return None;
            };
            let template = template_at(text, span, facts, checker)?;
            return Some(StaticBlock::Text {
                template,
                annotations,
            });
        }
        "image" | "audio" => {
            let (data, mime_type) = payload(wire, span.clone(), checker)?;
            let mime_type = mime_type.unwrap_or_default();
            match kind {
                "image" => Content::Image {
                    data,
                    mime_type,
                    annotations,
                },
                _ => Content::Audio {
                    data,
                    mime_type,
                    annotations,
                },
            }
        }
        "resource" => resource_block(wire, span.clone(), annotations, checker)?,
        "resource_link" => {
            let (Some(uri), Some(name)) = (wire.uri.clone(), wire.name.clone()) else {
                checker.error("a resource link needs `uri` and `name`", span);
                return None;
            };
            Content::ResourceLink(ResourceLink {
                uri,
                name,
                title: wire.title.clone(),
                description: wire.description.clone(),
                mime_type: wire.mime_type.clone(),
                size: wire.size,
                annotations,
            })
        }
        other => {
            checker
                .error(format!("unknown content type `{other}`"), wire.kind.span())
                .suggest(suggest(other, KINDS))
                .hint(format!(
                    "types are {}",
                    KINDS.map(|kind| format!("`{kind}`")).join(", ")
                ));
            return None;
        }
    };
    if let Err(problem) = content.check() {
        checker.error(format!("invalid {kind} block: {problem}"), span);
        return None;
    }
    Some(StaticBlock::Fixed(content))
}

fn resource_block(
    wire: &BlockWire,
    span: std::ops::Range<usize>,
    annotations: Option<Annotations>,
    checker: &mut Checker,
) -> Option<Content> {
    let Some(uri) = wire.uri.clone() else {
        checker.error("a resource block needs a `uri`", span);
        return None;
    };
    let (text, blob, mime_type) = match (&wire.text, wire.data.is_some() || wire.file.is_some()) {
        (Some(text), false) => (Some(text.clone()), None, wire.mime_type.clone()),
        (None, true) => {
            let (data, mime_type) = payload(wire, span.clone(), checker)?;
            let textual = mime_type.as_deref().is_some_and(mime::is_textual);
            match BASE64
                .decode(&data)
                .ok()
                .filter(|_| textual)
                .and_then(|bytes| String::from_utf8(bytes).ok())
            {
                Some(text) => (Some(text), None, mime_type),
                None => (None, Some(data), mime_type),
            }
        }
        _ => {
            checker.error("a resource block has `text`, or `data` or `file`", span);
            return None;
        }
    };
    Some(Content::Resource {
        resource: EmbeddedResource {
            uri,
            mime_type,
            text,
            blob,
        },
        annotations,
    })
}

/// Base64 data from `data` or from `file`, and the MIME type (declared, else guessed).
fn payload(
    wire: &BlockWire,
    span: std::ops::Range<usize>,
    checker: &mut Checker,
) -> Option<(String, Option<String>)> {
    match (&wire.data, &wire.file) {
        (Some(data), None) => Some((data.clone(), wire.mime_type.clone())),
        (None, Some(file)) => {
            let path = checker.refer(file.get_ref(), super::Use::Content);
            match std::fs::read(&path) {
                Ok(bytes) => {
                    let mime_type = wire
                        .mime_type
                        .clone()
                        .unwrap_or_else(|| mime::guess(file.get_ref(), &bytes).to_owned());
                    Some((BASE64.encode(bytes), Some(mime_type)))
                }
                Err(error) => {
                    checker.error(
                        format!("could not read `{}`: {error}", path.display()),
                        file.span(),
                    );
                    None
                }
            }
        }
        _ => {
            checker.error(
                "give the block's bytes as `data` (base64) or `file`, not both",
                span,
            );
            None
        }
    }
}

fn convert_annotations(
    wire: &ContentAnnotationsWire,
    span: std::ops::Range<usize>,
    checker: &mut Checker,
) -> Option<Annotations> {
    let audience = match &wire.audience {
        None => None,
        Some(names) => {
            let mut audience = Vec::new();
            for name in names {
                match name.as_str() {
                    "user" => audience.push(Audience::User),
                    "assistant" => audience.push(Audience::Assistant),
                    other => {
                        checker.error(
                            format!("unknown audience `{other}`; use `user` or `assistant`"),
                            span.clone(),
                        );
                        return None;
                    }
                }
            }
            Some(audience)
        }
    };
    // Checked here for every kind of block: a text block's annotations are kept with its
    // template and never reach `Content::check`.
    if let Some(priority) = wire.priority
        && !(0.0..=1.0).contains(&priority)
    {
        let problem = crate::results::content::BlockError::Priority { priority };
        checker.error(problem.to_string(), span);
        return None;
    }
    Some(Annotations {
        audience,
        priority: wire.priority,
        last_modified: wire.last_modified.clone(),
    })
}
