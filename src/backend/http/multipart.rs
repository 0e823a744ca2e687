//! `multipart/form-data` bodies (RFC 7578): text parts from arguments, file parts from a
//! path argument beneath a folder the tool declares, or from base64 content.
//!
//! The encoder is ours, not reqwest's `multipart` feature: that one streams its body (so a
//! dry run could not show it) and escapes a CR or LF in a file name with a backslash, which
//! leaves the line break on the wire. Here no name, file name or content type can hold a
//! line break, a quote or a backslash (names and types are checked at load, file names at
//! each call), and the boundary is 128 random bits that no part's bytes contain.

use std::io::Read as _;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::template::{RenderError, Sink, Template, value_text};

/// Why a multipart body could not be made for one call's arguments.
#[derive(Debug, thiserror::Error)]
pub enum MultipartError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(
        "the file name of part `{part}` is empty or holds a line break, a control character, `\"` or `\\`, which a part's header cannot carry"
    )]
    FileName { part: String },
    #[error("part `{part}` would make the upload larger than the tool's limit (`max-upload`)")]
    TooLarge { part: String },
    #[error("the content of part `{part}` is not valid base64")]
    Base64 {
        part: String,
        source: base64::DecodeError,
    },
    #[error(
        "part `{part}`: no file `{path}` in the folder the tool uploads from (a path inside it, with no `..` and no symbolic link)"
    )]
    NoFile { part: String, path: String },
    #[error("part `{part}`: {source}")]
    Read {
        part: String,
        source: std::io::Error,
    },
    #[error("no randomness for the multipart boundary: {0}")]
    Randomness(#[from] getrandom::Error),
    #[error("could not find a multipart boundary that no part holds")]
    Boundary,
}

/// The most a request's file and base64 parts may add up to, unless the tool says.
pub const DEFAULT_MAX_UPLOAD: usize = 16 << 20;

/// One part of a multipart body.
#[derive(Debug, Clone)]
pub struct Part {
    /// The part's name, checked at load ([`is_safe_name`]).
    pub name: String,
    pub source: PartSource,
    /// A literal file name, or one from arguments (checked at each call).
    pub filename: Option<Template>,
    /// A literal media type, checked at load.
    pub content_type: Option<String>,
}

/// Where a part's bytes come from.
#[derive(Debug, Clone)]
pub enum PartSource {
    /// Text: the template filled in (an array or object argument is its JSON text).
    Text(Template),
    /// A file beneath `folder` (real, checked at load like a file template's folder), at
    /// the relative path the template renders: opened with no symbolic link followed and
    /// never leaving the folder.
    File { folder: PathBuf, path: Template },
    /// The bytes an argument holds in base64.
    Base64(Template),
}

impl PartSource {
    pub fn placeholders(&self) -> Vec<&str> {
        match self {
            Self::Text(template) | Self::Base64(template) | Self::File { path: template, .. } => {
                template.placeholders().collect()
            }
        }
    }
}

/// Whether `text` can stand inside a quoted header parameter as it is: no control
/// character, quote or backslash (RFC 7578 section 4.2 leaves escapes to the receiver, and
/// receivers disagree).
pub fn is_safe_name(text: &str) -> bool {
    !text.is_empty()
        && !text
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\')
}

/// The body's parts, rendered: `(name, filename, content type, bytes)`; a part whose
/// argument is absent is left out.
type Rendered = (String, Option<String>, Option<String>, Vec<u8>);

