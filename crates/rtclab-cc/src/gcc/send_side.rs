//! Today's send-side GCC ("goog_cc"): per-packet transport feedback → inter-arrival groups →
//! trendline → detector → AIMD (with link capacity), acknowledged bitrate, classic loss rule,
//! REMB as a cap (spec `gcc.md` §2.1-2.8).
//!
//! Implemented: everything above, the initial halving while no acknowledged rate exists
//! (`InitialTimeToReduceFurther`), pacing factor 2.5 before the first feedback and 1.1 after.
//! Not yet: probing (initial exponential probes, ALR probes) and its estimator, the ALR
//! detector, congestion-window pushback, RTT backoff, LossBasedBweV2 (the classic RR rule is
//! used on loss measured from transport feedback instead).

use super::acked_bitrate::AckedBitrateEstimator;
use super::aimd::{AimdConfig, AimdRateControl};
use super::inter_arrival::InterArrival;
use super::loss_based::{LossBasedConfig, LossBasedControl};
use super::trendline::{Trendline, TrendlineConfig};
use super::BandwidthUsage;
use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
};
use rtclab_core::{Rate, Time, TimeDelta};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccConfig {
    pub start_bitrate_bps: f64,
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
    pub trendline: TrendlineConfig,
    pub aimd: AimdConfig,
    pub loss: LossBasedConfig,
    pub initial_pacing_factor: f64,
    pub pacing_factor: f64,
    /// Loss is evaluated once this many packets were reported (libwebrtc kLimitNumPackets).
    pub loss_report_packets: u32,
}

