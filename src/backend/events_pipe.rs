//! The script protocol's channel: a named pipe in the call's directory, named by
//! `MCP_SERVE_EVENTS`, that a command writes JSON lines to (`echo '{…}' > "$MCP_SERVE_EVENTS"`).
//! A named pipe needs no inherited descriptor, so it works from any shell or language.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{Notify, mpsc};

use crate::events::{CallEvent, parse_line};
use crate::secret::Redactor;

/// Where a call's events go: the channel of whoever shows or keeps them (a client's
/// notifications, a task's record, a terminal), behind the manifest's redactor. Each event
/// is redacted as it is sent, so what is queued holds no secret; only the call pipeline
/// makes one (`call::run`), and it has the redactor.
#[derive(Debug, Clone)]
pub struct EventSender {
    channel: mpsc::Sender<CallEvent>,
    redactor: Redactor,
}

impl EventSender {
    pub fn new(channel: mpsc::Sender<CallEvent>, redactor: Redactor) -> Self {
        Self { channel, redactor }
    }

    /// Queues `event`, redacted; whether it was queued. A full channel drops it: a call
    /// never waits for its consumer.
    pub fn try_send(&self, event: CallEvent) -> bool {
        self.channel
            .try_send(event.redacted(&self.redactor))
            .is_ok()
    }
}

/// The variable naming the pipe.
pub const EVENTS_VARIABLE: &str = "MCP_SERVE_EVENTS";

/// The longest event line read; longer ones are dropped.
const MAX_LINE: usize = 64 * 1024;

/// Creates the pipe in `directory` and opens our end. We open it for reading *and* writing,
/// so it never reports end-of-file between the command's writes; reading stops when the
/// command exits.
pub fn create(directory: &Path) -> std::io::Result<(PathBuf, pipe::Receiver)> {
    let path = directory.join("events");
    nix::unistd::mkfifo(
        &path,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .map_err(std::io::Error::from)?;
    let receiver = pipe::OpenOptions::new()
        .read_write(true)
        .open_receiver(&path)?;
    Ok((path, receiver))
}

/// Forwards parsed lines to `sender` until `exited` is notified, then drains what is left.
/// Malformed lines are logged and skipped; when the receiver is full, events are dropped.
pub async fn forward(
    receiver: pipe::Receiver,
    sender: EventSender,
    exited: Arc<Notify>,
    tool_program: String,
) {
    let mut lines = BufReader::new(receiver);
    let mut line = Vec::new();
    let mut done: Option<std::time::Instant> = None;
    let mut skipping = false;
    loop {
        let read = if let Some(exited_at) = done {
            // A survivor that keeps writing cannot hold the call open.
            if exited_at.elapsed() > std::time::Duration::from_secs(1) {
                break;
            }
            // After exit, take only what is already in the pipe.
            match tokio::time::timeout(
                std::time::Duration::from_millis(20),
                read_bounded(&mut lines, &mut line, &mut skipping),
            )
            .await
            {
                Ok(read) => read,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                read = read_bounded(&mut lines, &mut line, &mut skipping) => read,
                () = exited.notified() => {
                    done = Some(std::time::Instant::now());
                    continue;
                }
            }
        };
        match read {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong) => {
                tracing::warn!(program = %tool_program, "ignoring an over-long event line");
                continue;
            }
            Ok(Line::Complete) => {}
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        line.clear();
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match parse_line(text) {
            Ok(event) => {
                if !sender.try_send(event) {
                    tracing::debug!(program = %tool_program, "dropping an event: the client is slower than the tool");
                }
            }
            Err(problem) => {
                tracing::warn!(program = %tool_program, %problem, "ignoring a malformed event line");
            }
        }
    }
}

/// What [`read_bounded`] found.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line (with its newline, unless the pipe ended) is in the buffer.
    Complete,
    /// A line longer than [`MAX_LINE`] was skipped, without keeping more than that in memory.
    TooLong,
    End,
}

/// Reads one line into `line`, holding at most [`MAX_LINE`] bytes of it: the rest of an
/// over-long line is skipped as it arrives, so a newline-free flood costs no memory.
/// Cancel-safe: a partial line stays in `line` (and `skipping` remembers an over-long one).
async fn read_bounded(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    skipping: &mut bool,
) -> std::io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if *skipping {
                *skipping = false;
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Complete
            });
        }
        let newline = available.iter().position(|byte| *byte == b'\n');
        let take = newline.map_or(available.len(), |index| index + 1);
        if !*skipping && line.len() + take > MAX_LINE {
            line.clear();
            *skipping = true;
        }
        if !*skipping {
            line.extend_from_slice(&available[..take]);
        }
        reader.consume(take);
        if newline.is_some() {
            if *skipping {
                *skipping = false;
                line.clear();
                return Ok(Line::TooLong);
            }
            return Ok(Line::Complete);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EventSender, Line, MAX_LINE, read_bounded};
    use crate::events::{CallEvent, LogLevel};
    use crate::secret::Redactor;

    /// What a consumer receives (a client's notifications, a task's record) was redacted
    /// when it was sent; the control, a sender without secrets, passes it as written.
    #[test]
    fn what_a_consumer_receives_was_redacted_when_sent() {
        let secret = "evt-S3cret-7Qx";
        let event = || CallEvent::Log {
            level: LogLevel::Warning,
            message: format!("got {secret} visible"),
            data: Some(serde_json::json!({ "key": secret })),
        };
        for (redactor, kept) in [
            (Redactor::new(&[secret.to_owned()]), false),
            (Redactor::default(), true),
        ] {
            let (channel, mut receiver) = tokio::sync::mpsc::channel(4);
            let sender = EventSender::new(channel, redactor);
            assert!(sender.try_send(event()));
            assert!(sender.try_send(CallEvent::Progress {
                progress: 1.0,
                total: None,
                message: Some(format!("read {secret}")),
            }));
            let mut shown = String::new();
            while let Ok(event) = receiver.try_recv() {
                shown.push_str(&format!("{event:?}"));
            }
            assert_eq!(shown.contains(secret), kept, "{shown}");
            assert_eq!(shown.matches("visible").count(), 1, "{shown}");
        }
    }

    #[tokio::test]
    async fn a_newline_free_flood_is_skipped_without_being_held() {
        let mut input = vec![b'x'; MAX_LINE * 8];
        input.extend_from_slice(b"\n{\"ok\":1}\n");
        let mut reader = tokio::io::BufReader::with_capacity(4096, input.as_slice());
        let (mut line, mut skipping) = (Vec::new(), false);
        let first = read_bounded(&mut reader, &mut line, &mut skipping).await;
        assert_eq!(first.expect("reads"), Line::TooLong);
        assert!(
            line.capacity() <= MAX_LINE * 2,
            "held {} bytes of a flood",
            line.capacity()
        );
        line.clear();
        let second = read_bounded(&mut reader, &mut line, &mut skipping).await;
        assert_eq!(second.expect("reads"), Line::Complete);
        assert_eq!(line, b"{\"ok\":1}\n");
        line.clear();
        let end = read_bounded(&mut reader, &mut line, &mut skipping).await;
        assert_eq!(end.expect("reads"), Line::End);
    }
}
