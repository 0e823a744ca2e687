//! The table, the targets and the JSON.

use std::fmt::Write as _;

use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::measure::Figures;

/// Which way is better for a row.
#[derive(Debug, Clone, Copy)]
enum Better {
    Lower,
    Higher,
}

/// One row: a label, the figure, and the floor it is divided by.
struct Row {
    label: &'static str,
    key: &'static str,
    floor: Option<&'static str>,
    better: Better,
}

const fn row(label: &'static str, key: &'static str, floor: Option<&'static str>) -> Row {
    Row {
        label,
        key,
        floor,
        better: Better::Lower,
    }
}

const fn rate(label: &'static str, key: &'static str, floor: &'static str) -> Row {
    Row {
        label,
        key,
        floor: Some(floor),
        better: Better::Higher,
    }
}

const ROWS: &[Row] = &[
    row("cold start → initialize (ms)", "cold.initialize_ms", None),
    row("cold start → tools/list (ms)", "cold.tools_list_ms", None),
    row(
        "stdio static p50 (µs)",
        "stdio.static.p50_us",
        Some("floor.pipe.p50_us"),
    ),
    row(
        "stdio static p90 (µs)",
        "stdio.static.p90_us",
        Some("floor.pipe.p90_us"),
    ),
    row(
        "stdio static p99 (µs)",
        "stdio.static.p99_us",
        Some("floor.pipe.p99_us"),
    ),
    row(
        "stdio command p50 (µs)",
        "stdio.command.p50_us",
        Some("floor.spawn+pipe.p50_us"),
    ),
    row(
        "stdio command p90 (µs)",
        "stdio.command.p90_us",
        Some("floor.spawn+pipe.p90_us"),
    ),
    row(
        "stdio command p99 (µs)",
        "stdio.command.p99_us",
        Some("floor.spawn+pipe.p99_us"),
    ),
    row(
        "stdio command, sandboxed, p50 (µs)",
        "stdio.command_sandboxed.p50_us",
        Some("floor.spawn+pipe.p50_us"),
    ),
    row(
        "stdio command, sandboxed, p90 (µs)",
        "stdio.command_sandboxed.p90_us",
        Some("floor.spawn+pipe.p90_us"),
    ),
    row(
        "stdio command, sandboxed with a host list, p50 (µs)",
        "stdio.command_sandboxed_hosts.p50_us",
        Some("floor.spawn+pipe.p50_us"),
    ),
    row(
        "stdio command, sandboxed with a host list, p90 (µs)",
        "stdio.command_sandboxed_hosts.p90_us",
        Some("floor.spawn+pipe.p90_us"),
    ),
    row(
        "spawn floor beside the command calls p50 (µs)",
        "stdio.command_spawn_floor.p50_us",
        None,
    ),
    row(
        "stdio HTTP-backed p50 (µs)",
        "stdio.http.p50_us",
        Some("floor.pipe+http.p50_us"),
    ),
    row("stdio HTTP-backed p90 (µs)", "stdio.http.p90_us", None),
    row("stdio HTTP-backed p99 (µs)", "stdio.http.p99_us", None),
    row(
        "stdio HTTP, a page of 30 GitHub issues, p50 (µs)",
        "stdio.issues.p50_us",
        None,
    ),
    row(
        "stdio HTTP, the same page projected (`project`), p50 (µs)",
        "stdio.issues_projected.p50_us",
        None,
    ),
    row("answer bytes, the page", "bytes.issues", None),
    row(
        "answer bytes, the page projected",
        "bytes.issues_projected",
        None,
    ),
    rate(
        "HTTP static, 1 client (calls/s)",
        "http.static_c1.per_s",
        "floor.http_c1.per_s",
    ),
    rate(
        "HTTP static, 16 clients (calls/s)",
        "http.static_c16.per_s",
        "floor.http_c16.per_s",
    ),
    row(
        "HTTP static, 16 clients: errors",
        "http.static_c16.errors",
        None,
    ),
    rate(
        "HTTP HTTP-backed, 16 clients (calls/s)",
        "http.http_c16.per_s",
        "floor.http_c16.per_s",
    ),
    row(
        "HTTP HTTP-backed, 16 clients: errors",
        "http.http_c16.errors",
        None,
    ),
    row("peak RSS, stdio idle (MiB)", "rss.stdio_idle_mib", None),
    row(
        "peak RSS, stdio after the calls (MiB)",
        "rss.stdio_peak_mib",
        None,
    ),
    row(
        "peak RSS, HTTP 16 clients (MiB)",
        "rss.http_c16_peak_mib",
        None,
    ),
    row(
        "1,000 tools: load + list (ms)",
        "list.1000.load_and_list_ms",
        None,
    ),
    row("1,000 tools: tools/list p50 (µs)", "list.1000.p50_us", None),
    row("1,000 tools: answer (KiB)", "list.1000.kib", None),
    row("1,000 tools: peak RSS (MiB)", "list.1000.rss_mib", None),
    row(
        "10,000 tools: load + list (ms)",
        "list.10000.load_and_list_ms",
        None,
    ),
    row(
        "10,000 tools: tools/list p50 (µs)",
        "list.10000.p50_us",
        None,
    ),
    row("10,000 tools: answer (KiB)", "list.10000.kib", None),
    row("10,000 tools: peak RSS (MiB)", "list.10000.rss_mib", None),
    row(
        "tools/list slope (µs per tool)",
        "list.slope_us_per_tool",
        None,
    ),
    row("binary size (MiB)", "binary.size_mib", None),
    row(
        "tasks, embedded: plain tools/call p50 (µs)",
        "tasks.embedded.sync_call.p50_us",
        None,
    ),
    row(
        "tasks, embedded: start a task p50 (µs)",
        "tasks.embedded.start.p50_us",
        None,
    ),
    row(
        "tasks, embedded: start ÷ plain call",
        "tasks.embedded.start.x_sync",
        None,
    ),
    row(
        "tasks, embedded: tasks/get p50 (µs)",
        "tasks.embedded.get.p50_us",
        None,
    ),
    row(
        "tasks, embedded: start → completed p50 (µs)",
        "tasks.embedded.start_to_completed.p50_us",
        None,
    ),
    row(
        "tasks, Redis: plain tools/call p50 (µs)",
        "tasks.redis.sync_call.p50_us",
        None,
    ),
    row(
        "tasks, Redis: start a task p50 (µs)",
        "tasks.redis.start.p50_us",
        None,
    ),
    row(
        "tasks, Redis: start ÷ plain call",
        "tasks.redis.start.x_sync",
        None,
    ),
    row(
        "tasks, Redis: tasks/get p50 (µs)",
        "tasks.redis.get.p50_us",
        None,
    ),
    row(
        "tasks, Redis: start → completed p50 (µs)",
        "tasks.redis.start_to_completed.p50_us",
        None,
    ),
];

