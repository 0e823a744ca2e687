//! A full `tools/list` answer over HTTP, sent from the pieces it is kept in
//! ([`crate::mcp::pieces`]) instead of rmcp's types.
//!
//! rmcp's path would make each tool a value, serialize the answer whole and copy it into
//! the body: four times the answer's size for a server of 19,000 tools. Instead, a request
//! outside a session carries a [`Spliced`] slot; the handler leaves the kept answer there
//! and returns the same answer with no tool, which rmcp validates, frames and sends as
//! usual; here, that response (a JSON body, or an SSE event's `data:` line) is sent as a
//! [`Framed`] message: rmcp's framing, the request's id, and the pieces in place of the
//! empty answer. Requests in a session are left to rmcp, whose session may keep the event
//! to replay it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Bytes;
use serde_json::Value;

use crate::mcp::pieces::{Framed, Part, Pieces};
use crate::registry::Registry;

pub(crate) use crate::mcp::pieces::Spliced;

/// How a response's message is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// The whole body is the message.
    Json,
    /// The message is an SSE event's `data:` line.
    Event,
}

/// The response in `bytes`, framed by `framing`, as a [`Framed`] message whose result is
/// `pieces`, through the door of `serving` (the registry served now). `None` when `bytes` is not the answer with no
/// tool the handler returned (another message of the stream, an error). rmcp's own
/// additions to a result (a 2026 answer's `resultType`) are in the pieces already.
pub(super) fn splice(
    bytes: &[u8],
    framing: Framing,
    pieces: &Arc<Pieces>,
    serving: &Registry,
) -> Option<Framed> {
    let (start, end) = match framing {
        Framing::Json => (0, bytes.len()),
        Framing::Event => {
            let line = data_line(bytes)?;
            let end = bytes[line..]
                .iter()
                .position(|byte| *byte == b'\n')
                .map_or(bytes.len(), |at| line + at);
            (line, end)
        }
    };
    let message: Value = serde_json::from_slice(&bytes[start..end]).ok()?;
    let tools = message.get("result").and_then(|result| result.get("tools"));
    if message.get("jsonrpc") != Some(&Value::from("2.0"))
        || tools
            .and_then(Value::as_array)
            .is_none_or(|tools| !tools.is_empty())
    {
        return None;
    }
    let id = serde_json::to_vec(message.get("id")?).ok()?;
    let whole = match framing {
        Framing::Json => crate::mcp::outgoing::message,
        Framing::Event => crate::mcp::outgoing::event_stream,
    };
    Some(Framed::response(
        [&bytes[..start], &id, &bytes[end..]],
        Arc::clone(pieces),
        serving,
        whole,
    ))
}

/// Where the `data:` line of an SSE event begins its value.
fn data_line(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        if let Some(data) = bytes[at..].strip_prefix(b"data:") {
            let space = usize::from(data.first() == Some(&b' '));
            return Some(at + 5 + space);
        }
        at += bytes[at..].iter().position(|byte| *byte == b'\n')? + 1;
    }
}

/// A [`Framed`] message as body frames of about [`FRAME`] bytes: small pieces (most
/// tools' entries) copied together, big ones shared, never copied.
#[derive(Debug)]
pub(super) struct Frames {
    framed: Framed,
    /// The next part: 0 the head, then each piece, then the tail.
    next: usize,
    /// A big piece, to send after the small ones gathered before it.
    big: Option<Bytes>,
    left: usize,
}

/// How many bytes of small pieces a frame gathers; a piece this big is sent alone.
const FRAME: usize = 64 << 10;

impl Frames {
    pub(super) fn new(framed: Framed) -> Self {
        let left = framed.len();
        Self {
            framed,
            next: 0,
            big: None,
            left,
        }
    }

