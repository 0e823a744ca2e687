//! Secrets by reference: `${env:NAME}` and `${file:PATH}` in a manifest, resolved once at
//! start-up, and a redactor that keeps their values out of every result and message.

use std::path::Path;
use std::sync::Arc;

mod decoded;
mod result;

/// Why a secret reference could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the environment variable `{name}` is not set")]
    MissingVariable { name: String },
    #[error("could not read the secret file `{path}`: {reason}")]
    UnreadableFile { path: String, reason: String },
    #[error(
        "`${{{reference}}}` is not a secret reference; write `${{env:NAME}}` or `${{file:PATH}}`"
    )]
    Unknown { reference: String },
    #[error("a `${{` is never closed")]
    Unclosed,
}

/// The secrets one manifest string referenced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Used {
    /// Their values (empty ones left out: there is nothing to redact), and the other forms
    /// a base URL's value takes in a request ([`base_url_forms`]).
    pub values: Vec<String>,
    /// The environment variables they came from.
    pub variables: Vec<String>,
    /// The files they came from, as written.
    pub files: Vec<String>,
}

impl Used {
    pub fn extend(&mut self, other: Self) {
        self.values.extend(other.values);
        self.variables.extend(other.variables);
        self.files.extend(other.files);
    }
}

/// Replaces every `${env:NAME}` / `${file:PATH}` in `text` with the secret's value, escaped
/// for the template syntax (`{` → `{{`). Returns the text and what it used.
pub fn resolve(text: &str, base_dir: &Path) -> Result<(String, Used), SecretError> {
    resolve_encoded(text, base_dir, ToOwned::to_owned)
}

/// Like [`resolve`], with each value passed through `encode` first (a secret in a URL path
/// is percent-encoded, so a `/` in it cannot add a segment).
pub fn resolve_encoded(
    text: &str,
    base_dir: &Path,
    encode: impl Fn(&str) -> String,
) -> Result<(String, Used), SecretError> {
    resolve_checked(text, base_dir, encode, None)
}

/// What an unset secret stands for while a manifest is checked without its secrets: long
/// enough for every rule on a secret's length (`hmac-secret` needs 32 bytes), and plain
/// text that every sink carries.
pub const STAND_IN: &str = "mcp-serve-check-stand-in-for-an-unset-secret";

/// Like [`resolve_encoded`]; with `unset`, a variable that is not set or a file that cannot
/// be read is not an error: it is recorded there and read as [`STAND_IN`] (`mcp-serve check`
/// checks a manifest without the secrets that only serving needs).
pub fn resolve_checked(
    text: &str,
    base_dir: &Path,
    encode: impl Fn(&str) -> String,
    mut unset: Option<&mut Vec<SecretError>>,
) -> Result<(String, Used), SecretError> {
    let mut out = String::with_capacity(text.len());
    let mut used = Used::default();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(SecretError::Unclosed)?;
        let reference = &after[..end];
        let value = match reference.split_once(':') {
            Some(("env", name)) => {
                used.variables.push(name.to_owned());
                std::env::var(name).map_err(|_| SecretError::MissingVariable {
                    name: name.to_owned(),
                })
            }
            Some(("file", path)) => {
                used.files.push(path.to_owned());
                std::fs::read_to_string(base_dir.join(path))
                    .map(|text| text.trim_end_matches(['\n', '\r']).to_owned())
                    .map_err(|error| SecretError::UnreadableFile {
                        path: path.to_owned(),
                        reason: error.to_string(),
                    })
            }
            _ => {
                return Err(SecretError::Unknown {
                    reference: reference.to_owned(),
                });
            }
        };
        let value = match (value, unset.as_deref_mut()) {
            (Ok(value), _) => Some(value),
            (Err(error), Some(unset)) => {
                unset.push(error);
                None
            }
            (Err(error), None) => return Err(error),
        };
        match value {
            Some(value) => {
                out.push_str(&encode(&value).replace('{', "{{").replace('}', "}}"));
                if !value.is_empty() {
                    used.values.push(value);
                }
            }
            None => out.push_str(STAND_IN),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, used))
}

