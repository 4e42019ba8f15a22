//! AIMD rate control on the detector's signal (libwebrtc `AimdRateControl`, spec `gcc.md`
//! §2.5; draft-ietf-rmcat-gcc-02 §5.5; the paper's Fig. 4 state machine).
//!
//! ```text
//!            Overuse            Normal           Underuse
//! Hold     → Decrease         → Increase        → Hold
//! Increase → Decrease         → Increase        → Hold
//! Decrease → Decrease         → Hold (after it)  → Hold
//! ```
//! Increase: multiplicative 1.08^min(Δt, 1 s) far from the link capacity estimate, additive
//! (about half a packet per response time, RTT + 100 ms, doubled) near it; never above
//! 1.5·acked + 10 kbit/s. Decrease: β·acked (β = 0.85), minus 5 kbit/s, at most once per
//! clamp(RTT, 10, 200 ms) unless acked < 0.5·estimate.

use super::link_capacity::LinkCapacityEstimator;
use super::BandwidthUsage;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateControlState {
    Hold,
    Increase,
    Decrease,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdConfig {
    pub beta: f64,
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
    pub initial_rtt_ms: f64,
    /// Multiplicative increase per second (1.08).
    pub increase_factor_per_s: f64,
    /// Paper/draft mode: no 5 kbit/s subtraction, no link-capacity cap on decrease.
    pub paper_decrease: bool,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            beta: 0.85,
            min_bitrate_bps: 5_000.0,
            max_bitrate_bps: 30_000_000.0,
            initial_rtt_ms: 200.0,
            increase_factor_per_s: 1.08,
            paper_decrease: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct AimdRateControl {
    cfg: AimdConfig,
    current_bps: f64,
    initialized: bool,
    state: RateControlState,
    link: LinkCapacityEstimator,
    rtt_ms: f64,
    last_change_ms: Option<f64>,
    last_decrease_bps: Option<f64>,
}

impl AimdRateControl {
    pub fn new(cfg: AimdConfig) -> Self {
        AimdRateControl {
            cfg,
            current_bps: cfg.max_bitrate_bps,
            initialized: false,
            state: RateControlState::Hold,
            link: LinkCapacityEstimator::default(),
            rtt_ms: cfg.initial_rtt_ms,
            last_change_ms: None,
            last_decrease_bps: None,
        }
    }

    pub fn set_estimate(&mut self, bps: f64, now_ms: f64) {
        self.initialized = true;
        self.current_bps = bps.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        self.last_change_ms = Some(now_ms);
    }
    pub fn set_rtt_ms(&mut self, rtt: f64) {
        self.rtt_ms = rtt;
    }
    pub fn estimate_bps(&self) -> f64 {
        self.current_bps
    }
    pub fn state(&self) -> RateControlState {
        self.state
    }
    pub fn link_capacity(&self) -> &LinkCapacityEstimator {
        &self.link
    }
    pub fn valid_estimate(&self) -> bool {
        self.initialized
    }

    /// libwebrtc `TimeToReduceFurther`.
    pub fn time_to_reduce_further(&self, now_ms: f64, acked_bps: f64) -> bool {
        let interval = self.rtt_ms.clamp(10.0, 200.0);
        if self.last_change_ms.is_none_or(|t| now_ms - t >= interval) {
            return true;
        }
        self.initialized && acked_bps < 0.5 * self.current_bps
    }

    /// Additive increase rate near convergence, bit/s per second.
    pub fn near_max_increase_rate_bps_per_s(&self) -> f64 {
        let frame_bytes = self.current_bps / 8.0 / 30.0;
        let packets = (frame_bytes / 1200.0).ceil().max(1.0);
        let avg_packet_bits = frame_bytes / packets * 8.0;
        let response_ms = 2.0 * (self.rtt_ms + 100.0);
        (avg_packet_bits / (response_ms / 1000.0)).max(4000.0)
    }

    /// One update with the detector's signal and the acknowledged (or received) rate.
    pub fn update(&mut self, signal: BandwidthUsage, acked_bps: Option<f64>, now_ms: f64) -> f64 {
        if !self.initialized {
            // Before a start bitrate is set, adopt the measured rate (libwebrtc waits 5 s).
            if let Some(a) = acked_bps {
                self.set_estimate(a, now_ms);
            }
        }
        self.state = match (signal, self.state) {
            (BandwidthUsage::Overusing, _) => RateControlState::Decrease,
            (BandwidthUsage::Normal, RateControlState::Hold) => RateControlState::Increase,
            (BandwidthUsage::Normal, s) => s,
            (BandwidthUsage::Underusing, _) => RateControlState::Hold,
        };
        let last = *self.last_change_ms.get_or_insert(now_ms);
        let mut new = self.current_bps;
        match self.state {
            RateControlState::Hold => {}
            RateControlState::Increase => {
                if let Some(a) = acked_bps {
                    if a > self.link.upper_bound_bps() {
                        self.link.reset();
                    }
                }
                let limit = acked_bps.map_or(f64::INFINITY, |a| 1.5 * a + 10_000.0);
                if self.current_bps < limit {
                    let dt_ms = (now_ms - last).max(0.0);
                    let inc = if self.link.has_estimate() {
                        self.near_max_increase_rate_bps_per_s() * dt_ms / 1000.0
                    } else {
                        let alpha = self.cfg.increase_factor_per_s.powf((dt_ms / 1000.0).min(1.0));
                        (self.current_bps * (alpha - 1.0)).max(1000.0)
                    };
                    new = (self.current_bps + inc).min(limit);
                }
                self.last_change_ms = Some(now_ms);
            }
            RateControlState::Decrease => {
                let acked = acked_bps.unwrap_or(self.current_bps);
                let mut d = self.cfg.beta * acked;
                if !self.cfg.paper_decrease {
                    if d > 5_000.0 {
                        d -= 5_000.0;
                    }
                    if d > self.current_bps {
                        if let Some(e) = self.link.estimate_bps() {
                            d = self.cfg.beta * e;
                        }
                    }
                }
                if d < self.current_bps {
                    self.last_decrease_bps = Some(self.current_bps - d);
                    new = d;
                }
                if acked < self.link.lower_bound_bps() {
                    self.link.reset();
                }
                self.link.on_overuse_detected(acked);
                self.state = RateControlState::Hold;
                self.last_change_ms = Some(now_ms);
            }
        }
        self.current_bps = new.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        self.current_bps
    }

    /// libwebrtc `GetExpectedBandwidthPeriod`: time to climb back after a decrease.
    pub fn expected_bandwidth_period_s(&self) -> f64 {
        match self.last_decrease_bps {
            None => 3.0,
            Some(d) => (d / self.near_max_increase_rate_bps_per_s()).clamp(2.0, 50.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_max_increase_rate_examples() {
        // spec gcc.md §2.5: 1 Mbit/s at RTT 100 ms -> 20.8 kbit/s per s; 300 kbit/s -> 12.5.
        let mut a = AimdRateControl::new(AimdConfig::default());
        a.set_rtt_ms(100.0);
        a.set_estimate(1_000_000.0, 0.0);
        assert!((a.near_max_increase_rate_bps_per_s() - 20_833.3).abs() < 1.0);
        a.set_estimate(300_000.0, 0.0);
        assert!((a.near_max_increase_rate_bps_per_s() - 12_500.0).abs() < 1e-6);
    }

    #[test]
    fn multiplicative_increase_is_8_percent_per_second() {
        let mut a = AimdRateControl::new(AimdConfig::default());
        a.set_estimate(300_000.0, 0.0);
        let mut now = 0.0;
        for _ in 0..100 {
            now += 100.0;
            a.update(BandwidthUsage::Normal, Some(10_000_000.0), now);
        }
        // 10 s of 1.08^0.1 steps: 300k * 1.08^10 = 647.7k
        assert!(
            (a.estimate_bps() - 300_000.0 * 1.08f64.powi(10)).abs() < 1_000.0,
            "{}",
            a.estimate_bps()
        );
    }

    #[test]
    fn decrease_to_beta_acked_then_hold() {
        let mut a = AimdRateControl::new(AimdConfig::default());
        a.set_estimate(1_000_000.0, 0.0);
        let r = a.update(BandwidthUsage::Overusing, Some(800_000.0), 1000.0);
        assert_eq!(r, 0.85 * 800_000.0 - 5_000.0);
        assert_eq!(a.state(), RateControlState::Hold);
        assert!(a.link_capacity().has_estimate());
        // Near the capacity estimate the increase becomes additive.
        a.update(BandwidthUsage::Normal, Some(700_000.0), 1100.0);
        let before = a.estimate_bps();
        a.update(BandwidthUsage::Normal, Some(700_000.0), 2100.0);
        let rise = a.estimate_bps() - before;
        assert!((rise - a.near_max_increase_rate_bps_per_s()).abs() < 1_000.0, "{rise}");
    }

    #[test]
    fn increase_is_capped_by_acked_rate() {
        let mut a = AimdRateControl::new(AimdConfig::default());
        a.set_estimate(1_000_000.0, 0.0);
        a.update(BandwidthUsage::Normal, Some(500_000.0), 1000.0);
        // 1.5·acked + 10 kbit/s = 760 kbit/s < 1 Mbit/s: no increase.
        assert_eq!(a.estimate_bps(), 1_000_000.0);
    }
}
