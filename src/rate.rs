//! Rate limits: `rate = "10/s"` and `burst = 20` on a tool (or as `[server]` defaults), kept
//! per tool and per caller (the token's subject, else the 2025 session, else the client's
//! address, else the one stdio client), so reconnecting does not reset them. A call over
//! its limit is refused before it runs, with the time to wait. Limits are per process: each
//! replica counts on its own.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

/// After this many checks, callers idle long enough to be back at full burst are forgotten,
/// so the table holds recent callers only.
const SWEEP_EVERY: u32 = 4096;
/// Beyond this many callers, every check sweeps: many addresses cost time, not memory.
const MAX_CALLERS: usize = 100_000;

/// The caller a client address stands for: the IPv4 address, or the IPv6 /64 (one host
/// usually holds a whole /64, and would otherwise have 2^64 allowances).
pub fn address_key(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => format!("ip:{v4}"),
        std::net::IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return format!("ip:{v4}");
            }
            let prefix = u128::from(v6) & !u128::from(u64::MAX);
            format!("ip:{}/64", std::net::Ipv6Addr::from(prefix))
        }
    }
}

/// A parsed `rate` and `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub calls: NonZeroU32,
    pub per: Duration,
    pub burst: NonZeroU32,
}

impl Rate {
    /// `"10/s"`, `"100/m"`, `"1000/h"` (also `sec`, `min`, `hour`); `burst` defaults to the
    /// count.
    pub fn parse(text: &str, burst: Option<u32>) -> Result<Self, String> {
        let (count, unit) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a rate such as \"10/s\""))?;
        let calls: NonZeroU32 = count
            .trim()
            .parse()
            .map_err(|_| format!("`{count}` is not a whole number of calls above 0"))?;
        let per = match unit.trim() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            other => return Err(format!("`{other}` is not a unit: use s, m or h")),
        };
        let burst = match burst {
            None => calls,
            Some(burst) => NonZeroU32::new(burst).ok_or("`burst` is at least 1")?,
        };
        Ok(Self { calls, per, burst })
    }

    fn quota(self) -> Quota {
        let interval = self.per / self.calls.get();
        Quota::with_period(interval.max(Duration::from_nanos(1)))
            .unwrap_or_else(|| Quota::per_second(self.calls))
            .allow_burst(self.burst)
    }
}

/// One tool's limiter, keyed by caller.
#[derive(Debug)]
pub struct RateLimiter {
    rate: Rate,
    callers: DefaultKeyedRateLimiter<String>,
    checks: AtomicU32,
}

/// A refused call: when it may be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub retry_after: Duration,
    pub rate: Rate,
}

impl RateLimiter {
    pub fn new(rate: Rate) -> Self {
        Self {
            rate,
            callers: governor::RateLimiter::keyed(rate.quota()),
            checks: AtomicU32::new(0),
        }
    }

    /// The rate it keeps.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Takes one call from `caller`'s allowance, or says how long to wait.
    pub fn check(&self, caller: &str) -> Result<(), Refused> {
        let sweep = self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1;
        if sweep || self.callers.len() > MAX_CALLERS {
            self.callers.retain_recent();
        }
        self.callers
            .check_key(&caller.to_owned())
            .map_err(|not_until| Refused {
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
                rate: self.rate,
            })
    }
}

impl Refused {
    /// The refusal, counting `what` (`call`, `request`): "at most 1 call an hour", "at
    /// most 10 requests a second".
    pub fn describe(&self, what: &str) -> String {
        let per = match self.rate.per.as_secs() {
            1 => "a second",
            60 => "a minute",
            _ => "an hour",
        };
        let plural = if self.rate.calls.get() == 1 { "" } else { "s" };
        format!(
            "rate limit: at most {} {what}{plural} {per} (bursts of {}); try again in {:.1}s",
            self.rate.calls,
            self.rate.burst,
            self.retry_after.as_secs_f64().max(0.1)
        )
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.describe("call"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_caller_is_its_64_and_a_mapped_ipv4_is_itself() {
        let key = |text: &str| address_key(text.parse().expect("an address"));
        assert_eq!(key("192.0.2.7"), "ip:192.0.2.7");
        assert_eq!(key("::ffff:192.0.2.7"), "ip:192.0.2.7");
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "ip:2001:db8:1:2::/64");
        assert_eq!(
            key("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            key("2001:db8:1:2::9")
        );
        assert_ne!(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
    }

    #[test]
    fn rates_parse_and_a_burst_is_refused_past_its_size_per_caller() {
        assert!(Rate::parse("10/d", None).is_err());
        assert!(Rate::parse("0/s", None).is_err());
        assert!(Rate::parse("ten/s", None).is_err());
        assert!(Rate::parse("5/s", Some(0)).is_err());
        let rate = Rate::parse("2/m", Some(3)).expect("rate");
        assert_eq!(
            (rate.calls.get(), rate.per, rate.burst.get()),
            (2, Duration::from_secs(60), 3)
        );
        let limiter = RateLimiter::new(rate);
        for _ in 0..3 {
            assert!(limiter.check("ada").is_ok());
        }
        let refused = limiter.check("ada").expect_err("over the burst");
        assert!(
            refused.retry_after > Duration::from_secs(20)
                && refused.retry_after <= Duration::from_secs(30),
            "{refused:?}"
        );
        assert!(
            refused
                .to_string()
                .starts_with("rate limit: at most 2 calls a minute (bursts of 3); try again in")
        );
        // Another caller has its own allowance.
        assert!(limiter.check("grace").is_ok());
    }
}
