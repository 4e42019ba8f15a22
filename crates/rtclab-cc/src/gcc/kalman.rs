//! The arrival-time Kalman filter of the 2017 paper (libwebrtc `OveruseEstimator`, spec
//! `gcc.md` §2.14).
//!
//! State θ = [1/C (ms per byte), m (queuing delay offset, ms)]; per group the measurement is
//! z = Δarrival − Δsend with h = [Δsize, 1]:
//!
//! ```text
//! E += Q ; E[1][1] += 10·Q[1] if the offset moves against the current hypothesis
//! residual = z − h·θ
//! (Normal state only) noise: r = clamp(residual, ±3σ); α = 0.01 (first 300) else 0.002
//!   β = (1−α)^(30·min_frame_period_ms/1000); avg_v = β·avg_v + (1−β)·r;
//!   var_v = max(1, β·var_v + (1−β)·(avg_v − r)²)
//! K = E·h / (var_v + hᵀ·E·h) ; E = (I − K·hᵀ)·E ; θ += K·residual
//! ```
//! Initial values: θ = [8/512, 0], E = diag(100, 0.1), Q = diag(1e-13, 1e-3), var_v = 50.
//!
//! `chrome_2013` follows 2013's `OveruseDetector::UpdateKalman` (overuse_detector.cc of
//! 2012-2013, read in the webrtc.org trunk Firefox imported then) where it differs: Q scaled by
//! the shortest frame interval of the last 60 over 33.3 ms; the noise updated while the
//! detector is in a stable state (its statistic within γ: min(N, 60)·|m| < γ on the REMB path)
//! instead of in the Normal hypothesis; a residual beyond 3σ enters the noise as +3σ whatever
//! its sign; the variance floored at 1e-7 instead of 1. With it, [`KalmanDelayDetector`] groups strictly by send (RTP) timestamp, with
//! no burst merging, as that detector did.

use super::BandwidthUsage;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KalmanConfig {
    pub initial_slope: f64,
    pub initial_offset: f64,
    pub initial_e: [[f64; 2]; 2],
    pub process_noise: [f64; 2],
    pub initial_var_noise: f64,
    /// 2013's `OveruseDetector` (module doc).
    pub chrome_2013: bool,
}

impl Default for KalmanConfig {
    fn default() -> Self {
        KalmanConfig {
            initial_slope: 8.0 / 512.0,
            initial_offset: 0.0,
            initial_e: [[100.0, 0.0], [0.0, 1e-1]],
            process_noise: [1e-13, 1e-3],
            initial_var_noise: 50.0,
            chrome_2013: false,
        }
    }
}

const DELTA_COUNTER_MAX: u32 = 1000;
const MIN_FRAME_PERIOD_HISTORY: usize = 60;

#[derive(Clone, Debug)]
pub struct KalmanEstimator {
    cfg: KalmanConfig,
    num_deltas: u32,
    slope: f64,
    offset: f64,
    prev_offset: f64,
    e: [[f64; 2]; 2],
    avg_noise: f64,
    var_noise: f64,
    ts_delta_hist: VecDeque<f64>,
}

impl KalmanEstimator {
    pub fn new(cfg: KalmanConfig) -> Self {
        KalmanEstimator {
            cfg,
            num_deltas: 0,
            slope: cfg.initial_slope,
            offset: cfg.initial_offset,
            prev_offset: cfg.initial_offset,
            e: cfg.initial_e,
            avg_noise: 0.0,
            var_noise: cfg.initial_var_noise,
            ts_delta_hist: VecDeque::with_capacity(MIN_FRAME_PERIOD_HISTORY),
        }
    }

    /// Queuing-delay offset m (ms).
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// Estimated 1/C (ms per byte).
    pub fn slope(&self) -> f64 {
        self.slope
    }
    pub fn var_noise(&self) -> f64 {
        self.var_noise
    }
    pub fn num_deltas(&self) -> u32 {
        self.num_deltas
    }

