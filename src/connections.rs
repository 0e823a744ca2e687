//! One budget for the process's file descriptors and the connections every listener accepts
//! (the HTTP endpoint, the egress proxy's port and socket).
//!
//! A descriptor is what an idle connection costs, and what a command's pipes, a spool file
//! and the task store need too: when a flood of silent connections takes them all, `accept`
//! fails and so does every tool. So, at start, the soft `RLIMIT_NOFILE` is raised to the
//! hard one (as Go's runtime and nginx do; 1024 is still the soft default of many services
//! and desktop sessions), a reserve is kept for everything that is not a connection, and
//! connections are admitted within what is left, in total and per peer address, each
//! counted by the descriptors it holds (a tunnel through the egress proxy holds two: the
//! forwarder's side and the upstream's). At the cap a
//! new connection is not refused while an *idle* one (no request in progress: silent since
//! it was accepted, or between keep-alive requests) can make room: the oldest idle one is
//! shed. Only when every admitted connection is busy is the new one closed, and accepting
//! goes on.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

/// Descriptors kept for what is not a connection (commands' pipes, spools, the task store,
/// outbound requests): a quarter of the limit, at most this many.
const RESERVE: u64 = 256;

/// The most connections admitted by default, however high the descriptor limit: each holds
/// buffers, and a flood of a million would be memory, not descriptors.
const MOST: usize = 16_384;

/// What the descriptor limit was and is, after [`raise_descriptor_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptors {
    pub was: u64,
    pub now: u64,
}

/// Raises the soft descriptor limit to the hard one; returns both (the same when it could
/// not be raised, or was already there).
pub fn raise_descriptor_limit() -> Descriptors {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Descriptors { was: 0, now: 0 };
    };
    let now = if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        hard
    } else {
        soft
    };
    Descriptors { was: soft, now }
}

/// The connections a descriptor limit leaves room for, after the reserve.
pub fn room(descriptors: u64) -> usize {
    let reserve = (descriptors / 4).min(RESERVE);
    usize::try_from(descriptors.saturating_sub(reserve))
        .unwrap_or(usize::MAX)
        .clamp(1, MOST)
}

/// Who is on the other end, as far as the budget tells peers apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    Address(IpAddr),
    /// A tool's program, at the egress proxy (its Unix socket, from the trampolines'
    /// forwarders, or its port on 127.0.0.1).
    Local,
}

/// The admitted connections of the process.
#[derive(Debug)]
pub struct Budget {
    total: usize,
    per_peer: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    /// Oldest first.
    open: BTreeMap<u64, Open>,
    /// What the admitted connections count for, in total and per peer.
    used: usize,
    per_peer: HashMap<Peer, usize>,
}

#[derive(Debug)]
struct Open {
    peer: Peer,
    /// What it counts for: its descriptors.
    weight: usize,
    busy: Arc<AtomicUsize>,
    shed: CancellationToken,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error("the open connections hold {0} descriptors, the most, and each is busy")]
    Total(usize),
    #[error("the connections from this address hold {0} descriptors, its most, and each is busy")]
    Peer(usize),
}

/// An admitted connection: its place in the budget until dropped.
#[derive(Debug)]
pub struct Admitted {
    id: u64,
    busy: Arc<AtomicUsize>,
    /// Cancelled when the connection is shed to make room: close it.
    pub shed: CancellationToken,
    budget: &'static Budget,
}

/// A request in progress on a connection, until dropped.
#[derive(Debug)]
pub struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Marks requests in progress on one connection (a handle the connection's service keeps).
#[derive(Debug, Clone)]
pub struct Requests(Arc<AtomicUsize>);

impl Requests {
    /// A request in progress: the connection is not shed while the guard lives.
    pub fn start(&self) -> Busy {
        self.0.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(&self.0))
    }
}

impl Admitted {
    pub fn requests(&self) -> Requests {
        Requests(Arc::clone(&self.busy))
    }

