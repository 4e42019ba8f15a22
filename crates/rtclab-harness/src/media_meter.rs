//! What a media flow's receiver reported, per time-series bin and as a list of interruptions
//! (freezes of the display, stalls of frame completion) — the timeline of the QoE-first report
//! (frame delay over time, rendered frame rate, freezes and stalls marked), fed the same way by
//! both engines from the receiver's `FrameComplete`, `FrameDisplayed`, `Freeze` and `Stall`
//! events — and the delay distributions both engines export
//! (`distributions.parquet`, the report's CDFs) from their histograms.

use rtclab_core::{FrameStages, LogHistogram, Time, TimeDelta};

use crate::measure::Columns;

/// One media flow's per-bin frame counts and delays, and its freezes.
#[derive(Clone, Debug, Default)]
pub struct MediaBins {
    /// Per bin (index = time / bin): frames completed, the sum and maximum of their delays (ns),
    /// frames displayed. Grown as events arrive; a bin past the end reads as zero.
    frames: Vec<u64>,
    delay_sum_ns: Vec<u64>,
    delay_max_ns: Vec<u64>,
    displayed: Vec<u64>,
    /// Per bin: the sums of the displayed frames' stages (ns, [`rtclab_core::FRAME_STAGES`] order).
    stage_sum_ns: Vec<[u64; 8]>,
    /// Each freeze of the display that ended: (start, duration), in time order.
    pub freezes: Vec<(Time, TimeDelta)>,
    /// Each stall of frame completion that ended: (start, duration), in time order.
    pub stalls: Vec<(Time, TimeDelta)>,
}

impl MediaBins {
    fn grow(&mut self, bin: usize) {
        if self.frames.len() <= bin {
            let n = bin + 1;
            self.frames.resize(n, 0);
            self.delay_sum_ns.resize(n, 0);
            self.delay_max_ns.resize(n, 0);
            self.displayed.resize(n, 0);
            self.stage_sum_ns.resize(n, [0; 8]);
        }
    }

    /// A frame completed (all its packets arrived) in bin `bin`, `delay` after its capture.
    pub fn on_frame(&mut self, bin: usize, delay: TimeDelta) {
        self.grow(bin);
        let ns = delay.as_nanos().max(0) as u64;
        self.frames[bin] += 1;
        self.delay_sum_ns[bin] += ns;
        self.delay_max_ns[bin] = self.delay_max_ns[bin].max(ns);
    }

    /// A frame was shown in bin `bin`, its delay spent as `stages` said.
    pub fn on_display(&mut self, bin: usize, stages: &FrameStages) {
        self.grow(bin);
        self.displayed[bin] += 1;
        for (s, d) in self.stage_sum_ns[bin].iter_mut().zip(stages.0) {
            *s += d.as_nanos().max(0) as u64;
        }
    }

    /// The mean time (ms) the frames shown in bin `b` spent in each stage; NaN where none
    /// was shown.
    /// Bins that have a count of frames completed (zero: none completed in the run).
    pub fn frames_completed_bins(&self) -> usize {
        self.frames.len()
    }

    /// Bins that have a count of frames displayed (zero: none displayed in the run).
    pub fn frames_displayed_bins(&self) -> usize {
        self.displayed.len()
    }

    pub fn stage_means_ms(&self, b: usize) -> [f64; 8] {
        match self.displayed.get(b).copied().unwrap_or(0) {
            0 => [f64::NAN; 8],
            n => self.stage_sum_ns[b].map(|s| s as f64 / n as f64 / 1e6),
        }
    }

    /// A freeze of the display ended at `now`, having lasted `duration`.
    pub fn on_freeze(&mut self, now: Time, duration: TimeDelta) {
        self.freezes.push((now - duration, duration));
    }

    /// Frames stopped completing until `now`, for `duration`.
    pub fn on_stall(&mut self, now: Time, duration: TimeDelta) {
        self.stalls.push((now - duration, duration));
    }

    /// Frames completed per second in bin `b`.
    pub fn frame_rate(&self, b: usize, bin: TimeDelta) -> f64 {
        self.frames.get(b).copied().unwrap_or(0) as f64 / bin.as_secs_f64()
    }

    /// Frames displayed per second in bin `b` (what the viewer saw).
    pub fn rendered_fps(&self, b: usize, bin: TimeDelta) -> f64 {
        self.displayed.get(b).copied().unwrap_or(0) as f64 / bin.as_secs_f64()
    }