    /// One group: arrival delta and send delta in ms, size delta in bytes, the detector's
    /// current hypothesis, and what it compares with which threshold γ (2013's stable state is
    /// the statistic within γ: min(N, 60)·|m| < γ on the REMB path, as 2013's code).
    pub fn update(
        &mut self,
        t_delta_ms: f64,
        ts_delta_ms: f64,
        size_delta: i64,
        state: BandwidthUsage,
        (statistic, threshold): (DelayStatistic, f64),
    ) {
        let min_frame_period = self.update_min_frame_period(ts_delta_ms);
        let z = t_delta_ms - ts_delta_ms;
        let fs = size_delta as f64;
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let scale = if self.cfg.chrome_2013 { min_frame_period / (1000.0 / 30.0) } else { 1.0 };
        let q = [self.cfg.process_noise[0] * scale, self.cfg.process_noise[1] * scale];
        self.e[0][0] += q[0];
        self.e[1][1] += q[1];
        if (state == BandwidthUsage::Overusing && self.offset < self.prev_offset)
            || (state == BandwidthUsage::Underusing && self.offset > self.prev_offset)
        {
            self.e[1][1] += 10.0 * q[1];
        }
        let h = [fs, 1.0];
        let eh =
            [self.e[0][0] * h[0] + self.e[0][1] * h[1], self.e[1][0] * h[0] + self.e[1][1] * h[1]];
        let residual = z - self.slope * h[0] - self.offset;
        let max_residual = 3.0 * self.var_noise.sqrt();
        if self.cfg.chrome_2013 {
            let stable = statistic.of(self.num_deltas, self.offset).abs() < threshold;
            if stable {
                let r = if residual.abs() < max_residual { residual } else { max_residual };
                self.update_noise(r, min_frame_period);
            }
        } else if state == BandwidthUsage::Normal {
            self.update_noise(residual.clamp(-max_residual, max_residual), min_frame_period);
        }
        let denom = self.var_noise + h[0] * eh[0] + h[1] * eh[1];
        let k = [eh[0] / denom, eh[1] / denom];
        let ikh = [[1.0 - k[0] * h[0], -k[0] * h[1]], [-k[1] * h[0], 1.0 - k[1] * h[1]]];
        let e = self.e;
        self.e = [
            [ikh[0][0] * e[0][0] + ikh[0][1] * e[1][0], ikh[0][0] * e[0][1] + ikh[0][1] * e[1][1]],
            [ikh[1][0] * e[0][0] + ikh[1][1] * e[1][0], ikh[1][0] * e[0][1] + ikh[1][1] * e[1][1]],
        ];
        self.slope += k[0] * residual;
        self.prev_offset = self.offset;
        self.offset += k[1] * residual;
    }

    fn update_min_frame_period(&mut self, ts_delta_ms: f64) -> f64 {
        if self.ts_delta_hist.len() >= MIN_FRAME_PERIOD_HISTORY {
            self.ts_delta_hist.pop_front();
        }
        let min = self.ts_delta_hist.iter().copied().fold(ts_delta_ms, f64::min);
        self.ts_delta_hist.push_back(ts_delta_ms);
        min
    }

    fn update_noise(&mut self, residual: f64, ts_delta_ms: f64) {
        let alpha: f64 = if self.num_deltas > 10 * 30 { 0.002 } else { 0.01 };
        let beta = (1.0 - alpha).powf(ts_delta_ms * 30.0 / 1000.0);
        self.avg_noise = beta * self.avg_noise + (1.0 - beta) * residual;
        self.var_noise = beta * self.var_noise
            + (1.0 - beta) * (self.avg_noise - residual) * (self.avg_noise - residual);
        let floor = if self.cfg.chrome_2013 { 1e-7 } else { 1.0 };
        if self.var_noise < floor {
            self.var_noise = floor;
        }
    }
}

