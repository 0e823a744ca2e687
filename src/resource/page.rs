//! A page made of several files (an MCP App's folder, `[tools.app] page = "folder"`), made
//! one document as hosts need it, once, when the manifest is loaded: each
//! `<script src>`, `<link rel="stylesheet" href>` and `<img src>` that names a file of the
//! folder is replaced by that file, inline (`data:` for an image). The HTML is read by
//! `lol_html` (Cloudflare's streaming rewriter, which tokenizes as browsers do, so a tag in
//! a comment, a script's text or a `<textarea>` is no tag), within a memory bound.
//!
//! A reference is resolved against the entry page's folder as a browser would (`./`, `..`,
//! percent-encoding), and must stay inside the page's folder, name no hidden file and be
//! relative: a path from the root (`/assets/x.js`) names nothing a host serves, so it is an
//! error, not a page that breaks later. A reference with a scheme (`https:`, `data:`) or a
//! host (`//cdn…`) is left as written, for the page's CSP to admit. Every file is opened
//! beneath the folder with no symbolic link followed ([`super::confined`]). Inlined code
//! cannot end its element (`</script`, `<!--`, `</style` broken), and the document is at
//! most [`super::MAX_FILE`] bytes.

use std::cell::RefCell;
use std::path::Path;

use base64::Engine as _;
use lol_html::html_content::{ContentType, Element};
use lol_html::{HtmlRewriter, MemorySettings, Settings, element};

/// The most memory the rewriter may use for one page (its buffers, not the output).
const REWRITER_MEMORY: usize = 32 << 20;

/// The largest entry page: the rewriter holds a matched tag's attributes outside its bound,
/// about 130 bytes a word, so a page of one tag with millions of them would cost gigabytes.
const MAX_ENTRY: u64 = 2 << 20;

/// Where HTML elements live; a `<script>` or `<style>` anywhere else (inside `<svg>` or
/// `<math>`) holds markup, not text, so nothing is inlined into one.
const HTML: &str = "http://www.w3.org/1999/xhtml";

/// Why a page could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("`{0}` is not a file beneath the page's folder (or is reached through a link)")]
    Missing(String),
    #[error("`{0}` leaves the page's folder")]
    Leaves(String),
    #[error(
        "`{0}` is a path from the root, which names nothing a host serves; write it relative to the page"
    )]
    Absolute(String),
    #[error("`{0}` names a hidden file")]
    Hidden(String),
    #[error("`{0}` is not UTF-8")]
    NotText(String),
    #[error(
        "the page is larger than {} bytes with its files inline",
        super::MAX_FILE
    )]
    TooBig,
    #[error("the page could not be read as HTML: {0}")]
    Html(String),
    #[error("`{0}` is inside `<svg>` or `<math>`, where nothing is inlined; bundle the page first")]
    Foreign(String),
    #[error("the entry page is larger than {MAX_ENTRY} bytes")]
    EntryTooBig,
}

/// The entry page of `folder` with the files it names inline.
pub fn inlined(folder: &Path, entry: &str) -> Result<String, PageError> {
    let entry = resolve(&[], entry)?.ok_or_else(|| PageError::Missing(entry.to_owned()))?;
    let html = text(folder, &entry.join("/"))?;
    if html.len() as u64 > MAX_ENTRY {
        return Err(PageError::EntryTooBig);
    }
    let base = &entry[..entry.len() - 1];
    let failed: RefCell<Option<PageError>> = RefCell::new(None);
    let fail = |error: PageError| -> Box<dyn std::error::Error + Send + Sync> {
        failed.borrow_mut().get_or_insert(error);
        "the page's files".into()
    };
    // Each file a reference names, counted: past the bound, the next one fails at once.
    let read = std::cell::Cell::new(0_u64);
    let fetch = |path: &str| -> Result<Vec<u8>, PageError> {
        let bytes = bytes(folder, path)?;
        read.set(read.get() + bytes.len() as u64);
        if read.get() > super::MAX_FILE {
            return Err(PageError::TooBig);
        }
        Ok(bytes)
    };
    let mut out: Vec<u8> = Vec::with_capacity(html.len());
    let mut over = false;
    let settings = Settings {
        element_content_handlers: vec![
            element!("script[src]", |tag| script(&fetch, base, tag).map_err(fail)),
            element!("link[rel][href]", |tag| stylesheet(&fetch, base, tag)
                .map_err(fail)),
            element!("img[src]", |tag| image(&fetch, base, tag).map_err(fail)),
        ],
        memory_settings: MemorySettings {
            max_allowed_memory_usage: REWRITER_MEMORY,
            ..MemorySettings::default()
        },
        ..Settings::new()
    };
    let mut rewriter = HtmlRewriter::new(settings, |chunk: &[u8]| {
        if out.len() + chunk.len() > usize::try_from(super::MAX_FILE).unwrap_or(usize::MAX) {
            over = true;
        } else if !over {
            out.extend_from_slice(chunk);
        }
    });
    let written = rewriter
        .write(html.as_bytes())
        .and_then(|()| rewriter.end());
    if let Some(error) = failed.into_inner() {
        return Err(error);
    }
    written.map_err(|error| PageError::Html(error.to_string()))?;
    if over {
        return Err(PageError::TooBig);
    }
    String::from_utf8(out).map_err(|_| PageError::NotText(entry.join("/")))
}

