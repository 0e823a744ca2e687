//! Prometheus metrics (`--metrics` on the MCP listener, `--metrics-addr` on a listener of
//! their own): tool calls by tool and outcome, call latency and queue wait histograms, calls
//! in flight, HTTP responses by status, refused tokens by reason, rate-limited calls, and
//! the process's own figures read from `/proc` at each scrape. Off unless asked for: then
//! nothing is counted and nothing costs.
//!
//! Labels come from the manifest (tool names) or fixed sets (outcomes, reasons, statuses),
//! never from a client, so a client cannot grow the series.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::outcome::Outcome;

/// One tool's series: a counter per outcome (in `Outcome` order) and its durations.
#[derive(Debug)]
struct ToolSeries {
    calls: [Counter; 6],
    duration: Histogram,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    tool: String,
    decision: &'static str,
    reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// Every series, and the registry that writes them out.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<ToolLabel, Histogram, fn() -> Histogram>,
    queue_wait: Histogram,
    in_flight: Gauge,
    http_responses: Family<StatusLabel, Counter>,
    auth_failures: Family<ReasonLabel, Counter>,
    egress: Family<DecisionLabels, Counter>,
    resident: Gauge,
    /// CPU time, a counter that follows `/proc`'s total at each scrape.
    cpu: Counter<f64, std::sync::atomic::AtomicU64>,
    open_fds: Gauge,
    threads: Gauge,
    /// One scrape reads `/proc` at a time, so the CPU counter moves once per tick.
    reading: std::sync::Mutex<()>,
    tools: std::sync::RwLock<std::collections::HashMap<String, std::sync::Arc<ToolSeries>>>,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("mcp_serve");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls, by tool and outcome",
            calls.clone(),
        );
        let durations: Family<ToolLabel, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(latency_histogram);
        registry.register_with_unit(
            "tool_call_duration",
            "Time from a call's start to its result, backend included, by tool",
            Unit::Seconds,
            durations.clone(),
        );
        let queue_wait = latency_histogram();
        registry.register_with_unit(
            "queue_wait",
            "Time a call waited for a free slot (--max-calls)",
            Unit::Seconds,
            queue_wait.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "calls_in_flight",
            "Tool calls running now",
            in_flight.clone(),
        );
        let http_responses = Family::<StatusLabel, Counter>::default();
        registry.register(
            "http_responses",
            "HTTP responses, by status",
            http_responses.clone(),
        );
        let auth_failures = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "auth_failures",
            "Requests refused by authentication, by reason",
            auth_failures.clone(),
        );
        let egress = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "egress_decisions",
            "Requests to the egress proxy, by tool, decision (allow, deny, fail) and reason",
            egress.clone(),
        );
        let process = registry.sub_registry_with_prefix("process");
        let resident = Gauge::default();
        process.register_with_unit(
            "resident_memory",
            "Resident memory",
            Unit::Bytes,
            resident.clone(),
        );
        let cpu = Counter::<f64, std::sync::atomic::AtomicU64>::default();
        process.register_with_unit(
            "cpu",
            "User and system CPU time used",
            Unit::Seconds,
            cpu.clone(),
        );
        let open_fds = Gauge::default();
        process.register("open_fds", "Open file descriptors", open_fds.clone());
        let threads = Gauge::default();
        process.register("threads", "Threads", threads.clone());
        let start = Gauge::<i64>::default();
        start.set(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| i64::try_from(since.as_secs()).unwrap_or(0)),
        );
        process.register_with_unit(
            "start_time",
            "When the process started, since the epoch",
            Unit::Seconds,
            start,
        );
        Self {
            registry,
            calls,
            durations,
            queue_wait,
            in_flight,
            http_responses,
            auth_failures,
            egress,
            resident,
            cpu,
            open_fds,
            threads,
            reading: std::sync::Mutex::default(),
            tools: std::sync::RwLock::default(),
        }
    }

    /// A call starts: it is in flight until the guard drops.
    pub fn call_started(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    pub fn call_ended(&self, tool: &str, outcome: Outcome, elapsed: Duration) {
        let Some(index) = outcome.ended_index() else {
            return;
        };
        let series = self.series(tool);
        series.calls[index].inc();
        if matches!(outcome, Outcome::Ok | Outcome::Error) {
            series.duration.observe(elapsed.as_secs_f64());
        }
    }

    /// A tool's series, made on its first call and then found without allocating.
    fn series(&self, tool: &str) -> std::sync::Arc<ToolSeries> {
        if let Ok(known) = self.tools.read()
            && let Some(series) = known.get(tool)
        {
            return series.clone();
        }
        let made = std::sync::Arc::new(ToolSeries {
            calls: Outcome::ENDED.map(|outcome| {
                self.calls
                    .get_or_create(&CallLabels {
                        tool: tool.to_owned(),
                        outcome: outcome.label(),
                    })
                    .clone()
            }),
            duration: self
                .durations
                .get_or_create(&ToolLabel {
                    tool: tool.to_owned(),
                })
                .clone(),
        });
        if let Ok(mut known) = self.tools.write() {
            known.insert(tool.to_owned(), made.clone());
        }
        made
    }

    pub fn waited(&self, elapsed: Duration) {
        self.queue_wait.observe(elapsed.as_secs_f64());
    }

    pub fn http_response(&self, status: u16) {
        self.http_responses
            .get_or_create(&StatusLabel { status })
            .inc();
    }

    pub fn auth_failure(&self, reason: &'static str) {
        self.auth_failures
            .get_or_create(&ReasonLabel { reason })
            .inc();
    }

    /// One decision of the egress proxy (`tool` is empty when the request named no call).
    pub fn egress_decision(&self, tool: &str, decision: &'static str, reason: &'static str) {
        self.egress
            .get_or_create(&DecisionLabels {
                tool: tool.to_owned(),
                decision,
                reason,
            })
            .inc();
    }

    /// The OpenMetrics text a scrape gets.
    pub fn render(&self) -> String {
        self.read_process();
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    fn read_process(&self) {
        let _reading = self.reading.lock();
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat")
            && let Some(after) = stat.rfind(')').map(|end| &stat[end + 2..])
        {
            let fields: Vec<&str> = after.split_ascii_whitespace().collect();
            // Fields after the name, from `state` (3): utime 14, stime 15, threads 20.
            let field = |number: usize| {
                fields
                    .get(number - 3)
                    .and_then(|value| value.parse::<i64>().ok())
            };
            // `/proc` counts CPU time in USER_HZ ticks, which Linux fixes at 100 a second.
            if let (Some(user), Some(system)) = (field(14), field(15)) {
                #[allow(clippy::cast_precision_loss)]
                let total = (user + system) as f64 / 100.0;
                let counted = self.cpu.get();
                if total > counted {
                    self.cpu.inc_by(total - counted);
                }
            }
            if let Some(threads) = field(20) {
                self.threads.set(threads);
            }
        }
        if let Ok(status) = std::fs::read_to_string("/proc/self/status")
            && let Some(kib) = status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| {
                    value
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<i64>()
                        .ok()
                })
        {
            self.resident.set(kib * 1024);
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            self.open_fds
                .set(i64::try_from(entries.count()).unwrap_or(i64::MAX));
        }
    }
}

/// Decrements the calls in flight when dropped (also when a call is cancelled).
#[derive(Debug)]
pub struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_appear_as_calls_are_counted() {
        let metrics = Metrics::new();
        {
            let _running = metrics.call_started();
            assert!(metrics.render().contains("mcp_serve_calls_in_flight 1\n"));
            metrics.call_ended("search", Outcome::Ok, Duration::from_millis(3));
        }
        metrics.call_ended("search", Outcome::Busy, Duration::ZERO);
        metrics.auth_failure("expired");
        metrics.egress_decision("fetch", "deny", "not-listed");
        let text = metrics.render();
        assert!(text.contains("mcp_serve_calls_in_flight 0\n"), "{text}");
        assert!(
            text.contains("mcp_serve_tool_calls_total{tool=\"search\",outcome=\"ok\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mcp_serve_tool_calls_total{tool=\"search\",outcome=\"busy\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mcp_serve_tool_call_duration_seconds_count{tool=\"search\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mcp_serve_auth_failures_total{reason=\"expired\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mcp_serve_egress_decisions_total{tool=\"fetch\",decision=\"deny\",reason=\"not-listed\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mcp_serve_process_resident_memory_bytes "),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
}
