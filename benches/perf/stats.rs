//! Percentiles and medians.

use std::time::Duration;

use serde::Serialize;

/// Latencies of one series, in microseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Latency {
    pub(crate) n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub(crate) max: f64,
    pub(crate) mean: f64,
}

impl Latency {
    pub(crate) fn of(samples: &[Duration]) -> Self {
        let mut micros: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        micros.sort_by(f64::total_cmp);
        let n = micros.len();
        #[expect(clippy::cast_precision_loss, reason = "sample counts are small")]
        let mean = micros.iter().sum::<f64>() / n.max(1) as f64;
        Self {
            n,
            p50: percentile(&micros, 0.50),
            p90: percentile(&micros, 0.90),
            p99: percentile(&micros, 0.99),
            max: micros.last().copied().unwrap_or(0.0),
            mean,
        }
    }
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a small vector"
    )]
    let rank = ((fraction * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The median of several runs' figures.
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]),
    }
}
