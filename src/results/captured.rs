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

    /// A cut (between head and tail) can split a secret, leaving its halves where no redactor
    /// finds them: the head's end that could begin a secret, and the tail's start that could
    /// end one, are left out with what was cut.
    pub fn hold_back_at_the_cut(&mut self, redactor: &crate::secret::Redactor) {
        if !self.is_truncated() || redactor.is_empty() {
            return;
        }
        let begun = redactor.begun_at_end(&self.head);
        self.head.truncate(self.head.len() - begun);
        let ended = redactor.ended_at_start(&self.tail);
        self.tail.drain(..ended);
    }
}
