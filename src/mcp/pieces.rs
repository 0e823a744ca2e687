//! A kept `tools/list` answer in pieces, and a message made of one as it leaves.
//!
//! [`Pieces`] is the `result` of a full `tools/list` answer, serialized once per snapshot
//! and revision ([`super::listing`]) in pieces cut between tools, never joined: a big
//! answer (hundreds of MB for Microsoft Graph, inlined) is held once, and read by the door
//! ([`super::outgoing`]) once, when made. A [`Framed`] message is a request's own head (its
//! id), the pieces and a tail; both transports send one without joining it, stdio as a
//! line, HTTP as a body or an SSE event ([`super::http`]). Only the seams, what the
//! request adds and as much of the answer beside it as a secret could span, are read per
//! request; a message whose seams hold a secret is joined and read whole, as any other.

use std::sync::{Arc, OnceLock};

use rmcp::model::ListToolsResult;

use crate::secret::Redactor;

/// A serialized answer kept in pieces: its head (`{"tools":[`, or a 2026 answer's members
/// first), its tools' entries in pieces cut between tools, each about
/// [`super::listing::PIECE`] bytes, and `]}`. The entries are shared by the answers of every
/// revision that lists each tool the same.
#[derive(Debug)]
pub(crate) struct Pieces {
    head: Vec<u8>,
    tools: Arc<Entries>,
    /// The same answer with no tool: what a handler returns to rmcp for a transport that
    /// puts the pieces in its place.
    empty: ListToolsResult,
}

/// The tools' entries of an answer, a comma between each two, in pieces.
pub(crate) type Entries = Vec<Vec<u8>>;

/// What ends every answer: its `tools` array, and the result.
const TAIL: &[u8] = b"]}";

impl Pieces {
    pub(super) fn new(head: Vec<u8>, tools: Arc<Entries>, empty: ListToolsResult) -> Self {
        Self { head, tools, empty }
    }

    /// The pieces, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        std::iter::once(&self.head[..])
            .chain(self.tools.iter().map(Vec::as_slice))
            .chain(std::iter::once(TAIL))
    }

    /// How many pieces there are.
    pub(crate) fn count(&self) -> usize {
        self.tools.len() + 2
    }

    /// The piece at `index`.
    pub(crate) fn piece(&self, index: usize) -> Option<&[u8]> {
        match index {
            0 => Some(&self.head),
            index if index <= self.tools.len() => self.tools.get(index - 1).map(Vec::as_slice),
            index if index == self.tools.len() + 1 => Some(TAIL),
            _ => None,
        }
    }

    /// The answer's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.iter().map(<[u8]>::len).sum()
    }

    /// The tools' entries.
    pub(super) fn tools(&self) -> &Arc<Entries> {
        &self.tools
    }

    /// The answer with no tool.
    pub(super) fn empty(&self) -> &ListToolsResult {
        &self.empty
    }

    /// The first `bytes` of the answer (fewer if it is shorter).
    pub(crate) fn start(&self, bytes: usize) -> Vec<u8> {
        let mut start = Vec::new();
        for piece in self.iter() {
            let take = piece.len().min(bytes - start.len());
            start.extend_from_slice(&piece[..take]);
            if start.len() == bytes {
                break;
            }
        }
        start
    }

    /// The last `bytes` of the answer (fewer if it is shorter).
    pub(crate) fn end(&self, bytes: usize) -> Vec<u8> {
        let pieces: Vec<&[u8]> = self.iter().collect();
        let mut taken = Vec::new();
        let mut left = bytes;
        for piece in pieces.into_iter().rev() {
            let take = piece.len().min(left);
            taken.push(&piece[piece.len() - take..]);
            left -= take;
            if left == 0 {
                break;
            }
        }
        taken.into_iter().rev().flatten().copied().collect()
    }
}

/// Reads entries already written, to tell whether others are the same bytes.
pub(super) struct Reading<'a> {
    entries: &'a Entries,
    piece: usize,
    at: usize,
}

impl<'a> Reading<'a> {
    pub(super) fn new(entries: &'a Entries) -> Self {
        Self {
            entries,
            piece: 0,
            at: 0,
        }
    }

    /// Whether `bytes` come next; past them if so.
    pub(super) fn next_is(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            let Some(piece) = self.entries.get(self.piece) else {
                return false;
            };
            let here = &piece[self.at..];
            let take = here.len().min(bytes.len());
            if here[..take] != bytes[..take] {
                return false;
            }
            bytes = &bytes[take..];
            self.at += take;
            if self.at == piece.len() {
                self.piece += 1;
                self.at = 0;
            }
        }
        true
    }

    /// Whether everything has been read.
    pub(super) fn ended(&self) -> bool {
        self.entries[self.piece..]
            .iter()
            .enumerate()
            .all(|(index, piece)| piece.len() == if index == 0 { self.at } else { 0 })
    }
}