/// The file a reference of `tag` names, when it names one of the folder's; `None` for an
/// origin. Only an HTML element's: inside `<svg>` or `<math>` a script's or a style's
/// content is markup, where no escaping holds (and the rewriter may take text there for
/// tags after nested foreign elements, which refusing them also covers).
fn local(
    base: &[String],
    tag: &Element<'_, '_>,
    attribute: &str,
) -> Result<Option<String>, PageError> {
    let Some(written) = tag.get_attribute(attribute) else {
        return Ok(None);
    };
    let Some(path) = resolve(base, &written)? else {
        return Ok(None);
    };
    if tag.namespace_uri() != HTML {
        return Err(PageError::Foreign(written));
    }
    Ok(Some(path.join("/")))
}

/// Reads a file of the folder, counting what the page has taken.
type Fetch<'f> = dyn Fn(&str) -> Result<Vec<u8>, PageError> + 'f;

fn utf8(bytes: Vec<u8>, path: &str) -> Result<String, PageError> {
    String::from_utf8(bytes).map_err(|_| PageError::NotText(path.to_owned()))
}

/// `<script src="file">`: the file's text inside the element, `src` gone. Each `</script`
/// and `<!--` in it becomes `\x3C/script` and `\x3C!--`: the same text in a string, a
/// template or a regular expression, and never the end of the element.
fn script(fetch: &Fetch<'_>, base: &[String], tag: &mut Element<'_, '_>) -> Result<(), PageError> {
    let Some(path) = local(base, tag, "src")? else {
        return Ok(());
    };
    let code = utf8(fetch(&path)?, &path)?;
    tag.remove_attribute("src");
    let code = broken(
        &broken(&code, "</script", "\\x3C/script"),
        "<!--",
        "\\x3C!--",
    );
    tag.set_inner_content(&code, ContentType::Html);
    Ok(())
}

/// `<link rel="stylesheet" href="file">`: a `<style>` with the file's text (and the
/// link's `media`), each `<` in it the CSS escape `\3C `. An alternate stylesheet is left
/// as written: inline, it would apply.
fn stylesheet(
    fetch: &Fetch<'_>,
    base: &[String],
    tag: &mut Element<'_, '_>,
) -> Result<(), PageError> {
    let rel = tag.get_attribute("rel").unwrap_or_default();
    let words: Vec<String> = rel
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if !words.iter().any(|word| word == "stylesheet")
        || words.iter().any(|word| word == "alternate")
    {
        return Ok(());
    }
    let Some(path) = local(base, tag, "href")? else {
        return Ok(());
    };
    let css = utf8(fetch(&path)?, &path)?.replace('<', "\\3C ");
    let media = tag
        .get_attribute("media")
        .map(|media| {
            format!(
                " media=\"{}\"",
                media.replace('&', "&amp;").replace('"', "&quot;")
            )
        })
        .unwrap_or_default();
    tag.replace(&format!("<style{media}>{css}</style>"), ContentType::Html);
    Ok(())
}

/// `<img src="file">`: the same tag, its `src` a `data:` URL of the file.
fn image(fetch: &Fetch<'_>, base: &[String], tag: &mut Element<'_, '_>) -> Result<(), PageError> {
    let Some(path) = local(base, tag, "src")? else {
        return Ok(());
    };
    let bytes = fetch(&path)?;
    let mime = crate::results::mime::from_name(&path)
        .or_else(|| crate::results::mime::sniff(&bytes))
        .unwrap_or("application/octet-stream");
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    tag.set_attribute("src", &format!("data:{mime};base64,{data}"))
        .map_err(|error| PageError::Html(error.to_string()))?;
    Ok(())
}

