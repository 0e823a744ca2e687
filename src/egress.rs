//! The egress proxy: how a sandboxed command with a host list (`network =
//! ["api.github.com:443"]`) reaches the network, and the only way it does.
//!
//! One proxy per server, shared by every tool: a Unix socket (which the trampoline's
//! forwarder reaches from the call's own network namespace) and, only once a call without
//! such a namespace needs it (kernels without user namespaces), a TCP port on 127.0.0.1, where
//! Landlock lets the command connect to that port only. Both admit connections by the
//! process's connection budget ([`crate::connections`]); on the TCP port, which any local
//! user can reach, a client has seconds to present a live token, and until it has, its
//! connection is idle: the first to be shed when the budget is full. Each call gets a [`Grant`]: a random token, the password of the proxy URL in the
//! command's `HTTPS_PROXY`, which names the call and its tool's list while the call runs.
//! A connection without a live token gets 407; one tool's token never carries another's list.
//!
//! Per request (`serve`): the head is read whole; `CONNECT host:port` opens a tunnel and
//! `GET http://host/…` is forwarded once (`Connection: close`), in origin form, its
//! response passed back untouched, so a redirect comes back to the client, whose next
//! request is checked like any other. The proxy resolves names itself, keeps only addresses
//! the list admits ([`allow`]: public ones, others only when listed literally; IPv4 inside
//! IPv6 judged as IPv4, [`address`]) and connects to exactly those. In a tunnel nothing the
//! client sends goes on before its first bytes are judged (`tunnel`): a TLS ClientHello's
//! SNI (`hello`) and each plain-HTTP request's target and `Host` (`plain`) must name the
//! tunnel's host, or the tunnel closes (domain fronting). Each decision is logged and counted
//! (`mcp_serve_egress_decisions_total`).

pub mod address;
pub mod allow;
mod hello;
mod plain;
mod request;
mod resolve;
mod serve;
mod tunnel;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::connections::Shortage;

pub use allow::{Allowance, Host, Refusal, Rule};
pub use resolve::RESOLVE_VARIABLE;

/// The proxy URL's user name (the password is the call's token).
pub const PROXY_USER: &str = "call";

/// The server's proxy: its listeners (started on the first call that needs them) and the
/// calls running now.
#[derive(Debug, Default)]
pub struct Egress {
    metrics: Option<Arc<crate::metrics::Metrics>>,
    listening: OnceLock<Listening>,
    /// Held while a listener starts, so that two calls never start two.
    starting: Mutex<()>,
    calls: Mutex<HashMap<String, Arc<Allowed>>>,
    overrides: resolve::Overrides,
}

/// Where the proxy listens: its Unix socket from the first call on, and a TCP port on the
/// host's loopback only once a call without a network namespace needs one.
#[derive(Debug)]
struct Listening {
    /// A private folder (0700) holding the socket.
    _folder: tempfile::TempDir,
    socket: PathBuf,
    tcp: OnceLock<u16>,
}

/// Why a call got no allowance at the proxy.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the egress proxy could not {what}: {source}")]
    Start {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("no randomness for a token: {0}")]
    Random(getrandom::Error),
    #[error("the egress proxy's call table is poisoned")]
    Poisoned,
}

impl Shortage for EgressError {
    /// The proxy could not start for want of descriptors: shedding may make room.
    fn out_of_descriptors(&self) -> bool {
        matches!(self, Self::Start { source, .. } if source.out_of_descriptors())
    }
}

/// What `cell` holds, started by `start` the first time; a failure (out of descriptors,
/// say) is not kept, so that the next call tries again.
fn started<'a, T, E>(
    cell: &'a OnceLock<T>,
    starting: &Mutex<()>,
    start: impl FnOnce() -> Result<T, E>,
) -> Result<&'a T, E> {
    if let Some(started) = cell.get() {
        return Ok(started);
    }
    let _one = starting
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(started) = cell.get() {
        return Ok(started);
    }
    let made = start()?;
    Ok(cell.get_or_init(|| made))
}

/// The port a call in its own network namespace connects to: the trampoline's forwarder
/// listens there, inside the namespace, and carries each connection to the Unix socket.
pub const NAMESPACE_PORT: u16 = 3128;

/// One running call's allowance.
#[derive(Debug)]
struct Allowed {
    tool: String,
    call: String,
    allowance: Arc<Allowance>,
    /// Cancelled when the call ends: its tunnels close with it.
    ended: CancellationToken,
    /// Its connections through the proxy now (see [`Allowed::hold`]).
    held: Arc<AtomicUsize>,
}

impl Allowed {
    /// One more connection of this call's, unless it holds its most: a quarter of what the
    /// tools' programs may hold together (every program's connection to the proxy is one
    /// peer of the connection budget), so that one call cannot take every other call's
    /// network.
    fn hold(&self) -> Option<Held> {
        let most = most_per_call();
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < most).then_some(held + 1)
            })
            .ok()
            .map(|_| Held(Arc::clone(&self.held)))
    }
}

