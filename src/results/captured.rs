//! Stdout as a command left it: the output pipeline's input. The backend fills it
//! (`backend::capture`, with bounded memory); `results` reads it.

/// Stdout as captured: all of it, or its head and tail when it was too long.
#[derive(Debug, Default)]
pub struct Captured {
    pub head: Vec<u8>,
    /// Empty unless the output was cut short.
    pub tail: Vec<u8>,
    /// Bytes the command wrote.
    pub total: u64,
    /// The whole output, when it was cut short and kept.
    pub kept: Option<std::path::PathBuf>,
    /// The command was stopped for writing more than the most we read from anyone.
    pub stopped_early: bool,
}

impl Captured {
    pub fn complete(bytes: Vec<u8>) -> Self {
        Self {
            total: bytes.len() as u64,
            head: bytes,
            ..Self::default()
        }
    }

    pub fn is_truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// Leaves out `head_end` more bytes at the head's end and `tail_start` at the tail's start,
    /// with what was cut (what a cut may have split of a secret: the backend asks the
    /// redactor, `Redactor::begun_at_end` and `ended_at_start`).
    pub fn hold_back(&mut self, head_end: usize, tail_start: usize) {
        if !self.is_truncated() {
            return;
        }
        self.head.truncate(self.head.len().saturating_sub(head_end));
        self.tail.drain(..tail_start.min(self.tail.len()));
    }
}
