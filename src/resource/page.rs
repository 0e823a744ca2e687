//! A page made of several files (an MCP App's folder, `[tools.app] page = "folder"`), made
//! one document as hosts need it: each `<script src>`, `<link rel="stylesheet" href>` and
//! `<img src>` that names a file of the folder is replaced by that file, inline (`data:` for
//! an image). A reference that names an origin (`https:`, `//host`, `data:`) is left as
//! written, for the page's CSP to admit or not. Every file is opened beneath the folder with
//! no symbolic link followed ([`super::confined`]); a reference that leaves the folder, or
//! names no file there, fails the read. The document is at most [`super::MAX_FILE`] bytes.

use std::io::Read as _;
use std::path::Path;

use base64::Engine as _;

/// Why a page could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("`{0}` is not a file beneath the page's folder (or is reached through a link)")]
    Missing(String),
    #[error("`{0}` is not UTF-8")]
    NotText(String),
    #[error(
        "the page is larger than {} bytes with its files inline",
        super::MAX_FILE
    )]
    TooBig,
    #[error("`{0}` has a `<{1}>` that does not end")]
    Unclosed(String, &'static str),
}

/// The entry page of `folder` with the files it names inline.
pub fn inlined(folder: &Path, entry: &str) -> Result<String, PageError> {
    let html = text(folder, entry)?;
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_str();
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(tag) = Tag::read(rest) else {
            out.push('<');
            rest = &rest[1..];
            continue;
        };
        let consumed = match tag.name.as_str() {
            "script" => script(folder, entry, &tag, rest, &mut out)?,
            "link" => stylesheet(folder, &tag, &mut out)?,
            "img" => image(folder, &tag, &mut out)?,
            _ => None,
        };
        let used = consumed.unwrap_or_else(|| {
            out.push_str(&rest[..tag.length]);
            tag.length
        });
        rest = &rest[used..];
        if out.len() as u64 > super::MAX_FILE {
            return Err(PageError::TooBig);
        }
    }
    out.push_str(rest);
    if out.len() as u64 > super::MAX_FILE {
        return Err(PageError::TooBig);
    }
    Ok(out)
}

/// `<script src="file">…</script>`: the file's text between `<script>` and `</script>`.
fn script(
    folder: &Path,
    entry: &str,
    tag: &Tag,
    rest: &str,
    out: &mut String,
) -> Result<Option<usize>, PageError> {
    let Some((span, path)) = tag.local("src") else {
        return Ok(None);
    };
    let close = find_ignoring_case(&rest[tag.length..], "</script")
        .ok_or_else(|| PageError::Unclosed(entry.to_owned(), "script"))?;
    let end = rest[tag.length + close..]
        .find('>')
        .ok_or_else(|| PageError::Unclosed(entry.to_owned(), "script"))?;
    let code = text(folder, &path)?;
    out.push_str(&tag.without(span));
    out.push_str(&escape_closing(&code, "</script"));
    out.push_str("</script>");
    Ok(Some(tag.length + close + end + 1))
}

/// `<link rel="stylesheet" href="file">`: a `<style>` with the file's text.
fn stylesheet(folder: &Path, tag: &Tag, out: &mut String) -> Result<Option<usize>, PageError> {
    let is_stylesheet = tag.value("rel").is_some_and(|rel| {
        rel.split_ascii_whitespace()
            .any(|word| word.eq_ignore_ascii_case("stylesheet"))
    });
    let Some((_, path)) = tag.local("href").filter(|_| is_stylesheet) else {
        return Ok(None);
    };
    let css = text(folder, &path)?;
    out.push_str("<style>");
    out.push_str(&escape_closing(&css, "</style"));
    out.push_str("</style>");
    Ok(Some(tag.length))
}

