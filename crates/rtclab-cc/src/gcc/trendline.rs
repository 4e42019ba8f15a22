//! Trendline delay-gradient estimator (libwebrtc `TrendlineEstimator`, spec `gcc.md` §2.3).
//!
//! ```text
//! d = Δarrival − Δsend ; acc += d ; smoothed = 0.9·smoothed + 0.1·acc
//! window of the last 20 (arrival_ms − first_arrival_ms, smoothed)
//! trend = least-squares slope over the window (once full; else the previous trend)
//! statistic = min(N, 60) · trend · 4  →  OveruseDetector (γ in ms-equivalents)
//! ```

use super::detector::{DetectorConfig, OveruseDetector};
use super::BandwidthUsage;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrendlineConfig {
    pub window_size: usize,
    pub smoothing_coef: f64,
    pub threshold_gain: f64,
    pub detector: DetectorConfig,
}

impl Default for TrendlineConfig {
    fn default() -> Self {
        TrendlineConfig {
            window_size: 20,
            smoothing_coef: 0.9,
            threshold_gain: 4.0,
            detector: DetectorConfig::libwebrtc(),
        }
    }
}

const DELTA_COUNTER_MAX: u32 = 1000;
const MIN_NUM_DELTAS: u32 = 60;

#[derive(Clone, Debug)]
pub struct Trendline {
    cfg: TrendlineConfig,
    num_deltas: u32,
    first_arrival_ms: Option<f64>,
    accumulated: f64,
    smoothed: f64,
    window: VecDeque<(f64, f64)>,
    trend: f64,
    modified: f64,
    detector: OveruseDetector,
}

impl Trendline {
    pub fn new(cfg: TrendlineConfig) -> Self {
        Trendline {
            cfg,
            num_deltas: 0,
            first_arrival_ms: None,
            accumulated: 0.0,
            smoothed: 0.0,
            window: VecDeque::with_capacity(cfg.window_size + 1),
            trend: 0.0,
            modified: 0.0,
            detector: OveruseDetector::new(cfg.detector),
        }
    }

    pub fn state(&self) -> BandwidthUsage {
        self.detector.state()
    }
    pub fn trend(&self) -> f64 {
        self.trend
    }
    /// The statistic compared with the threshold.
    pub fn modified_trend(&self) -> f64 {
        self.modified
    }
    pub fn threshold(&self) -> f64 {
        self.detector.threshold()
    }

    /// One group's deltas (ms) and its arrival time (ms).
    pub fn update(
        &mut self,
        recv_delta_ms: f64,
        send_delta_ms: f64,
        arrival_ms: f64,
    ) -> BandwidthUsage {
        let d = recv_delta_ms - send_delta_ms;
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let first = *self.first_arrival_ms.get_or_insert(arrival_ms);
        self.accumulated += d;
        self.smoothed = self.cfg.smoothing_coef * self.smoothed
            + (1.0 - self.cfg.smoothing_coef) * self.accumulated;
        self.window.push_back((arrival_ms - first, self.smoothed));
        if self.window.len() > self.cfg.window_size {
            self.window.pop_front();
        }
        let mut trend = self.trend;
        if self.window.len() == self.cfg.window_size {
            if let Some(s) = linear_fit_slope(&self.window) {
                trend = s;
            }
        }
        if self.num_deltas < 2 {
            self.detector.set_normal();
            self.trend = trend;
            return self.state();
        }
        self.modified =
            self.num_deltas.min(MIN_NUM_DELTAS) as f64 * trend * self.cfg.threshold_gain;
        self.trend = trend;
        self.detector.detect(self.modified, trend, send_delta_ms, arrival_ms)
    }
}

/// Ordinary least-squares slope of y on x; None when all x are equal.
pub fn linear_fit_slope(points: &VecDeque<(f64, f64)>) -> Option<f64> {
    let n = points.len() as f64;
    if n == 0.0 {
        return None;
    }
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + (x - mx) * (y - my), b + (x - mx) * (x - mx)));
    (den != 0.0).then(|| num / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libwebrtc `trendline_estimator_unittest.cc` shape: 25 packets 20 ms apart, received with
    /// a constant delay gradient.
    fn run(recv_per_send: f64) -> BandwidthUsage {
        let mut t = Trendline::new(TrendlineConfig::default());
        let mut state = BandwidthUsage::Normal;
        let send_delta = 20.0;
        let mut arrival = 0.0;
        for _ in 0..25 {
            arrival += send_delta * recv_per_send;
            state = t.update(send_delta * recv_per_send, send_delta, arrival);
        }
        state
    }

    #[test]
    fn normal_overusing_underusing() {
        assert_eq!(run(1.0), BandwidthUsage::Normal);
        assert_eq!(run(1.1), BandwidthUsage::Overusing);
        assert_eq!(run(0.85), BandwidthUsage::Underusing);
    }

    #[test]
    fn slope_of_a_line() {
        let pts: VecDeque<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 * i as f64 + 1.0)).collect();
        assert!((linear_fit_slope(&pts).unwrap() - 3.0).abs() < 1e-12);
        let flat: VecDeque<(f64, f64)> = (0..3).map(|_| (1.0, 2.0)).collect();
        assert_eq!(linear_fit_slope(&flat), None);
    }
}
