//! The 2017 paper's GCC: a receiver-side delay-based controller that sends REMB, and a
//! sender-side loss-based controller on receiver reports; the sender uses
//! A = min(A_s, A_r) (paper §3, draft-ietf-rmcat-gcc-02, spec `gcc.md` §2.14 and §3).
//!
//! Receiver: abs-send-time groups → Kalman filter → detector (K_u = 0.01, K_d = 0.00018 by
//! default, or a static threshold) → AIMD on the received rate R̂ (measured over 500 ms, as
//! the 2013 implementation) with decrease A_r = 0.85·R̂ → REMB, sent at once when it falls by
//! 3 % or more, otherwise every `remb_interval` (1 s in the 2013 Chrome; libwebrtc 200 ms).
//! `rate_control_2013` swaps the AIMD for 2013 Chrome's [`RemoteRateControl2013`] (updated once
//! a second and at over-use, as `RemoteBitrateEstimatorSingleStream` then did); `frame_groups`
//! makes the caller pass frame capture times (RTP timestamps) so that a group is a frame, as
//! 2013's `OveruseDetector::Update` grouped (a new group when the RTP timestamp changes), and
//! `detector_2013` (the Kalman config's `chrome_2013`) runs that detector's filter.
//! Sender: the loss rule of [`super::loss_based`] (1.05× below 2 %, or 2013's 1.08× at most once
//! a second with `loss_rule_2013`; ×(1 − 0.5p) above 10 %; optional TFRC floor), capped by the
//! latest REMB.

