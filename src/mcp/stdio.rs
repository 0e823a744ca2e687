//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! rmcp ships one, but it ignores invalid JSON silently and stops serving when a
//! notification arrives before `initialize`. Ours answers invalid JSON with `-32700`, other
//! malformed messages with `-32600` (or `-32602` for a `tools/call` whose params do not fit),
//! drops notifications that precede the first request, and bounds line length. Only protocol
//! messages are ever written to stdout.

use std::sync::Arc;

use rmcp::model::ClientRequest;
use rmcp::service::{RoleServer, RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::io::stdio_pipes;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::Handler;

/// The longest message we accept on one line.
const MAX_LINE_BYTES: usize = 16 << 20;

/// How long requests read before stdin closed get to finish.
const EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Why serving over stdio stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[error("the MCP session over stdio failed: {0}")]
pub struct StdioError(String);

/// Serves `handler` on this process's stdin and stdout until stdin closes.
pub async fn serve_stdio(handler: Handler) -> Result<(), StdioError> {
    let (reader, writer) = stdio_pipes();
    serve(handler, reader, writer).await
}

/// Serves on any reader and writer (tests use in-memory pipes).
pub(crate) async fn serve<R, W>(handler: Handler, reader: R, writer: W) -> Result<(), StdioError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = LineTransport::new(reader, writer);
    let end_of_input = transport.end_of_input.clone();
    match rmcp::serve_server(handler, transport).await {
        Ok(running) => {
            let waiting = running.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                reason = &mut waiting => {
                    let reason = reason.map_err(|error| StdioError(error.to_string()))?;
                    tracing::debug!(?reason, "stdio session ended");
                }
                () = end_of_input.cancelled() => {
                    // Requests already read still get their answers (`printf … | mcp-serve`
                    // must print them), but a client that closed stdin is shutting us down:
                    // calls still running after a moment are dropped, which kills their
                    // process groups. rmcp alone would let them run for about 5 s.
                    tracing::debug!("stdin closed");
                    if tokio::time::timeout(EOF_GRACE, &mut waiting).await.is_err() {
                        tracing::info!("stdin closed: stopping the calls still running");
                    }
                }
            }
            Ok(())
        }
        // The client went away before completing a handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(error) => Err(StdioError(error.to_string())),
    }
}

struct LineTransport<R, W> {
    reader: BufReader<R>,
    /// The line being read; survives a cancelled `receive`.
    line: Vec<u8>,
    /// Dropping the rest of an over-long line.
    discarding: bool,
    writer: Arc<Mutex<W>>,
    seen_request: bool,
    /// Cancelled when stdin reaches its end.
    end_of_input: CancellationToken,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn new(reader: R, writer: W) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(writer)),
            seen_request: false,
            end_of_input: CancellationToken::new(),
        }
    }

    /// Writes a reply we compose ourselves (not through rmcp), on its own task so that a
    /// cancelled `receive` can never leave half a line on stdout.
    fn reply_error(&self, id: Option<Value>, code: i64, message: &str) {
        let line = json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": {"code": code, "message": message},
        });
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let mut bytes = line.to_string().into_bytes();
            bytes.push(b'\n');
            let mut writer = writer.lock().await;
            if writer.write_all(&bytes).await.is_ok() {
                let _ = writer.flush().await;
            }
        });
    }

    /// Reads one line into `self.line`; `false` at end of input. Cancel-safe: partial
    /// input stays in `self.line`.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // A last message without its newline is still a message.
                if !self.discarding && !self.line.is_empty() {
                    return Ok(LineRead::Line);
                }
                return Ok(LineRead::Eof);
            }
            let newline = available.iter().position(|byte| *byte == b'\n');
            let take = newline.map_or(available.len(), |index| index + 1);
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len() + take > MAX_LINE_BYTES {
                self.line.clear();
                self.discarding = newline.is_none();
                self.reader.consume(take);
                return Ok(LineRead::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.reader.consume(take);
            if newline.is_some() && !self.discarding && !self.line.is_empty() {
                return Ok(LineRead::Line);
            }
        }
    }

    /// Turns one line into a message for rmcp, or answers it ourselves.
    fn interpret(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
            Ok(RxJsonRpcMessage::<RoleServer>::Request(request)) => {
                if let ClientRequest::CustomRequest(custom) = &request.request
                    && custom.method == "tools/call"
                {
                    {
                        let id = serde_json::to_value(&request.id).ok();
                        self.reply_error(id, -32602, "invalid params for `tools/call`: `name` must be a string and `arguments` an object");
                        return None;
                    }
                }
                self.seen_request = true;
                Some(RxJsonRpcMessage::<RoleServer>::Request(request))
            }
            Ok(RxJsonRpcMessage::<RoleServer>::Notification(notification))
                if !self.seen_request =>
            {
                tracing::debug!(
                    ?notification,
                    "ignoring a notification sent before any request"
                );
                None
            }
            Ok(message) => Some(message),
            Err(error) => {
                match serde_json::from_slice::<Value>(line) {
                    Err(parse_error) => {
                        self.reply_error(None, -32700, &format!("Parse error: {parse_error}"));
                    }
                    Ok(Value::Array(_)) => {
                        self.reply_error(
                            None,
                            -32600,
                            "Invalid request: batches are not supported",
                        );
                    }
                    Ok(value) => match value
                        .get("id")
                        .filter(|id| id.is_string() || id.is_number())
                    {
                        // A malformed notification must not be answered.
                        None if value.get("method").is_some() => {
                            tracing::debug!(%error, "ignoring a malformed notification");
                        }
                        id => {
                            let method = value.get("method").and_then(Value::as_str);
                            let (code, message) = match method {
                                Some(method) if value.get("id").is_some() => {
                                    (-32602, format!("invalid params for `{method}`: {error}"))
                                }
                                _ => (-32600, format!("Invalid request: {error}")),
                            };
                            self.reply_error(id.cloned(), code, &message);
                        }
                    },
                }
                None
            }
        }
    }
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let bytes = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            bytes
        });
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            let mut writer = writer.lock().await;
            writer.write_all(&bytes).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::TooLong) => {
                    self.reply_error(
                        None,
                        -32600,
                        &format!("Invalid request: a message is limited to {MAX_LINE_BYTES} bytes"),
                    );
                    continue;
                }
                Ok(LineRead::Eof) => {
                    self.end_of_input.cancel();
                    return None;
                }
                Err(error) => {
                    tracing::error!(%error, "reading stdin failed");
                    self.end_of_input.cancel();
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let message = self.interpret(&line);
            self.line = line;
            self.line.clear();
            if let Some(message) = message {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
