//! A call's own network namespace, for a host list: nothing in it but loopback, where the
//! trampoline listens on the proxy's port and forwards each connection, byte for byte, to
//! the proxy's Unix socket (a socket path reaches across network namespaces). So a program
//! that ignores `HTTPS_PROXY` finds no network at all, and one that uses it reaches the
//! proxy, which decides.
//!
//! The forwarding runs on one thread of the trampoline, started before it asks for a PID
//! namespace (after that it can start no thread) and before anything is restricted: the
//! trampoline restricts nothing of its own, so the program's limits (processes, open files,
//! CPU time, which the init sets for itself and the program) never reach the forwarder, and
//! however many connections the program holds, the forwarder is one thread of the call's
//! process count (one event loop, no thread per connection).

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::Semaphore;

use super::Route;
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, bind, recv, send,
    socket,
};

/// The forwarder's stack: it runs an event loop whose tasks live on the heap.
const STACK: usize = 256 * 1024;

/// How long the forwarder waits when `accept` fails (out of descriptors after all): the
/// connection stays queued, and the forwarder does not spin meanwhile.
const BACKOFF: Duration = Duration::from_millis(20);

/// Descriptors the forwarder leaves for the trampoline's own (standard streams, the
/// listener, the event loop's, the init's pipe).
const RESERVED: u64 = 16;

/// Moves this process into a network namespace of its own with loopback up. Called
/// single-threaded, after the user namespace and before any restriction.
pub(super) fn enter() -> Result<(), String> {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|error| format!("could not create a network namespace: {error}"))?;
    loopback_up().map_err(|error| format!("could not bring loopback up: {error}"))
}

/// Listens on `127.0.0.1:port` in this process's network namespace, each connection
/// forwarded to `socket`, on one thread of this process. Called with the termination
/// signals held, which the thread then holds too.
pub(super) fn forward(route: &Route, socket: &Path) -> Result<(), String> {
    let port = route.port;
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|error| format!("could not listen on 127.0.0.1:{port}: {error}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|error| format!("could not start forwarding: {error}"))?;
    let listener = {
        let _inside = runtime.enter();
        tokio::net::TcpListener::from_std(listener)
    }
    .map_err(|error| format!("could not listen on 127.0.0.1:{port}: {error}"))?;
    let forwarder = Forwarder {
        socket: Arc::from(socket),
        stamp: Arc::from(format!("{}\n", route.token).into_bytes()),
        room: Arc::new(Semaphore::new(room())),
    };
    std::thread::Builder::new()
        .name("forward".into())
        .stack_size(STACK)
        .spawn(move || runtime.block_on(forwarder.accept(&listener)))
        .map_err(|error| format!("could not start forwarding: {error}"))?;
    Ok(())
}

/// How many connections the forwarder holds at once: two descriptors each, from this
/// process's (the server's) `RLIMIT_NOFILE`. More wait in the listener's queue, never
/// accepted only to be dropped for want of a descriptor to the proxy.
fn room() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft);
    let pairs = soft.saturating_sub(RESERVED) / 2;
    usize::try_from(pairs)
        .unwrap_or(usize::MAX)
        .clamp(1, Semaphore::MAX_PERMITS)
}

/// Where each connection goes, stamped with what.
struct Forwarder {
    socket: Arc<Path>,
    /// The call's token and a newline: whatever credentials the program sends, this is the
    /// call the proxy serves.
    stamp: Arc<[u8]>,
    room: Arc<Semaphore>,
}

impl Forwarder {
    async fn accept(self, listener: &tokio::net::TcpListener) {
        loop {
            let Ok(room) = Arc::clone(&self.room).acquire_owned().await else {
                return;
            };
            let Ok((client, _)) = listener.accept().await else {
                drop(room);
                tokio::time::sleep(BACKOFF).await;
                continue;
            };
            let (socket, stamp) = (Arc::clone(&self.socket), Arc::clone(&self.stamp));
            tokio::spawn(async move {
                connection(client, &socket, &stamp).await;
                drop(room);
            });
        }
    }
}

/// Copies both ways until both have ended; each end is shut down for writing when its
/// source ends. The server gone: this connection closes.
async fn connection(mut client: TcpStream, socket: &Path, stamp: &[u8]) {
    let Ok(mut proxy) = UnixStream::connect(socket).await else {
        return;
    };
    if proxy.write_all(stamp).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut proxy).await;
    }
}

/// `RTM_NEWLINK` for interface 1 (loopback, the only one in a new namespace) with
/// `IFF_UP`, over a route netlink socket; the kernel's acknowledgement says whether it took.
fn loopback_up() -> Result<(), nix::Error> {
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const NLMSG_ERROR: u16 = 2;
    const LOOPBACK: i32 = 1;
    let up = libc::IFF_UP.unsigned_abs();
    let netlink = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )?;
    bind(
        std::os::fd::AsRawFd::as_raw_fd(&netlink),
        &NetlinkAddr::new(0, 0),
    )?;
    // struct nlmsghdr (16 bytes), then struct ifinfomsg (16 bytes), native endian.
    let mut message = Vec::with_capacity(32);
    message.extend_from_slice(&32_u32.to_ne_bytes());
    message.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    message.extend_from_slice(&1_u32.to_ne_bytes()); // sequence
    message.extend_from_slice(&0_u32.to_ne_bytes()); // port id: the kernel fills it in
    message.push(0); // AF_UNSPEC
    message.push(0); // padding
    message.extend_from_slice(&0_u16.to_ne_bytes()); // device type
    message.extend_from_slice(&LOOPBACK.to_ne_bytes());
    message.extend_from_slice(&up.to_ne_bytes()); // flags
    message.extend_from_slice(&up.to_ne_bytes()); // which flags change
    let fd = std::os::fd::AsRawFd::as_raw_fd(&netlink);
    send(fd, &message, MsgFlags::empty())?;
    let mut answer = [0_u8; 256];
    let read = recv(fd, &mut answer, MsgFlags::empty())?;
    // An acknowledgement is an NLMSG_ERROR message whose error is 0.
    let kind = answer.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let error = answer
        .get(16..20)
        .filter(|_| read >= 20)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (kind, error) {
        (Some(NLMSG_ERROR), Some(0)) => Ok(()),
        (Some(NLMSG_ERROR), Some(negative)) => Err(nix::Error::from_raw(-negative)),
        _ => Err(nix::Error::EPROTO),
    }
}
