//! Lanes: one single-threaded runtime per core, each serving the connections handed to it.
//!
//! A connection and everything its requests spawn (rmcp's service for the request, the
//! call, its processes' supervision) stay on one thread: no work stealing carries a
//! request's memory to another core, where freeing it takes the lock of the allocator arena
//! of the thread that made it. Under the multi-threaded runtime, at 256 clients, those
//! arenas' locks showed up as 6 % of the server's CPU in futex waits inside `malloc` and
//! `free` (docs/performance.md, "Many clients"). Background work (the accept loop, the
//! watchers) stays on the main runtime.
//!
//! The lanes end with [`Lanes`]: each runtime is shut down on its own thread, which drops
//! what still runs there (a call's process group is killed as it is dropped), and the
//! threads are joined.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

/// How long a lane's blocking work may go on once the lane ends.
const BLOCKING_GRACE: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(super) struct Lanes {
    handles: Vec<Handle>,
    threads: Vec<JoinHandle<()>>,
    next: AtomicUsize,
    end: CancellationToken,
}

impl Lanes {
    /// As many lanes as the cores this process may use; a lane that cannot start is left
    /// out, and with none the connections stay on the current runtime.
    pub(super) fn start() -> Self {
        let count = std::thread::available_parallelism().map_or(1, usize::from);
        let end = CancellationToken::new();
        let (handles, threads) = (0..count)
            .filter_map(|index| match lane(index, end.clone()) {
                Ok(started) => Some(started),
                Err(error) => {
                    tracing::warn!(%error, "a lane for HTTP connections could not start");
                    None
                }
            })
            .unzip();
        Self {
            handles,
            threads,
            next: AtomicUsize::new(0),
            end,
        }
    }

    /// The runtime the next connection is served on, in turn.
    pub(super) fn next(&self) -> Handle {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        match self.handles.get(index % self.handles.len().max(1)) {
            Some(handle) => handle.clone(),
            None => Handle::current(),
        }
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        self.end.cancel();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn lane(index: usize, end: CancellationToken) -> std::io::Result<(Handle, JoinHandle<()>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let handle = runtime.handle().clone();
    let thread = std::thread::Builder::new()
        .name(format!("http-lane-{index}"))
        .spawn(move || {
            runtime.block_on(end.cancelled());
            runtime.shutdown_timeout(BLOCKING_GRACE);
        })?;
    Ok((handle, thread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_lanes_in_turn_and_ends_with_them() {
        let lanes = Lanes::start();
        assert!(!lanes.handles.is_empty());
        let names: Vec<String> = (0..lanes.handles.len() * 2)
            .map(|_| {
                let (sent, received) = std::sync::mpsc::channel();
                lanes.next().spawn(async move {
                    let name = std::thread::current().name().map(str::to_owned);
                    let _ = sent.send(name.unwrap_or_default());
                });
                received
                    .recv_timeout(Duration::from_secs(5))
                    .expect("the lane ran it")
            })
            .collect();
        assert!(names.iter().all(|name| name.starts_with("http-lane-")));
        assert_eq!(names[0], names[lanes.handles.len()]);
        // What still runs on a lane is dropped when the lanes end.
        let (dropped, gone) = std::sync::mpsc::channel::<()>();
        lanes.next().spawn(async move {
            let _held = dropped;
            std::future::pending::<()>().await;
        });
        drop(lanes);
        assert_eq!(
            gone.recv_timeout(Duration::from_secs(5)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        );
    }
}
