//! Bounds on calls in flight: beyond the limit, a call waits in a bounded queue or, when the
//! queue is full (or has no room at all), fails fast. Never an unbounded pile-up.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A limit on concurrent calls with a bounded wait queue.
#[derive(Debug)]
pub struct Slots {
    permits: Arc<Semaphore>,
    max: usize,
    queue: usize,
    waiting: AtomicUsize,
}

/// The limit and its queue are both full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    pub running: usize,
    pub queue: usize,
}

impl Slots {
    pub fn new(max: usize, queue: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
            queue,
            waiting: AtomicUsize::new(0),
        }
    }

    /// A permit now, or after waiting in the queue, or `Busy`. Cancel-safe: dropping the
    /// future leaves the queue.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, Busy> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let busy = Busy {
            running: self.max,
            queue: self.queue,
        };
        let claimed = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |waiting| {
                (waiting < self.queue).then_some(waiting + 1)
            });
        if claimed.is_err() {
            return Err(busy);
        }
        let _leave = Leave(&self.waiting);
        self.permits.clone().acquire_owned().await.map_err(|_| busy)
    }

    /// Whether `other` bounds calls the same way (for a reload to keep the one in use).
    pub fn same_bounds(&self, other: &Slots) -> bool {
        (self.max, self.queue) == (other.max, other.queue)
    }

    /// Calls running now.
    pub fn in_flight(&self) -> usize {
        self.max - self.permits.available_permits()
    }
}

/// Leaves the queue when the wait ends, however it ends.
struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Busy, Slots};

    #[tokio::test]
    async fn waits_in_a_bounded_queue_then_fails_fast() {
        let limiter = std::sync::Arc::new(Slots::new(1, 1));
        let first = limiter.acquire().await.expect("a free slot");
        let queued = {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.acquire().await.map(drop) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            limiter.acquire().await.err(),
            Some(Busy {
                running: 1,
                queue: 1
            })
        );
        drop(first);
        assert_eq!(queued.await.ok(), Some(Ok(())));
        assert_eq!(limiter.in_flight(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_the_queue() {
        let limiter = Slots::new(1, 1);
        let _held = limiter.acquire().await.expect("a free slot");
        let waited = tokio::time::timeout(Duration::from_millis(20), limiter.acquire()).await;
        assert!(waited.is_err());
        // The queue slot is free again: the next call may wait.
        let waited = tokio::time::timeout(Duration::from_millis(20), limiter.acquire()).await;
        assert!(waited.is_err(), "it waited rather than failing fast");
    }

    #[tokio::test]
    async fn no_queue_means_fail_fast() {
        let limiter = Slots::new(1, 0);
        let _held = limiter.acquire().await.expect("a free slot");
        assert!(limiter.acquire().await.is_err());
    }
}