    /// Marks a request in progress (see [`Requests::start`]).
    pub fn busy(&self) -> Busy {
        self.requests().start()
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Ok(mut state) = self.budget.state.lock() {
            state.close(self.id);
        }
    }
}

impl State {
    fn close(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        self.used -= open.weight;
        if let Some(count) = self.per_peer.get_mut(&open.peer) {
            *count -= open.weight;
            if *count == 0 {
                self.per_peer.remove(&open.peer);
            }
        }
        Some(open)
    }

    /// Sheds the oldest idle connection (of `peer`, when given); whether there was one.
    fn shed_oldest(&mut self, peer: Option<Peer>) -> bool {
        let victim = self.open.iter().find_map(|(id, open)| {
            let idle = open.busy.load(Ordering::Acquire) == 0;
            (idle && peer.is_none_or(|peer| peer == open.peer)).then_some(*id)
        });
        match victim.and_then(|id| self.close(id)) {
            Some(open) => {
                open.shed.cancel();
                true
            }
            None => false,
        }
    }
}

static BUDGET: OnceLock<Budget> = OnceLock::new();

impl Budget {
    pub fn new(total: usize, per_peer: usize) -> Self {
        Self {
            total: total.max(1),
            per_peer: per_peer.max(1),
            state: Mutex::default(),
        }
    }

    /// Sets the process's budget; the first call wins (a later one returns `false`).
    pub fn install(budget: Self) -> bool {
        BUDGET.set(budget).is_ok()
    }

    /// The process's budget: as installed, or else one for the current descriptor limit, of
    /// which one address may hold half.
    pub fn get() -> &'static Self {
        BUDGET.get_or_init(|| {
            let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .map_or(1024, |(soft, _)| soft);
            let total = room(limit);
            Self::new(total, total.div_ceil(2))
        })
    }

    pub fn total(&self) -> usize {
        self.total
    }

    pub fn per_peer(&self) -> usize {
        self.per_peer
    }

    /// How many connections are admitted now.
    pub fn open(&self) -> usize {
        self.state.lock().map_or(0, |state| state.open.len())
    }

    /// Admits a connection from `peer` that holds `weight` descriptors (1, or 2 for a
    /// tunnel), shedding the oldest idle ones to make room at a cap.
    pub fn admit(&'static self, peer: Peer, weight: usize) -> Result<Admitted, Full> {
        let Ok(mut state) = self.state.lock() else {
            return Err(Full::Total(self.total));
        };
        let weight = weight.clamp(1, self.per_peer.min(self.total));
        while state.per_peer.get(&peer).copied().unwrap_or(0) + weight > self.per_peer {
            if !state.shed_oldest(Some(peer)) {
                return Err(Full::Peer(self.per_peer));
            }
        }
        while state.used + weight > self.total {
            if !state.shed_oldest(None) {
                return Err(Full::Total(self.total));
            }
        }
        let id = state.next;
        state.next += 1;
        let busy = Arc::new(AtomicUsize::new(0));
        let shed = CancellationToken::new();
        state.open.insert(
            id,
            Open {
                peer,
                weight,
                busy: Arc::clone(&busy),
                shed: shed.clone(),
            },
        );
        state.used += weight;
        *state.per_peer.entry(peer).or_default() += weight;
        Ok(Admitted {
            id,
            busy,
            shed,
            budget: self,
        })
    }

    /// Out of descriptors all the same (another process's share, a burst of commands): sheds
    /// the oldest idle connection so the next `accept` can succeed.
    pub fn relieve(&self) -> bool {
        self.state
            .lock()
            .is_ok_and(|mut state| state.shed_oldest(None))
    }
}

/// How many idle connections one shortage of descriptors sheds, and how often it is tried.
const SHED_FOR_A_CALL: usize = 8;
const ATTEMPTS: usize = 4;

/// An error that may say the process ran out of descriptors (see [`for_a_call`]).
pub trait Shortage: std::fmt::Display {
    fn out_of_descriptors(&self) -> bool;
}