/// Replaces known secret values with `[redacted]`, in every form a value takes on its way
/// into a request and back out of a response: as written, percent-encoded (path segments,
/// upper- and lower-case hex), form-encoded (query strings and form bodies, where a space
/// is `+`: WHATWG's set, and Python's `quote_plus` and Go's `QueryEscape`, which keep `~`),
/// escaped inside a JSON string, a number whose text holds it (in structured content), in
/// base64 (standard and URL-safe, wherever it starts in a 3-byte group; secrets of 6 bytes
/// or more), and with any of its characters
/// written as `\uXXXX`, `\/` or `%XX` (found in a decoded view, [`decoded`], and redacted in
/// the original). Blobs are redacted before they are base64-encoded. Its `Debug` shows how
/// many forms it knows, never one.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every form of every secret, longest first.
    forms: Arc<[String]>,
    /// The same forms in one automaton that finds the leftmost, longest one: a text is read
    /// once however many secrets the manifest has, and a secret that contains another is
    /// replaced whole. `None` when there are none, or when it could not be built (a huge
    /// `${file:}` secret): then each form is searched in turn, longest first.
    matcher: Option<aho_corasick::AhoCorasick>,
    /// Some form could be the text of a JSON number (digits, `.`, `e`, signs): only then is
    /// a number in structured content read as text.
    numeric: bool,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Redactor({} forms)", self.forms.len())
    }
}

/// What a redacted secret reads as.
pub const REDACTED: &str = "[redacted]";

impl Redactor {
    pub fn new(secrets: &[String]) -> Self {
        Self::from_forms(
            secrets
                .iter()
                .filter(|secret| !secret.is_empty())
                .flat_map(|secret| forms_of(secret))
                .collect(),
        )
    }

