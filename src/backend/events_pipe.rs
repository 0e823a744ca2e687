//! The script protocol's channel: a named pipe in the call's directory, named by
//! `MCP_SERVE_EVENTS`, that a command writes JSON lines to (`echo '{…}' > "$MCP_SERVE_EVENTS"`).
//! A named pipe needs no inherited descriptor, so it works from any shell or language.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{Notify, mpsc};

use crate::events::{CallEvent, parse_line};

/// Where a call's events go.
pub type EventSender = mpsc::Sender<CallEvent>;

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
    let mut done = false;
    loop {
        line.clear();
        let read = if done {
            // After exit, take only what is already in the pipe.
            match tokio::time::timeout(
                std::time::Duration::from_millis(20),
                lines.read_until(b'\n', &mut line),
            )
            .await
            {
                Ok(read) => read,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                read = lines.read_until(b'\n', &mut line) => read,
                () = exited.notified() => {
                    done = true;
                    continue;
                }
            }
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE {
            tracing::warn!(program = %tool_program, "ignoring an over-long event line");
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match parse_line(text) {
            Ok(event) => {
                if sender.try_send(event).is_err() {
                    tracing::debug!(program = %tool_program, "dropping an event: the client is slower than the tool");
                }
            }
            Err(problem) => {
                tracing::warn!(program = %tool_program, %problem, "ignoring a malformed event line");
            }
        }
    }
}