/// A JSON-RPC response whose `result` is a kept answer: `head` (the envelope up to the
/// result, with the request's id), the pieces, `tail`. Or a message made whole.
#[derive(Debug)]
pub(crate) struct Framed {
    pub(crate) head: Vec<u8>,
    pub(crate) pieces: Option<Arc<Pieces>>,
    pub(crate) tail: Vec<u8>,
}

impl Framed {
    /// A message made whole.
    pub(crate) fn whole(bytes: Vec<u8>) -> Self {
        Self {
            head: bytes,
            pieces: None,
            tail: Vec::new(),
        }
    }

    /// The response to the request with `id` (its JSON) whose result is `pieces`, between
    /// `before` and `after` (an SSE event's framing, a line's newline), as the door lets it
    /// leave: in pieces, or, when a seam holds a secret of `redactor`, joined and passed
    /// through `whole` (the door for a whole message of this transport).
    pub(crate) fn response(
        [before, id, after]: [&[u8]; 3],
        pieces: Arc<Pieces>,
        redactor: &Redactor,
        whole: impl FnOnce(Vec<u8>, &Redactor) -> Vec<u8>,
    ) -> Self {
        let mut head = Vec::with_capacity(before.len() + id.len() + 32);
        head.extend_from_slice(before);
        head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        head.extend_from_slice(id);
        head.extend_from_slice(br#","result":"#);
        let mut tail = Vec::with_capacity(after.len() + 1);
        tail.push(b'}');
        tail.extend_from_slice(after);
        // The answer was read by the door when it was made; what this request adds is read
        // here, with as much of the answer on either side as a secret could span.
        let reach = redactor.reach();
        let seams = !super::outgoing::readable_in_pieces(redactor)
            || super::outgoing::pieces_hold_secret([&head[..], &pieces.start(reach)], redactor)
            || super::outgoing::pieces_hold_secret([&pieces.end(reach)[..], &tail], redactor);
        let framed = Self {
            head,
            pieces: Some(pieces),
            tail,
        };
        if seams {
            Self::whole(whole(framed.joined(), redactor))
        } else {
            framed
        }
    }

    /// Its parts, in order.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &[u8]> {
        let pieces = self.pieces.iter().flat_map(|pieces| pieces.iter());
        std::iter::once(&self.head[..])
            .chain(pieces)
            .chain(std::iter::once(&self.tail[..]))
    }

    /// Its size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.head.len() + self.pieces.as_ref().map_or(0, |pieces| pieces.len()) + self.tail.len()
    }

    /// The message as one buffer.
    fn joined(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.len());
        self.parts().for_each(|part| bytes.extend_from_slice(part));
        bytes
    }
}

/// Where a handler leaves a kept answer for the transport to put in place of the empty one
/// it returns (an extension of an HTTP request; [`super::http`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Spliced(Arc<OnceLock<Arc<Pieces>>>);

impl Spliced {
    /// Leaves `pieces` for the transport.
    pub(super) fn leave(&self, pieces: Arc<Pieces>) {
        let _ = self.0.set(pieces);
    }

    /// The pieces left, if any, taken once.
    pub(crate) fn left(&self) -> Option<Arc<Pieces>> {
        self.0.get().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_tells_the_same_bytes_however_they_are_cut() {
        let made: Entries = vec![b"{\"a\"".to_vec(), b":1},{".to_vec(), b"\"b\":2}".to_vec()];
        let same = |entries: &[&[u8]]| {
            let mut reading = Reading::new(&made);
            entries.iter().all(|entry| reading.next_is(entry)) && reading.ended()
        };
        assert!(same(&[b"{\"a\":1}", b",{\"b\":2}"]));
        assert!(same(&[b"{\"a\":1},{\"b\":2}"]));
        assert!(same(&[b"{", b"\"a\":1},{\"b", b"", b"\":2}"]));
        // One byte apart, one entry short, one too many.
        assert!(!same(&[b"{\"a\":1}", b",{\"b\":3}"]));
        assert!(!same(&[b"{\"a\":1}"]));
        assert!(!same(&[b"{\"a\":1}", b",{\"b\":2}", b",{}"]));
        let none: Entries = Vec::new();
        assert!(Reading::new(&none).ended());
        assert!(!Reading::new(&none).next_is(b"{}"));
    }
}