use super::aimd::{AimdConfig, AimdRateControl};
use super::detector::DetectorConfig;
use super::kalman::{DelayStatistic, KalmanConfig, KalmanDelayDetector};
use super::loss_based::{LossBasedConfig, LossBasedControl};
use super::remote_rate_2013::{Region, RemoteRateControl2013};
use super::BandwidthUsage;
use crate::{CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccPaperConfig {
    pub start_bitrate_bps: f64,
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
    pub kalman: KalmanConfig,
    pub detector: DetectorConfig,
    pub aimd: AimdConfig,
    pub loss: LossBasedConfig,
    /// Window of the received-rate measurement R̂.
    pub incoming_rate_window: TimeDelta,
    pub remb_interval: TimeDelta,
    /// Send a REMB at once when the estimate falls to this fraction of the last one.
    pub remb_immediate_ratio: f64,
    /// The sender keeps A_s at or below the last REMB (so that a later loss decrease starts
    /// from the rate actually used); false follows A = min(A_s, A_r) with A_s free.
    pub cap_loss_by_remb: bool,
    pub pacing_factor: f64,
    /// The detector's statistic: the paper's m (default) or libwebrtc's REMB-path min(N, 60)·m.
    pub statistic: DelayStatistic,
    /// 2013 Chrome's rate controller ([`RemoteRateControl2013`]: multiplicative increase only,
    /// updated once a second and at once on over-use) instead of the AIMD with additive
    /// increase near convergence. With a static threshold the threshold follows its region as
    /// in 2013 (the initial value while the maximum is unknown, half of it near the maximum).
    pub rate_control_2013: bool,
    /// Group arrivals by frame (the RTP timestamp, a frame's capture time) as 2013's
    /// `OveruseDetector` did, instead of by 5 ms abs-send-time bursts (libwebrtc from 2014 on,
    /// and the 2017 paper's Chrome). The receiver passes capture times as send times.
    pub frame_groups: bool,
}

impl Default for GccPaperConfig {
    fn default() -> Self {
        GccPaperConfig {
            start_bitrate_bps: 300_000.0,
            min_bitrate_bps: 10_000.0,
            max_bitrate_bps: 30_000_000.0,
            kalman: KalmanConfig::default(),
            detector: DetectorConfig::paper_unscaled(),
            aimd: AimdConfig { paper_decrease: true, ..AimdConfig::default() },
            loss: LossBasedConfig::paper(),
            incoming_rate_window: TimeDelta::from_millis(500),
            remb_interval: TimeDelta::from_secs(1),
            remb_immediate_ratio: 0.97,
            cap_loss_by_remb: true,
            pacing_factor: 1.5,
            statistic: DelayStatistic::Paper,
            rate_control_2013: false,
            frame_groups: false,
        }
    }
}

impl GccPaperConfig {
    /// The REMB-path statistic min(N, 60)·m (what Chrome ran when the paper measured it, and
    /// libwebrtc's receive-side estimator today) with its bounds [6, 600].
    pub fn remb_path() -> Self {
        GccPaperConfig {
            statistic: DelayStatistic::RembPath,
            detector: DetectorConfig::paper(),
            ..Self::default()
        }
    }
}

/// The receiver's rate controller.
#[derive(Clone, Debug)]
enum RateControl {
    Aimd(AimdRateControl),
    Chrome2013(RemoteRateControl2013),
}

/// 2013 Chrome's estimator ran once a second (`kProcessIntervalMs`) besides at over-use.
const PROCESS_INTERVAL_2013: TimeDelta = TimeDelta::from_millis(1000);

/// The receiver half: turns arrivals into REMB values.
#[derive(Clone, Debug)]
pub struct GccPaperReceiver {
    cfg: GccPaperConfig,
    detector: KalmanDelayDetector,
    rate: RateControl,
    arrivals: VecDeque<(Time, u32)>,
    bytes_in_window: u64,
    last_remb: Option<(Time, f64)>,
    last_update: Option<Time>,
}

impl GccPaperReceiver {
    pub fn new(cfg: GccPaperConfig) -> Self {
        let rate = if cfg.rate_control_2013 {
            RateControl::Chrome2013(RemoteRateControl2013::new(
                cfg.min_bitrate_bps,
                cfg.aimd.initial_rtt_ms,
            ))
        } else {
            let mut aimd = AimdRateControl::new(AimdConfig {
                min_bitrate_bps: cfg.min_bitrate_bps,
                max_bitrate_bps: cfg.max_bitrate_bps,
                ..cfg.aimd
            });
            aimd.set_estimate(cfg.start_bitrate_bps, 0.0);
            RateControl::Aimd(aimd)
        };
        GccPaperReceiver {
            cfg,
            detector: KalmanDelayDetector::new(cfg.kalman, cfg.detector, cfg.statistic),
            rate,
            arrivals: VecDeque::new(),
            bytes_in_window: 0,
            last_remb: None,
            last_update: None,
        }
    }

    /// Received rate over the window, once the window has filled.
    pub fn incoming_rate_bps(&self, now: Time) -> Option<f64> {
        let first = self.arrivals.front()?.0;
        (now - first >= self.cfg.incoming_rate_window.mul_f64(0.5)).then(|| {
            self.bytes_in_window as f64 * 8.0 / self.cfg.incoming_rate_window.as_secs_f64()
        })
    }

    pub fn estimate_bps(&self) -> f64 {
        match &self.rate {
            RateControl::Aimd(a) => a.estimate_bps(),
            RateControl::Chrome2013(r) => r.estimate_bps(),
        }
    }
    pub fn state(&self) -> BandwidthUsage {
        self.detector.state()
    }
    pub fn detector(&self) -> &KalmanDelayDetector {
        &self.detector
    }
    /// Whether the caller passes frame capture times (RTP timestamps) as send times.
    pub fn groups_by_frame(&self) -> bool {
        self.cfg.frame_groups
    }
    /// The receiver-side estimator's state for time series (named as the send side's).
    /// `noise_var` is the Kalman filter's measurement-noise variance (ms²), which 2013's rate
    /// control also reads: its increase factor falls as the variance grows.
    pub fn metrics(&self) -> [(&'static str, f64); 5] {
        [
            ("detector_state", self.state().code()),
            ("delay_gradient", self.delay_gradient()),
            ("threshold", self.detector.threshold()),
            ("delay_based_mbps", self.estimate_bps() / 1e6),
            ("noise_var", self.detector.estimator().var_noise()),
        ]
    }

    /// The detector's statistic (ms): m, or min(N, 60)·m on the REMB path.
    pub fn delay_gradient(&self) -> f64 {
        self.detector.statistic()
    }

    /// One received media packet: its send time (abs-send-time, any epoch, ns), size and the
    /// RTT the receiver knows. Returns a REMB value (bit/s) when one should be sent now.
    pub fn on_packet(
        &mut self,
        now: Time,
        send_ns: i64,
        size: u32,
        rtt: Option<TimeDelta>,
    ) -> Option<f64> {
        if let Some(r) = rtt {
            match &mut self.rate {
                RateControl::Aimd(a) => a.set_rtt_ms(r.as_millis_f64()),
                RateControl::Chrome2013(c) => c.set_rtt_ms(r.as_millis_f64()),
            }
        }
        self.arrivals.push_back((now, size));
        self.bytes_in_window += size as u64;
        while self.arrivals.front().is_some_and(|&(t, _)| now - t > self.cfg.incoming_rate_window) {
            if let Some((_, s)) = self.arrivals.pop_front() {
                self.bytes_in_window -= s as u64;
            }
        }
        let prior = self.detector.state();
        let state = self.detector.on_packet(send_ns, now.as_nanos() as i64, size as i64);
        let now_ms = now.as_nanos() as f64 / 1e6;
        let rate = self.incoming_rate_bps(now);
        let valid = match &mut self.rate {
            RateControl::Aimd(aimd) => {
                // Update every feedback interval, or at once on over-use when a further cut is due.
                let interval = TimeDelta::from_millis(
                    ((80.0 * 8.0 / (0.05 * aimd.estimate_bps())) * 1000.0).clamp(200.0, 1000.0)
                        as i64,
                );
                let due = self.last_update.is_none_or(|t| now - t >= interval);
                let overuse_now = state == BandwidthUsage::Overusing
                    && rate.is_some_and(|r| aimd.time_to_reduce_further(now_ms, r));
                if due || overuse_now {
                    aimd.update(state, rate, now_ms);
                    self.last_update = Some(now);
                }
                true
            }
            RateControl::Chrome2013(rc) => {
                // 2013: once a second, and at over-use onset or when a further cut is due.
                if let Some(r) = rate {
                    let due = self.last_update.is_none_or(|t| now - t >= PROCESS_INTERVAL_2013);
                    let overuse_now = state == BandwidthUsage::Overusing
                        && (prior != BandwidthUsage::Overusing
                            || rc.time_to_reduce_further(now_ms, r));
                    if due || overuse_now {
                        rc.update(state, Some(r), self.detector.estimator().var_noise(), now_ms);
                        // The 1 s process timer runs on its own; over-use updates do not move it.
                        if due {
                            self.last_update = Some(now);
                        }
                        if !self.cfg.detector.adaptive {
                            let t = self.cfg.detector.initial_threshold;
                            self.detector.set_threshold(if rc.region() == Region::MaxUnknown {
                                t
                            } else {
                                t / 2.0
                            });
                        }
                    }
                }
                rc.valid_estimate()
            }
        };
        let est = self.estimate_bps();
        let send = valid
            && match self.last_remb {
                None => rate.is_some(),
                Some((t, last)) => {
                    est <= self.cfg.remb_immediate_ratio * last || now - t >= self.cfg.remb_interval
                }
            };
        if send {
            self.last_remb = Some((now, est));
            Some(est)
        } else {
            None
        }
    }
}

/// The sender half of the paper's GCC.
#[derive(Clone, Debug)]
pub struct GccPaper {
    cfg: GccPaperConfig,
    loss: LossBasedControl,
    remb_bps: f64,
    target_bps: f64,
    rtt: TimeDelta,
}

impl GccPaper {
    pub fn new(cfg: GccPaperConfig) -> Self {
        GccPaper {
            cfg,
            loss: LossBasedControl::new(
                LossBasedConfig {
                    min_bitrate_bps: cfg.min_bitrate_bps,
                    max_bitrate_bps: cfg.max_bitrate_bps,
                    ..cfg.loss
                },
                cfg.start_bitrate_bps,
            ),
            remb_bps: f64::INFINITY,
            target_bps: cfg.start_bitrate_bps,
            rtt: TimeDelta::from_millis(200),
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }
    pub fn loss_based_bps(&self) -> f64 {
        self.loss.target_bps()
    }

    fn update_target(&mut self, now: Time) {
        if self.cfg.cap_loss_by_remb && self.loss.target_bps() > self.remb_bps {
            self.loss.set_target(now, self.remb_bps);
        }
        self.target_bps = self
            .loss
            .target_bps()
            .min(self.remb_bps)
            .clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
    }
}

impl CongestionController for GccPaper {
    fn name(&self) -> &'static str {
        "gcc_paper"
    }
    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        self.remb_bps = if bitrate == Rate::ZERO { f64::INFINITY } else { bitrate.as_bps() as f64 };
        self.update_target(now);
    }

    fn on_loss_report(&mut self, now: Time, fraction_lost: f64, rtt: Option<TimeDelta>) {
        if let Some(r) = rtt {
            self.rtt = r;
        }
        self.loss.on_report(now, fraction_lost, self.rtt);
        self.update_target(now);
    }

    fn target(&self) -> CcTarget {
        crate::rate_target(self.target_bps, self.cfg.pacing_factor)
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            pacing_rate: t.pacing_rate,
            target_rate: t.target_rate,
            extra: crate::named(&[
                Some(("loss_based_mbps", self.loss.target_bps() / 1e6)),
                self.remb_bps.is_finite().then_some(("remb_mbps", self.remb_bps / 1e6)),
                Some(("loss", self.loss.last_loss())),
            ]),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `secs` of 1200-byte packets every 10 ms (960 kbit/s) over an empty path and returns
    /// the REMBs sent (time in s, bit/s).
    fn rembs(cfg: GccPaperConfig, secs: u64) -> Vec<(f64, f64)> {
        let mut r = GccPaperReceiver::new(cfg);
        let mut out = vec![];
        for i in 0..secs * 100 {
            let t = Time::from_millis(10 * i);
            if let Some(bps) = r.on_packet(t, t.as_nanos() as i64, 1200, None) {
                out.push((t.as_nanos() as f64 / 1e9, bps));
            }
        }
        out
    }

    #[test]
    fn the_2013_receiver_waits_for_a_valid_estimate_then_grows_multiplicatively() {
        let cfg = GccPaperConfig { rate_control_2013: true, ..GccPaperConfig::remb_path() };
        let r = rembs(cfg, 20);
        // No REMB before the first estimate: the received rate measured > 500 ms after the
        // first one, on the 1 s process timer.
        let (t0, first) = r[0];
        assert!((0.75..2.5).contains(&t0), "first REMB at {t0} s");
        assert!((700e3..1100e3).contains(&first), "{first}");
        // Without over-use it only grows, and stops at 1.5× what arrives (the guard).
        assert!(r.windows(2).all(|w| w[1].1 >= w[0].1));
        let last = r.last().unwrap().1;
        assert!(last > first && last <= 1.5 * 960e3 * 1.05, "{first} -> {last}");
        // Today's AIMD sends one at once (its start rate), without waiting.
        let aimd = rembs(GccPaperConfig::remb_path(), 2);
        assert!(aimd[0].0 < 0.5, "{:?}", aimd[0]);
    }
}