/// The most connections one call holds through the proxy at once.
fn most_per_call() -> usize {
    // Each counts for two descriptors of the programs' share.
    (crate::connections::Budget::get().per_peer() / 2 / 4).max(2)
}

/// One of a call's connections through the proxy, until dropped.
#[derive(Debug)]
struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A call's allowance at the proxy, for as long as this lives.
#[derive(Debug)]
pub struct Grant {
    pub token: String,
    /// The proxy's Unix socket.
    pub socket: PathBuf,
    /// The proxy's port on 127.0.0.1.
    pub port: u16,
    egress: Arc<Egress>,
    ended: CancellationToken,
}

impl Drop for Grant {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.egress.calls.lock() {
            calls.remove(&self.token);
        }
        self.ended.cancel();
    }
}

impl Egress {
    /// A proxy that counts its decisions in `metrics`; it listens once a call needs it.
    pub fn new(metrics: Option<Arc<crate::metrics::Metrics>>) -> Self {
        Self {
            metrics,
            overrides: resolve::Overrides::from_environment(),
            ..Self::default()
        }
    }

    /// Lets the call `call` of `tool` reach what `allowance` lists until the grant is
    /// dropped. Starts the Unix socket on the current runtime the first time, and the TCP
    /// port the first time a call is not `in_namespace` (it then connects to the host's
    /// loopback); a call in a namespace of its own is given [`NAMESPACE_PORT`].
    pub fn grant(
        self: &Arc<Self>,
        tool: &str,
        call: &str,
        allowance: Arc<Allowance>,
        in_namespace: bool,
    ) -> Result<Grant, EgressError> {
        let listening = started(&self.listening, &self.starting, || serve::listen(self))?;
        let port = if in_namespace {
            NAMESPACE_PORT
        } else {
            *started(&listening.tcp, &self.starting, || serve::listen_tcp(self))?
        };
        let token = token()?;
        let ended = CancellationToken::new();
        let allowed = Arc::new(Allowed {
            tool: tool.to_owned(),
            call: call.to_owned(),
            allowance,
            ended: ended.clone(),
            held: Arc::default(),
        });
        self.calls
            .lock()
            .map_err(|_| EgressError::Poisoned)?
            .insert(token.clone(), allowed);
        Ok(Grant {
            token,
            socket: listening.socket.clone(),
            port,
            egress: Arc::clone(self),
            ended,
        })
    }

    fn allowed(&self, token: &str) -> Option<Arc<Allowed>> {
        self.calls.lock().ok()?.get(token).cloned()
    }

    /// Logs and counts one decision.
    fn decided(&self, allowed: Option<&Allowed>, target: &str, verdict: Verdict, why: &str) {
        let (tool, call) = allowed.map_or(("", ""), |a| (a.tool.as_str(), a.call.as_str()));
        let reason = verdict.reason();
        match verdict {
            Verdict::Allow => {
                tracing::info!(tool, call, target, reason, "egress: allowed {why}");
            }
            Verdict::Deny(_) | Verdict::Fail(_) => {
                tracing::warn!(tool, call, target, reason, "egress: refused: {why}");
            }
        }
        if let Some(metrics) = &self.metrics {
            metrics.egress_decision(tool, verdict.decision(), reason);
        }
    }
}

/// What the proxy did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Allow,
    /// Refused by the rules (or the token).
    Deny(&'static str),
    /// Allowed, but could not be carried out (no such name, nothing answered).
    Fail(&'static str),
}

impl Verdict {
    fn decision(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny(_) => "deny",
            Self::Fail(_) => "fail",
        }
    }

    fn reason(self) -> &'static str {
        match self {
            Self::Allow => "listed",
            Self::Deny(reason) | Self::Fail(reason) => reason,
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// 128 random bits, in hex.
fn token() -> Result<String, EgressError> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes).map_err(EgressError::Random)?;
    Ok(bytes
        .iter()
        .fold(String::with_capacity(32), |mut hex, byte| {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 0xf)]));
            hex
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_that_failed_to_start_is_tried_again() {
        let (cell, starting) = (OnceLock::new(), Mutex::new(()));
        let failed = started(&cell, &starting, || Err("Too many open files".to_owned()));
        assert_eq!(failed, Err("Too many open files".to_owned()));
        assert_eq!(started(&cell, &starting, || Ok::<_, String>(7)), Ok(&7));
        assert_eq!(
            started(&cell, &starting, || Ok::<_, String>(8)),
            Ok(&7),
            "started once, kept"
        );
        assert_eq!(
            serve::response(429, "x").lines().next(),
            Some("HTTP/1.1 429 Too Many Requests")
        );
    }
}