    /// Part `part` as a frame of its own, not copied.
    fn owned(&mut self, part: usize) -> Bytes {
        match self.framed.take_part(part) {
            Some(Part::Shared(pieces, index)) => Bytes::from_owner(Piece(pieces, index)),
            Some(Part::Own(bytes)) => Bytes::from(bytes),
            None => Bytes::new(),
        }
    }

    /// The next frame: the big piece held back, else the parts from `self.next` gathered
    /// up to [`FRAME`] bytes, or up to a big one (held back) or one alone.
    fn gather(&mut self) -> Option<Bytes> {
        if let Some(big) = self.big.take() {
            return Some(big);
        }
        let mut gathered = Vec::new();
        while let Some(bytes) = self.framed.part(self.next) {
            let part = self.next;
            self.next += 1;
            if bytes.len() >= FRAME {
                let big = self.owned(part);
                if gathered.is_empty() {
                    return Some(big);
                }
                self.big = Some(big);
                break;
            }
            if gathered.is_empty() {
                gathered.reserve_exact(FRAME);
            }
            gathered.extend_from_slice(bytes);
            if gathered.len() >= FRAME {
                break;
            }
        }
        (!gathered.is_empty()).then(|| Bytes::from(gathered))
    }
}

impl Iterator for Frames {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let bytes = self.gather()?;
        self.left -= bytes.len();
        Some(bytes)
    }
}

/// One piece of a kept answer, for [`Bytes::from_owner`].
struct Piece(Arc<Pieces>, usize);

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        self.0.piece(self.1).unwrap_or_default()
    }
}

