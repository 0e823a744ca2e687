//! MIME types: from magic bytes, from file names, and which ones are text.

/// The type of `bytes` by their first bytes, for the formats tools commonly produce.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    Some(if starts(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if starts(b"\xff\xd8\xff") {
        "image/jpeg"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "image/gif"
    } else if starts(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        "image/webp"
    } else if starts(b"RIFF") && bytes.get(8..12) == Some(b"WAVE") {
        "audio/wav"
    } else if starts(b"ID3") || starts(b"\xff\xfb") || starts(b"\xff\xf3") {
        "audio/mpeg"
    } else if starts(b"OggS") {
        "audio/ogg"
    } else if starts(b"fLaC") {
        "audio/flac"
    } else if starts(b"%PDF-") {
        "application/pdf"
    } else if starts(b"<svg")
        || starts(b"<?xml") && bytes.windows(4).take(256).any(|w| w == b"<svg")
    {
        "image/svg+xml"
    } else {
        return None;
    })
}

/// The type a file name suggests.
pub fn from_name(name: &str) -> Option<&'static str> {
    let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" | "oga" => "audio/ogg",
        "flac" => "audio/flac",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => return None,
    })
}

/// The best guess for a file: its content first, then its name, then octet-stream.
pub fn guess(name: &str, bytes: &[u8]) -> &'static str {
    sniff(bytes)
        .or_else(|| from_name(name))
        .unwrap_or(if std::str::from_utf8(bytes).is_ok() {
            "text/plain"
        } else {
            "application/octet-stream"
        })
}

/// Whether content of this type is text (and so embeds as `text`, not `blob`).
pub fn is_textual(mime_type: &str) -> bool {
    let essence = mime_type.split(';').next().unwrap_or_default().trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "image/svg+xml"
        )
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}

/// Whether content of this type is a JSON document: `application/json` (or the `text/json`
/// some servers send) and every `…/…+json` type, parameters and letter case aside.
pub fn is_json(mime_type: &str) -> bool {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    matches!(essence.as_str(), "application/json" | "text/json")
        || essence
            .split_once('/')
            .is_some_and(|(_, subtype)| subtype.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::{guess, is_json, is_textual, sniff};

    #[test]
    fn sniffs_common_formats() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), Some("audio/wav"));
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(guess("notes.md", b"# hi"), "text/markdown");
        assert_eq!(
            guess("blob", &[0, 159, 146, 150]),
            "application/octet-stream"
        );
        assert_eq!(guess("x.bin", b"\x89PNG\r\n\x1a\n"), "image/png");
    }

    #[test]
    fn knows_textual_types() {
        assert!(is_textual("text/plain; charset=utf-8"));
        assert!(is_textual("application/vnd.api+json"));
        assert!(!is_textual("image/png"));
    }

    #[test]
    fn knows_json_types() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/ld+json",
            "application/vnd.api+json",
            "text/json",
        ] {
            assert!(is_json(json), "{json}");
        }
        for other in [
            "text/plain",
            "application/jsonl",
            "text/x-jsonnet",
            "+json",
            "image/png",
        ] {
            assert!(!is_json(other), "{other}");
        }
    }
}
