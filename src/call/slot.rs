//! Stage 8: a slot among the server's `--max-calls` (waiting in its `--queue`) and among the
//! tool's own `max-calls`; both are held until the backend is done. One message says busy.

use tokio::sync::OwnedSemaphorePermit;

use super::Services;
use crate::limit::Busy;
use crate::tool::Tool;

/// The permits a running call holds (of the server's and its tool's [`crate::limit::Slots`]).
#[derive(Debug)]
pub(super) struct Held {
    _server: Option<OwnedSemaphorePermit>,
    _tool: Option<OwnedSemaphorePermit>,
}

/// A call refused because a limit and its queue are full: the server's (`tool` none) or the
/// tool's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", message(*busy, tool.as_deref()))]
pub(super) struct AtLimit {
    pub(super) busy: Busy,
    pub(super) tool: Option<String>,
}

/// Both slots, waited for in their queues, or whose limit is full.
pub(super) async fn acquire(services: &Services, tool: &Tool) -> Result<Held, AtLimit> {
    let waiting = std::time::Instant::now();
    let server = match &services.calls {
        Some(calls) => {
            let acquired = calls.acquire().await;
            if let Some(metrics) = services.metrics.as_deref() {
                metrics.waited(waiting.elapsed());
            }
            Some(acquired.map_err(|busy| refuse(busy, None, &tool.name))?)
        }
        None => None,
    };
    let own = match &tool.limit {
        Some(limit) => Some(
            limit
                .acquire()
                .await
                .map_err(|busy| refuse(busy, Some(&tool.name), &tool.name))?,
        ),
        None => None,
    };
    Ok(Held {
        _server: server,
        _tool: own,
    })
}

/// Says a call was refused at a limit (`of` none: the server's), and why.
fn refuse(busy: Busy, of: Option<&str>, tool: &str) -> AtLimit {
    tracing::warn!(
        tool,
        running = busy.running,
        "refusing a call: too many in flight"
    );
    AtLimit {
        busy,
        tool: of.map(str::to_owned),
    }
}

/// The one busy message: the server's limit (`of` none) or the tool's own.
fn message(busy: Busy, of: Option<&str>) -> String {
    let (who, what) = match of {
        None => ("the server".to_owned(), "tool calls"),
        Some(name) => (format!("`{name}`"), "calls of it"),
    };
    let waiting = if busy.queue > 0 {
        format!(" and {} are waiting", busy.queue)
    } else {
        String::new()
    };
    format!(
        "{who} is busy: {} {what} are already running{waiting}; try again shortly",
        busy.running
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_message_names_whose_limit() {
        let busy = Busy {
            running: 4,
            queue: 2,
        };
        assert_eq!(
            refuse(busy, None, "t").to_string(),
            "the server is busy: 4 tool calls are already running and 2 are waiting; try again shortly"
        );
        assert_eq!(
            refuse(Busy { queue: 0, ..busy }, Some("t"), "t").to_string(),
            "`t` is busy: 4 calls of it are already running; try again shortly"
        );
    }
}