/// Inter-arrival grouping + Kalman filter + over-use detector: the delay-based part of the
/// paper's receiver-side GCC (libwebrtc `RemoteBitrateEstimator*`'s detector chain).
#[derive(Clone, Debug)]
pub struct KalmanDelayDetector {
    inter_arrival: super::inter_arrival::InterArrival,
    estimator: KalmanEstimator,
    detector: super::detector::OveruseDetector,
    statistic: DelayStatistic,
}

/// libwebrtc `kMinNumDeltas`: the REMB path's statistic is min(N, 60)·m.
const MIN_NUM_DELTAS: u32 = 60;

/// What the over-use detector compares with the threshold γ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayStatistic {
    /// The paper's and draft-02's m(t_i) itself, in ms (ToN 2017 eq. (5)-(6); draft §5.4).
    Paper,
    /// libwebrtc's REMB path (`OveruseEstimator` + `OveruseDetector`): min(N, 60)·m, N the
    /// number of deltas seen, so a settled filter's m is scaled 60×.
    RembPath,
}

impl DelayStatistic {
    /// The statistic for an estimate m after `num_deltas` deltas.
    pub fn of(self, num_deltas: u32, m: f64) -> f64 {
        match self {
            DelayStatistic::Paper => m,
            DelayStatistic::RembPath => num_deltas.min(MIN_NUM_DELTAS) as f64 * m,
        }
    }
}

impl KalmanDelayDetector {
    pub fn new(
        kalman: KalmanConfig,
        detector: super::detector::DetectorConfig,
        statistic: DelayStatistic,
    ) -> Self {
        KalmanDelayDetector {
            inter_arrival: super::inter_arrival::InterArrival::new(
                super::inter_arrival::GROUP_LENGTH_NS,
                !kalman.chrome_2013,
            ),
            estimator: KalmanEstimator::new(kalman),
            detector: super::detector::OveruseDetector::new(detector),
            statistic,
        }
    }

    /// The statistic compared with γ now (ms).
    pub fn statistic(&self) -> f64 {
        self.statistic.of(self.estimator.num_deltas(), self.estimator.offset())
    }

    /// One received packet: its send time (from abs-send-time or RTP timestamps), arrival
    /// time, and size. Times in nanoseconds on any consistent clocks.
    pub fn on_packet(&mut self, send_ns: i64, arrival_ns: i64, size: i64) -> BandwidthUsage {
        if let Some(d) = self.inter_arrival.compute_deltas(send_ns, arrival_ns, arrival_ns, size) {
            let ts_delta_ms = d.send_delta.as_nanos() as f64 / 1e6;
            let t_delta_ms = d.arrival_delta.as_nanos() as f64 / 1e6;
            self.estimator.update(
                t_delta_ms,
                ts_delta_ms,
                d.size_delta,
                self.detector.state(),
                (self.statistic, self.detector.threshold()),
            );
            if self.estimator.num_deltas() >= 2 {
                let m = self.estimator.offset();
                self.detector.detect(self.statistic(), m, ts_delta_ms, arrival_ns as f64 / 1e6);
            }
        }
        self.detector.state()
    }

