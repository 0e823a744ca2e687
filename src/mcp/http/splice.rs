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

use crate::mcp::pieces::{Framed, Pieces};
use crate::secret::Redactor;

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
/// `pieces`, through the door of `redactor`. `None` when `bytes` is not the answer with no
/// tool the handler returned (another message of the stream, an error). rmcp's own
/// additions to a result (a 2026 answer's `resultType`) are in the pieces already.
pub(super) fn splice(
    bytes: &[u8],
    framing: Framing,
    pieces: &Arc<Pieces>,
    redactor: &Redactor,
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
        redactor,
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

/// A [`Framed`] message as body frames, its pieces shared, never copied.
#[derive(Debug)]
pub(super) struct Frames {
    framed: Framed,
    /// The next part: 0 the head, then each piece, then the tail.
    next: usize,
    left: usize,
}

impl Frames {
    pub(super) fn new(framed: Framed) -> Self {
        let left = framed.len();
        Self {
            framed,
            next: 0,
            left,
        }
    }
}

impl Iterator for Frames {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let pieces = self
            .framed
            .pieces
            .as_ref()
            .map_or(0, |pieces| pieces.count());
        let bytes = loop {
            let part = self.next;
            self.next += 1;
            let bytes = match part {
                0 => Bytes::from(std::mem::take(&mut self.framed.head)),
                part if part <= pieces => {
                    let pieces = self.framed.pieces.as_ref()?;
                    Bytes::from_owner(Piece(Arc::clone(pieces), part - 1))
                }
                part if part == pieces + 1 => Bytes::from(std::mem::take(&mut self.framed.tail)),
                _ => return None,
            };
            if !bytes.is_empty() {
                break bytes;
            }
        };
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
    use rmcp::model::ListToolsResult;

    fn pieces() -> Arc<Pieces> {
        let entries = vec![br#"{"name":"a"}"#.to_vec(), br#",{"name":"b"}"#.to_vec()];
        let empty = ListToolsResult::with_all_items(Vec::new());
        Arc::new(Pieces::new(
            br#"{"tools":["#.to_vec(),
            Arc::new(entries),
            empty,
        ))
    }

    fn sent(framed: Framed) -> String {
        let bytes: Vec<u8> = Frames::new(framed)
            .flat_map(|bytes| bytes.to_vec())
            .collect();
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn the_empty_answer_becomes_the_kept_one_in_rmcps_framing() {
        let none = Redactor::default();
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
        let none = Redactor::default();
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
        let redactor = Redactor::new(&["s3cr3t-value".into()]);
        let event =
            b"data: {\"jsonrpc\":\"2.0\",\"id\":\"s3cr3t-value\",\"result\":{\"tools\":[]}}\n\n";
        let framed = splice(event, Framing::Event, &pieces(), &redactor).expect("spliced");
        assert!(framed.pieces.is_none(), "joined to be read whole");
        assert_eq!(
            sent(framed),
            "data: {\"jsonrpc\":\"2.0\",\"id\":\"[redacted]\",\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}\n\n"
        );
    }
}