/// A URL reference resolved against `base` (the entry page's folder, as names beneath the
/// page's folder): `None` when it has a scheme or a host.
fn resolve(base: &[String], written: &str) -> Result<Option<Vec<String>>, PageError> {
    let trimmed = written.trim_matches(|c: char| c.is_ascii_whitespace());
    let path = trimmed.split(['?', '#']).next().unwrap_or_default();
    let scheme = path.split_once(':').is_some_and(|(scheme, _)| {
        scheme
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if path.is_empty() || scheme || path.starts_with("//") || path.starts_with("\\\\") {
        return Ok(None);
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(PageError::Absolute(written.to_owned()));
    }
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| PageError::NotText(written.to_owned()))?;
    let mut parts: Vec<String> = base.to_vec();
    // Browsers read `\` as `/` in such a URL.
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts
                    .pop()
                    .ok_or_else(|| PageError::Leaves(written.to_owned()))?;
            }
            name if name.starts_with('.') => return Err(PageError::Hidden(written.to_owned())),
            name if name.contains('\0') => return Err(PageError::Missing(written.to_owned())),
            name => parts.push(name.to_owned()),
        }
    }
    if parts.is_empty() || decoded.ends_with('/') {
        return Err(PageError::Missing(written.to_owned()));
    }
    Ok(Some(parts))
}

/// `text` with each `closing` (any case) replaced by `with`.
fn broken(text: &str, closing: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest
        .as_bytes()
        .windows(closing.len())
        .position(|window| window.eq_ignore_ascii_case(closing.as_bytes()))
    {
        out.push_str(&rest[..at]);
        out.push_str(with);
        rest = &rest[at + closing.len()..];
    }
    out.push_str(rest);
    out
}

fn bytes(folder: &Path, path: &str) -> Result<Vec<u8>, PageError> {
    let file = super::confined(folder, path).ok_or_else(|| PageError::Missing(path.to_owned()))?;
    super::bounded(file, super::MAX_FILE).map_err(|unread| match unread {
        super::Unread::TooBig => PageError::TooBig,
        super::Unread::NotAFile | super::Unread::Io(_) => PageError::Missing(path.to_owned()),
    })
}

