//! `task` on a tool and `[server] task`, `task-ttl`, `task-poll-interval`: whether calls may
//! run as tasks, and how long their results are kept.

use std::time::Duration;

use toml::Spanned;

use super::Checker;
use super::wire::{ServerWire, ToolWire};
use crate::tasks::{Policy, Settings};
use crate::units::parse_duration;

/// The longest a task's result may be kept.
const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// `task = "…"`, or `default` when absent.
pub(super) fn policy(
    wire: Option<&Spanned<String>>,
    default: Policy,
    checker: &mut Checker,
) -> Policy {
    let Some(wire) = wire else { return default };
    Policy::parse(wire.get_ref()).unwrap_or_else(|| {
        checker
            .error(format!("invalid `task` `{}`", wire.get_ref()), wire.span())
            .hint("expected \"never\", \"optional\" (a task when the client supports tasks) or \"required\"");
        default
    })
}

/// `ask-in-task`: only meaningful on a tool that asks and may run as a task.
pub(super) fn ask_in_task(
    wire: &ToolWire,
    policy: Policy,
    inputs: &crate::inputs::Inputs,
    checker: &mut Checker,
) -> bool {
    let Some(value) = &wire.ask_in_task else {
        return false;
    };
    if *value.get_ref() && (policy == Policy::Never || inputs.is_empty()) {
        checker
            .error("`ask-in-task` needs a tool that asks and may run as a task", value.span())
            .hint("add `task = \"optional\"` (or \"required\") and a question (`confirm`, `[tools.ask]`, `[tools.sample]`, `roots`)");
    }
    *value.get_ref()
}

/// The `[server]` task settings and the tools' default policy.
pub(super) fn server_settings(server: &ServerWire, checker: &mut Checker) -> (Policy, Settings) {
    let default = policy(server.task.as_ref(), Policy::Never, checker);
    let mut settings = Settings::default();
    let mut duration =
        |value: Option<&Spanned<toml::Value>>, key: &str, min: Duration, max: Duration| {
            let value = value?;
            match parse_duration(value.get_ref()) {
                Ok(duration) if duration >= min && duration <= max => Some(duration),
                Ok(_) => {
                    checker.error(
                        format!(
                            "`{key}` must be between {} ms and {} s",
                            min.as_millis(),
                            max.as_secs()
                        ),
                        value.span(),
                    );
                    None
                }
                Err(problem) => {
                    checker.error(format!("invalid `{key}`: {problem}"), value.span());
                    None
                }
            }
        };
    if let Some(ttl) = duration(
        server.task_ttl.as_ref(),
        "task-ttl",
        Duration::from_secs(1),
        MAX_TTL,
    ) {
        settings.ttl = ttl;
    }
    if let Some(poll) = duration(
        server.task_poll_interval.as_ref(),
        "task-poll-interval",
        Duration::from_millis(100),
        Duration::from_secs(3600),
    ) {
        settings.poll_interval = poll;
    }
    (default, settings)
}
