//! A call's own network namespace, for a host list: nothing in it but loopback, where the
//! trampoline listens on the proxy's port and forwards each connection, byte for byte, to
//! the proxy's Unix socket (a socket path reaches across network namespaces). So a program
//! that ignores `HTTPS_PROXY` finds no network at all, and one that uses it reaches the
//! proxy, which decides.
//!
//! The forwarding runs on threads started before the trampoline confines itself: Landlock
//! and seccomp restrict the thread that asks (and what it starts afterwards), so the
//! program, started after them, gets every restriction and the forwarders keep their socket.
//! The trampoline stays the program's parent ([`super::init`]).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::Route;
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, bind, recv, send,
    socket,
};

/// Forwarder threads copy with small stacks (they only move bytes).
const STACK: usize = 64 * 1024;

/// Moves this process into a network namespace of its own with loopback up. Called
/// single-threaded, after the user namespace and before any restriction.
pub(super) fn enter() -> Result<(), String> {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|error| format!("could not create a network namespace: {error}"))?;
    loopback_up().map_err(|error| format!("could not bring loopback up: {error}"))
}

/// Listens on `127.0.0.1:port` in this process's network namespace, each connection
/// forwarded to `socket`, on threads of this process. Called before any restriction, by
/// the process that stays the program's parent (after `unshare(CLONE_NEWPID)` the
/// trampoline itself cannot start threads), with the termination signals held.
pub(super) fn forward(route: &Route, socket: &Path) -> Result<(), String> {
    let port = route.port;
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .map_err(|error| format!("could not listen on 127.0.0.1:{port}: {error}"))?;
    let socket = socket.to_path_buf();
    let stamp = format!("{}\n", route.token);
    std::thread::Builder::new()
        .name("forward".into())
        .stack_size(STACK)
        .spawn(move || accept(&listener, &socket, stamp.as_bytes()))
        .map_err(|error| format!("could not start forwarding: {error}"))?;
    Ok(())
}

/// Each connection goes to the proxy stamped with the call's token: whatever credentials
/// the program sends, this is the call the proxy serves.
fn accept(listener: &TcpListener, socket: &PathBuf, stamp: &[u8]) {
    for client in listener.incoming().flatten() {
        let Ok(mut proxy) = UnixStream::connect(socket) else {
            // The server is gone, or out of descriptors: this connection fails.
            continue;
        };
        if proxy.write_all(stamp).is_ok() {
            let _ = pipe(client, proxy);
        }
    }
}

/// One thread per direction; each end is shut down for writing when its source ends.
fn pipe(client: TcpStream, proxy: UnixStream) -> std::io::Result<()> {
    let (client_in, proxy_out) = (client.try_clone()?, proxy.try_clone()?);
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            copy(client_in, proxy_out, |proxy| {
                proxy.shutdown(Shutdown::Write)
            });
        })?;
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || copy(proxy, client, |client| client.shutdown(Shutdown::Write)))?;
    Ok(())
}

fn copy<R: Read, W: Write>(mut from: R, mut to: W, done: impl FnOnce(&W) -> std::io::Result<()>) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = done(&to);
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