fn text(folder: &Path, path: &str) -> Result<String, PageError> {
    String::from_utf8(bytes(folder, path)?).map_err(|_| PageError::NotText(path.to_owned()))
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
                b"<!DOCTYPE html><HTML><head><LINK rel='stylesheet' media=print href=css/app.css>\
                  <link rel=\"alternate stylesheet\" href=\"dark.css\">\
                  <script type=\"module\" src=\"./app.js?v=2\"></script>\
                  <script src=\"https://cdn.example.com/lib.js\"></script></head>\
                  <body><!-- <script src=\"gone.js\"></script> -->\
                  <textarea><script src=\"gone.js\"></script></textarea>\
                  <script-loader src=\"app.js\"></script-loader>\
                  <img alt=\"x\" src = \"pic.png\"><img src=\"data:image/gif;base64,AA\"></body></HTML>",
            ),
            ("css/app.css", b"body { color: red } </STYLE><script>bad()</script>"),
            ("app.js", b"console.log('</script><b>', '<!--')"),
            ("pic.png", &[0x89, b'P', b'N', b'G', 13, 10, 26, 10]),
        ]);
        let page = inlined(dir.path(), "index.html").expect("inlined");
        assert!(page.contains("<style media=\"print\">body { color: red } \\3C /STYLE>\\3C script>bad()\\3C /script></style>"), "{page}");
        assert!(
            page.contains("<link rel=\"alternate stylesheet\" href=\"dark.css\">"),
            "{page}"
        );
        assert!(
            page.contains(
                "<script type=\"module\">console.log('\\x3C/script><b>', '\\x3C!--')</script>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<script src=\"https://cdn.example.com/lib.js\"></script>"),
            "{page}"
        );
        // Not tags: a comment, a textarea's text, another element's name.
        assert!(
            page.contains("<!-- <script src=\"gone.js\"></script> -->"),
            "{page}"
        );
        assert!(
            page.contains("<textarea><script src=\"gone.js\"></script></textarea>"),
            "{page}"
        );
        assert!(
            page.contains("<script-loader src=\"app.js\"></script-loader>"),
            "{page}"
        );
        assert!(
            page.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""),
            "{page}"
        );
        assert!(
            page.contains("<img src=\"data:image/gif;base64,AA\">"),
            "{page}"
        );
    }

    #[test]
    fn references_resolve_from_the_entry_page_and_stay_in_the_folder() {
        let dir = folder(&[
            (
                "app/index.html",
                b"<script src=\"../shared/a.js\"></script><script src=\"b%20c.js\"></script>",
            ),
            ("shared/a.js", b"a()"),
            ("app/b c.js", b"bc()"),
        ]);
        let page = inlined(dir.path(), "app/index.html").expect("inlined");
        assert_eq!(page, "<script>a()</script><script>bc()</script>");
    }

    #[test]
    fn a_reference_out_of_the_folder_from_the_root_hidden_through_a_link_or_to_nothing_fails() {
        let outside = folder(&[("secret.js", b"secret()")]);
        for (reference, expected) in [
            ("../secret.js", PageError::Leaves("../secret.js".into())),
            (
                "a/../../secret.js",
                PageError::Leaves("a/../../secret.js".into()),
            ),
            (
                "%2e%2e/secret.js",
                PageError::Leaves("%2e%2e/secret.js".into()),
            ),
            ("..\\secret.js", PageError::Leaves("..\\secret.js".into())),
            (
                "/assets/app.js",
                PageError::Absolute("/assets/app.js".into()),
            ),
            (".env", PageError::Hidden(".env".into())),
            ("missing.js", PageError::Missing("missing.js".into())),
            ("linked.js", PageError::Missing("linked.js".into())),
        ] {
            let html = format!("<script src=\"{reference}\"></script>");
            let dir = folder(&[("index.html", html.as_bytes()), (".env", b"TOKEN=x")]);
            std::os::unix::fs::symlink(
                outside.path().join("secret.js"),
                dir.path().join("linked.js"),
            )
            .expect("link");
            assert_eq!(
                inlined(dir.path(), "index.html"),
                Err(expected),
                "{reference}"
            );
        }
    }

    #[test]
    fn nothing_is_inlined_into_svg_or_math_where_a_script_holds_markup() {
        for html in [
            "<svg><script src=\"a.js\"></script></svg>",
            "<math><script src=\"a.js\"></script></math>",
            "<svg><link rel=stylesheet href=\"a.js\"></svg>",
            // Where the rewriter stays in SVG after nested foreign elements and a browser
            // does not, the "tag" it finds is a browser's text: refused too.
            "<svg><svg><p><textarea><script src=\"a.js\"></script></textarea>",
            "<svg><math><p><style>/*<script src=\"a.js\"></script>*/</style>",
        ] {
            let dir = folder(&[
                ("index.html", html.as_bytes()),
                ("a.js", b"x='<img src=x onerror=alert(1)>'"),
            ]);
            assert_eq!(
                inlined(dir.path(), "index.html"),
                Err(PageError::Foreign("a.js".into())),
                "{html}"
            );
        }
        // The control: out of `<svg>` again, and in `<foreignObject>`, HTML is inlined.
        let dir = folder(&[
            (
                "index.html",
                b"<svg></svg><script src=\"a.js\"></script><svg><foreignObject><script src=\"a.js\"></script></foreignObject></svg>",
            ),
            ("a.js", b"a()"),
        ]);
        let page = inlined(dir.path(), "index.html").expect("inlined");
        assert_eq!(page.matches("<script>a()</script>").count(), 2, "{page}");
    }

    #[test]
    fn an_entry_page_past_its_bound_is_refused() {
        let big = vec![b'x'; 3 << 20];
        let dir = folder(&[("index.html", &big)]);
        assert_eq!(
            inlined(dir.path(), "index.html"),
            Err(PageError::EntryTooBig)
        );
    }

    #[test]
    fn a_page_that_grows_past_the_bound_is_refused() {
        let big = vec![b'x'; 9 << 20];
        let dir = folder(&[
            (
                "index.html",
                b"<script src=\"a.js\"></script><script src=\"a.js\"></script>",
            ),
            ("a.js", &big),
        ]);
        assert_eq!(inlined(dir.path(), "index.html"), Err(PageError::TooBig));
    }

    proptest::proptest! {
        /// Any text as a page, tags and references included, is made or refused, never a
        /// panic; what has no reference comes out as it went in.
        #[test]
        fn any_page_is_made_or_refused_never_a_panic(
            html in "([<>'\"=/ a-zA-Z.é!-]|<script|<img|<link|src=|href=|rel=stylesheet|</script>|<!--|-->){0,40}"
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
}
