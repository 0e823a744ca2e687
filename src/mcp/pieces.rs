//! A kept `tools/list` answer in pieces, and a message made of one as it leaves.
//!
//! [`Pieces`] is the `result` of a full `tools/list` answer, serialized once per snapshot
//! and revision ([`super::listing`]) a piece per tool's entry, never joined: a big answer
//! (hundreds of MB for Microsoft Graph, inlined) is held once, an entry that revisions list
//! alike once for all of them, and the answer is read by the door ([`super::outgoing`])
//! once, when made. A [`Framed`] message is a request's own head (its
//! id), the pieces and a tail; both transports send one without joining it, stdio as a
//! line, HTTP as a body or an SSE event ([`super::http`]). Only the seams, what the
//! request adds and as much of the answer beside it as a secret could span, are read per
//! request; a message whose seams hold a secret is joined and read whole, as any other.

use std::sync::{Arc, OnceLock};

use rmcp::model::ListToolsResult;

use crate::registry::Registry;
use crate::secret::Redactor;

/// A serialized answer kept in pieces: its head (`{"tools":[`, or a 2026 answer's members
/// first), each tool's entry with a comma between each two, and `]}`. An entry is shared
/// by the answers of every revision that lists its tool alike.
#[derive(Debug)]
pub(crate) struct Pieces {
    head: Vec<u8>,
    tools: Entries,
    /// Whose secrets the door read it for when it was made.
    read_for: Arc<Registry>,
    /// The same answer with no tool: what a handler returns to rmcp for a transport that
    /// puts the pieces in its place.
    empty: ListToolsResult,
}

/// Each tool's entry in an answer, by the tool's place in the registry (`None`: not
/// listed), and the listed ones in order.
#[derive(Debug, Default)]
pub(crate) struct Entries {
    by_tool: Vec<Option<Arc<[u8]>>>,
    listed: Vec<Arc<[u8]>>,
}

impl Entries {
    pub(super) fn new(by_tool: Vec<Option<Arc<[u8]>>>) -> Self {
        let listed = by_tool.iter().flatten().cloned().collect();
        Self { by_tool, listed }
    }

    /// The entry of the tool at `index` in the registry, if it is listed.
    pub(super) fn of(&self, index: usize) -> Option<&Arc<[u8]>> {
        self.by_tool.get(index)?.as_ref()
    }
}

/// What ends every answer: its `tools` array, and the result.
const TAIL: &[u8] = b"]}";

impl Pieces {
    pub(super) fn new(
        head: Vec<u8>,
        tools: Entries,
        read_for: Arc<Registry>,
        empty: ListToolsResult,
    ) -> Self {
        Self {
            head,
            tools,
            read_for,
            empty,
        }
    }

    /// How many pieces there are: the head, the entries and the commas between, the tail.
    pub(crate) fn count(&self) -> usize {
        2 + (2 * self.tools.listed.len()).saturating_sub(1)
    }

    /// The piece at `index` (in `0..count()`).
    pub(crate) fn piece(&self, index: usize) -> Option<&[u8]> {
        let last = self.count() - 1;
        match index {
            0 => Some(&self.head),
            index if index == last => Some(TAIL),
            index if index > last => None,
            index if index % 2 == 0 => Some(b","),
            index => self.tools.listed.get(index / 2).map(|entry| &entry[..]),
        }
    }