    pub fn state(&self) -> BandwidthUsage {
        self.detector.state()
    }
    pub fn estimator(&self) -> &KalmanEstimator {
        &self.estimator
    }
    pub fn threshold(&self) -> f64 {
        self.detector.threshold()
    }
    pub fn set_threshold(&mut self, threshold: f64) {
        self.detector.set_threshold(threshold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcc::detector::DetectorConfig;

    /// 2013's filter updates its noise only in a stable state (min(N, 60)·|m| < γ), whatever
    /// the hypothesis; the later one only in the Normal hypothesis, whatever γ.
    #[test]
    fn the_2013_filter_gates_its_noise_on_the_threshold() {
        let feed = |chrome_2013: bool, threshold: f64| {
            let mut k =
                KalmanEstimator::new(KalmanConfig { chrome_2013, ..KalmanConfig::default() });
            for i in 0..50 {
                let jitter = if i % 2 == 0 { 4.0 } else { -4.0 };
                let stat = (DelayStatistic::RembPath, threshold);
                k.update(33.3 + jitter, 33.3, 0, BandwidthUsage::Normal, stat);
            }
            k.var_noise()
        };
        assert_eq!(feed(true, 0.0), 50.0); // never stable: the initial variance stays
        assert!(feed(true, 1e9) < 50.0);
        assert_eq!(feed(false, 0.0), feed(false, 1e9));
        assert!(feed(false, 0.0) < 50.0);
    }

    /// Frames that arrive back to back as a queue drains: the later detector merges them into
    /// one burst group, 2013's kept one group per frame (RTP timestamp).
    #[test]
    fn the_2013_detector_does_not_merge_bursts() {
        let deltas = |chrome_2013: bool| {
            let cfg = KalmanConfig { chrome_2013, ..KalmanConfig::default() };
            let mut d =
                KalmanDelayDetector::new(cfg, DetectorConfig::paper(), DelayStatistic::RembPath);
            let frame = 33_333_333;
            // Ten frames queued 100 ms, then arriving 1 ms apart.
            for i in 0..10i64 {
                d.on_packet(i * frame, 100_000_000 + i * frame, 1200);
            }
            for i in 10..20i64 {
                d.on_packet(i * frame, 100_000_000 + 9 * frame + (i - 9) * 1_000_000, 1200);
            }
            d.on_packet(20 * frame, 100_000_000 + 21 * frame, 1200);
            d.estimator().num_deltas()
        };
        assert!(deltas(true) > deltas(false) + 5, "{} {}", deltas(true), deltas(false));
    }

    #[test]
    fn the_remb_path_scales_m_by_the_deltas_seen_and_the_paper_does_not() {
        assert_eq!(DelayStatistic::Paper.of(500, 0.5), 0.5);
        assert_eq!(DelayStatistic::RembPath.of(10, 0.5), 5.0);
        assert_eq!(DelayStatistic::RembPath.of(500, 0.5), 30.0);
    }

    /// A queue growing by 1 ms per 5 ms group (sending 20 % above capacity) drives m to about
    /// 1 ms: the REMB path's statistic (≈ 60 ms) passes γ = 12.5 and signals over-use; the
    /// paper's m stays below a static γ = 12.5, and passes the adaptive γ once that has
    /// fallen (K_d) through a quiet phase to its floor.
    #[test]
    fn a_growing_queue_is_over_use_for_the_remb_path_and_for_an_adapted_paper_threshold() {
        let run = |stat: DelayStatistic, det: DetectorConfig, quiet: i64| {
            let mut d = KalmanDelayDetector::new(KalmanConfig::default(), det, stat);
            let mut over = 0;
            let mut arrival = 50_000_000;
            for i in 0..quiet + 200 {
                arrival += if i < quiet { 5_000_000 } else { 6_000_000 };
                if d.on_packet(i * 5_000_000, arrival, 1200) == BandwidthUsage::Overusing {
                    over += 1;
                }
            }
            (over, d.statistic(), d.threshold())
        };
        let (over, stat, _) = run(DelayStatistic::RembPath, DetectorConfig::paper(), 0);
        assert!(over > 0 && stat > 12.5, "{over} {stat}");
        let static_paper = DetectorConfig { adaptive: false, ..DetectorConfig::paper_unscaled() };
        let (over, stat, thr) = run(DelayStatistic::Paper, static_paper, 4000);
        assert!(over == 0 && stat < thr, "{over} {stat} {thr}");
        let (over, _, _) = run(DelayStatistic::Paper, DetectorConfig::paper_unscaled(), 4000);
        assert!(over > 0, "{over}");
        // Under the unconverted floor of 6 ms the paper's m never reaches γ.
        let (over, stat, thr) = run(DelayStatistic::Paper, DetectorConfig::paper(), 4000);
        assert!(over == 0 && stat < thr, "{over} {stat} {thr}");
    }
}
