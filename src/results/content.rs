//! Content blocks in their MCP wire shape: text, image, audio, embedded resource and resource
//! link, with annotations. They are checked before they can leave, and downgraded for
//! clients whose protocol version predates them.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use crate::revision::Revision;

/// Why a content block is malformed beyond what serde checks: said after where the block
/// came from (a command's output, a static result in the manifest).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockError {
    #[error("an {kind} block's `mimeType` must start with `{family}`, not `{mime_type}`")]
    MimeType {
        kind: &'static str,
        family: &'static str,
        mime_type: String,
    },
    #[error("`{field}` is not valid base64: {source}")]
    Base64 {
        field: &'static str,
        source: base64::DecodeError,
    },
    #[error("an embedded resource needs a `uri`")]
    ResourceUri,
    #[error("an embedded resource has exactly one of `text` and `blob`")]
    TextOrBlob,
    #[error("a resource link needs a `uri` and a `name`")]
    LinkUnnamed,
    #[error("an annotation's `priority` is between 0 and 1, not {priority}")]
    Priority { priority: f64 },
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Content {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    Image {
        /// Base64.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    Resource {
        resource: EmbeddedResource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    ResourceLink(ResourceLink),
}

/// The contents of an embedded resource: `text` or `blob` (base64), never both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmbeddedResource {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// A link to a resource the client can fetch with `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceLink {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// Who a block is for and how much it matters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Audience>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    User,
    Assistant,
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// An image or audio block for raw bytes.
    pub fn media(bytes: &[u8], mime_type: &str) -> Self {
        let data = BASE64.encode(bytes);
        if mime_type.starts_with("audio/") {
            Self::Audio {
                data,
                mime_type: mime_type.to_owned(),
                annotations: None,
            }
        } else {
            Self::Image {
                data,
                mime_type: mime_type.to_owned(),
                annotations: None,
            }
        }
    }

    /// An embedded resource: text when the bytes are UTF-8 and the type is textual, else a blob.
    pub fn embedded(uri: String, bytes: Vec<u8>, mime_type: &str) -> Self {
        let (text, blob) = if super::mime::is_textual(mime_type) {
            match String::from_utf8(bytes) {
                Ok(text) => (Some(text), None),
                Err(error) => (None, Some(BASE64.encode(error.into_bytes()))),
            }
        } else {
            (None, Some(BASE64.encode(bytes)))
        };
        Self::Resource {
            resource: EmbeddedResource {
                uri,
                mime_type: Some(mime_type.to_owned()),
                text,
                blob,
            },
            annotations: None,
        }
    }

    /// Checks what serde cannot: base64 payloads, MIME families, text XOR blob, priorities.
    pub fn check(&self) -> Result<(), BlockError> {
        let annotations = match self {
            Self::Text { annotations, .. } => annotations,
            Self::Image {
                data,
                mime_type,
                annotations,
            }
            | Self::Audio {
                data,
                mime_type,
                annotations,
            } => {
                let (family, kind) = match self {
                    Self::Image { .. } => ("image/", "image"),
                    _ => ("audio/", "audio"),
                };
                if !mime_type.starts_with(family) {
                    return Err(BlockError::MimeType {
                        kind,
                        family,
                        mime_type: mime_type.clone(),
                    });
                }
                check_base64(data, "data")?;
                annotations
            }
            Self::Resource {
                resource,
                annotations,
            } => {
                if resource.uri.is_empty() {
                    return Err(BlockError::ResourceUri);
                }
                match (&resource.text, &resource.blob) {
                    (Some(_), None) => {}
                    (None, Some(blob)) => check_base64(blob, "blob")?,
                    _ => return Err(BlockError::TextOrBlob),
                }
                annotations
            }
            Self::ResourceLink(link) => {
                if link.uri.is_empty() || link.name.is_empty() {
                    return Err(BlockError::LinkUnnamed);
                }
                &link.annotations
            }
        };
        if let Some(priority) = annotations
            .as_ref()
            .and_then(|annotations| annotations.priority)
            && !(0.0..=1.0).contains(&priority)
        {
            return Err(BlockError::Priority { priority });
        }
        Ok(())
    }

    /// The block as a client of `revision` can take it: audio becomes an embedded resource before
    /// 2025-03-26, and a resource link a text description before 2025-06-18.
    #[must_use]
    pub fn for_revision(self, revision: Revision) -> Self {
        match self {
            Self::Audio {
                data,
                mime_type,
                annotations,
            } if !revision.has_audio() => Self::Resource {
                resource: EmbeddedResource {
                    uri: "mcp-serve://content/audio".into(),
                    mime_type: Some(mime_type),
                    text: None,
                    blob: Some(data),
                },
                annotations,
            },
            Self::ResourceLink(link) if !revision.has_resource_links() => {
                let mut text = format!(
                    "Resource: {} <{}>",
                    link.title.as_deref().unwrap_or(&link.name),
                    link.uri
                );
                let details: Vec<String> = link
                    .mime_type
                    .iter()
                    .cloned()
                    .chain(link.size.map(|size| format!("{size} bytes")))
                    .collect();
                if !details.is_empty() {
                    let _ = write!(text, " ({})", details.join(", "));
                }
                if let Some(description) = &link.description {
                    let _ = write!(text, "\n{description}");
                }
                Self::Text {
                    text,
                    annotations: link.annotations,
                }
            }
            other => other,
        }
    }
}

