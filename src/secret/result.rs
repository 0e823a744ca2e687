//! A whole tool result, redacted: the last step of every call, whatever the backend, so a
//! secret the manifest references never comes back from any tool.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::Redactor;
use crate::events::CallEvent;
use crate::results::ToolResult;
use crate::results::content::{Annotations, Content, EmbeddedResource, ResourceLink};

impl ToolResult {
    /// The result with every secret `redactor` knows replaced by `[redacted]`, in every
    /// string it carries: text blocks (error text too), structured content (keys and
    /// values), embedded resources (URI, MIME type, text, and the bytes of a blob), resource
    /// links (URI, name, title, description, MIME type), the bytes of images and audio, and
    /// annotations. A blob is decoded, redacted and encoded again only when it held a secret.
    #[must_use]
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        if redactor.is_empty() {
            return self;
        }
        for block in &mut self.content {
            redact_block(block, redactor);
        }
        if let Some(structured) = self.structured.as_mut() {
            redactor.redact_json(structured);
        }
        self
    }
}

impl CallEvent {
    /// The event with every secret `redactor` knows replaced: a progress message, a log
    /// message and its data, as a command wrote them.
    #[must_use]
    pub fn redacted(self, redactor: &Redactor) -> Self {
        match self {
            Self::Progress {
                progress,
                total,
                message,
            } => Self::Progress {
                progress,
                total,
                message: message.map(|message| redactor.redact(&message)),
            },
            Self::Log {
                level,
                message,
                data,
            } => Self::Log {
                level,
                message: redactor.redact(&message),
                data: data.map(|mut data| {
                    redactor.redact_json(&mut data);
                    data
                }),
            },
        }
    }
}

fn redact_block(block: &mut Content, redactor: &Redactor) {
    match block {
        Content::Text { text, annotations } => {
            redact_text(text, redactor);
            redact_annotations(annotations.as_mut(), redactor);
        }
        Content::Image {
            data,
            mime_type,
            annotations,
        }
        | Content::Audio {
            data,
            mime_type,
            annotations,
        } => {
            redact_base64(data, redactor);
            redact_text(mime_type, redactor);
            redact_annotations(annotations.as_mut(), redactor);
        }
        Content::Resource {
            resource:
                EmbeddedResource {
                    uri,
                    mime_type,
                    text,
                    blob,
                },
            annotations,
        } => {
            redact_text(uri, redactor);
            for text in [mime_type, text].into_iter().flatten() {
                redact_text(text, redactor);
            }
            if let Some(blob) = blob {
                redact_base64(blob, redactor);
            }
            redact_annotations(annotations.as_mut(), redactor);
        }
        Content::ResourceLink(ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size: _,
            annotations,
        }) => {
            redact_text(uri, redactor);
            redact_text(name, redactor);
            for text in [title, description, mime_type].into_iter().flatten() {
                redact_text(text, redactor);
            }
            redact_annotations(annotations.as_mut(), redactor);
        }
    }
}

fn redact_text(text: &mut String, redactor: &Redactor) {
    if redactor.finds(text.as_bytes()) {
        *text = redactor.redact(text);
    }
}

fn redact_annotations(annotations: Option<&mut Annotations>, redactor: &Redactor) {
    if let Some(modified) = annotations.and_then(|annotations| annotations.last_modified.as_mut()) {
        redact_text(modified, redactor);
    }
}

/// A base64 payload: the bytes are redacted, never the encoding (a secret cannot hide in
/// base64). A payload that is not base64 is redacted as text.
fn redact_base64(data: &mut String, redactor: &Redactor) {
    match BASE64.decode(data.as_bytes()) {
        Ok(bytes) => {
            if redactor.finds(&bytes) {
                *data = BASE64.encode(redactor.redact_bytes(bytes));
            }
        }
        Err(_) => redact_text(data, redactor),
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde_json::json;

    use crate::results::ToolResult;
    use crate::results::content::{Content, EmbeddedResource, ResourceLink};
    use crate::secret::Redactor;

    #[test]
    fn every_string_and_every_blob_of_a_result_is_redacted() {
        let secret = "s3cr3t-value";
        let redactor = Redactor::new(&[secret.to_owned()]);
        let blob = BASE64.encode(format!("\0bytes {secret} bytes\0"));
        let result = ToolResult {
            content: vec![
                Content::text(format!("text {secret}")),
                Content::Image {
                    data: blob.clone(),
                    mime_type: "image/png".into(),
                    annotations: None,
                },
                Content::Resource {
                    resource: EmbeddedResource {
                        uri: format!("file:///{secret}"),
                        mime_type: Some("text/plain".into()),
                        text: Some(secret.into()),
                        blob: None,
                    },
                    annotations: None,
                },
                Content::Resource {
                    resource: EmbeddedResource {
                        uri: "file:///b".into(),
                        mime_type: None,
                        text: None,
                        blob: Some(blob),
                    },
                    annotations: None,
                },
                Content::ResourceLink(ResourceLink {
                    uri: format!("file:///{secret}"),
                    name: secret.into(),
                    title: Some(secret.into()),
                    description: Some(format!("about {secret}")),
                    mime_type: None,
                    size: None,
                    annotations: None,
                }),
            ],
            structured: Some(json!({ secret: [secret, 1] })),
            is_error: true,
        };
        let redacted = result.redacted(&redactor);
        let shown = serde_json::to_string(&redacted.content).expect("json");
        assert!(!shown.contains(secret), "{shown}");
        assert_eq!(
            redacted.structured,
            Some(json!({ "[redacted]": ["[redacted]", 1] }))
        );
        let Content::Image { data, .. } = &redacted.content[1] else {
            panic!("an image");
        };
        assert_eq!(
            BASE64.decode(data).expect("base64"),
            b"\0bytes [redacted] bytes\0"
        );
        assert!(redacted.is_error);
        // Nothing to hide: the same result, blobs untouched.
        let clean = ToolResult::text("nothing here");
        assert_eq!(clean.clone().redacted(&redactor), clean);
    }
}
