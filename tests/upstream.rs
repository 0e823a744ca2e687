//! A tiny HTTP/1.1 server on 127.0.0.1:0 that records every request exactly as received and
//! answers with whatever the test says, standing in for the APIs HTTP tools call.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A request as it arrived.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) request_line: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub(crate) fn path(&self) -> &str {
        self.request_line.split(' ').nth(1).unwrap_or_default()
    }
}

/// What to answer.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Wait this long first (watching for the client to hang up).
    pub(crate) delay: Duration,
}

impl Reply {
    pub(crate) fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }
}

type Handler = dyn Fn(&Recorded, u16) -> Reply + Send + Sync;

pub(crate) struct Upstream {
    pub(crate) port: u16,
    pub(crate) requests: Arc<Mutex<Vec<Recorded>>>,
    pub(crate) connections: Arc<AtomicUsize>,
    /// Set when a client hung up during a delayed reply.
    pub(crate) aborted: Arc<AtomicBool>,
}

impl Upstream {
    /// Starts the server; `handler` gets each request and the server's own port.
    pub(crate) fn start(handler: impl Fn(&Recorded, u16) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let aborted = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (log, count, hung_up) = (requests.clone(), connections.clone(), aborted.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, Ordering::SeqCst);
                let (handler, log, hung_up) = (handler.clone(), log.clone(), hung_up.clone());
                std::thread::spawn(move || serve(stream, port, &*handler, &log, &hung_up));
            }
        });
        Self {
            port,
            requests,
            connections,
            aborted,
        }
    }

    pub(crate) fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn recorded(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .map(|requests| requests.clone())
            .unwrap_or_default()
    }

    pub(crate) fn last(&self) -> Recorded {
        self.recorded()
            .pop()
            .expect("a request reached the upstream")
    }
}

fn serve(
    stream: TcpStream,
    port: u16,
    handler: &Handler,
    log: &Mutex<Vec<Recorded>>,
    hung_up: &AtomicBool,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        let length = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let recorded = Recorded {
            request_line: request_line.trim_end().to_owned(),
            headers,
            body,
        };
        if let Ok(mut log) = log.lock() {
            log.push(recorded.clone());
        }
        let reply = handler(&recorded, port);
        if !reply.delay.is_zero() && hung_up_during(&writer, reply.delay) {
            hung_up.store(true, Ordering::SeqCst);
            return;
        }
        let mut head = format!(
            "HTTP/1.1 {} X\r\nContent-Length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (name, value) in &reply.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        head.push_str("\r\n");
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&reply.body))
            .is_err()
        {
            return;
        }
    }
}

/// Waits `delay`, returning early (true) if the client closes the connection.
fn hung_up_during(stream: &TcpStream, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut probe = [0_u8; 1];
    while Instant::now() < deadline {
        if let Ok(0) = stream.peek(&mut probe) {
            return true;
        }
    }
    let _ = stream.set_read_timeout(None);
    false
}