fn check_base64(data: &str, field: &'static str) -> Result<(), BlockError> {
    BASE64
        .decode(data)
        .map(drop)
        .map_err(|source| BlockError::Base64 { field, source })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Content, ResourceLink};
    use crate::revision::Revision;

    fn parse(value: serde_json::Value) -> Result<Content, String> {
        let content: Content = serde_json::from_value(value).map_err(|error| error.to_string())?;
        content.check().map_err(|error| error.to_string())?;
        Ok(content)
    }

    #[test]
    fn wire_shapes_round_trip() {
        for block in [
            json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}),
            json!({"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}),
            json!({"type": "resource", "resource": {"uri": "x://y", "mimeType": "application/json", "text": "{}"}}),
            json!({"type": "resource_link", "uri": "x://y", "name": "y", "size": 3}),
        ] {
            let content = parse(block.clone()).expect("valid");
            assert_eq!(serde_json::to_value(&content).ok(), Some(block));
        }
    }

    #[test]
    fn malformed_blocks_are_named() {
        assert_eq!(
            parse(json!({"type": "image", "data": "not base64!", "mimeType": "image/png"})),
            Err("`data` is not valid base64: Invalid symbol 32, offset 3.".into())
        );
        assert_eq!(
            parse(json!({"type": "image", "data": "", "mimeType": "text/plain"})),
            Err("an image block's `mimeType` must start with `image/`, not `text/plain`".into())
        );
        assert!(
            parse(
                json!({"type": "resource", "resource": {"uri": "x://y", "text": "a", "blob": ""}})
            )
            .is_err()
        );
        assert!(parse(json!({"type": "text", "text": "a", "colour": "red"})).is_err());
        assert!(parse(json!({"type": "video", "data": ""})).is_err());
        assert!(
            parse(json!({"type": "text", "text": "a", "annotations": {"priority": 2}})).is_err()
        );
    }

    #[test]
    fn old_clients_get_equivalents() {
        let audio = Content::media(b"RIFF", "audio/wav");
        assert_eq!(audio.clone().for_revision(Revision::V2025_03), audio);
        assert_eq!(
            serde_json::to_value(audio.for_revision(Revision::V2024_11)).ok(),
            Some(
                json!({"type": "resource", "resource": {"uri": "mcp-serve://content/audio", "mimeType": "audio/wav", "blob": "UklGRg=="}})
            )
        );
        let link = Content::ResourceLink(ResourceLink {
            uri: "mcp-serve://outputs/1/log.txt".into(),
            name: "log.txt".into(),
            title: None,
            description: Some("The whole log".into()),
            mime_type: Some("text/plain".into()),
            size: Some(10),
            annotations: None,
        });
        assert_eq!(link.clone().for_revision(Revision::V2025_06), link);
        assert_eq!(
            link.for_revision(Revision::V2025_03),
            Content::text(
                "Resource: log.txt <mcp-serve://outputs/1/log.txt> (text/plain, 10 bytes)\nThe whole log"
            )
        );
    }
}