    /// One redactor for every secret `redactors` know and `secrets` (the manifest-wide one:
    /// each HTTP tool's secrets and the server's).
    pub fn combined<'a>(
        redactors: impl IntoIterator<Item = &'a Redactor>,
        secrets: &[String],
    ) -> Self {
        let mut forms: Vec<String> = redactors
            .into_iter()
            .flat_map(|redactor| redactor.forms.iter().cloned())
            .collect();
        forms.extend(Self::new(secrets).forms.iter().cloned());
        Self::from_forms(forms)
    }

    fn from_forms(mut forms: Vec<String>) -> Self {
        forms.retain(|form| !form.is_empty());
        // Longest first, so a secret that contains another is replaced whole.
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        let matcher = (!forms.is_empty())
            .then(|| {
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(forms.iter())
                    .ok()
            })
            .flatten();
        let numeric = forms.iter().any(|form| {
            form.bytes()
                .all(|byte| byte.is_ascii_digit() || b".eE+-".contains(&byte))
        });
        Self {
            forms: forms.into(),
            matcher,
            numeric,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// The same, knowing only the forms of at least `bytes` bytes: for the doors every
    /// message and log line passes (`mcp::outgoing`, `logging`), where a short secret (`dev`,
    /// `2.0`) would garble what the protocol itself says, not only what a tool returned.
    #[must_use]
    pub fn without_forms_shorter_than(&self, bytes: usize) -> Self {
        Self::from_forms(
            self.forms
                .iter()
                .filter(|form| form.len() >= bytes)
                .cloned()
                .collect(),
        )
    }

    /// The most bytes one form of a secret can take in a text, each of its characters written
    /// with as many layers of escapes as [`Self::finds`] reads (`%252541` is `A` three
    /// times over, `\u005Cu0041` twice): a text cut in pieces is read whole by reading each
    /// piece and, at each cut, this many bytes on either side ([`crate::mcp`]'s door).
    pub fn reach(&self) -> usize {
        // `forms` is sorted longest first.
        self.forms
            .first()
            .map_or(0, |form| form.len().saturating_mul(216).saturating_add(16))
    }

    /// Whether `bytes` hold any form of any secret, also with its characters escaped.
    pub fn finds(&self, bytes: &[u8]) -> bool {
        match &self.matcher {
            Some(matcher) => {
                matcher.is_match(bytes)
                    || (decoded::has_escapes(bytes)
                        && matcher.is_match(&decoded::decode_layers(bytes).bytes))
            }
            None => self.forms.iter().any(|form| {
                let form = form.as_bytes();
                bytes.windows(form.len()).any(|window| window == form)
            }),
        }
    }

    pub fn redact(&self, text: &str) -> String {
        if let Some(matcher) = &self.matcher {
            let out = if matcher.is_match(text) {
                let mut out = String::with_capacity(text.len());
                matcher.replace_all_with(text, &mut out, |_, _, out| {
                    out.push_str(REDACTED);
                    true
                });
                out
            } else {
                text.to_owned()
            };
            if !decoded::has_escapes(out.as_bytes()) {
                return out;
            }
            let bytes = self.redact_escaped(out.into_bytes());
            return String::from_utf8(bytes)
                .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        }
        let mut text = text.to_owned();
        for form in self.forms.iter() {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        text
    }

    /// Redacts raw bytes (a response body about to become a blob).
    pub fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        if let Some(matcher) = &self.matcher {
            let out = if matcher.is_match(&bytes) {
                let mut out = Vec::with_capacity(bytes.len());
                matcher.replace_all_with_bytes(&bytes, &mut out, |_, _, out| {
                    out.extend_from_slice(REDACTED.as_bytes());
                    true
                });
                out
            } else {
                bytes
            };
            return self.redact_escaped(out);
        }
        let mut bytes = bytes;
        for form in self.forms.iter() {
            let form = form.as_bytes();
            if !bytes.windows(form.len()).any(|window| window == form) {
                continue;
            }
            let mut out = Vec::with_capacity(bytes.len());
            let mut index = 0;
            while index < bytes.len() {
                if bytes[index..].starts_with(form) {
                    out.extend_from_slice(REDACTED.as_bytes());
                    index += form.len();
                } else {
                    out.push(bytes[index]);
                    index += 1;
                }
            }
            bytes = out;
        }
        bytes
    }

    /// Redacts a secret written with escapes of any of its characters (`\u002B`, `\/`,
    /// `%2b`): found in the decoded view, the original bytes it came from are replaced.
    fn redact_escaped(&self, bytes: Vec<u8>) -> Vec<u8> {
        let Some(matcher) = &self.matcher else {
            return bytes;
        };
        if !decoded::has_escapes(&bytes) {
            return bytes;
        }
        let view = decoded::decode_layers(&bytes);
        let ranges: Vec<(usize, usize)> = matcher
            .find_iter(&view.bytes)
            .map(|found| view.original(found.start(), found.end()))
            .collect();
        if ranges.is_empty() {
            return bytes;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut at = 0;
        for (start, end) in ranges {
            if start < at {
                continue;
            }
            out.extend_from_slice(&bytes[at..start]);
            out.extend_from_slice(REDACTED.as_bytes());
            at = end;
        }
        out.extend_from_slice(&bytes[at..]);
        out
    }

    /// How many bytes at the end of `bytes` could begin a secret (a proper prefix of one of
    /// its forms): what a cut right after them may have split.
    pub fn begun_at_end(&self, bytes: &[u8]) -> usize {
        self.forms.iter().fold(0, |longest, form| {
            let form = form.as_bytes();
            (longest + 1..form.len().min(bytes.len() + 1))
                .rev()
                .find(|length| bytes.ends_with(&form[..*length]))
                .unwrap_or(longest)
        })
    }

    /// How many bytes at the start of `bytes` could end a secret (a proper suffix of one of
    /// its forms): what a cut right before them may have split.
    pub fn ended_at_start(&self, bytes: &[u8]) -> usize {
        self.forms.iter().fold(0, |longest, form| {
            let form = form.as_bytes();
            (longest + 1..form.len().min(bytes.len() + 1))
                .rev()
                .find(|length| bytes.starts_with(&form[form.len() - length..]))
                .unwrap_or(longest)
        })
    }

    /// Redacts every string inside a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(text) => *text = self.redact(text),
            // A secret of digits arrives as a number (and a float's text, `9.87e14`, reads
            // as its digits): it becomes the redacted text.
            serde_json::Value::Number(number)
                if self.numeric && self.finds(number.to_string().as_bytes()) =>
            {
                *value = serde_json::Value::String(REDACTED.to_owned());
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    self.redact_json(item);
                }
            }
            serde_json::Value::Object(object) => {
                let entries = std::mem::take(object);
                for (key, mut item) in entries {
                    self.redact_json(&mut item);
                    object.insert(self.redact(&key), item);
                }
            }
            _ => {}
        }
    }
}

/// The shortest secret path: a base URL's path shorter than this (`/v1`, `/api/v2`) is no
/// secret, and redacting it alone would garble every answer that names it.
const MIN_SECRET_PATH: usize = 8;