/// A JSON body sent from [`Frames`], its length known.
pub(super) struct Body(pub(super) Frames);

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        Poll::Ready(
            self.get_mut()
                .0
                .next()
                .map(|bytes| Ok(http_body::Frame::data(bytes))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.0.left == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.0.left as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ServerIdentity;
    use rmcp::model::ListToolsResult;

    /// A registry with no tool, holding `secrets`.
    fn registry(secrets: &[&str]) -> Arc<Registry> {
        let secrets = secrets.iter().map(|secret| (*secret).to_owned()).collect();
        Arc::new(Registry::new(ServerIdentity::default(), Vec::new()).with_launch_secrets(secrets))
    }

    /// Pieces read for `registry` when made.
    fn pieces_of(entries: &[&[u8]], registry: &Arc<Registry>) -> Arc<Pieces> {
        let entries = entries
            .iter()
            .map(|entry| Some(Arc::from(*entry)))
            .collect();
        let empty = ListToolsResult::with_all_items(Vec::new());
        let entries = crate::mcp::pieces::Entries::new(entries);
        let head = br#"{"tools":["#.to_vec();
        Arc::new(Pieces::new(head, entries, Arc::clone(registry), empty))
    }

    fn sent(framed: Framed) -> String {
        let bytes: Vec<u8> = Frames::new(framed)
            .flat_map(|bytes| bytes.to_vec())
            .collect();
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn the_empty_answer_becomes_the_kept_one_in_rmcps_framing() {
        let none = registry(&[]);
        let pieces = || pieces_of(&[br#"{"name":"a"}"#, br#"{"name":"b"}"#], &none);
        let body = br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#;
        let framed = splice(body, Framing::Json, &pieces(), &none).expect("spliced");
        let length = framed.len();
        let body = sent(framed);
        assert_eq!(
            body,
            r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"},{"name":"b"}]}}"#
        );
        assert_eq!(body.len(), length);
        let event = b"id: 3\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[]}}\n\n";
        let framed = splice(event, Framing::Event, &pieces(), &none).expect("spliced");
        assert_eq!(
            sent(framed),
            "id: 3\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}\n\n"
        );
    }

    #[test]
    fn any_other_message_is_left_alone() {
        let none = registry(&[]);
        let pieces = || pieces_of(&[br#"{"name":"a"}"#], &none);
        for other in [
            &br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"}]}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"tools":[]}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            b"data:\n\n",
            b": keep-alive\n\n",
            b"not json",
        ] {
            let text = String::from_utf8_lossy(other);
            assert!(
                splice(other, Framing::Json, &pieces(), &none).is_none(),
                "{text}"
            );
            let event = [b"data: ", other, b"\n\n"].concat();
            assert!(
                splice(&event, Framing::Event, &pieces(), &none).is_none(),
                "{text}"
            );
        }
    }

    #[test]
    fn an_id_holding_a_secret_is_redacted_with_the_answer_whole() {
        let secret = registry(&["s3cr3t-value"]);
        let pieces = || pieces_of(&[br#"{"name":"a"}"#, br#"{"name":"b"}"#], &secret);
        let event =
            b"data: {\"jsonrpc\":\"2.0\",\"id\":\"s3cr3t-value\",\"result\":{\"tools\":[]}}\n\n";
        let framed = splice(event, Framing::Event, &pieces(), &secret).expect("spliced");
        assert!(framed.is_whole(), "joined to be read whole");
        assert_eq!(
            sent(framed),
            "data: {\"jsonrpc\":\"2.0\",\"id\":\"[redacted]\",\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}\n\n"
        );
    }

    #[test]
    fn small_pieces_are_gathered_and_a_big_one_sent_as_it_is_kept() {
        let mut big = vec![b'x'; FRAME + 1];
        (big[0], big[FRAME]) = (b'"', b'"');
        let mut entries: Vec<Option<Arc<[u8]>>> =
            (0..3_000).map(|_| Some(Arc::from(&b"{}"[..]))).collect();
        entries.insert(1_000, Some(Arc::from(&big[..])));
        let none = registry(&[]);
        let pieces = Arc::new(Pieces::new(
            br#"{"tools":["#.to_vec(),
            crate::mcp::pieces::Entries::new(entries),
            Arc::clone(&none),
            ListToolsResult::with_all_items(Vec::new()),
        ));
        let framed = Framed::response([b"", b"1", b""], pieces, &none, |bytes, _| bytes);
        let length = framed.len();
        let sent: Vec<Bytes> = Frames::new(framed).collect();
        assert_eq!(sent.iter().map(Bytes::len).sum::<usize>(), length);
        // Before the big piece, after it, and the big piece alone.
        assert_eq!(
            sent.len(),
            3,
            "{:?}",
            sent.iter().map(Bytes::len).collect::<Vec<_>>()
        );
        assert_eq!(sent[1].len(), FRAME + 1);
        let joined: Vec<u8> = sent.concat();
        let message: serde_json::Value = serde_json::from_slice(&joined).expect("JSON");
        assert_eq!(
            message["result"]["tools"].as_array().map(Vec::len),
            Some(3_001)
        );
    }

    /// Pieces made before a reload are read whole for the secrets of the registry served
    /// when they are sent: one in the middle of the answer is redacted. The control: the same
    /// pieces sent for the registry they were read for go out in pieces, as they are.
    #[test]
    fn pieces_made_for_another_registry_are_read_whole_for_this_ones_secrets() {
        let before = registry(&[]);
        let after = registry(&["LEAKME-7f3a9c2b1d"]);
        // Farther from either end than a secret can span.
        let mut entries: Vec<&[u8]> = vec![br#"{"name":"a"}"#; 2_000];
        entries[1_000] = br#"{"name":"b","description":"LEAKME-7f3a9c2b1d"}"#;
        let body = br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#;
        let framed =
            splice(body, Framing::Json, &pieces_of(&entries, &before), &after).expect("spliced");
        assert!(framed.is_whole(), "joined to be read whole");
        let text = sent(framed);
        assert!(
            !text.contains("LEAKME") && text.contains("[redacted]"),
            "{text}"
        );
        let framed =
            splice(body, Framing::Json, &pieces_of(&entries, &before), &before).expect("spliced");
        assert!(!framed.is_whole());
        assert!(sent(framed).contains("LEAKME-7f3a9c2b1d"));
    }
}
