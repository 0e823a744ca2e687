//! The last door: every message the server sends, over stdio (each JSON-RPC line) and over
//! HTTP (each JSON body and each SSE event), is read for the served manifest's secrets before
//! it leaves. The call pipeline and each reply builder redact what they make; this catches
//! whatever a door missed (a prompt's file that holds a secret, a value a client sent back),
//! so a new kind of message cannot leak by forgetting to. A message that holds none is sent
//! as it is (one automaton pass); one that does is parsed and its strings redacted, so the
//! JSON stays valid, and redacted as bytes only when it is not JSON.

use serde_json::Value;

use crate::secret::Redactor;

/// One JSON-RPC message (a line, with or without its newline, or a whole JSON body).
pub(crate) fn message(bytes: Vec<u8>, redactor: &Redactor) -> Vec<u8> {
    if redactor.is_empty() || !redactor.finds(&bytes) {
        return bytes;
    }
    tracing::debug!("a message held a secret when it left; redacted at the transport");
    let newline = bytes.ends_with(b"\n");
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut value) => {
            redactor.redact_json(&mut value);
            let mut out = serde_json::to_vec(&value).unwrap_or_default();
            if newline {
                out.push(b'\n');
            }
            out
        }
        Err(_) => redactor.redact_bytes(bytes),
    }
}

/// The most a secret may span ([`Redactor::reach`]) for a message in pieces to be read
/// piecewise: past it (a secret of some 19 KB), [`pieces_hold_secret`] says yes, so the
/// message is joined and read whole, as any other.
const MAX_REACH: usize = 4 << 20;

/// Whether a message in pieces can be read piecewise for `redactor`'s secrets (else it
/// must be joined and read whole).
pub(crate) fn readable_in_pieces(redactor: &Redactor) -> bool {
    redactor.reach() <= MAX_REACH
}

/// Whether a message sent as `pieces`, one after another, holds any secret, as [`message`]
/// would find it in the whole. The text is read in overlapping windows: each reads on
/// [`Redactor::reach`] bytes past where the previous one ended, so a secret cut between
/// pieces, or spanning many small ones, is found, and each byte is read at most twice.
/// For messages too big to be joined (the `tools/list` of a very big manifest).
pub(crate) fn pieces_hold_secret<'a>(
    pieces: impl IntoIterator<Item = &'a [u8]>,
    redactor: &Redactor,
) -> bool {
    if redactor.is_empty() {
        return false;
    }
    if !readable_in_pieces(redactor) {
        return true;
    }
    let reach = redactor.reach();
    let stride = reach.max(64 << 10);
    // What is still to be read, after the `reach` bytes already read that begin it.
    let mut window: Vec<u8> = Vec::new();
    let mut unread = false;
    for piece in pieces {
        window.extend_from_slice(piece);
        unread |= !piece.is_empty();
        if window.len() >= reach + stride {
            if redactor.finds(&window) {
                return true;
            }
            window.drain(..window.len() - reach);
            unread = false;
        }
    }
    unread && redactor.finds(&window)
}

/// A piece of an SSE stream: each `data:` line's JSON as [`message`], the rest as bytes.
pub(crate) fn event_stream(bytes: Vec<u8>, redactor: &Redactor) -> Vec<u8> {
    if redactor.is_empty() || !redactor.finds(&bytes) {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|byte| *byte == b'\n') {
        match line.strip_prefix(b"data:") {
            Some(data) => {
                let leading = data.iter().take_while(|byte| **byte == b' ').count();
                out.extend_from_slice(b"data:");
                out.extend_from_slice(&data[..leading]);
                out.extend(message(data[leading..].to_vec(), redactor));
            }
            None => out.extend(redactor.redact_bytes(line.to_vec())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(&["s3cr3t-value".into()])
    }

    #[test]
    fn a_message_without_a_secret_is_sent_byte_for_byte() {
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"a" : 1}}"#.to_vec();
        assert_eq!(message(line.clone(), &redactor()), line);
    }

    #[test]
    fn a_secret_anywhere_in_a_message_is_redacted_and_the_json_stays_valid() {
        let line =
            b"{\"id\":1,\"result\":{\"text\":\"x s3cr3t-value y\",\"s3cr3t-value\":2}}\n".to_vec();
        let out = message(line, &redactor());
        assert!(out.ends_with(b"\n"));
        let value: Value = serde_json::from_slice(&out).expect("valid JSON");
        assert_eq!(value["result"]["text"], "x [redacted] y");
        assert_eq!(value["result"]["[redacted]"], 2);
        let escaped = br#"{"text":"s3cr3t\u002dvalue"}"#.to_vec();
        let out = message(escaped, &redactor());
        assert!(!String::from_utf8_lossy(&out).contains("s3cr3t"), "{out:?}");
    }

    #[test]
    fn a_secret_cut_across_pieces_is_found_as_in_the_whole() {
        let redactor = redactor();
        let whole = br#"{"result":{"tools":[{"d":"a s3cr3t\u002dvalue b"}]}}"#;
        assert!(redactor.finds(whole), "the control: the whole holds it");
        // Cut at every place, in two and in one-byte pieces.
        for cut in 0..=whole.len() {
            let (a, b) = whole.split_at(cut);
            assert!(pieces_hold_secret([a, b], &redactor), "cut at {cut}");
        }
        assert!(pieces_hold_secret(whole.chunks(1), &redactor));
        assert!(pieces_hold_secret(whole.chunks(7), &redactor));
        let clean = br#"{"result":{"tools":[{"d":"a s3cr3t b value"}]}}"#;
        assert!(!pieces_hold_secret(clean.chunks(3), &redactor));
        assert!(!pieces_hold_secret(whole.chunks(5), &Redactor::default()));
        // Far apart in a long text, across many pieces.
        let mut long = vec![b' '; 300_000];
        long.extend_from_slice(b"s3cr3t-value");
        long.extend(vec![b' '; 300_000]);
        for size in [1_000, 65_536, 100_003] {
            assert!(pieces_hold_secret(long.chunks(size), &redactor), "{size}");
        }
        let clean = vec![b' '; 600_000];
        assert!(!pieces_hold_secret(clean.chunks(1_000), &redactor));
    }

    #[test]
    fn each_event_of_a_stream_is_redacted() {
        let stream = b"id: 1\nevent: message\ndata: {\"text\":\"s3cr3t-value\"}\n\n".to_vec();
        let out = String::from_utf8(event_stream(stream, &redactor())).expect("utf-8");
        assert_eq!(
            out,
            "id: 1\nevent: message\ndata: {\"text\":\"[redacted]\"}\n\n"
        );
    }
}