/// `<img src="file">`: the same tag, its `src` a `data:` URL of the file.
fn image(folder: &Path, tag: &Tag, out: &mut String) -> Result<Option<usize>, PageError> {
    let Some((span, path)) = tag.local("src") else {
        return Ok(None);
    };
    let bytes = bytes(folder, &path)?;
    let mime = crate::results::mime::from_name(&path)
        .or_else(|| crate::results::mime::sniff(&bytes))
        .unwrap_or("application/octet-stream");
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    out.push_str(&tag.text[..span.start]);
    out.push_str(&format!("src=\"data:{mime};base64,{data}\""));
    out.push_str(&tag.text[span.end..]);
    Ok(Some(tag.length))
}

/// `text` with each `closing` (any case) broken as `<\/…`, so inlined code cannot end its
/// element early.
fn escape_closing(text: &str, closing: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_ignoring_case(rest, closing) {
        out.push_str(&rest[..at]);
        out.push_str("<\\/");
        out.push_str(&rest[at + 2..at + closing.len()]);
        rest = &rest[at + closing.len()..];
    }
    out.push_str(rest);
    out
}

fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

fn bytes(folder: &Path, path: &str) -> Result<Vec<u8>, PageError> {
    let file = super::confined(folder, path).ok_or_else(|| PageError::Missing(path.to_owned()))?;
    if !file.metadata().is_ok_and(|metadata| metadata.is_file()) {
        return Err(PageError::Missing(path.to_owned()));
    }
    let mut bytes = Vec::new();
    file.take(super::MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| PageError::Missing(path.to_owned()))?;
    if bytes.len() as u64 > super::MAX_FILE {
        return Err(PageError::TooBig);
    }
    Ok(bytes)
}

fn text(folder: &Path, path: &str) -> Result<String, PageError> {
    String::from_utf8(bytes(folder, path)?).map_err(|_| PageError::NotText(path.to_owned()))
}

/// One start tag as written: its lowercase name, its attributes (each value's span in
/// `text` and its value), and its length.
struct Tag<'a> {
    name: String,
    text: &'a str,
    length: usize,
    attributes: Vec<(String, std::ops::Range<usize>, String)>,
}