/// The secrets a base URL (`url = "${env:HOOK}/items/{id}"`) holds besides its value as
/// written: the forms a request carries it in. The URL parser rewrites what it was given
/// (the host lower-cased, `127.1` as `127.0.0.1`, the scheme's default port dropped, tabs and
/// newlines dropped, `\` as `/`, characters outside the path's set percent-encoded), and an
/// upstream sees only the path (which it may echo as sent or decoded). So: the base without
/// its trailing `/` (as it is joined), as the parser writes it (and with lower-case hex),
/// and its path alone, as written, as parsed and percent-decoded, with and without its
/// leading `/`, when it is at least `MIN_SECRET_PATH` bytes.
pub fn base_url_forms(base: &str) -> Vec<String> {
    use percent_encoding::percent_decode_str;
    let trimmed = base.trim_end_matches('/');
    let mut forms = vec![trimmed.to_owned()];
    let mut paths = Vec::new();
    if let Some((_, rest)) = trimmed.split_once("://")
        && let Some(at) = rest.find('/')
    {
        paths.push(rest[at..].to_owned());
    }
    if let Ok(url) = reqwest::Url::parse(trimmed) {
        let parsed = url.as_str();
        forms.push(parsed.to_owned());
        forms.push(parsed.trim_end_matches('/').to_owned());
        forms.push(lower_hex(parsed));
        paths.push(url.path().to_owned());
        paths.push(lower_hex(url.path()));
        paths.push(
            percent_decode_str(url.path())
                .decode_utf8_lossy()
                .into_owned(),
        );
    }
    for path in paths {
        let path = path.trim_end_matches('/');
        let segments = path.trim_start_matches('/');
        if segments.len() >= MIN_SECRET_PATH {
            forms.push(path.to_owned());
            forms.push(segments.to_owned());
        }
    }
    forms.retain(|form| form != base);
    forms.sort();
    forms.dedup();
    forms
}

/// The forms a secret can take between the manifest and a result: ours, and those the
/// usual encoders of an upstream produce (JavaScript's `encodeURIComponent`, Python's
/// `quote`, Go's `PathEscape`; JSON from Go, which escapes `&`, `<`, `>`, and from Python,
/// which escapes every non-ASCII character).
fn forms_of(secret: &str) -> Vec<String> {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    let percent = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
    let segment = crate::template::encode_segment(secret);
    let component = utf8_percent_encode(secret, COMPONENT).to_string();
    let python = utf8_percent_encode(secret, PYTHON_QUOTE).to_string();
    let go_path = utf8_percent_encode(secret, GO_PATH).to_string();
    let form: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
    let query_escape = utf8_percent_encode(secret, QUERY_ESCAPE)
        .to_string()
        .replace("%20", "+");
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json
        .strip_prefix('"')
        .and_then(|json| json.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned();
    let html_safe = json
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");
    let mut forms = vec![
        secret.to_owned(),
        lower_hex(&percent),
        lower_hex(&segment),
        lower_hex(&form),
        lower_hex(&query_escape),
        query_escape,
        json.replace('/', "\\/"),
        ascii_json(&json),
        ascii_json(&html_safe),
        html_safe,
        percent,
        segment,
        component,
        python,
        go_path,
        form,
        json,
    ];
    forms.extend(base64_forms(secret.as_bytes()));
    let hex = hex_of(secret.as_bytes());
    forms.push(hex.to_ascii_uppercase());
    forms.push(hex);
    forms.retain(|form| !form.is_empty());
    forms
}

/// `bytes` in lower-case hex.
fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut hex, byte| {
        let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{byte:02x}"));
        hex
    })
}

/// The shortest secret whose base64 is looked for: its runs are then at least 6 characters,
/// which random text rarely holds by chance. A shorter one is no token worth the name.
const MIN_BASE64_SECRET: usize = 6;

/// The secret in base64 (as `kubectl get secret -o json`, HTTP basic auth and JWTs carry
/// it), standard and URL-safe: for each of the three places it can start in a 3-byte group,
/// the run of characters that depends on its bytes alone (what comes before and after it
/// changes only the characters at its ends, which are left out).
fn base64_forms(secret: &[u8]) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    if secret.len() < MIN_BASE64_SECRET {
        return Vec::new();
    }
    let mut forms = Vec::new();
    for offset in 0..3_usize {
        let mut padded = vec![0_u8; offset];
        padded.extend_from_slice(secret);
        let first = (8 * offset).div_ceil(6);
        let last = 8 * (offset + secret.len()) / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&padded);
            if let Some(run) = encoded.get(first..last) {
                forms.push(run.to_owned());
            }
        }
    }
    forms
}

