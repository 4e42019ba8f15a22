//! Application-limited region (ALR) detector: libwebrtc `AlrDetector` over an
//! `IntervalBudget` (spec `gcc.md` §2.12).
//!
//! A 500 ms budget fills at `bw_usage_ratio × estimate` and drains with every byte sent; it may
//! bank under-use (up to one window). ALR starts when the unused fraction of the budget rises
//! above `start_budget_ratio` and ends when it falls below `stop_budget_ratio`.
//!
//! Defaults are libwebrtc's *effective* ones: the default-on `WebRTC-ProbingScreenshareBwe`
//! settings (usage 0.80, start 0.40, stop -0.60) override the struct defaults
//! (0.65 / 0.80 / 0.50, which str0m uses). Either set is a config choice.

use rtclab_core::{Time, TimeDelta};

const WINDOW: TimeDelta = TimeDelta::from_millis(500);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlrConfig {
    pub bandwidth_usage_ratio: f64,
    pub start_budget_ratio: f64,
    pub stop_budget_ratio: f64,
}

impl Default for AlrConfig {
    fn default() -> Self {
        AlrConfig {
            bandwidth_usage_ratio: 0.80,
            start_budget_ratio: 0.40,
            stop_budget_ratio: -0.60,
        }
    }
}

impl AlrConfig {
    /// libwebrtc's `AlrDetectorConfig` struct defaults (no field trial in effect).
    pub fn struct_defaults() -> Self {
        AlrConfig { bandwidth_usage_ratio: 0.65, start_budget_ratio: 0.80, stop_budget_ratio: 0.50 }
    }
}

/// libwebrtc `IntervalBudget` with under-use build-up allowed.
#[derive(Clone, Copy, Debug, Default)]
struct IntervalBudget {
    target_bps: f64,
    max_bytes: f64,
    remaining: f64,
}

impl IntervalBudget {
    fn set_target(&mut self, bps: f64) {
        self.target_bps = bps;
        self.max_bytes = bps * WINDOW.as_secs_f64() / 8.0;
        self.remaining = self.remaining.clamp(-self.max_bytes, self.max_bytes);
    }
    fn increase(&mut self, dt: TimeDelta) {
        let bytes = self.target_bps * dt.as_secs_f64() / 8.0;
        self.remaining = (self.remaining + bytes).min(self.max_bytes);
    }
    fn use_bytes(&mut self, bytes: u64) {
        self.remaining = (self.remaining - bytes as f64).max(-self.max_bytes);
    }
    fn ratio(&self) -> f64 {
        if self.max_bytes <= 0.0 {
            0.0
        } else {
            self.remaining / self.max_bytes
        }
    }
}

#[derive(Clone, Debug)]
pub struct AlrDetector {
    cfg: AlrConfig,
    budget: IntervalBudget,
    last_send: Option<Time>,
    started: Option<Time>,
    ended: Option<Time>,
}

impl AlrDetector {
    pub fn new(cfg: AlrConfig, estimate_bps: f64) -> Self {
        let mut d = AlrDetector {
            cfg,
            budget: IntervalBudget::default(),
            last_send: None,
            started: None,
            ended: None,
        };
        d.set_estimate(estimate_bps);
        d
    }

    pub fn set_estimate(&mut self, bps: f64) {
        self.budget.set_target(bps * self.cfg.bandwidth_usage_ratio);
    }

    pub fn on_bytes_sent(&mut self, now: Time, bytes: u64) {
        let Some(last) = self.last_send.replace(now) else { return };
        self.budget.use_bytes(bytes);
        self.budget.increase(now - last);
        let r = self.budget.ratio();
        if self.started.is_none() && r > self.cfg.start_budget_ratio {
            self.started = Some(now);
        } else if self.started.is_some() && r < self.cfg.stop_budget_ratio {
            self.started = None;
            self.ended = Some(now);
        }
    }

    /// When the current application-limited region began, if the sender is in one.
    pub fn alr_start(&self) -> Option<Time> {
        self.started
    }
    pub fn alr_ended(&self) -> Option<Time> {
        self.ended
    }
    pub fn budget_ratio(&self) -> f64 {
        self.budget.ratio()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `bps` for `secs` in 10 ms steps (libwebrtc `SimulateOutgoingTrafficIn`).
    fn send(d: &mut AlrDetector, now: &mut Time, bps: f64, secs: f64) {
        let steps = (secs * 100.0) as u64;
        for _ in 0..steps {
            *now += TimeDelta::from_millis(10);
            d.on_bytes_sent(*now, (bps * 0.01 / 8.0) as u64);
        }
    }

    #[test]
    fn effective_defaults_start_at_low_usage_and_end_at_full_usage() {
        // libwebrtc AlrDetectorTest with the screenshare trial: ALR at 20 % usage of a
        // 300 kbit/s estimate, out at 100 %.
        let mut now = Time::from_secs(1);
        let mut d = AlrDetector::new(AlrConfig::default(), 300_000.0);
        send(&mut d, &mut now, 300_000.0, 1.0);
        assert!(d.alr_start().is_none());
        send(&mut d, &mut now, 60_000.0, 1.5);
        assert!(d.alr_start().is_some());
        send(&mut d, &mut now, 300_000.0, 4.0);
        assert!(d.alr_start().is_none());
        assert!(d.alr_ended().is_some());
    }

    #[test]
    fn struct_defaults_need_deeper_underuse() {
        let mut now = Time::from_secs(1);
        let mut d = AlrDetector::new(AlrConfig::struct_defaults(), 300_000.0);
        send(&mut d, &mut now, 300_000.0, 1.0);
        // Above 65 % of the estimate the budget never builds up.
        send(&mut d, &mut now, 200_000.0, 3.0);
        assert!(d.alr_start().is_none());
        send(&mut d, &mut now, 30_000.0, 2.0);
        assert!(d.alr_start().is_some());
    }
}