impl<'a> Tag<'a> {
    /// The start tag at the beginning of `html` (`<name …>`), if it is one.
    fn read(html: &'a str) -> Option<Self> {
        let bytes = html.as_bytes();
        let name_end = bytes[1..]
            .iter()
            .position(|byte| !byte.is_ascii_alphanumeric())
            .map_or(bytes.len(), |at| at + 1);
        if name_end == 1 {
            return None;
        }
        let name = html[1..name_end].to_ascii_lowercase();
        let mut attributes = Vec::new();
        let mut at = name_end;
        loop {
            while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
                at += 1;
            }
            match bytes.get(at) {
                None => return None,
                Some(b'>') => break,
                Some(_) => {}
            }
            let start = at;
            while at < bytes.len()
                && !matches!(bytes[at], b'=' | b'>' | b'/')
                && !bytes[at].is_ascii_whitespace()
            {
                at += 1;
            }
            let key = html[start..at].to_ascii_lowercase();
            if bytes.get(at) != Some(&b'=') {
                attributes.push((key, start..at, String::new()));
                continue;
            }
            at += 1;
            let (value, end) = if let Some(&quote @ (b'"' | b'\'')) = bytes.get(at) {
                let close = html[at + 1..].find(char::from(quote))? + at + 1;
                (html[at + 1..close].to_owned(), close + 1)
            } else {
                let end = html[at..]
                    .find(|c: char| c.is_ascii_whitespace() || c == '>')
                    .map_or(html.len(), |end| end + at);
                (html[at..end].to_owned(), end)
            };
            attributes.push((key, start..end, value));
            at = end;
        }
        Some(Self {
            name,
            text: &html[..=at],
            length: at + 1,
            attributes,
        })
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(name, ..)| name == key)
            .map(|(.., value)| value.as_str())
    }

    /// The attribute `key` when it names a file of the folder (no scheme, no `//`, not
    /// absolute): its span and the path (query and fragment dropped).
    fn local(&self, key: &str) -> Option<(std::ops::Range<usize>, String)> {
        let (_, span, value) = self.attributes.iter().find(|(name, ..)| name == key)?;
        let value = value.trim();
        let path = value.split(['?', '#']).next().unwrap_or_default();
        let remote = path.is_empty()
            || path.starts_with('/')
            || path
                .split_once(':')
                .is_some_and(|(scheme, _)| !scheme.contains('/'));
        (!remote).then(|| (span.clone(), path.to_owned()))
    }

    /// The tag as written without the attribute at `span`.
    fn without(&self, span: std::ops::Range<usize>) -> String {
        format!("{}{}", &self.text[..span.start], &self.text[span.end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        for (path, bytes) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
            std::fs::write(path, bytes).expect("file");
        }
        dir
    }

    #[test]
    fn scripts_styles_and_images_of_the_folder_are_inlined_and_origins_left() {
        let dir = folder(&[
            (
                "index.html",
                b"<!DOCTYPE html><HTML><head><LINK rel='stylesheet' href=css/app.css>\
                  <script type=\"module\" src=\"app.js?v=2\"></script>\
                  <script src=\"https://cdn.example.com/lib.js\"></script></head>\
                  <body><img alt=\"x\" src=\"pic.png\"><img src=\"data:image/gif;base64,AA\"></body></HTML>",
            ),
            ("css/app.css", b"body { color: red } </STYLE><script>bad()</script>"),
            ("app.js", b"console.log('</script><b>')"),
            ("pic.png", &[0x89, b'P', b'N', b'G', 13, 10, 26, 10]),
        ]);
        let page = inlined(dir.path(), "index.html").expect("inlined");
        assert!(
            page.contains("<style>body { color: red } <\\/STYLE><script>bad()</script></style>"),
            "{page}"
        );
        assert!(
            page.contains("<script type=\"module\" >console.log('<\\/script><b>')</script>"),
            "{page}"
        );
        assert!(
            page.contains("<script src=\"https://cdn.example.com/lib.js\"></script>"),
            "{page}"
        );
        assert!(
            page.contains("<img alt=\"x\" src=\"data:image/png;base64,iVBORw0KGgo=\">"),
            "{page}"
        );
        assert!(
            page.contains("<img src=\"data:image/gif;base64,AA\">"),
            "{page}"
        );
        assert!(
            !page.contains("app.js") && !page.contains("pic.png"),
            "{page}"
        );
    }

    proptest::proptest! {
        /// Any text as a page, tags and references included, is made or refused, never a
        /// panic; what has no reference comes out as it went in.
        #[test]
        fn any_page_is_made_or_refused_never_a_panic(
            html in "([<>'\"=/ a-zA-Z.é]|<script|<img|<link|src=|href=|rel=stylesheet|</script>){0,40}"
        ) {
            let dir = folder(&[("index.html", html.as_bytes()), ("a.js", b"a()")]);
            if let Ok(page) = inlined(dir.path(), "index.html")
                && !html.contains("src")
                && !html.contains("href")
            {
                proptest::prop_assert_eq!(page, html);
            }
        }
    }

    #[test]
    fn a_reference_out_of_the_folder_through_a_link_or_to_nothing_fails() {
        let outside = folder(&[("secret.js", b"secret()")]);
        for (reference, said) in [
            ("../secret.js", "../secret.js"),
            ("missing.js", "missing.js"),
            ("linked.js", "linked.js"),
        ] {
            let html = format!("<script src=\"{reference}\"></script>");
            let dir = folder(&[("index.html", html.as_bytes())]);
            std::os::unix::fs::symlink(
                outside.path().join("secret.js"),
                dir.path().join("linked.js"),
            )
            .expect("link");
            let error = inlined(dir.path(), "index.html").expect_err(reference);
            assert_eq!(error, PageError::Missing(said.to_owned()));
        }
        let dir = folder(&[("index.html", b"<script src=\"a.js\">")]);
        std::fs::write(dir.path().join("a.js"), "a()").expect("a.js");
        assert!(matches!(
            inlined(dir.path(), "index.html"),
            Err(PageError::Unclosed(..))
        ));
    }
}