/// The body and its `Content-Type` (with the boundary).
pub fn encode(
    parts: &[Part],
    arguments: &Map<String, Value>,
    max_upload: usize,
) -> Result<(String, Vec<u8>), MultipartError> {
    let mut rendered: Vec<Rendered> = Vec::with_capacity(parts.len());
    let mut uploaded = 0_usize;
    for part in parts {
        let Some(bytes) = render_source(part, arguments, max_upload - uploaded)? else {
            continue;
        };
        if !matches!(part.source, PartSource::Text(_)) {
            uploaded += bytes.len();
        }
        let filename = match (&part.filename, &part.source) {
            (Some(template), _) => template.render(arguments, Sink::Display)?,
            (None, PartSource::File { path, .. }) => path
                .render(arguments, Sink::Display)?
                .and_then(|path| path.rsplit('/').next().map(ToOwned::to_owned)),
            (None, _) => None,
        };
        if let Some(filename) = &filename
            && !is_safe_name(filename)
        {
            let part = part.name.clone();
            return Err(MultipartError::FileName { part });
        }
        rendered.push((
            part.name.clone(),
            filename,
            part.content_type.clone(),
            bytes,
        ));
    }
    let boundary = boundary(&rendered)?;
    let mut body = Vec::new();
    for (name, filename, content_type, bytes) in rendered {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        body.extend_from_slice(
            format!("Content-Disposition: form-data; name=\"{name}\"").as_bytes(),
        );
        if let Some(filename) = filename {
            body.extend_from_slice(format!("; filename=\"{filename}\"").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        if let Some(content_type) = content_type {
            body.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(&bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), body))
}

/// A part's bytes, or `None` when its argument is absent (or null).
fn render_source(
    part: &Part,
    arguments: &Map<String, Value>,
    room: usize,
) -> Result<Option<Vec<u8>>, MultipartError> {
    let too_large = || MultipartError::TooLarge {
        part: part.name.clone(),
    };
    let within_room = |bytes: Vec<u8>| {
        if bytes.len() > room {
            Err(too_large())
        } else {
            Ok(Some(bytes))
        }
    };
    match &part.source {
        PartSource::Text(template) => {
            if let Some(name) = template.sole_placeholder() {
                return Ok(arguments
                    .get(name)
                    .filter(|value| !value.is_null())
                    .map(|value| value_text(value).into_bytes()));
            }
            Ok(template
                .render(arguments, Sink::JsonText)?
                .map(String::into_bytes))
        }
        PartSource::Base64(template) => {
            let Some(text) = template.render(arguments, Sink::JsonText)? else {
                return Ok(None);
            };
            // Decoded bytes are three quarters of the text: refuse before decoding.
            if text.len() / 4 * 3 > room.saturating_add(3) {
                return Err(too_large());
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|source| MultipartError::Base64 {
                    part: part.name.clone(),
                    source,
                })?;
            within_room(bytes)
        }
        PartSource::File { folder, path } => {
            // The path's own text around an absent argument is no file to send: the part is
            // left out, as a text part is.
            if path
                .placeholders()
                .any(|name| arguments.get(name).is_none_or(Value::is_null))
            {
                return Ok(None);
            }
            let Some(relative) = path.render(arguments, Sink::Display)? else {
                return Ok(None);
            };
            let refused = || MultipartError::NoFile {
                part: part.name.clone(),
                path: relative.clone(),
            };
            if relative.contains('\0') || relative.len() > 4096 {
                return Err(refused());
            }
            let file = crate::resource::confined(folder, &relative).ok_or_else(refused)?;
            let metadata = file.metadata().map_err(|_| refused())?;
            if !metadata.is_file() {
                return Err(refused());
            }
            if usize::try_from(metadata.len()).map_or(true, |length| length > room) {
                return Err(too_large());
            }
            let mut bytes = Vec::new();
            file.take(room as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|source| MultipartError::Read {
                    part: part.name.clone(),
                    source,
                })?;
            within_room(bytes)
        }
    }
}

/// A boundary no part holds: 128 random bits in hex (a collision is tried again).
fn boundary(parts: &[Rendered]) -> Result<String, MultipartError> {
    for _ in 0..4 {
        let mut bytes = [0_u8; 16];
        getrandom::fill(&mut bytes)?;
        let boundary: String = std::iter::once("mcp-serve-".to_owned())
            .chain(bytes.iter().map(|byte| format!("{byte:02x}")))
            .collect();
        let needle = boundary.as_bytes();
        let held = parts
            .iter()
            .any(|(_, _, _, bytes)| bytes.windows(needle.len()).any(|window| window == needle));
        if !held {
            return Ok(boundary);
        }
    }
    Err(MultipartError::Boundary)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(name: &str, template: &str) -> Part {
        Part {
            name: name.to_owned(),
            source: PartSource::Text(Template::parse(template).expect("template")),
            filename: None,
            content_type: None,
        }
    }

    #[test]
    fn parts_are_framed_by_a_boundary_no_part_holds() {
        let arguments =
            json!({"a": "x\r\n--mcp-serve-\r\nContent-Disposition: form-data; name=\"b\"", "n": 3})
                .as_object()
                .cloned()
                .unwrap_or_default();
        let (content_type, body) = encode(
            &[
                text("a", "{a}"),
                text("n", "{n}"),
                text("gone", "{missing}"),
            ],
            &arguments,
            10,
        )
        .expect("encodes");
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .expect("boundary");
        let body = String::from_utf8(body).expect("utf-8");
        // Exactly two parts and the closing line, whatever the value says.
        assert_eq!(body.matches(&format!("--{boundary}")).count(), 3, "{body}");
        assert_eq!(body.matches("Content-Disposition").count(), 3);
        assert!(body.ends_with(&format!("--{boundary}--\r\n")));
        assert!(!body.contains("name=\"gone\""));
    }

    #[test]
    fn a_file_name_that_could_break_the_header_is_refused() {
        for name in ["a\r\nX-Injected: 1", "a\"; name=\"b", "a\\", "\u{0}", ""] {
            let mut part = text("f", "{v}");
            part.filename = Some(Template::parse("{name}").expect("template"));
            let arguments = json!({"v": "x", "name": name})
                .as_object()
                .cloned()
                .unwrap_or_default();
            assert!(encode(&[part], &arguments, 10).is_err(), "{name:?}");
        }
        assert!(is_safe_name("photo é.png") && !is_safe_name("a\nb"));
    }

    #[test]
    fn base64_content_is_decoded_within_the_limit() {
        let part = Part {
            name: "f".to_owned(),
            source: PartSource::Base64(Template::parse("{c}").expect("template")),
            filename: Some(Template::parse("a.bin").expect("template")),
            content_type: Some("application/octet-stream".to_owned()),
        };
        let arguments = |c: &str| json!({"c": c}).as_object().cloned().unwrap_or_default();
        let (_, body) = encode(std::slice::from_ref(&part), &arguments("AAEC"), 3).expect("fits");
        assert!(body.windows(3).any(|window| window == [0, 1, 2]));
        assert!(encode(std::slice::from_ref(&part), &arguments("AAECAw=="), 3).is_err());
        assert!(encode(&[part], &arguments("not base64!"), 100).is_err());
    }
}