/// A figure's cost relative to the floor: above 1 is slower than the floor.
fn ratio(row: &Row, value: f64, floor: &Figures) -> Option<f64> {
    let floor = *floor.get(row.floor?)?;
    Some(match row.better {
        Better::Lower => value / floor,
        Better::Higher => floor / value,
    })
}

/// The markdown table of the medians: the floor, then each binary with its ratio.
pub(crate) fn table(floor: &Figures, binaries: &IndexMap<String, Figures>) -> String {
    let mut out = String::from("| measure | floor |");
    for label in binaries.keys() {
        let _ = write!(out, " {label} | × floor |");
    }
    out.push_str("\n|---|---:|");
    out.push_str(&"---:|---:|".repeat(binaries.len()));
    out.push('\n');
    for row in ROWS {
        let floor_value = row.floor.and_then(|key| floor.get(key));
        let _ = write!(out, "| {} | {} |", row.label, number(floor_value.copied()));
        for figures in binaries.values() {
            let value = figures.get(row.key).copied();
            let times = value.and_then(|value| ratio(row, value, floor));
            let _ = write!(
                out,
                " {} | {} |",
                number(value),
                times.map_or_else(String::new, |times| format!("{times:.2}"))
            );
        }
        out.push('\n');
    }
    out.push_str(
        "\n× floor: latency ÷ floor latency, or floor throughput ÷ throughput (1.00 = as fast as the \
         machine allows; the floor of a static call is a line through `cat`, of a command call \
         spawning the same `/bin/echo` plus that pipe round trip, of an HTTP-backed call the pipe plus one loopback GET, \
         of HTTP throughput a loopback GET to the same upstream).\n",
    );
    out
}

