//! A text as a reader of its escapes sees it: `\uXXXX` (any character, either case of hex,
//! surrogate pairs joined), `\/` and `%XX` decoded, each decoded byte remembering the bytes of
//! the original it came from. An encoder may escape any character it likes (.NET's default
//! JSON encoder writes `+` as `\u002B`), so no list of a secret's forms covers every way it
//! can be written; finding the secret in the decoded view and redacting the original bytes it
//! came from does.

/// The decoded bytes and, for each, the range of the original it came from.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Decoded {
    pub bytes: Vec<u8>,
    pub from: Vec<(usize, usize)>,
}

/// Whether `text` holds an escape [`decode`] would read.
pub(super) fn has_escapes(text: &[u8]) -> bool {
    text.windows(2)
        .any(|pair| pair[0] == b'\\' && matches!(pair[1], b'u' | b'/' | b'\\' | b'"'))
        || text.contains(&b'%')
}

/// How many layers of escapes are read: JSON in JSON (a value a client encoded, then its
/// request), and Rust's `Debug` of that in a log line.
const LAYERS: usize = 3;

/// [`decode`] again and again, until nothing changes or [`LAYERS`] are read; each decoded
/// byte still knows the bytes of the original it came from.
pub(super) fn decode_layers(text: &[u8]) -> Decoded {
    let mut view = decode(text);
    for _ in 1..LAYERS {
        if !has_escapes(&view.bytes) {
            break;
        }
        let next = decode(&view.bytes);
        if next.bytes == view.bytes {
            break;
        }
        let from = next
            .from
            .iter()
            .map(|&(start, end)| (view.from[start].0, view.from[end - 1].1))
            .collect();
        view = Decoded {
            bytes: next.bytes,
            from,
        };
    }
    view
}

fn hex(digits: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// The code unit of a `\uXXXX` at `at`, if there is one.
fn unit(text: &[u8], at: usize) -> Option<u32> {
    if text.get(at..at + 2)? != b"\\u" {
        return None;
    }
    let digits = text.get(at + 2..at + 6)?;
    digits
        .iter()
        .all(u8::is_ascii_hexdigit)
        .then(|| hex(digits))?
}

/// Decodes every escape of `text`; malformed ones (a short `\u12`, a lone surrogate, `%G1`)
/// are kept as they are.
pub(super) fn decode(text: &[u8]) -> Decoded {
    let mut bytes = Vec::with_capacity(text.len());
    let mut from = Vec::with_capacity(text.len());
    let mut at = 0;
    let mut push = |decoded: &[u8], start: usize, end: usize, bytes: &mut Vec<u8>| {
        bytes.extend_from_slice(decoded);
        from.extend(std::iter::repeat_n((start, end), decoded.len()));
    };
    while at < text.len() {
        if let Some(first) = unit(text, at) {
            let (character, end) = match first {
                0xD800..=0xDBFF => match unit(text, at + 6) {
                    Some(second @ 0xDC00..=0xDFFF) => (
                        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)),
                        at + 12,
                    ),
                    _ => (None, at + 6),
                },
                _ => (char::from_u32(first), at + 6),
            };
            if let Some(character) = character {
                let mut buffer = [0_u8; 4];
                push(
                    character.encode_utf8(&mut buffer).as_bytes(),
                    at,
                    end,
                    &mut bytes,
                );
                at = end;
                continue;
            }
        }
        if let Some(escaped @ (b'/' | b'\\' | b'"')) = text
            .get(at..at + 2)
            .filter(|pair| pair[0] == b'\\')
            .map(|pair| pair[1])
        {
            push(&[escaped], at, at + 2, &mut bytes);
            at += 2;
            continue;
        }
        if text[at] == b'%'
            && let Some(digits) = text.get(at + 1..at + 3)
            && digits.iter().all(u8::is_ascii_hexdigit)
            && let Some(value) = hex(digits).and_then(|value| u8::try_from(value).ok())
        {
            push(&[value], at, at + 3, &mut bytes);
            at += 3;
            continue;
        }
        push(&text[at..=at], at, at + 1, &mut bytes);
        at += 1;
    }
    Decoded { bytes, from }
}

impl Decoded {
    /// The original's range of the decoded bytes `start..end`.
    pub(super) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.from[start].0, self.from[end - 1].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode_and_remember_where_they_came_from() {
        let decoded = decode(br"a\u002Bb\/c%2fd\ud83d\ude00e");
        assert_eq!(decoded.bytes, "a+b/c/d\u{1F600}e".as_bytes());
        assert_eq!(decoded.original(1, 2), (1, 7), "\\u002B");
        assert_eq!(decoded.original(3, 4), (8, 10), "\\/");
        assert_eq!(decoded.original(5, 6), (11, 14), "%2f");
        assert_eq!(decoded.original(7, 11), (15, 27), "a surrogate pair");
    }

    #[test]
    fn layers_of_escapes_decode_to_the_original_bytes() {
        // A secret `a/b"c\d`, as JSON in JSON: `a\\/b\\\"c\\\\d`.
        let text = br#"x a\\/b\\\"c\\\\d y"#;
        let view = decode_layers(text);
        assert_eq!(view.bytes, br#"x a/b"c\d y"#);
        assert_eq!(view.original(2, 9), (2, text.len() - 2));
    }

    #[test]
    fn malformed_escapes_are_kept_as_they_are() {
        for text in [
            &br"\u12"[..],
            br"\ud83dx",
            br"%G1",
            br"%",
            br"\u",
            br"\uZZZZ",
            br"%4",
        ] {
            assert_eq!(
                decode(text).bytes,
                text,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(
            decode(br"\ud83d\u0041").bytes,
            br"\ud83dA",
            "a lone high surrogate"
        );
    }
}
