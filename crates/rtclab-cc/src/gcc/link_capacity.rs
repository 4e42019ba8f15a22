//! Link capacity estimate around the rates at which over-use was detected (libwebrtc
//! `LinkCapacityEstimator`, spec `gcc.md` §2.5; it replaces the draft's "average max bitrate").
//!
//! ```text
//! est = first ? sample : (1−α)·est + α·sample
//! dev = clamp((1−α)·dev + α·(est − sample)²/max(est, 1), 0.4, 2.5)      (kbit/s units)
//! σ = sqrt(dev·est) ; upper = est + 3σ ; lower = max(0, est − 3σ)
//! α = 0.05 on over-use, 0.5 on probe results
//! ```

#[derive(Clone, Debug)]
pub struct LinkCapacityEstimator {
    estimate_kbps: Option<f64>,
    deviation_kbps: f64,
}

impl Default for LinkCapacityEstimator {
    fn default() -> Self {
        LinkCapacityEstimator { estimate_kbps: None, deviation_kbps: 0.4 }
    }
}

impl LinkCapacityEstimator {
    pub fn has_estimate(&self) -> bool {
        self.estimate_kbps.is_some()
    }
    pub fn estimate_bps(&self) -> Option<f64> {
        self.estimate_kbps.map(|e| e * 1000.0)
    }
    fn sigma_kbps(&self) -> f64 {
        (self.deviation_kbps * self.estimate_kbps.unwrap_or(0.0)).sqrt()
    }
    pub fn upper_bound_bps(&self) -> f64 {
        self.upper_bound_at_bps(3.0)
    }
    /// est + `sigmas`·σ (infinite without an estimate); 2013's rate controller also asks 2.5σ.
    pub fn upper_bound_at_bps(&self, sigmas: f64) -> f64 {
        match self.estimate_kbps {
            Some(e) => (e + sigmas * self.sigma_kbps()) * 1000.0,
            None => f64::INFINITY,
        }
    }
    pub fn lower_bound_bps(&self) -> f64 {
        match self.estimate_kbps {
            Some(e) => (e - 3.0 * self.sigma_kbps()).max(0.0) * 1000.0,
            None => 0.0,
        }
    }
    pub fn reset(&mut self) {
        self.estimate_kbps = None;
    }
    /// Sets the estimate, keeping the deviation (2013's recovery after a hold).
    pub fn set_estimate_bps(&mut self, bps: f64) {
        self.estimate_kbps = Some(bps / 1000.0);
    }
    pub fn on_overuse_detected(&mut self, acked_bps: f64) {
        self.update(acked_bps, 0.05);
    }
    pub fn on_probe_rate(&mut self, probe_bps: f64) {
        self.update(probe_bps, 0.5);
    }

    fn update(&mut self, sample_bps: f64, alpha: f64) {
        let sample = sample_bps / 1000.0;
        let est = match self.estimate_kbps {
            None => sample,
            Some(e) => (1.0 - alpha) * e + alpha * sample,
        };
        let norm = est.max(1.0);
        let err = est - sample;
        self.deviation_kbps =
            ((1.0 - alpha) * self.deviation_kbps + alpha * err * err / norm).clamp(0.4, 2.5);
        self.estimate_kbps = Some(est);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_widen_with_scatter() {
        let mut l = LinkCapacityEstimator::default();
        assert!(!l.has_estimate());
        assert_eq!(l.upper_bound_bps(), f64::INFINITY);
        l.on_overuse_detected(1_000_000.0);
        assert_eq!(l.estimate_bps(), Some(1_000_000.0));
        // σ = sqrt(0.4 * 1000) = 20 kbps -> bounds ±60 kbps.
        assert!((l.upper_bound_bps() - 1_060_000.0).abs() < 1.0);
        assert!((l.lower_bound_bps() - 940_000.0).abs() < 1.0);
        l.on_overuse_detected(500_000.0);
        // est = 0.95·1000 + 0.05·500 = 975 kbps
        assert!((l.estimate_bps().unwrap() - 975_000.0).abs() < 1e-6);
        assert!(l.upper_bound_bps() - l.estimate_bps().unwrap() > 60_000.0);
    }
}