impl Shortage for std::io::Error {
    /// The process (`EMFILE`) or the system (`ENFILE`) is out of descriptors.
    fn out_of_descriptors(&self) -> bool {
        matches!(self.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
}

/// Opens what a call needs (a command's call folder and events pipe, its process, the
/// files it left) with `open`; when it fails for want of descriptors, sheds idle
/// connections and tries again: connections the budget admitted never keep a call from
/// starting while an idle one could make room. A shed connection closes on its own spawned
/// future, so each try waits a moment first.
pub async fn for_a_call<T, E: Shortage>(mut open: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut attempt = 0;
    loop {
        match open() {
            Err(error) if error.out_of_descriptors() && attempt < ATTEMPTS => {
                attempt += 1;
                let budget = Budget::get();
                let shed = (0..SHED_FOR_A_CALL)
                    .take_while(|_| budget.relieve())
                    .count();
                tracing::warn!(shed, "out of descriptors for a call: {error}");
                if shed == 0 {
                    return Err(error);
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaked(total: usize, per_peer: usize) -> &'static Budget {
        Box::leak(Box::new(Budget::new(total, per_peer)))
    }

    const A: Peer = Peer::Address(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1)));
    const B: Peer = Peer::Address(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2)));

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room() {
        let budget = leaked(3, 3);
        let first = budget.admit(A, 1).expect("first");
        let second = budget.admit(A, 1).expect("second");
        let _working = first.busy();
        let third = budget.admit(B, 1).expect("third");
        let fourth = budget
            .admit(B, 1)
            .expect("a fourth sheds the oldest idle one");
        assert!(!first.shed.is_cancelled(), "busy: kept");
        assert!(second.shed.is_cancelled(), "the oldest idle one");
        assert!(!third.shed.is_cancelled());
        assert_eq!(budget.open(), 3);
        drop(second);
        assert_eq!(budget.open(), 3, "a shed connection was already let go");
        let _busy = (third.busy(), fourth.busy());
        assert_eq!(budget.admit(A, 1).err(), Some(Full::Total(3)));
        drop(third);
        assert!(budget.admit(A, 1).is_ok());
    }

    #[test]
    fn one_peer_sheds_its_own_idle_connections_not_anothers() {
        let budget = leaked(10, 2);
        let other = budget.admit(B, 1).expect("b");
        let first = budget.admit(A, 1).expect("a1");
        let _second = budget.admit(A, 1).expect("a2");
        let _third = budget.admit(A, 1).expect("a3 sheds a1");
        assert!(first.shed.is_cancelled() && !other.shed.is_cancelled());
    }

    #[test]
    fn a_tunnel_counts_for_its_two_descriptors() {
        let budget = leaked(4, 3);
        let first = budget.admit(Peer::Local, 2).expect("a tunnel");
        let busy = first.busy();
        assert_eq!(
            budget.admit(Peer::Local, 2).err(),
            Some(Full::Peer(3)),
            "a second tunnel would make four of the peer's three"
        );
        let one = budget.admit(A, 1).expect("one more plain connection");
        let _two = budget.admit(B, 1).expect("the fourth descriptor");
        assert!(!one.shed.is_cancelled());
        let last = budget.admit(B, 1).expect("sheds the oldest idle one");
        assert!(one.shed.is_cancelled() && !first.shed.is_cancelled());
        drop(busy);
        let _again = budget
            .admit(Peer::Local, 2)
            .expect("the first tunnel, idle, makes room");
        assert!(first.shed.is_cancelled() && !last.shed.is_cancelled());
    }

    #[test]
    fn the_reserve_is_a_quarter_of_the_limit_at_most_256() {
        assert_eq!(room(1024), 768);
        assert_eq!(room(400), 300);
        assert_eq!(room(65_536), 16_384);
        assert_eq!(room(4096), 3840);
    }
}