fn number(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(value) if value >= 100.0 || value.fract().abs() < 1e-9 => format!("{value:.0}"),
        Some(value) if value >= 10.0 => format!("{value:.1}"),
        Some(value) => format!("{value:.2}"),
    }
}

/// The targets that one run can check on its own (the comparison with the rmcp
/// peer needs the shared kit).
pub(crate) fn targets(floor: &Figures, figures: &Figures) -> Vec<(String, bool)> {
    let get = |key: &str| figures.get(key).copied().unwrap_or(f64::NAN);
    // The spawn floor sampled between this binary's own command calls (see measure.rs).
    let command = get("stdio.command.p50_us")
        / (get("stdio.command_spawn_floor.p50_us") + floor["floor.pipe.p50_us"]);
    let sandboxed = get("stdio.command_sandboxed.p50_us") / get("stdio.command.p50_us");
    vec![
        (
            format!(
                "command tool p50 ≤ 1.15 × (spawn beside the calls + pipe) floor: {command:.2}"
            ),
            command <= 1.15,
        ),
        (
            format!("sandboxed command p50 ≤ 1.3 × the same command unconfined: {sandboxed:.2}"),
            sandboxed <= 1.3,
        ),
        (
            format!(
                "cold start to tools/list ≤ 5 ms: {:.2} ms",
                get("cold.tools_list_ms")
            ),
            get("cold.tools_list_ms") <= 5.0,
        ),
        (
            format!(
                "10,000 tools load and list < 1 s: {:.0} ms",
                get("list.10000.load_and_list_ms")
            ),
            get("list.10000.load_and_list_ms") < 1000.0,
        ),
        (
            format!(
                "idle stdio peak RSS ≤ 10 MiB: {:.1} MiB",
                get("rss.stdio_idle_mib")
            ),
            get("rss.stdio_idle_mib") <= 10.0,
        ),
        (
            format!(
                "16-client HTTP peak RSS ≤ 16 MiB: {:.1} MiB",
                get("rss.http_c16_peak_mib")
            ),
            get("rss.http_c16_peak_mib") <= 16.0,
        ),
        (
            format!(
                "HTTP errors = 0: {:.0}",
                get("http.static_c16.errors") + get("http.http_c16.errors")
            ),
            get("http.static_c16.errors") + get("http.http_c16.errors") == 0.0,
        ),
    ]
}

/// Everything, for machines: every run's figures, the medians and the ratios.
pub(crate) fn json(
    meta: &Value,
    runs: &[(Figures, IndexMap<String, Figures>)],
    floor: &Figures,
    binaries: &IndexMap<String, Figures>,
) -> Value {
    let ratios: IndexMap<&String, IndexMap<&str, f64>> = binaries
        .iter()
        .map(|(label, figures)| {
            let ratios = ROWS
                .iter()
                .filter_map(|row| Some((row.key, ratio(row, *figures.get(row.key)?, floor)?)))
                .collect();
            (label, ratios)
        })
        .collect();
    json!({
        "meta": meta,
        "runs": runs.iter().map(|(floor, binaries)| json!({"floor": floor, "binaries": binaries})).collect::<Vec<_>>(),
        "median": {"floor": floor, "binaries": binaries},
        "ratios_to_floor": ratios,
    })
}
