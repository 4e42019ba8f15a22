//! Loss-based rate control on receiver reports (spec `gcc.md` §2.7a; draft-ietf-rmcat-gcc-02
//! §6; the 2017 paper's Eq. (3); libwebrtc `SendSideBandwidthEstimation::UpdateEstimate`'s
//! classic rule, its fallback when LossBasedBweV2 is not ready).
//!
//! ```text
//! p ≤ 2 %        : increase (libwebrtc: 1.08·min(target over 1 s) + 1 kbit/s, at most once per 1 s;
//!                            2012-2013 `ShapeSimple`: 1.08·A + 1 kbit/s, at most once per 1 s;
//!                            paper/draft: 1.05·(A + 1 kbit/s) per report)
//! 2 % < p ≤ 10 % : hold
//! p > 10 %       : A·(1 − 0.5p), at most once per (300 ms + RTT); with the 2013 TFRC floor
//!                  max(X_TFRC, A·(1 − 0.5p))
//! ```

use rtclab_core::{Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IncreaseRule {
    /// libwebrtc: 1.08 × the minimum target of the last second + 1 kbit/s, once per second.
    MinHistory,
    /// Paper/draft: `factor` × (A + 1 kbit/s) on every report.
    PerReport { factor: f64 },
    /// 2012-2013 libwebrtc (`SendSideBandwidthEstimation::ShapeSimple`, the code the 2013
    /// study's Chrome ran): 1.08 × A + 1 kbit/s, at most once per second (kBWEIncreaseIntervalMs).
    Once2013,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossBasedConfig {
    pub low_loss: f64,
    pub high_loss: f64,
    pub increase: IncreaseRule,
    /// The 2013 implementation's floor at the TFRC equation rate (RFC 5348 §3.1).
    pub tfrc_floor: bool,
    /// Packet size for the TFRC equation, bytes.
    pub tfrc_packet_size: u32,
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
}

impl LossBasedConfig {
    pub fn libwebrtc() -> Self {
        LossBasedConfig {
            low_loss: 0.02,
            high_loss: 0.10,
            increase: IncreaseRule::MinHistory,
            tfrc_floor: false,
            tfrc_packet_size: 1200,
            min_bitrate_bps: 5_000.0,
            max_bitrate_bps: 30_000_000.0,
        }
    }
    pub fn paper() -> Self {
        LossBasedConfig { increase: IncreaseRule::PerReport { factor: 1.05 }, ..Self::libwebrtc() }
    }
    /// The 2012-2013 code: `ShapeSimple`'s increase, and its TFRC equation's 1000-byte packets
    /// (`kAvgPacketSizeBytes`); the floor itself is `tfrc_floor`.
    pub fn chrome_2013(self) -> Self {
        LossBasedConfig { increase: IncreaseRule::Once2013, tfrc_packet_size: 1000, ..self }
    }
}

#[derive(Clone, Debug)]
pub struct LossBasedControl {
    cfg: LossBasedConfig,
    target_bps: f64,
    history: VecDeque<(Time, f64)>,
    last_increase: Option<Time>,
    last_decrease: Option<Time>,
    last_loss: f64,
}

const INCREASE_INTERVAL: TimeDelta = TimeDelta::from_secs(1);
const DECREASE_BASE: TimeDelta = TimeDelta::from_millis(300);

impl LossBasedControl {
    pub fn new(cfg: LossBasedConfig, start_bps: f64) -> Self {
        LossBasedControl {
            cfg,
            target_bps: start_bps,
            history: VecDeque::new(),
            last_increase: None,
            last_decrease: None,
            last_loss: 0.0,
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }
    pub fn last_loss(&self) -> f64 {
        self.last_loss
    }

    /// A probe result: jump to `bps` and forget the 1 s minimum history (libwebrtc
    /// `SetSendBitrate`).
    pub fn reset_to(&mut self, now: Time, bps: f64) {
        self.history.clear();
        self.set_target(now, bps);
    }

    /// Replaces the target (e.g. capped by the delay-based estimate), keeping the history.
    pub fn set_target(&mut self, now: Time, bps: f64) {
        self.target_bps = bps.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        self.push_history(now);
    }

    fn push_history(&mut self, now: Time) {
        while self.history.back().is_some_and(|&(_, r)| r >= self.target_bps) {
            self.history.pop_back();
        }
        self.history.push_back((now, self.target_bps));
        while self.history.front().is_some_and(|&(t, _)| now - t > INCREASE_INTERVAL) {
            self.history.pop_front();
        }
    }

    /// A loss report (fraction in [0, 1]); `rtt` for the decrease interval and TFRC.
    pub fn on_report(&mut self, now: Time, loss: f64, rtt: TimeDelta) -> f64 {
        self.last_loss = loss;
        if loss <= self.cfg.low_loss {
            match self.cfg.increase {
                IncreaseRule::MinHistory => {
                    if self.last_increase.is_none_or(|t| now - t >= INCREASE_INTERVAL) {
                        let min = self.history.iter().map(|x| x.1).fold(self.target_bps, f64::min);
                        self.target_bps = 1.08 * min + 1000.0;
                        self.last_increase = Some(now);
                    }
                }
                IncreaseRule::PerReport { factor } => {
                    self.target_bps = factor * (self.target_bps + 1000.0);
                }
                IncreaseRule::Once2013 => {
                    if self.last_increase.is_none_or(|t| now - t >= INCREASE_INTERVAL) {
                        self.target_bps = 1.08 * self.target_bps + 1000.0;
                        self.last_increase = Some(now);
                    }
                }
            }
        } else if loss > self.cfg.high_loss
            && self.last_decrease.is_none_or(|t| now - t >= DECREASE_BASE + rtt)
        {
            let mut next = self.target_bps * (1.0 - 0.5 * loss);
            if self.cfg.tfrc_floor {
                next = next.max(tfrc_rate_bps(self.cfg.tfrc_packet_size, rtt, loss));
            }
            self.target_bps = next;
            self.last_decrease = Some(now);
        }
        self.target_bps = self.target_bps.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        self.push_history(now);
        self.target_bps
    }
}

/// RFC 5348 TCP throughput equation (b = 1, t_RTO = 4·RTT), in bit/s.
pub fn tfrc_rate_bps(packet_size: u32, rtt: TimeDelta, p: f64) -> f64 {
    let r = rtt.as_secs_f64().max(1e-3);
    let s = packet_size as f64 * 8.0;
    let t_rto = 4.0 * r;
    s / (r * (2.0 * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: TimeDelta = TimeDelta::from_millis(100);

    #[test]
    fn rules_by_loss_band() {
        let t0 = Time::from_secs(10);
        let mut c = LossBasedControl::new(LossBasedConfig::libwebrtc(), 1_000_000.0);
        // 1 % loss: +8 % of the 1-s minimum + 1 kbit/s, once per second.
        assert_eq!(c.on_report(t0, 0.01, RTT), 1_081_000.0);
        assert_eq!(c.on_report(t0 + TimeDelta::from_millis(500), 0.01, RTT), 1_081_000.0);
        // 5 %: hold.
        assert_eq!(c.on_report(t0 + TimeDelta::from_secs(2), 0.05, RTT), 1_081_000.0);
        // 20 %: ×0.9, then not again within 300 ms + RTT.
        let r = c.on_report(t0 + TimeDelta::from_secs(3), 0.2, RTT);
        assert!((r - 972_900.0).abs() < 1e-6);
        assert_eq!(c.on_report(t0 + TimeDelta::from_millis(3300), 0.2, RTT), r);
    }

    #[test]
    fn paper_rule_and_tfrc_floor() {
        let mut c = LossBasedControl::new(LossBasedConfig::paper(), 1_000_000.0);
        assert_eq!(c.on_report(Time::ZERO, 0.0, RTT), 1.05 * 1_001_000.0);
        let mut c = LossBasedControl::new(
            LossBasedConfig { tfrc_floor: true, ..LossBasedConfig::paper() },
            100_000.0,
        );
        // At 12 % loss, 100 ms RTT, 1200 B packets TFRC allows ~ 130 kbit/s > 100·(1 − 0.06).
        let floor = tfrc_rate_bps(1200, RTT, 0.12);
        assert!(floor > 94_000.0, "{floor}");
        assert_eq!(c.on_report(Time::ZERO, 0.12, RTT), floor);
    }

    #[test]
    fn the_2013_rule_increases_by_8_percent_at_most_once_a_second() {
        let cfg = LossBasedConfig::paper().chrome_2013();
        assert_eq!(cfg.tfrc_packet_size, 1000);
        let mut c = LossBasedControl::new(cfg, 1_000_000.0);
        let t0 = Time::from_secs(5);
        assert_eq!(c.on_report(t0, 0.0, RTT), 1_081_000.0);
        // A report 500 ms later changes nothing; one a second after the increase does, from the
        // current target (not the 1 s minimum as later libwebrtc).
        assert_eq!(c.on_report(t0 + TimeDelta::from_millis(500), 0.01, RTT), 1_081_000.0);
        c.set_target(t0 + TimeDelta::from_millis(700), 900_000.0);
        let r = c.on_report(t0 + TimeDelta::from_secs(1), 0.0, RTT);
        assert!((r - (1.08 * 900_000.0 + 1000.0)).abs() < 1e-6, "{r}");
        // The hold band does not move the increase clock.
        assert_eq!(c.on_report(t0 + TimeDelta::from_millis(1500), 0.05, RTT), r);
    }
}
