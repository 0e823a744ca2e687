//! Reading a command's output with bounded memory: stdout whole, or its head and tail when it
//! is too long (optionally spooled in full to a file for the resource store); stderr's tail.

use std::path::PathBuf;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

use super::events_pipe::EventSender;
use crate::events::{CallEvent, LogLevel};
use crate::results::Captured;

/// The first read of a command's output, and the reads after one that filled it.
const FIRST_READ: usize = 512;
const READ: usize = 16 * 1024;

/// The most stdout drained from a truncating command before it is stopped.
const DRAIN_LIMIT: u64 = 256 << 20;
use crate::results::store::SPOOL_LIMIT;

/// How to capture stdout.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Bytes kept in memory.
    pub limit: usize,
    /// Keep the head and tail of longer output (text), or give up at the limit (other modes).
    pub truncate: bool,
    /// Where to write the whole output, when it is to be kept.
    pub spool: Option<PathBuf>,
}

/// How capturing ended.
#[derive(Debug)]
pub enum Capture {
    /// The stream ended (or the drain limit was reached, for truncating captures).
    Done {
        captured: Captured,
        stopped_early: bool,
    },
    /// More than `limit` bytes, and the mode cannot truncate.
    Overflow,
}

/// Reads until the end of the stream, or until `stop` is cancelled (the command exited
/// but something it left behind still holds the pipe).
pub async fn capture_stdout(
    mut reader: impl AsyncRead + Unpin,
    options: CaptureOptions,
    stop: CancellationToken,
) -> std::io::Result<Capture> {
    let half = options.limit / 2;
    let mut head: Vec<u8> = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    let mut overflowed = false;
    let mut total: u64 = 0;
    // Opened, never created: the file exists while the call keeps it (see `Spool`).
    let mut spool = match &options.spool {
        Some(path) => tokio::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .await
            .ok(),
        None => None,
    };
    // Read into spare capacity, small at first: most commands write a few bytes, and a big
    // buffer per call costs the allocator more than the read. Output that fills it gets
    // bigger reads.
    let mut chunk: Vec<u8> = Vec::with_capacity(FIRST_READ);
    loop {
        if chunk.len() == chunk.capacity() {
            chunk.reserve(READ.saturating_sub(chunk.len()));
        }
        chunk.clear();
        let read = tokio::select! {
            read = reader.read_buf(&mut chunk) => read?,
            () = stop.cancelled() => 0,
        };
        if read == 0 {
            break;
        }
        let bytes = &chunk[..read];
        total += read as u64;
        if let Some(file) = spool.as_mut()
            && (total > SPOOL_LIMIT || file.write_all(bytes).await.is_err())
        {
            spool = None;
            if let Some(path) = &options.spool {
                let _ = tokio::fs::remove_file(path).await;
            }
        }
        if overflowed {
            tail.extend_from_slice(bytes);
        } else {
            if head.len() + read <= options.limit {
                head.extend_from_slice(bytes);
                continue;
            }
            if !options.truncate {
                return Ok(Capture::Overflow);
            }
            overflowed = true;
            head.extend_from_slice(bytes);
            tail = head.split_off(half.min(head.len()));
        }
        if tail.len() > 2 * half.max(1) {
            tail.drain(..tail.len() - half);
        }
        if total >= DRAIN_LIMIT {
            let mut captured = finish(
                head,
                tail,
                half,
                total,
                spool.is_some().then(|| options.spool.clone()).flatten(),
            );
            captured.stopped_early = true;
            return Ok(Capture::Done {
                captured,
                stopped_early: true,
            });
        }
    }
    if let Some(mut file) = spool.take() {
        let _ = file.flush().await;
    }
    let kept = if overflowed {
        options.spool.clone()
    } else {
        None
    };
    if !overflowed && let Some(path) = &options.spool {
        let _ = tokio::fs::remove_file(path).await;
    }
    Ok(Capture::Done {
        captured: finish(head, tail, half, total, kept),
        stopped_early: false,
    })
}

