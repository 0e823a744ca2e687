//! Stage 8: a slot among the server's `--max-calls` (waiting in its `--queue`) and among the
//! tool's own `max-calls`; both are held until the backend is done. One message says busy.

use tokio::sync::OwnedSemaphorePermit;

use super::Services;
use crate::limit::Busy;
use crate::tool::Tool;

/// The permits a running call holds.
#[derive(Debug)]
pub(super) struct Slots {
    _server: Option<OwnedSemaphorePermit>,
    _tool: Option<OwnedSemaphorePermit>,
}

/// Both slots, waited for in their queues, or the message that says who is busy.
pub(super) async fn acquire(services: &Services, tool: &Tool) -> Result<Slots, String> {
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
    Ok(Slots {
        _server: server,
        _tool: own,
    })
}

/// The one busy message: the server's limit (`of` none) or the tool's own.
fn refuse(busy: Busy, of: Option<&str>, tool: &str) -> String {
    tracing::warn!(
        tool,
        running = busy.running,
        "refusing a call: too many in flight"
    );
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
            refuse(busy, None, "t"),
            "the server is busy: 4 tool calls are already running and 2 are waiting; try again shortly"
        );
        assert_eq!(
            refuse(Busy { queue: 0, ..busy }, Some("t"), "t"),
            "`t` is busy: 4 calls of it are already running; try again shortly"
        );
    }
}