impl Default for GccConfig {
    fn default() -> Self {
        GccConfig {
            start_bitrate_bps: 300_000.0,
            min_bitrate_bps: 5_000.0,
            max_bitrate_bps: 30_000_000.0,
            trendline: TrendlineConfig::default(),
            aimd: AimdConfig::default(),
            loss: LossBasedConfig::libwebrtc(),
            initial_pacing_factor: 2.5,
            pacing_factor: 1.1,
            loss_report_packets: 20,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Gcc {
    cfg: GccConfig,
    inter_arrival: InterArrival,
    trendline: Trendline,
    aimd: AimdRateControl,
    acked: AckedBitrateEstimator,
    loss: LossBasedControl,
    delay_based_bps: f64,
    receiver_limit_bps: f64,
    target_bps: f64,
    rtt: TimeDelta,
    got_feedback: bool,
    lost: u32,
    expected: u32,
}

impl Gcc {
    pub fn new(cfg: GccConfig) -> Self {
        let mut aimd = AimdRateControl::new(AimdConfig {
            min_bitrate_bps: cfg.min_bitrate_bps,
            max_bitrate_bps: cfg.max_bitrate_bps,
            ..cfg.aimd
        });
        aimd.set_estimate(cfg.start_bitrate_bps, 0.0);
        let loss = LossBasedControl::new(
            LossBasedConfig {
                min_bitrate_bps: cfg.min_bitrate_bps,
                max_bitrate_bps: cfg.max_bitrate_bps,
                ..cfg.loss
            },
            cfg.start_bitrate_bps,
        );
        Gcc {
            cfg,
            inter_arrival: InterArrival::default(),
            trendline: Trendline::new(cfg.trendline),
            aimd,
            acked: AckedBitrateEstimator::default(),
            loss,
            delay_based_bps: cfg.start_bitrate_bps,
            receiver_limit_bps: f64::INFINITY,
            target_bps: cfg.start_bitrate_bps,
            rtt: TimeDelta::from_millis(200),
            got_feedback: false,
            lost: 0,
            expected: 0,
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }
    pub fn delay_based_bps(&self) -> f64 {
        self.delay_based_bps
    }
    pub fn detector_state(&self) -> BandwidthUsage {
        self.trendline.state()
    }
    pub fn trendline(&self) -> &Trendline {
        &self.trendline
    }
    pub fn loss_based_bps(&self) -> f64 {
        self.loss.target_bps()
    }

    fn update_target(&mut self, now: Time) {
        let t = self.loss.target_bps().min(self.delay_based_bps).min(self.receiver_limit_bps);
        self.target_bps = t.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        // The loss-based target never runs ahead of the delay-based limit (libwebrtc
        // UpdateTargetBitrate); REMB only caps the output.
        self.loss.set_target(now, self.loss.target_bps().min(self.delay_based_bps));
    }
}

impl CongestionController for Gcc {
    fn name(&self) -> &'static str {
        "gcc"
    }

    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        if packets.is_empty() {
            return;
        }
        self.got_feedback = true;
        let now_ms = now.as_nanos() as f64 / 1e6;
        let mut received: Vec<&PacketResult> =
            packets.iter().filter(|p| p.arrival.is_some()).collect();
        received.sort_by_key(|p| p.arrival);
        // Propagation RTT: feedback RTT minus the time the packet waited for the feedback.
        if let Some(max_arrival) = received.last().and_then(|p| p.arrival) {
            let rtt = received
                .iter()
                .filter_map(|p| p.arrival.map(|a| (now - p.send_time) - (max_arrival - a)))
                .min()
                .unwrap_or(self.rtt);
            if rtt > TimeDelta::ZERO {
                self.rtt = rtt;
                self.aimd.set_rtt_ms(rtt.as_millis_f64());
            }
        }
        self.acked.on_feedback(packets);
        for p in &received {
            let arrival = p.arrival.unwrap_or(now).as_nanos() as i64;
            let send = p.send_time.as_nanos() as i64;
            if let Some(d) =
                self.inter_arrival.compute_deltas(send, arrival, arrival, p.size as i64)
            {
                self.trendline.update(
                    d.arrival_delta.as_nanos() as f64 / 1e6,
                    d.send_delta.as_nanos() as f64 / 1e6,
                    arrival as f64 / 1e6,
                );
            }
        }
        let state = self.trendline.state();
        let acked = self.acked.bitrate_bps();
        if state == BandwidthUsage::Overusing {
            match acked {
                Some(a) => {
                    if self.aimd.time_to_reduce_further(now_ms, a) {
                        self.delay_based_bps = self.aimd.update(state, Some(a), now_ms);
                    }
                }
                None => {
                    // No acknowledged rate yet: halve (libwebrtc InitialTimeToReduceFurther).
                    let half = self.aimd.estimate_bps() / 2.0;
                    self.aimd.set_estimate(half, now_ms);
                    self.delay_based_bps = self.aimd.estimate_bps();
                }
            }
        } else {
            self.delay_based_bps = self.aimd.update(state, acked, now_ms);
        }
        self.lost += packets.iter().filter(|p| p.arrival.is_none()).count() as u32;
        self.expected += packets.len() as u32;
        if self.expected >= self.cfg.loss_report_packets {
            self.loss.on_report(now, self.lost as f64 / self.expected as f64, self.rtt);
            self.lost = 0;
            self.expected = 0;
        }
        self.update_target(now);
    }

    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        self.receiver_limit_bps =
            if bitrate == Rate::ZERO { f64::INFINITY } else { bitrate.as_bps() as f64 };
        self.update_target(now);
    }

    fn target(&self) -> CcTarget {
        let factor =
            if self.got_feedback { self.cfg.pacing_factor } else { self.cfg.initial_pacing_factor };
        crate::rate_target(self.target_bps, factor)
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            pacing_rate: t.pacing_rate,
            target_rate: t.target_rate,
            state: (self.trendline.state().code() + 1.0) as u8,
            extra: [
                Some(("modified_trend", self.trendline.modified_trend())),
                Some(("threshold", self.trendline.threshold())),
                Some(("delay_based_bps", self.delay_based_bps)),
                Some(("loss_based_bps", self.loss.target_bps())),
                self.acked.bitrate_bps().map(|a| ("acked_bps", a)),
                Some(("rtt_ms", self.rtt.as_millis_f64())),
            ],
            ..Default::default()
        }
    }
}