    /// The pieces, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.count()).filter_map(|index| self.piece(index))
    }

    /// The answer's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.iter().map(<[u8]>::len).sum()
    }

    /// The tools' entries.
    pub(super) fn tools(&self) -> &Entries {
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
        let mut taken = Vec::new();
        let mut left = bytes;
        for index in (0..self.count()).rev() {
            let piece = self.piece(index).unwrap_or_default();
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

/// A JSON-RPC response whose `result` is a kept answer: `head` (the envelope up to the
/// result, with the request's id), the pieces, `tail`. Or a message made whole.
/// Made only by [`Framed::response`], the door, or whole from bytes a door has read.
#[derive(Debug)]
pub(crate) struct Framed {
    head: Vec<u8>,
    pieces: Option<Arc<Pieces>>,
    tail: Vec<u8>,
}

/// A part of a [`Framed`] message, owned: a piece shared with the kept answer, or bytes of
/// its own.
pub(crate) enum Part {
    Shared(Arc<Pieces>, usize),
    Own(Vec<u8>),
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
    /// `before` and `after` (an SSE event's framing, a line's newline), as the door of
    /// `serving` (the registry served now) lets it leave: in pieces, or, when a seam holds
    /// one of its secrets, joined and passed through `whole` (the door for a whole message
    /// of this transport). Pieces made for another registry (a reload came between) are
    /// read whole for this one's secrets.
    pub(crate) fn response(
        [before, id, after]: [&[u8]; 3],
        pieces: Arc<Pieces>,
        serving: &Registry,
        whole: impl FnOnce(Vec<u8>, &Redactor) -> Vec<u8>,
    ) -> Self {
        let redactor = serving.door_redactor();
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
        let read = std::ptr::eq(Arc::as_ptr(&pieces.read_for), serving);
        let seams = !super::outgoing::readable_in_pieces(redactor)
            || super::outgoing::pieces_hold_secret([&head[..], &pieces.start(reach)], redactor)
            || super::outgoing::pieces_hold_secret([&pieces.end(reach)[..], &tail], redactor);
        let framed = Self {
            head,
            pieces: Some(pieces),
            tail,
        };
        if seams || (!read && super::outgoing::pieces_hold_secret(framed.parts(), redactor)) {
            Self::whole(whole(framed.joined(), redactor))
        } else {
            framed
        }
    }

    /// Whether it is one buffer (no kept answer in it).
    #[cfg(test)]
    pub(crate) fn is_whole(&self) -> bool {
        self.pieces.is_none()
    }

    /// Part `index`: 0 the head, then each piece, then the tail.
    pub(crate) fn part(&self, index: usize) -> Option<&[u8]> {
        let pieces = self.pieces.as_ref();
        let count = pieces.map_or(0, |pieces| pieces.count());
        match index {
            0 => Some(&self.head),
            index if index <= count => pieces?.piece(index - 1),
            index if index == count + 1 => Some(&self.tail),
            _ => None,
        }
    }

    /// Part `index`, owned without a copy: a piece shared, the head or the tail moved out
    /// (read no more after).
    pub(crate) fn take_part(&mut self, index: usize) -> Option<Part> {
        let count = self.pieces.as_ref().map_or(0, |pieces| pieces.count());
        match (index, &self.pieces) {
            (0, _) => Some(Part::Own(std::mem::take(&mut self.head))),
            (index, Some(pieces)) if index <= count => {
                Some(Part::Shared(Arc::clone(pieces), index - 1))
            }
            (index, _) if index == count + 1 => Some(Part::Own(std::mem::take(&mut self.tail))),
            _ => None,
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
#[derive(Debug, Clone)]
pub(crate) struct Spliced {
    left: Arc<OnceLock<Arc<Pieces>>>,
    /// Whether a request of the `initialize` lifecycle may be answered so: not where it is
    /// in a session, which may keep the event to replay it.
    legacy: bool,
}

impl Spliced {
    /// A slot for a request to a server with legacy sessions (`sessions`) or without.
    pub(crate) fn new(sessions: bool) -> Self {
        Self {
            left: Arc::default(),
            legacy: !sessions,
        }
    }

    /// Whether a request of `revision` may be answered from a kept answer.
    pub(super) fn takes(&self, revision: crate::revision::Revision) -> bool {
        self.legacy || revision.is_stateless()
    }

    /// Leaves `pieces` for the transport.
    pub(super) fn leave(&self, pieces: Arc<Pieces>) {
        let _ = self.left.set(pieces);
    }

    /// The pieces left, if any.
    pub(crate) fn left(&self) -> Option<Arc<Pieces>> {
        self.left.get().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(entries: &[&str]) -> Pieces {
        let by_tool = entries
            .iter()
            .map(|entry| (!entry.is_empty()).then(|| Arc::from(entry.as_bytes())))
            .collect();
        let empty = ListToolsResult::with_all_items(Vec::new());
        let registry = Arc::new(Registry::new(
            crate::registry::ServerIdentity::default(),
            Vec::new(),
        ));
        Pieces::new(
            b"{\"tools\":[".to_vec(),
            Entries::new(by_tool),
            registry,
            empty,
        )
    }

    fn joined(pieces: &Pieces) -> String {
        String::from_utf8(pieces.iter().flatten().copied().collect()).expect("UTF-8")
    }

    #[test]
    fn entries_are_joined_by_commas_and_unlisted_tools_left_out() {
        assert_eq!(joined(&pieces(&[])), "{\"tools\":[]}");
        assert_eq!(joined(&pieces(&["1"])), "{\"tools\":[1]}");
        assert_eq!(
            joined(&pieces(&["", "1", "", "2", ""])),
            "{\"tools\":[1,2]}"
        );
        let three = pieces(&["1", "22", "333"]);
        assert_eq!(joined(&three), "{\"tools\":[1,22,333]}");
        assert_eq!(three.len(), joined(&three).len());
        assert_eq!(three.piece(three.count()), None);
        assert_eq!(
            String::from_utf8(three.start(12)).expect("UTF-8"),
            "{\"tools\":[1,"
        );
        assert_eq!(String::from_utf8(three.end(6)).expect("UTF-8"), ",333]}");
        assert_eq!(three.end(100), joined(&three).into_bytes());
    }
}
