//! Over-use detector with adaptive threshold (spec `gcc.md` §2.3 and §2.14; libwebrtc
//! `OveruseDetector` and the detector inside `TrendlineEstimator`; draft-ietf-rmcat-gcc-02
//! §5.4).
//!
//! ```text
//! T > γ:  t_over = (first ? ts_delta/2 : t_over + ts_delta); count++
//!         overuse if t_over > 10 ms and count > 1 and raw >= prev_raw
//! T < -γ: underuse            otherwise: normal
//! γ += k·(|T| − γ)·min(Δt, 100 ms), k = k_down if |T| < γ else k_up; skip if |T| > γ + 15;
//! γ ∈ [6, 600], γ(0) = 12.5
//! ```

use super::BandwidthUsage;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectorConfig {
    /// Gain when |T| exceeds the threshold (per ms).
    pub k_up: f64,
    /// Gain when |T| is below the threshold (per ms).
    pub k_down: f64,
    pub initial_threshold: f64,
    pub min_threshold: f64,
    pub max_threshold: f64,
    /// |T| beyond γ + this (ms) freezes adaptation.
    pub max_adapt_offset: f64,
    pub overusing_time_threshold_ms: f64,
    /// false: the threshold stays at its initial value (the paper's static-threshold runs).
    pub adaptive: bool,
}

impl DetectorConfig {
    /// libwebrtc's gains (the threshold falls toward |T| faster than it rises).
    pub fn libwebrtc() -> Self {
        DetectorConfig {
            k_up: 0.0087,
            k_down: 0.039,
            initial_threshold: 12.5,
            min_threshold: 6.0,
            max_threshold: 600.0,
            max_adapt_offset: 15.0,
            overusing_time_threshold_ms: 10.0,
            adaptive: true,
        }
    }
    /// The draft's and the 2017 paper's gains: K_u = 0.01, K_d = 0.00018, with libwebrtc's
    /// bounds, which are in units of the REMB path's statistic min(N, 60)·m.
    pub fn paper() -> Self {
        DetectorConfig { k_up: 0.01, k_down: 0.00018, ..Self::libwebrtc() }
    }
    /// The paper's gains for a detector that compares the unscaled m (the paper's statistic):
    /// the bounds [6, 600] and the 15 ms adaptation freeze converted from min(N, 60)·m units
    /// to m units (÷ 60: [0.1, 10], 0.25), so that they keep their meaning (the floor still
    /// means "sending ≈ 2.5 % above capacity"). γ(0) stays 12.5 ms, the paper's static
    /// threshold. With the unconverted floor of 6 ms the paper's m never reaches γ at 1 Mbit/s
    /// (its maximum is 1.3 ms) and the delay controller never acts; see docs/algorithms/gcc.md.
    pub fn paper_unscaled() -> Self {
        let scale = 60.0;
        let d = Self::paper();
        DetectorConfig {
            min_threshold: d.min_threshold / scale,
            max_threshold: d.max_threshold / scale,
            max_adapt_offset: d.max_adapt_offset / scale,
            ..d
        }
    }
}

#[derive(Clone, Debug)]
pub struct OveruseDetector {
    cfg: DetectorConfig,
    threshold: f64,
    last_update_ms: Option<f64>,
    time_over_using: Option<f64>,
    overuse_counter: u32,
    prev_raw: f64,
    state: BandwidthUsage,
}

impl OveruseDetector {
    pub fn new(cfg: DetectorConfig) -> Self {
        OveruseDetector {
            cfg,
            threshold: cfg.initial_threshold,
            last_update_ms: None,
            time_over_using: None,
            overuse_counter: 0,
            prev_raw: 0.0,
            state: BandwidthUsage::Normal,
        }
    }

    pub fn state(&self) -> BandwidthUsage {
        self.state
    }
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// Sets γ from outside (2013 Chrome's static threshold followed the rate controller's
    /// region); an adaptive threshold goes on adapting from it.
    pub fn set_threshold(&mut self, threshold: f64) {
        self.threshold = threshold;
    }

