//! `rate` and `burst`, on a tool or as `[server]` defaults.

use std::sync::Arc;

use toml::Spanned;

use super::Checker;
use crate::rate::{Rate, RateLimiter};

/// A `rate` (and its `burst`), checked; `None` when absent or wrong (wrong is reported).
pub(super) fn parse(
    rate: Option<&Spanned<String>>,
    burst: Option<&Spanned<u32>>,
    checker: &mut Checker,
) -> Option<Rate> {
    let Some(rate) = rate else {
        if let Some(burst) = burst {
            checker.error("`burst` needs a `rate`", burst.span());
        }
        return None;
    };
    Rate::parse(rate.get_ref(), burst.map(|burst| *burst.get_ref()))
        .map_err(|problem| {
            checker
                .error(format!("invalid `rate`: {problem}"), rate.span())
                .hint("e.g. `rate = \"10/s\"`, `\"100/m\"` or `\"1000/h\"`, with `burst = 20` for calls that may come at once");
        })
        .ok()
}

/// The tool's limiter: its own rate, else the server's default.
pub(super) fn limiter(
    rate: Option<&Spanned<String>>,
    burst: Option<&Spanned<u32>>,
    default: Option<Rate>,
    checker: &mut Checker,
) -> Option<Arc<RateLimiter>> {
    parse(rate, burst, checker)
        .or(default)
        .map(|rate| Arc::new(RateLimiter::new(rate)))
}
