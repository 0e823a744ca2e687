//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! rmcp ships one, but it ignores invalid JSON silently and stops serving when a
//! notification arrives before `initialize`. Ours answers invalid JSON with `-32700`, other
//! malformed messages with `-32600` (or `-32602` for a `tools/call` whose params do not fit),
//! drops notifications that precede the first request, and bounds line length. Only protocol
//! messages are ever written to stdout.

use std::sync::Arc;

use rmcp::model::{ClientNotification, ClientRequest, GetMeta as _, ProtocolVersion, ServerResult};
use rmcp::service::{RoleServer, RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::io::stdio_pipes;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Handler;
use super::pieces::Framed;
use crate::revision::Revision;

mod parse;

/// The longest message we accept on one line.
const MAX_LINE_BYTES: usize = 16 << 20;

/// How long requests read before stdin closed get to finish.
const EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// How long, after that, the answers being written get to be read whole.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Why serving over stdio stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[error("the MCP session over stdio failed: {0}")]
pub struct StdioError(String);

/// Serves `handler` on this process's stdin and stdout until stdin closes.
pub async fn serve_stdio(handler: Handler) -> Result<(), StdioError> {
    let (reader, writer) = stdio_pipes();
    // The session's state is large; it lives on the heap, once per process.
    Box::pin(serve(handler, reader, writer)).await
}

/// Serves on any reader and writer (tests use in-memory pipes).
pub(crate) async fn serve<R, W>(handler: Handler, reader: R, writer: W) -> Result<(), StdioError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // One client for as long as the process runs.
    let handler = handler.connection();
    // With traces on, every request goes through rmcp and its span.
    let lists = crate::traces::tracer().is_none().then(|| handler.clone());
    let transport = LineTransport::new(reader, writer, handler.clone(), lists);
    let end_of_input = transport.end_of_input.clone();
    let (in_flight, stdout) = (transport.writes.clone(), Arc::clone(&transport.writer));
    match rmcp::serve_server(super::traced::Traced(handler), transport).await {
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
                    // What was answered is written whole, never cut mid-line: the lines
                    // being written finish (for as long as the client reads them, up to
                    // `DRAIN_GRACE`), and no other begins.
                    in_flight.close();
                    let drained = tokio::time::timeout(DRAIN_GRACE, async {
                        in_flight.wait().await;
                        stdout.lock_owned().await
                    })
                    .await;
                    if drained.is_err() {
                        tracing::warn!("stdin closed: stdout is not read; an answer is cut");
                    }
                    return Ok(());
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
    /// rmcp has chosen the lifecycle (an `initialize`, or a complete 2026-07-28 request).
    /// Before, it ends the whole session over any notification or response, so those are
    /// dropped here.
    lifecycle_chosen: bool,
    /// Cancelled when stdin reaches its end.
    end_of_input: CancellationToken,
    /// The replies we write ourselves, waited for before closing: rmcp waits only for its own.
    writes: TaskTracker,
    /// Answers `tools/list` from the handler's serialized answer, without rmcp.
    lists: Option<Handler>,
    /// Whose manifest's secrets every line is checked for as it leaves
    /// ([`super::outgoing`]).
    served: Handler,
    /// The revision the `initialize` answer chose, once sent.
    negotiated: Option<Revision>,
    /// The client sent `notifications/initialized`.
    initialized: bool,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn new(reader: R, writer: W, served: Handler, lists: Option<Handler>) -> Self {
        Self {
            lists,
            served,
            writes: TaskTracker::new(),
            negotiated: None,
            initialized: false,
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(writer)),
            lifecycle_chosen: false,
            end_of_input: CancellationToken::new(),
        }
    }

    /// A line about to be written, with any secret of the served manifest redacted.
    fn outgoing(&self, bytes: Vec<u8>) -> Vec<u8> {
        super::outgoing::message(bytes, self.served.registry().door_redactor())
    }

    /// Writes a reply we compose ourselves (not through rmcp).
    fn reply_error(&self, id: Option<Value>, code: i64, message: &str) {
        let line = json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": {"code": code, "message": message},
        });
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        self.write(Framed::whole(self.outgoing(bytes)));
    }

    /// Answers `tools/list` with the handler's serialized answer when rmcp would give that
    /// same answer: in a legacy session after its handshake, or to a complete 2026-07-28
    /// request in a stateless one. `false` leaves the request to rmcp.
    fn answer_list(&self, request: &rmcp::model::JsonRpcRequest<ClientRequest>) -> bool {
        let (Some(handler), ClientRequest::ListToolsRequest(list)) =
            (&self.lists, &request.request)
        else {
            return false;
        };
        if list
            .params
            .as_ref()
            .is_some_and(|params| params.cursor.is_some())
        {
            return false;
        }
        let meta = request.request.get_meta();
        let revision = match (self.negotiated, meta.protocol_version()) {
            (Some(revision), None) if self.initialized => revision,
            (None, Some(version))
                if version == ProtocolVersion::V_2026_07_28
                    && meta
                        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                        .is_empty() =>
            {
                Revision::V2026_07
            }
            _ => return false,
        };
        let (Some(result), Ok(id)) = (
            handler.listing_pieces(revision),
            serde_json::to_vec(&request.id),
        ) else {
            return false;
        };
        let registry = self.served.registry();
        self.write(Framed::response(
            [b"", &id, b"\n"],
            result,
            &registry,
            super::outgoing::message,
        ));
        true
    }

    /// Writes `line`, spawned apart so that a cancelled `receive` can never leave half a
    /// line on stdout.
    fn write(&self, line: Framed) {
        let writer = self.writer.clone();
        self.writes.spawn(async move {
            let mut writer = writer.lock().await;
            // A kept answer is many small pieces (an entry per tool): written in 64 KiB
            // writes, not one per piece.
            let mut writer = tokio::io::BufWriter::with_capacity(64 << 10, &mut *writer);
            for piece in line.parts() {
                if writer.write_all(piece).await.is_err() {
                    return;
                }
            }
            let _ = writer.flush().await;
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
        let message = parse::request(line).map_or_else(
            || serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line),
            Ok,
        );
        match message {
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
                // Only once rmcp has begun a session may a list skip it: the request that
                // begins one must reach rmcp. A second `initialize`, or one after a 2026
                // request began the session, leaves every list to rmcp from then on.
                let started = self.lifecycle_chosen;
                if started && matches!(request.request, ClientRequest::InitializeRequest(_)) {
                    self.lists = None;
                }
                if !self.lifecycle_chosen {
                    self.lifecycle_chosen = chooses_lifecycle(&request.request);
                }
                if started && self.answer_list(&request) {
                    return None;
                }
                Some(RxJsonRpcMessage::<RoleServer>::Request(request))
            }
            Ok(message) if !self.lifecycle_chosen => {
                tracing::debug!(
                    ?message,
                    "ignoring a notification or response sent before the session began"
                );
                None
            }
            Ok(message) => {
                if let RxJsonRpcMessage::<RoleServer>::Notification(notification) = &message {
                    self.initialized |= matches!(
                        notification.notification,
                        ClientNotification::InitializedNotification(_)
                    );
                }
                Some(message)
            }
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

/// Whether rmcp starts a session on this request: `initialize` does; so does a 2026-07-28
/// request with complete metadata, except the `server/discover` probe and `ping`.
fn chooses_lifecycle(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta.protocol_version() == Some(ProtocolVersion::V_2026_07_28)
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
        if let TxJsonRpcMessage::<RoleServer>::Response(response) = &item
            && let ServerResult::InitializeResult(initialized) = &response.result
        {
            // The first answer's version is the session's.
            self.negotiated
                .get_or_insert(Revision::of_version(initialized.protocol_version.as_str()));
        }
        let writer = self.writer.clone();
        let bytes = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            self.outgoing(bytes)
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
        self.writes.close();
        self.writes.wait().await;
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::serve;
    use crate::backend::processes::Processes;
    use crate::mcp::{Handler, HandlerOptions};

    fn handler() -> Handler {
        let registry = crate::manifest::parse(
            "[[tools]]\nname = \"hi\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"hello\" }]\n",
            "tools.toml",
            Path::new("/"),
        )
        .expect("manifest");
        Handler::new(
            Arc::new(registry),
            HandlerOptions {
                max_calls: 4,
                queue: 0,
                heartbeat: None,
                watching: false,
                withheld_env: Vec::new(),
                processes: Arc::new(Processes::default()),
                tasks: None,
                sealer: crate::mcp::state_codec(None).expect("key"),
                metrics: None,
                audit: crate::audit::Audit::default(),
                discovery: false,
            },
        )
        .expect("handler")
    }

    /// Lines a client might send: valid messages, broken ones, and noise.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let messages = prop::sample::select(vec![
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hi","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":5}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}",
            "{",
            "",
            "null",
        ]);
        prop_oneof![
            messages.clone().prop_map(|text| text.as_bytes().to_vec()),
            prop::collection::vec(any::<u8>(), 0..64),
            (messages, any::<prop::sample::Index>(), any::<u8>()).prop_map(|(text, at, byte)| {
                let mut bytes = text.as_bytes().to_vec();
                if !bytes.is_empty() {
                    let at = at.index(bytes.len());
                    bytes[at] = byte;
                }
                bytes
            }),
        ]
    }

    fn cases(count: u32) -> Config {
        Config {
            cases: count,
            failure_persistence: None,
            ..Config::default()
        }
    }

    #[test]
    fn random_input_gets_json_rpc_out_and_never_a_panic() {
        let mut runner = TestRunner::new(cases(300));
        let lines_sent = std::cell::Cell::new(0_usize);
        let answers = std::cell::Cell::new(0_usize);
        let strategy = (prop::collection::vec(line(), 1..12), any::<bool>());
        let result = runner.run(&strategy, |(lines, trailing_newline)| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let mut input = lines.join(&b'\n');
            if trailing_newline {
                input.push(b'\n');
            }
            let output = runtime.block_on(async {
                let (mut client, server_in) = tokio::io::duplex(1 << 20);
                let (server_out, mut reader) = tokio::io::duplex(1 << 20);
                let served = tokio::spawn(serve(handler(), server_in, server_out));
                client.write_all(&input).await.expect("write");
                drop(client);
                let mut output = Vec::new();
                let read = reader.read_to_end(&mut output);
                tokio::time::timeout(std::time::Duration::from_secs(10), read)
                    .await
                    .expect("the server finished")
                    .expect("read");
                served.await.expect("no panic").expect("served");
                output
            });
            for line in output
                .split(|byte| *byte == b'\n')
                .filter(|line| !line.is_empty())
            {
                let message: serde_json::Value =
                    serde_json::from_slice(line).expect("every output line is JSON");
                prop_assert_eq!(&message["jsonrpc"], "2.0");
                answers.set(answers.get() + 1);
            }
            lines_sent.set(lines_sent.get() + lines.len());
            Ok(())
        });
        result.expect("stdio stays well-formed");
        eprintln!(
            "stdio fuzz: {} random lines, {} answers, all JSON-RPC, 0 panics",
            lines_sent.get(),
            answers.get()
        );
    }
}