fn finish(
    head: Vec<u8>,
    mut tail: Vec<u8>,
    half: usize,
    total: u64,
    kept: Option<PathBuf>,
) -> Captured {
    if tail.len() > half {
        tail.drain(..tail.len() - half);
    }
    Captured {
        head,
        tail,
        total,
        kept,
        stopped_early: false,
    }
}

/// Reads to the end, keeping only the last `keep` bytes, as text; with `forward`, each line
/// is also sent on as a log message at the given level.
pub async fn capture_tail(
    reader: impl AsyncRead + Unpin,
    keep: usize,
    forward: Option<(EventSender, LogLevel)>,
    stop: CancellationToken,
) -> String {
    let mut reader = tokio::io::BufReader::new(reader);
    let mut buffer = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        // Lines are bounded so a newline-free flood cannot grow memory.
        let mut bounded = (&mut reader).take(8 * 1024);
        let read = tokio::select! {
            read = bounded.read_until(b'\n', &mut line) => read,
            () = stop.cancelled() => Ok(0),
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some((sender, level)) = &forward {
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            if !text.is_empty() {
                sender.try_send(CallEvent::Log {
                    level: *level,
                    message: text,
                    data: None,
                });
            }
        }
        buffer.extend_from_slice(&line);
        if buffer.len() > keep * 2 {
            buffer.drain(..buffer.len() - keep);
        }
    }
    tail_text(&buffer, keep)
}

/// The last `keep` bytes as text, starting at a character boundary.
pub fn tail_text(bytes: &[u8], keep: usize) -> String {
    let start = bytes.len().saturating_sub(keep);
    let text = String::from_utf8_lossy(&bytes[start..]);
    text.trim_start_matches('\u{FFFD}').to_owned()
}

#[cfg(test)]
mod tests {
    use super::{Capture, CaptureOptions, capture_stdout};

    fn options(limit: usize, truncate: bool) -> CaptureOptions {
        CaptureOptions {
            limit,
            truncate,
            spool: None,
        }
    }

    async fn run(input: &[u8], options: CaptureOptions) -> Capture {
        capture_stdout(input, options, tokio_util::sync::CancellationToken::new())
            .await
            .expect("reads")
    }

    #[tokio::test]
    async fn short_output_is_kept_whole() {
        let Capture::Done { captured, .. } = run(b"hello", options(10, true)).await else {
            panic!()
        };
        assert_eq!(
            (
                captured.head.as_slice(),
                captured.tail.len(),
                captured.total
            ),
            (&b"hello"[..], 0, 5)
        );
        assert!(!captured.is_truncated());
    }

    #[tokio::test]
    async fn long_output_keeps_its_head_and_tail() {
        let input: Vec<u8> = (0..100_000_u32)
            .flat_map(|n| n.to_string().into_bytes())
            .collect();
        let Capture::Done { captured, .. } = run(&input, options(1000, true)).await else {
            panic!()
        };
        assert_eq!(captured.head, input[..500]);
        assert_eq!(captured.tail, input[input.len() - 500..]);
        assert_eq!(captured.total, input.len() as u64);
        assert!(captured.is_truncated());
    }

    #[tokio::test]
    async fn non_truncating_captures_give_up_at_the_limit() {
        assert!(matches!(
            run(&[b'x'; 11], options(10, false)).await,
            Capture::Overflow
        ));
        assert!(matches!(
            run(&[b'x'; 10], options(10, false)).await,
            Capture::Done { .. }
        ));
    }

    #[tokio::test]
    async fn the_whole_output_can_be_spooled() {
        let dir = tempfile::tempdir().expect("dir");
        let spool = dir.path().join("out");
        std::fs::write(&spool, b"").expect("the spool file");
        let input = vec![b'y'; 5000];
        let Capture::Done { captured, .. } = run(
            &input,
            CaptureOptions {
                limit: 100,
                truncate: true,
                spool: Some(spool.clone()),
            },
        )
        .await
        else {
            panic!()
        };
        assert_eq!(captured.kept.as_deref(), Some(spool.as_path()));
        assert_eq!(std::fs::read(&spool).expect("spooled"), input);
    }
}
