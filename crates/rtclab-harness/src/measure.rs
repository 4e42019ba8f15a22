//! Measurement pieces both engines share: column-oriented time series, the column sets of
//! `flows`, `link` and `fairness` (the same in both engines), Jain's index, delay percentiles.

use std::sync::Arc;

use rtclab_core::{LogHistogram, Time, TimeDelta};
use rtclab_scenario::Scenario;
use serde::Serialize;

/// Column-oriented time series: names and equally long f64 columns.
///
/// A column is shared: columns that hold the same values may be one vector (the `flows`
/// table's columns that no flow has a source for — twenty of a TCP run's 34, 2.4 MB each with
/// 1,000 flows for a minute — are one vector per value), and the Python binding lends each
/// vector once. A column is copied only if written while shared.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    pub names: Vec<&'static str>,
    pub data: Vec<Arc<Vec<f64>>>,
}

impl Columns {
    pub fn new(names: &[&'static str]) -> Self {
        Columns { names: names.to_vec(), data: names.iter().map(|_| Arc::default()).collect() }
    }
    pub fn push_row(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.data.len());
        for (c, v) in self.data.iter_mut().zip(row) {
            Arc::make_mut(c).push(*v);
        }
    }
    pub fn rows(&self) -> usize {
        self.data.first().map_or(0, |c| c.len())
    }
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.names.iter().position(|n| *n == name).map(|i| self.data[i].as_slice())
    }
}

/// Columns of `rows` rows that hold one value throughout, one shared vector per value (by its
/// bits): the `flows` table's columns no flow has a source for.
pub(crate) struct OneValueColumns {
    rows: usize,
    made: Vec<(u64, Arc<Vec<f64>>)>,
}

impl OneValueColumns {
    pub(crate) fn new(rows: usize) -> Self {
        OneValueColumns { rows, made: Vec::new() }
    }

    /// The column of `v` in every row (the one made before for the same bits, if any).
    pub(crate) fn of(&mut self, v: f64) -> Arc<Vec<f64>> {
        if let Some((_, c)) = self.made.iter().find(|(b, _)| *b == v.to_bits()) {
            return c.clone();
        }
        let c = Arc::new(vec![v; self.rows]);
        self.made.push((v.to_bits(), c.clone()));
        c
    }
}

/// Delay percentiles in ms (null where nothing was recorded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Percentiles {
    pub p5: Option<f64>,
    pub p25: Option<f64>,
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub mean: Option<f64>,
}

/// Percentiles in ms of a histogram of nanoseconds.
pub fn percentiles_ms(h: &LogHistogram) -> Percentiles {
    let q = |q: f64| h.quantile(q).map(|ns| ns as f64 / 1e6);
    Percentiles {
        p5: q(0.05),
        p25: q(0.25),
        p50: q(0.50),
        p75: q(0.75),
        p95: q(0.95),
        p99: q(0.99),
        mean: h.mean().map(|ns| ns / 1e6),
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe 1984): (sum x)^2 / (n sum x^2), in [1/n, 1].
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return None;
    }
    Some(s * s / (xs.len() as f64 * s2))
}

/// The leading columns of `flows.parquet`, in order; the controller series follow
/// ([`STANDARD_CC_SERIES`], then further names as controllers report them). The `stage_*`
/// columns are the mean latency breakdown of the frames displayed in the bin
/// (`rtclab_core::FRAME_STAGES`; NaN where none was).
pub const FLOW_COLUMNS: [&str; 25] = [
    "time_s",
    "flow",
    "throughput_mbps",
    "goodput_mbps",
    "sending_rate_mbps",
    "queuing_delay_ms_mean",
    "queuing_delay_ms_max",
    "one_way_delay_ms_mean",
    "drops",
    "cwnd_packets",
    "srtt_ms",
    "target_mbps",
    "frame_rate",
    "rendered_fps",
    "frame_delay_ms_mean",
    "frame_delay_ms_max",
    "cc_state",
    "stage_encode_ms",
    "stage_pacing_ms",
    "stage_retransmission_ms",
    "stage_queue_ms",
    "stage_propagation_ms",
    "stage_jitter_buffer_ms",
    "stage_decoder_queue_ms",
    "stage_decode_ms",
];

/// Where the `stage_*` columns begin in [`FLOW_COLUMNS`] (they end it).
pub const STAGE_COLUMNS_AT: usize = FLOW_COLUMNS.len() - rtclab_core::FRAME_STAGES.len();

/// Controller series every `flows.parquet` has (NaN where no controller reports them), so the
/// schema does not depend on which controllers ran or which engine ran them.
pub const STANDARD_CC_SERIES: [&str; 8] = [
    "detector_state",
    "delay_gradient",
    "threshold",
    "delay_based_mbps",
    "loss_based_mbps",
    "alr",
    "pushback_mbps",
    "velocity",
];

/// Controller state sampled at the end of each bin (NaN where not applicable).
#[derive(Clone, Debug, PartialEq)]
pub struct CcSample {
    pub cwnd_packets: f64,
    pub srtt_ms: f64,
    pub target_mbps: f64,
    /// `CcMetrics::state` (controller-specific code).
    pub state: f64,
    /// Named values from `CongestionController::metrics` (and, for media flows, the
    /// receiver's estimator): one `flows.parquet` column each.
    pub named: Vec<(&'static str, f64)>,
}

impl Default for CcSample {
    fn default() -> Self {
        CcSample {
            cwnd_packets: f64::NAN,
            srtt_ms: f64::NAN,
            target_mbps: f64::NAN,
            state: f64::NAN,
            named: Vec::new(),
        }
    }
}

/// The columns of `fairness.parquet`.
pub const FAIRNESS_COLUMNS: [&str; 4] = ["time_s", "jain", "active_flows", "aggregate_mbps"];

/// Jain's index per fairness window over the flows active for the whole window, from each
/// flow's delivered bytes per bin (`bytes(flow id)`, one entry per bin of `s.metrics.bin`).
pub fn fairness_columns<'a>(
    s: &Scenario,
    n_bins: usize,
    bytes: impl Fn(usize) -> &'a [u64],
) -> Columns {
    let mut c = Columns::new(&FAIRNESS_COLUMNS);
    let bin = s.metrics.bin;
    let per = (s.metrics.fairness_window.as_nanos() / bin.as_nanos()).max(1) as usize;
    let mut w = 0;
    while (w + 1) * per <= n_bins {
        let w0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * (w * per) as i64);
        let w1 = w0 + s.metrics.fairness_window;
        let xs: Vec<f64> = s
            .flows
            .iter()
            .filter(|f| f.start <= w0 && f.stop >= w1)
            .map(|f| {
                let b = bytes(f.id as usize);
                (w * per..(w + 1) * per).map(|i| b.get(i).copied().unwrap_or(0)).sum::<u64>() as f64
            })
            .collect();
        let agg = xs.iter().sum::<f64>() * 8.0 / s.metrics.fairness_window.as_secs_f64() / 1e6;
        c.push_row(&[w1.as_secs_f64(), jain(&xs).unwrap_or(f64::NAN), xs.len() as f64, agg]);
        w += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_known_values() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        // k equal flows and n-k starved flows give k/n.
        assert!((jain(&[5.0, 5.0, 0.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