    /// Mean and maximum delay (ms) of the frames completed in bin `b`; NaN where none did.
    pub fn frame_delay_ms(&self, b: usize) -> (f64, f64) {
        match self.frames.get(b).copied().unwrap_or(0) {
            0 => (f64::NAN, f64::NAN),
            n => (self.delay_sum_ns[b] as f64 / n as f64 / 1e6, self.delay_max_ns[b] as f64 / 1e6),
        }
    }
}

/// A frame is late past this capture → display delay: the chapters' deadline miss (AFR's
/// T > 100 ms, whose share per session is the session stall ratio; Hairpin's deadline).
pub const DEADLINE: TimeDelta = TimeDelta::from_millis(100);

/// What a media flow's viewer saw in the measurement window: frames shown, their delays and
/// stage breakdowns, and how many missed the [`DEADLINE`].
#[derive(Clone, Debug)]
pub struct DisplayMeter {
    pub displayed: u64,
    pub delay: LogHistogram,
    /// Per stage ([`rtclab_core::FRAME_STAGES`] order), ns.
    pub stages: [LogHistogram; 8],
    pub deadline_misses: u64,
}

impl Default for DisplayMeter {
    fn default() -> Self {
        DisplayMeter {
            displayed: 0,
            delay: LogHistogram::new(),
            stages: std::array::from_fn(|_| LogHistogram::new()),
            deadline_misses: 0,
        }
    }
}

impl DisplayMeter {
    pub fn record(&mut self, delay: TimeDelta, stages: &FrameStages) {
        self.displayed += 1;
        self.delay.record(delay.as_nanos().max(0) as u64);
        for (h, d) in self.stages.iter_mut().zip(stages.0) {
            h.record(d.as_nanos().max(0) as u64);
        }
        if delay > DEADLINE {
            self.deadline_misses += 1;
        }
    }
}

/// The columns of `interruptions.parquet`: one row per freeze of a media flow's display
/// (`kind` 0) or stall of its frame completion (`kind` 1), by flow, then kind, then time.
pub const INTERRUPTION_COLUMNS: [&str; 4] = ["flow", "kind", "start_s", "duration_s"];

/// Codes of `interruptions.parquet`'s `kind`, in code order.
pub const INTERRUPTION_KINDS: [&str; 2] = ["freeze", "stall"];

/// Every flow's freezes and stalls (`flows` yields each media flow's id and meter).
pub fn interruption_columns<'a>(flows: impl Iterator<Item = (usize, &'a MediaBins)>) -> Columns {
    let mut c = Columns::new(&INTERRUPTION_COLUMNS);
    for (id, m) in flows {
        for (kind, list) in [&m.freezes, &m.stalls].into_iter().enumerate() {
            for &(start, d) in list {
                let row =
                    [id as f64, kind as f64, (start - Time::ZERO).as_secs_f64(), d.as_secs_f64()];
                c.push_row(&row);
            }
        }
    }
    c
}

/// The columns of `distributions.parquet`: per flow and metric (code, [`DISTRIBUTION_METRICS`]),
/// the delay (ms) at each of [`DISTRIBUTION_PERCENTILES`] over the measurement window.
pub const DISTRIBUTION_COLUMNS: [&str; 4] = ["flow", "metric", "percentile", "value_ms"];

/// Metric codes of `distributions.parquet`, in code order: the delays, then each stage of
/// displayed frames' latency breakdown ([`rtclab_core::FRAME_STAGES`], prefixed `stage_`).
pub const DISTRIBUTION_METRICS: [&str; 12] = [
    "queuing_delay",
    "one_way_delay",
    "frame_delay",
    "display_delay",
    "stage_encode",
    "stage_pacing",
    "stage_retransmission",
    "stage_queue",
    "stage_propagation",
    "stage_jitter_buffer",
    "stage_decoder_queue",
    "stage_decode",
];

/// 0, 2, ..., 100 and the tail points 99, 99.9: enough for a CDF plot, small for 2,000 flows.
pub const DISTRIBUTION_PERCENTILES: [f64; 53] = {
    let mut p = [0.0; 53];
    let mut i = 0;
    while i <= 50 {
        p[i] = 2.0 * i as f64;
        i += 1;
    }
    p[51] = 99.0;
    p[52] = 99.9;
    p
};