/// What `encodeURIComponent` leaves alone: letters, digits and `-_.!~*'()`.
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// What Python's `urllib.parse.quote` leaves alone: letters, digits, `_.-~` and `/`.
const PYTHON_QUOTE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// Python's `quote_plus` and Go's `url.QueryEscape`: all but the unreserved characters
/// percent-encoded, then a space as `+` (the WHATWG form set also encodes `~`).
const QUERY_ESCAPE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// What Go's `url.PathEscape` leaves alone: letters, digits, `-_.~` and `$&+,:;=@`.
const GO_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b',')
    .remove(b':')
    .remove(b';')
    .remove(b'=')
    .remove(b'@');

/// JSON text with every non-ASCII character as `\uXXXX` (surrogate pairs past U+FFFF).
fn ascii_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// `%2F` → `%2f`: servers echo either.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut chars = encoded.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            for hex in chars.by_ref().take(2) {
                out.push(hex.to_ascii_lowercase());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{REDACTED, Redactor, SecretError, base_url_forms, base64_forms, resolve};

    #[test]
    fn a_base_url_is_known_as_the_parser_writes_it_and_by_its_path_alone() {
        let forms = base_url_forms("http://LOCALHOST:80/hooks/T0K\\\u{e9}N\t%41/");
        for expected in [
            "http://LOCALHOST:80/hooks/T0K\\\u{e9}N\t%41",
            "http://localhost/hooks/T0K/%C3%A9N%41",
            "http://localhost/hooks/T0K/%c3%a9N%41",
            "/hooks/T0K/%C3%A9N%41",
            "hooks/T0K/%c3%a9N%41",
            "/hooks/T0K/\u{e9}NA",
            "hooks/T0K\\\u{e9}N\t%41",
        ] {
            assert!(
                forms.iter().any(|form| form == expected),
                "{expected:?} not in {forms:?}"
            );
        }
        // A short path is no secret: only whole URLs are known.
        let forms = base_url_forms("https://API.example.com/v1/");
        assert_eq!(
            forms,
            ["https://API.example.com/v1", "https://api.example.com/v1"]
        );
        let redactor = Redactor::new(
            &std::iter::once("http://127.1:80/0123456789".to_owned())
                .chain(base_url_forms("http://127.1:80/0123456789"))
                .collect::<Vec<_>>(),
        );
        assert_eq!(
            redactor.redact("GET http://127.0.0.1/0123456789/items/1 and /0123456789/x"),
            "GET [redacted]/items/1 and [redacted]/x"
        );
    }

    #[test]
    fn a_secret_of_digits_is_redacted_where_it_arrives_as_a_number() {
        let redactor = Redactor::new(&["987654321012345".into()]);
        let mut value = serde_json::json!({
            "int": 987_654_321_012_345_u64,
            "float": 9.876_543_210_123_45e14,
            "inside": [1_987_654_321_012_345_u64],
            "other": 12_345,
        });
        redactor.redact_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"int": REDACTED, "float": REDACTED, "inside": [REDACTED], "other": 12_345})
        );
    }

    #[test]
    fn a_secret_as_python_quote_plus_and_go_query_escape_write_it_is_redacted() {
        // A space as `+` and `~` kept: the WHATWG form set would write `%7E`.
        let redactor = Redactor::new(&["Ab/Cd+Ef=Gh Ij~Kl:Mn@Op".into()]);
        for form in [
            "Ab%2FCd%2BEf%3DGh+Ij~Kl%3AMn%40Op",
            "Ab%2fCd%2bEf%3dGh+Ij~Kl%3aMn%40Op",
            "Ab%2FCd%2BEf%3DGh+Ij%7EKl%3AMn%40Op",
        ] {
            assert_eq!(
                redactor.redact(&format!("a={form}&b")),
                "a=[redacted]&b",
                "{form}"
            );
        }
    }

    #[test]
    fn combined_redactors_know_every_secret_and_replace_the_longest_first() {
        let one = Redactor::new(&["abc".into()]);
        let two = Redactor::new(&["abcdef".into()]);
        let both = Redactor::combined([&one, &two], &["xyz".into()]);
        assert_eq!(
            both.redact("abcdef abc xyz abcxyz"),
            "[redacted] [redacted] [redacted] [redacted][redacted]"
        );
        assert!(Redactor::combined([&Redactor::default()], &[]).is_empty());
        assert_eq!(
            both.redact_bytes(b"\xffabcdef\xff".to_vec()),
            b"\xff[redacted]\xff"
        );
    }

    #[test]
    fn the_forms_other_encoders_produce_are_redacted_too() {
        let secret = "a&b<c>/d é😀'(x)";
        let redactor = Redactor::new(&[secret.into()]);
        for encoded in [
            r"a\u0026b\u003cc\u003e/d \u00e9\ud83d\ude00'(x)",
            r"a&b<c>/d \u00e9\ud83d\ude00'(x)",
            "a%26b%3Cc%3E%2Fd%20%C3%A9%F0%9F%98%80'(x)",
            "a%26b%3Cc%3E/d%20%C3%A9%F0%9F%98%80%27%28x%29",
            "a&b%3Cc%3E%2Fd%20%C3%A9%F0%9F%98%80%27%28x%29",
        ] {
            assert_eq!(
                redactor.redact(&format!("<{encoded}>")),
                "<[redacted]>",
                "{encoded}"
            );
        }
    }

    #[test]
    fn every_encoding_of_a_secret_is_redacted() {
        let secret = "ab+cd/ef== x\"y";
        let redactor = Redactor::new(&[secret.into()]);
        let encodings = [
            secret.to_owned(),
            "ab%2Bcd%2Fef%3D%3D%20x%22y".to_owned(),
            "ab%2bcd%2fef%3d%3d%20x%22y".to_owned(),
            "ab%2Bcd%2Fef%3D%3D+x%22y".to_owned(),
            "ab+cd\\/ef== x\\\"y".to_owned(),
            "ab+cd/ef== x\\\"y".to_owned(),
        ];
        for encoded in encodings {
            let text = format!("before {encoded} after");
            assert_eq!(
                redactor.redact(&text),
                "before [redacted] after",
                "{encoded}"
            );
        }
        assert_eq!(
            redactor.redact_bytes(format!("\0{secret}\0").into_bytes()),
            b"\0[redacted]\0"
        );
    }

    #[test]
    fn resolves_environment_and_file_references() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("token"), "t{o}k\n").expect("write");
        let (text, used) =
            resolve("Bearer ${file:token} at ${env:HOME}", dir.path()).expect("resolves");
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(text, format!("Bearer t{{{{o}}}}k at {home}"));
        assert_eq!(used.values, vec!["t{o}k".to_owned(), home]);
        assert_eq!(used.variables, vec!["HOME".to_owned()]);
    }

    #[test]
    fn missing_and_unknown_references_are_errors() {
        assert_eq!(
            resolve("${env:MCP_SERVE_SURELY_UNSET}", Path::new(".")),
            Err(SecretError::MissingVariable {
                name: "MCP_SERVE_SURELY_UNSET".into()
            })
        );
        assert_eq!(
            resolve("${vault:x}", Path::new(".")),
            Err(SecretError::Unknown {
                reference: "vault:x".into()
            })
        );
        assert_eq!(
            resolve("${env:X", Path::new(".")),
            Err(SecretError::Unclosed)
        );
    }

    /// Base64 of the secret among other bytes, at each alignment, standard and URL-safe,
    /// padded or not: never shown (what is left is at most the two characters at its ends,
    /// which also hold the bytes around it).
    #[test]
    fn a_secret_in_base64_is_redacted_wherever_it_starts() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let secret = "tok+en/Ab9?zz~\u{e9}";
        let redactor = Redactor::new(&[secret.into()]);
        for before in ["", "u", "us", "user:", "{\"a\":"] {
            for after in ["", "\n", "x", "xy"] {
                let bytes = format!("{before}{secret}{after}");
                for encoded in [STANDARD.encode(&bytes), URL_SAFE_NO_PAD.encode(&bytes)] {
                    let text = format!("{{\"data\": {{\"token\": \"{encoded}\"}}}}");
                    let shown = redactor.redact(&text);
                    assert!(shown.contains(REDACTED), "{before:?}+{after:?}: {shown}");
                    let inner = &encoded[encoded.len() / 2 - 2..encoded.len() / 2 + 2];
                    assert!(!shown.contains(inner), "{before:?}+{after:?}: {shown}");
                }
            }
        }
        assert!(base64_forms(b"short").is_empty(), "too short to look for");
    }

    proptest::proptest! {
        /// Any subset of a secret's characters written as `\uXXXX` (either case of hex), and
        /// any subset percent-encoded, is redacted; text with escapes and no secret is left
        /// byte for byte as it was.
        #[test]
        fn a_secret_with_any_characters_escaped_is_redacted(
            mask in proptest::collection::vec(0_u8..4, 12),
            noise in "[a-z%\\\\u0-9A-F/]{0,24}",
        ) {
            let secret = "Ab+/c\u{e9}d=e f\u{1F600}g";
            let redactor = Redactor::new(&[secret.into()]);
            let mut written = String::new();
            for (index, character) in secret.chars().enumerate() {
                match mask.get(index).copied().unwrap_or(0) {
                    1 => {
                        let mut units = [0_u16; 2];
                        for unit in character.encode_utf16(&mut units) {
                            written.push_str(&format!("\\u{unit:04X}"));
                        }
                    }
                    2 => {
                        let mut units = [0_u16; 2];
                        for unit in character.encode_utf16(&mut units) {
                            written.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    3 => {
                        let mut buffer = [0_u8; 4];
                        for byte in character.encode_utf8(&mut buffer).bytes() {
                            written.push_str(&format!("%{byte:02x}"));
                        }
                    }
                    _ => written.push(character),
                }
            }
            let text = format!("{noise}<{written}>{noise}");
            let shown = redactor.redact(&text);
            proptest::prop_assert!(shown.contains(&format!("<{REDACTED}>")), "{text} -> {shown}");
            proptest::prop_assert_eq!(redactor.redact(&noise), noise.clone());
            let bytes = redactor.redact_bytes(text.clone().into_bytes());
            proptest::prop_assert!(!redactor.finds(&bytes), "{}", String::from_utf8_lossy(&bytes));
        }
    }

    /// Found by an outside attacker: a secret as JSON in JSON (a client's encoded value in
    /// its request), with `\/`, and a secret holding `"` and `\` as Rust's `Debug` of that
    /// writes it in a log line; and the secret in hex.
    #[test]
    fn layers_of_escapes_and_hex_are_redacted() {
        let secret = "RuHqII/R35=yBby3+Zx9\"qW\\e8";
        let redactor = Redactor::new(&[secret.into()]);
        let once = serde_json::to_string(&secret.replace('/', "\\/")).expect("json");
        let twice = serde_json::to_string(&once).expect("json");
        let debug = format!(
            "{:?}",
            format!("{:?}", serde_json::Value::String(secret.into()))
        );
        let hex = super::hex_of(secret.as_bytes()).to_ascii_uppercase();
        for shown in [once, twice, debug, hex.clone(), hex.to_ascii_lowercase()] {
            let redacted = redactor.redact(&format!("<{shown}>"));
            assert!(
                !redacted.contains("Bby3") && !redacted.to_ascii_lowercase().contains("4262627933"),
                "{shown} -> {redacted}"
            );
        }
    }

    #[test]
    fn debug_never_shows_a_secret() {
        let redactor = Redactor::new(&["hunter2-secret".into()]);
        let shown = format!("{redactor:?}");
        assert!(
            !shown.contains("hunter2") && shown.starts_with("Redactor("),
            "{shown}"
        );
    }

    #[test]
    fn what_a_cut_may_have_split_is_found_at_both_sides() {
        let redactor = Redactor::new(&["abcdef".into()]);
        assert_eq!(redactor.begun_at_end(b"xxabc"), 3);
        assert_eq!(
            redactor.begun_at_end(b"xxabcdef"),
            0,
            "a whole secret is no half"
        );
        assert_eq!(redactor.begun_at_end(b"xyz"), 0);
        assert_eq!(redactor.begun_at_end(b"a"), 1);
        assert_eq!(redactor.ended_at_start(b"defyy"), 3);
        assert_eq!(redactor.ended_at_start(b"fyy"), 1);
        assert_eq!(redactor.ended_at_start(b"yy"), 0);
    }

    #[test]
    fn redaction_replaces_every_occurrence() {
        let redactor = Redactor::new(&["abc".into(), "abcdef".into()]);
        assert_eq!(
            redactor.redact("x abcdef y abc"),
            "x [redacted] y [redacted]"
        );
        let mut value = serde_json::json!({"a": ["abc", 1], "b": "no"});
        redactor.redact_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"a": ["[redacted]", 1], "b": "no"})
        );
    }
}
