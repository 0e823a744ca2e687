//! Passing a call's events on to the client as `notifications/progress` and
//! `notifications/message`, by the rules in [`crate::events`], until the call ends.
#![expect(
    deprecated,
    reason = "logging is deprecated in 2026-07-28 (SEP-2577), but 2025 clients use it"
)]

use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::RoleServer;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::events::{CallEvent, LogLevel, ProgressGate};

/// The shortest time between two progress notifications.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// What the client asked for on this call.
#[derive(Debug, Clone)]
pub(super) struct Wanted {
    pub(super) progress: Option<ProgressToken>,
    pub(super) log_threshold: Option<LogLevel>,
    pub(super) heartbeat: Option<Duration>,
}

/// Forwards until the channel closes (the call is over), then flushes held-back progress,
/// so nothing is sent after the result.
pub(super) async fn forward(
    mut events: mpsc::Receiver<CallEvent>,
    peer: Peer<RoleServer>,
    wanted: Wanted,
    tool: String,
) {
    let started = Instant::now();
    let mut gate = ProgressGate::new(PROGRESS_INTERVAL);
    let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = events.recv() => match event {
                None => break,
                Some(CallEvent::Progress { progress, total, message }) => {
                    if let Some(token) = &wanted.progress
                        && let Some(update) = gate.offer(progress, total, message, Instant::now()) {
                            send_progress(&peer, token, update).await;
                        }
                }
                Some(CallEvent::Log { level, message, data }) => {
                    if wanted.log_threshold.is_some_and(|threshold| level >= threshold) {
                        send_log(&peer, level, &tool, message, data).await;
                    }
                }
            },
            _ = tick.tick(), if wanted.progress.is_some() => {
                let Some(token) = &wanted.progress else { continue };
                let now = Instant::now();
                if let Some(update) = gate.flush(now) {
                    send_progress(&peer, token, update).await;
                } else if let Some(every) = wanted.heartbeat {
                    let quiet_since = gate.last_sent().unwrap_or(started);
                    if now.duration_since(quiet_since) >= every {
                        let message = format!("still running after {}s", started.elapsed().as_secs());
                        send_progress(&peer, token, gate.heartbeat(message, now)).await;
                    }
                }
            }
        }
    }
    if let Some(token) = &wanted.progress
        && let Some(update) = gate.flush(Instant::now() + PROGRESS_INTERVAL)
    {
        send_progress(&peer, token, update).await;
    }
}

async fn send_progress(
    peer: &Peer<RoleServer>,
    token: &ProgressToken,
    (progress, total, message): (f64, Option<f64>, Option<String>),
) {
    let mut param = ProgressNotificationParam::new(token.clone(), progress);
    param.total = total;
    param.message = message;
    if let Err(error) = peer.notify_progress(param).await {
        tracing::debug!(%error, "could not send a progress notification");
    }
}

async fn send_log(
    peer: &Peer<RoleServer>,
    level: LogLevel,
    tool: &str,
    message: String,
    data: Option<Value>,
) {
    let data = match data {
        Some(data) => json!({"message": message, "data": data}),
        None => Value::String(message),
    };
    let mut param = LoggingMessageNotificationParam::new(to_rmcp(level), data);
    param.logger = Some(tool.to_owned());
    if let Err(error) = peer.notify_logging_message(param).await {
        tracing::debug!(%error, "could not send a log notification");
    }
}

pub(super) fn to_rmcp(level: LogLevel) -> LoggingLevel {
    serde_json::from_value(Value::String(level.as_str().to_owned())).unwrap_or(LoggingLevel::Info)
}

pub(super) fn from_rmcp(level: LoggingLevel) -> LogLevel {
    serde_json::to_value(level)
        .ok()
        .and_then(|value| value.as_str().and_then(LogLevel::parse))
        .unwrap_or(LogLevel::Info)
}