/// The distributions of every flow's delays: `flows` yields each flow's id, its packet
/// delay histograms (queuing, one-way), frame-delay histogram and display meter (`None`
/// where the flow has no such metric). Empty histograms give no rows. Percentiles are
/// nearest-rank, as in `summary.json`.
pub fn distribution_columns<'a>(
    flows: impl Iterator<Item = (usize, [Option<&'a LogHistogram>; 3], Option<&'a DisplayMeter>)>,
) -> Columns {
    let mut c = Columns::new(&DISTRIBUTION_COLUMNS);
    for (id, packet, display) in flows {
        let hists = packet
            .into_iter()
            .chain(std::iter::once(display.map(|d| &d.delay)))
            .chain((0..8).map(|s| display.map(|d| &d.stages[s])));
        for (code, h) in hists.enumerate() {
            let Some(h) = h.filter(|h| h.count() > 0) else { continue };
            let mut pts: Vec<f64> = DISTRIBUTION_PERCENTILES.to_vec();
            pts.sort_by(f64::total_cmp);
            let fractions: Vec<f64> = pts.iter().map(|p| p / 100.0).collect();
            for (p, v) in pts.iter().zip(h.quantiles(&fractions)) {
                let v = v.map_or(f64::NAN, |ns| ns as f64 / 1e6);
                c.push_row(&[id as f64, code as f64, *p, v]);
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FRAME_STAGES;

    #[test]
    fn bins_report_rates_delays_and_nan_where_no_frame() {
        let mut m = MediaBins::default();
        let bin = TimeDelta::from_millis(200);
        m.on_frame(1, TimeDelta::from_millis(40));
        m.on_frame(1, TimeDelta::from_millis(80));
        let stages = FrameStages([TimeDelta::from_millis(10); 8]);
        m.on_display(1, &stages);
        assert_eq!(m.stage_means_ms(1), [10.0; 8]);
        assert!(m.stage_means_ms(0)[3].is_nan());
        assert_eq!(m.frame_rate(1, bin), 10.0);
        assert_eq!(m.rendered_fps(1, bin), 5.0);
        assert_eq!(m.frame_delay_ms(1), (60.0, 80.0));
        assert!(m.frame_delay_ms(0).0.is_nan() && m.frame_delay_ms(7).1.is_nan());
        assert_eq!(m.frame_rate(7, bin), 0.0);
    }

    #[test]
    fn freezes_and_stalls_start_where_they_began() {
        let mut m = MediaBins::default();
        m.on_freeze(Time::ZERO + TimeDelta::from_millis(1500), TimeDelta::from_millis(300));
        m.on_stall(Time::ZERO + TimeDelta::from_millis(1400), TimeDelta::from_millis(250));
        let c = interruption_columns([(3, &m)].into_iter());
        assert_eq!(c.rows(), 2);
        assert_eq!(c.column("flow").unwrap(), &[3.0, 3.0]);
        assert_eq!(c.column("kind").unwrap(), &[0.0, 1.0]);
        let start = c.column("start_s").unwrap();
        assert!((start[0] - 1.2).abs() < 1e-9 && (start[1] - 1.15).abs() < 1e-9);
        assert!((c.column("duration_s").unwrap()[0] - 0.3).abs() < 1e-9);
    }

    #[test]
    fn distributions_are_monotone_and_skip_empty_metrics() {
        let mut h = LogHistogram::new();
        for ms in 1..=100u64 {
            h.record(ms * 1_000_000);
        }
        let empty = LogHistogram::new();
        let c = distribution_columns([(0, [Some(&h), Some(&empty), None], None)].into_iter());
        assert_eq!(c.rows(), DISTRIBUTION_PERCENTILES.len());
        let v = c.column("value_ms").unwrap();
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "{v:?}");
        assert!((v[0] - 1.0).abs() < 0.01 && (v[v.len() - 1] - 100.0).abs() < 1.0);
        let p = c.column("percentile").unwrap();
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        assert!(c.column("metric").unwrap().iter().all(|&m| m == 0.0));
    }

    #[test]
    fn the_display_meter_counts_deadline_misses_and_each_stage() {
        let mut d = DisplayMeter::default();
        let mut s = FrameStages::default();
        s.0[4] = TimeDelta::from_millis(60);
        d.record(TimeDelta::from_millis(60), &s);
        s.0[5] = TimeDelta::from_millis(50);
        d.record(TimeDelta::from_millis(110), &s);
        assert_eq!((d.displayed, d.deadline_misses), (2, 1));
        let c = distribution_columns([(1, [None, None, None], Some(&d))].into_iter());
        // display delay + 8 stages, one CDF each.
        assert_eq!(c.rows(), 9 * DISTRIBUTION_PERCENTILES.len());
        let codes = c.column("metric").unwrap();
        assert_eq!(codes[0], 3.0);
        assert_eq!(FRAME_STAGES.len() + 4, DISTRIBUTION_METRICS.len());
        for (i, name) in FRAME_STAGES.iter().enumerate() {
            assert_eq!(DISTRIBUTION_METRICS[4 + i], format!("stage_{name}"));
        }
    }
}