    /// `modified`: the statistic compared with the threshold; `raw`: the unscaled estimate
    /// (offset or trend) whose growth confirms overuse; `ts_delta_ms`: the group's send delta;
    /// `now_ms`: arrival time of the group.
    pub fn detect(
        &mut self,
        modified: f64,
        raw: f64,
        ts_delta_ms: f64,
        now_ms: f64,
    ) -> BandwidthUsage {
        if modified > self.threshold {
            let t = match self.time_over_using {
                None => ts_delta_ms / 2.0,
                Some(t) => t + ts_delta_ms,
            };
            self.time_over_using = Some(t);
            self.overuse_counter += 1;
            if t > self.cfg.overusing_time_threshold_ms
                && self.overuse_counter > 1
                && raw >= self.prev_raw
            {
                self.time_over_using = Some(0.0);
                self.overuse_counter = 0;
                self.state = BandwidthUsage::Overusing;
            }
        } else if modified < -self.threshold {
            self.time_over_using = None;
            self.overuse_counter = 0;
            self.state = BandwidthUsage::Underusing;
        } else {
            self.time_over_using = None;
            self.overuse_counter = 0;
            self.state = BandwidthUsage::Normal;
        }
        self.prev_raw = raw;
        self.update_threshold(modified, now_ms);
        self.state
    }

    /// Forces the state (libwebrtc's trendline sets Normal while fewer than 2 deltas exist).
    pub fn set_normal(&mut self) {
        self.state = BandwidthUsage::Normal;
    }

    fn update_threshold(&mut self, modified: f64, now_ms: f64) {
        if !self.cfg.adaptive {
            return;
        }
        let last = *self.last_update_ms.get_or_insert(now_ms);
        if modified.abs() > self.threshold + self.cfg.max_adapt_offset {
            self.last_update_ms = Some(now_ms);
            return;
        }
        let k = if modified.abs() < self.threshold { self.cfg.k_down } else { self.cfg.k_up };
        let dt = (now_ms - last).min(100.0);
        self.threshold += k * (modified.abs() - self.threshold) * dt;
        self.threshold = self.threshold.clamp(self.cfg.min_threshold, self.cfg.max_threshold);
        self.last_update_ms = Some(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_tracks_the_statistic_and_clamps() {
        let mut d = OveruseDetector::new(DetectorConfig::libwebrtc());
        d.detect(0.0, 0.0, 33.0, 0.0);
        // |T| = 0 < γ: γ falls by k_down·γ·Δt per step, to the 6 floor.
        for i in 1..100 {
            d.detect(0.0, 0.0, 33.0, i as f64 * 33.0);
        }
        assert_eq!(d.threshold(), 6.0);
        // A spike beyond γ + 15 does not move it.
        d.detect(100.0, 1.0, 33.0, 3300.0);
        assert_eq!(d.threshold(), 6.0);
    }

    #[test]
    fn overuse_needs_time_two_samples_and_growth() {
        let mut d =
            OveruseDetector::new(DetectorConfig { adaptive: false, ..DetectorConfig::libwebrtc() });
        assert_eq!(d.detect(20.0, 1.0, 5.0, 0.0), BandwidthUsage::Normal); // t_over = 2.5
        assert_eq!(d.detect(20.0, 1.0, 5.0, 5.0), BandwidthUsage::Normal); // 7.5
        assert_eq!(d.detect(20.0, 1.1, 5.0, 10.0), BandwidthUsage::Overusing); // 12.5 > 10
        assert_eq!(d.detect(-20.0, 0.0, 5.0, 15.0), BandwidthUsage::Underusing);
        assert_eq!(d.detect(0.0, 0.0, 5.0, 20.0), BandwidthUsage::Normal);
    }
}
