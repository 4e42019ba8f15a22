//! Today's send-side GCC ("goog_cc"): per-packet transport feedback → inter-arrival groups →
//! trendline → detector → AIMD (with link capacity), acknowledged bitrate, classic loss rule,
//! REMB as a cap, probing, ALR detection, congestion-window pushback and RTT backoff (spec
//! `gcc.md` §2.1-2.12; upstream `goog_cc_network_control.cc`).
//!
//! Per feedback, in libwebrtc's order: outstanding bytes and RTTs; ALR end; acknowledged rate;
//! probe results (floored at min(delay-based, 0.85 × acked)); the delay-based update (over-use
//! decreases; else a probe result sets the estimate; else AIMD); the loss rule; the combined
//! target; pushback and the probe controller. Every 25 ms (`OnProcessInterval`): RTT backoff
//! and probe timeouts / ALR probes. Initial probes go out with the first media packet.
//!
//! Loss: LossBasedBweV2 (`loss_based_v2`, libwebrtc's default) once it has three
//! observations; until then, or with `loss_v2.enabled = false`, the classic rule of §2.7a on the loss
//! measured from transport feedback (libwebrtc's fallback).
//!
//! Not here: the network-state estimator, allocation probing, the pacer's padding while
//! LossBasedBweV2 increases with padding.

use super::acked_bitrate::AckedBitrateEstimator;
use super::aimd::{AimdConfig, AimdRateControl};
use super::alr_detector::{AlrConfig, AlrDetector};
use super::inter_arrival::InterArrival;
use super::loss_based::{LossBasedConfig, LossBasedControl};
use super::loss_based_v2::{LossBasedBweV2, LossBasedV2Config};
use super::probe_controller::{
    LimitedCause, ProbeConfig, ProbeController, DEFAULT_MAX_PROBING_BPS,
};
use super::probe_estimator::ProbeBitrateEstimator;
use super::pushback::{CongestionWindowPushback, PushbackConfig};
use super::trendline::{Trendline, TrendlineConfig};
use super::BandwidthUsage;
use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
    ProbeCluster, SentPacket,
};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

const PROCESS_INTERVAL: TimeDelta = TimeDelta::from_millis(25);
/// Probe results are floored at this fraction of the acknowledged rate.
const PROBE_DROP_THROUGHPUT_FRACTION: f64 = 0.85;

/// RTT backoff (`WebRTC-Bwe-MaxRttLimit`, on by default): when the propagation RTT plus the
/// time since the last feedback exceeds `limit`, cut the target by `drop_fraction` every
/// `drop_interval`, not below `floor_bps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttBackoffConfig {
    pub enabled: bool,
    pub limit: TimeDelta,
    pub drop_fraction: f64,
    pub drop_interval: TimeDelta,
    pub floor_bps: f64,
}

impl Default for RttBackoffConfig {
    fn default() -> Self {
        RttBackoffConfig {
            enabled: true,
            limit: TimeDelta::from_secs(3),
            drop_fraction: 0.8,
            drop_interval: TimeDelta::from_secs(1),
            floor_bps: 5_000.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccConfig {
    pub start_bitrate_bps: f64,
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
    pub trendline: TrendlineConfig,
    pub aimd: AimdConfig,
    pub loss: LossBasedConfig,
    /// LossBasedBweV2 (libwebrtc's default since 2022); `enabled = false`: the classic rule
    /// only.
    pub loss_v2: LossBasedV2Config,
    /// GoogCC's pacing factor until the first feedback when no stream configured one
    /// (`kDefaultPaceMultiplier` 2.5; libwebrtc with RFC 8888 feedback). A video stream on
    /// transport-wide feedback configures `pacing_factor` when it is created, so a scenario's
    /// media flow on TWCC sets this to `pacing_factor` (`rtclab-scenario`, `gcc_spec`).
    pub initial_pacing_factor: f64,
    /// The pacing factor once feedback arrives (`kDefaultPaceMultiplierWithSendSideBwe`, and
    /// the video stream's `kStrictPacingMultiplier`: 1.1).
    pub pacing_factor: f64,
    /// Loss is evaluated once this many packets were reported (libwebrtc kLimitNumPackets).
    pub loss_report_packets: u32,
    pub probe: ProbeConfig,
    /// Probes never exceed this (libwebrtc: the transport's max bitrate, 5 Mbit/s if unset),
    /// nor twice `max_bitrate_bps` (the encoder's maximum allocation).
    pub max_probe_bitrate_bps: f64,
    pub alr: AlrConfig,
    pub pushback: PushbackConfig,
    pub rtt_backoff: RttBackoffConfig,
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
            loss_v2: LossBasedV2Config::default(),
            initial_pacing_factor: 2.5,
            pacing_factor: 1.1,
            loss_report_packets: 20,
            probe: ProbeConfig::default(),
            max_probe_bitrate_bps: DEFAULT_MAX_PROBING_BPS,
            alr: AlrConfig::default(),
            pushback: PushbackConfig::default(),
            rtt_backoff: RttBackoffConfig::default(),
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
    loss_v2: Option<LossBasedBweV2>,
    probe_controller: ProbeController,
    probe_estimator: ProbeBitrateEstimator,
    pending_probes: VecDeque<ProbeCluster>,
    alr: AlrDetector,
    previously_in_alr: bool,
    pushback: Option<CongestionWindowPushback>,
    pushback_bps: f64,
    delay_based_bps: f64,
    receiver_limit_bps: f64,
    target_bps: f64,
    rtt: TimeDelta,
    got_feedback: bool,
    network_up: bool,
    next_process: Option<Time>,
    last_packet_sent: Option<Time>,
    last_rtt_update: Option<Time>,
    last_rtt_decrease: Option<Time>,
    last_probe_bps: Option<f64>,
    probes_started: u32,
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
            loss_v2: cfg.loss_v2.enabled.then(|| {
                LossBasedBweV2::new(cfg.loss_v2, cfg.min_bitrate_bps, cfg.max_bitrate_bps)
            }),
            probe_controller: ProbeController::new(
                cfg.probe,
                cfg.start_bitrate_bps,
                cfg.max_probe_bitrate_bps,
                cfg.max_bitrate_bps,
            ),
            probe_estimator: ProbeBitrateEstimator::default(),
            pending_probes: VecDeque::new(),
            alr: AlrDetector::new(cfg.alr, cfg.start_bitrate_bps),
            previously_in_alr: false,
            pushback: cfg.pushback.enabled.then(|| CongestionWindowPushback::new(cfg.pushback)),
            pushback_bps: cfg.start_bitrate_bps,
            delay_based_bps: cfg.start_bitrate_bps,
            receiver_limit_bps: f64::INFINITY,
            target_bps: cfg.start_bitrate_bps,
            rtt: TimeDelta::from_millis(200),
            got_feedback: false,
            network_up: false,
            next_process: None,
            last_packet_sent: None,
            last_rtt_update: None,
            last_rtt_decrease: None,
            last_probe_bps: None,
            probes_started: 0,
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
    /// The loss-based limit in use: LossBasedBweV2's once ready, else the classic rule's.
    pub fn loss_based_bps(&self) -> f64 {
        match &self.loss_v2 {
            Some(v2) if v2.is_ready() => v2.estimate_bps(),
            _ => self.loss.target_bps(),
        }
    }
    /// LossBasedBweV2, when enabled.
    pub fn loss_based_v2(&self) -> Option<&LossBasedBweV2> {
        self.loss_v2.as_ref()
    }
    pub fn in_alr(&self) -> bool {
        self.alr.alr_start().is_some()
    }
    /// The rate congestion-window pushback allows (the target when pushback is off).
    pub fn pushback_bps(&self) -> f64 {
        self.pushback_bps
    }
    /// Probe clusters requested so far.
    pub fn probes_started(&self) -> u32 {
        self.probes_started
    }

    fn queue_probes(&mut self, clusters: Vec<ProbeCluster>) {
        for c in clusters {
            self.probe_estimator.on_cluster_created(&c);
            self.probes_started += 1;
            self.pending_probes.push_back(c);
        }
        // libwebrtc's BitrateProber keeps at most 5 pending clusters.
        while self.pending_probes.len() > 5 {
            self.pending_probes.pop_front();
        }
    }

    /// Propagation RTT plus the time packets have gone out without feedback.
    fn corrected_rtt(&self) -> TimeDelta {
        let since = match (self.last_packet_sent, self.last_rtt_update) {
            (Some(s), Some(u)) if s > u => s - u,
            _ => TimeDelta::ZERO,
        };
        self.rtt + since
    }
    fn rtt_above_limit(&self) -> bool {
        self.cfg.rtt_backoff.enabled
            && self.last_rtt_update.is_some()
            && self.corrected_rtt() > self.cfg.rtt_backoff.limit
    }

    fn limited_cause(&self) -> LimitedCause {
        match self.trendline.state() {
            BandwidthUsage::Overusing | BandwidthUsage::Underusing => {
                LimitedCause::DelayLimitedDelayIncreased
            }
            BandwidthUsage::Normal if self.rtt_above_limit() => LimitedCause::RttBackoff,
            BandwidthUsage::Normal => LimitedCause::DelayLimited,
        }
    }

    fn update_target(&mut self, now: Time) {
        let t = self.loss_based_bps().min(self.delay_based_bps).min(self.receiver_limit_bps);
        self.target_bps = t.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
        // The loss-based target never runs ahead of the delay-based limit (libwebrtc
        // UpdateTargetBitrate); REMB only caps the output.
        self.loss.set_target(now, self.loss.target_bps().min(self.delay_based_bps));
    }

    /// libwebrtc `MaybeTriggerOnNetworkChanged`: pushback, ALR budget, probe controller.
    fn on_target_changed(&mut self, now: Time) {
        self.update_pushback();
        self.alr.set_estimate(self.target_bps);
        let cause = self.limited_cause();
        let probes = self.probe_controller.set_estimate(now, self.target_bps, cause);
        self.queue_probes(probes);
    }

    fn update_pushback(&mut self) {
        self.pushback_bps = match &mut self.pushback {
            Some(p) => p.update_target(self.target_bps).max(self.cfg.min_bitrate_bps),
            None => self.target_bps,
        };
    }

    fn process(&mut self, now: Time) {
        // RTT backoff (SendSideBandwidthEstimation::UpdateEstimate).
        if self.rtt_above_limit() {
            let rb = self.cfg.rtt_backoff;
            let due = self.last_rtt_decrease.is_none_or(|t| now - t >= rb.drop_interval);
            if due && self.target_bps > rb.floor_bps {
                self.last_rtt_decrease = Some(now);
                let new = (self.target_bps * rb.drop_fraction).max(rb.floor_bps);
                self.loss.set_target(now, new);
                self.delay_based_bps = self.delay_based_bps.min(new);
                self.target_bps = new.max(self.cfg.min_bitrate_bps.min(rb.floor_bps));
                self.on_target_changed(now);
            }
        }
        self.probe_controller.set_alr(self.alr.alr_start(), self.alr.alr_ended());
        let probes = self.probe_controller.process(now);
        self.queue_probes(probes);
        // `OnProcessInterval` ends in `MaybeTriggerOnNetworkChanged`, which moves the pushback
        // ratio every interval, not only when packets are sent or feedback comes.
        self.update_pushback();
    }
}

impl CongestionController for Gcc {
    fn name(&self) -> &'static str {
        "gcc"
    }

    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn on_data_in_flight(&mut self, _now: Time, bytes: u64) {
        // libwebrtc `OnTransportPacketsFeedback`: the pushback sees what the feedback left in
        // flight (its ratio moves at the end of the feedback, in `on_target_changed`).
        if let Some(p) = &mut self.pushback {
            p.set_outstanding(bytes);
        }
    }

    fn on_packet_sent(&mut self, now: Time, pkt: &SentPacket) {
        self.last_packet_sent = Some(now);
        self.alr.on_bytes_sent(now, pkt.size as u64);
        if let Some(p) = &mut self.pushback {
            p.set_outstanding(pkt.bytes_in_flight);
            // libwebrtc re-evaluates the pushback rate on every sent packet.
            self.update_pushback();
        }
    }

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        if packets.is_empty() {
            return;
        }
        self.got_feedback = true;
        let now_ms = now.as_nanos() as f64 / 1e6;
        let mut received: Vec<&PacketResult> =
            packets.iter().filter(|p| p.arrival.is_some()).collect();
        received.sort_by_key(|p| p.arrival);
        // Propagation RTT: feedback RTT minus the time the packet waited for the feedback;
        // the largest feedback RTT feeds the pushback window.
        if let Some(max_arrival) = received.last().and_then(|p| p.arrival) {
            let rtt = received
                .iter()
                .filter_map(|p| p.arrival.map(|a| (now - p.send_time) - (max_arrival - a)))
                .min()
                .unwrap_or(self.rtt);
            let max_rtt = received.iter().map(|p| now - p.send_time).max();
            if let (Some(p), Some(m)) = (&mut self.pushback, max_rtt) {
                p.on_feedback_rtt(m);
            }
            if rtt > TimeDelta::ZERO {
                self.rtt = rtt;
                self.aimd.set_rtt_ms(rtt.as_millis_f64());
            }
            self.last_rtt_update = Some(now);
        }
        // ALR end, acknowledged rate, probe results.
        let alr_start = self.alr.alr_start();
        if self.previously_in_alr && alr_start.is_none() {
            self.probe_controller.set_alr(None, Some(now));
        }
        self.previously_in_alr = alr_start.is_some();
        self.acked.on_feedback(packets);
        let acked = self.acked.bitrate_bps();
        for p in &received {
            self.probe_estimator.on_probe_packet(p);
        }
        let mut probe_bps = self.probe_estimator.take_estimate();
        if let (Some(pb), Some(a)) = (probe_bps, acked) {
            let floor = self.delay_based_bps.min(a * PROBE_DROP_THROUGHPUT_FRACTION);
            probe_bps = Some(pb.max(floor));
        }
        // Delay-based estimate.
        let prev_state = self.trendline.state();
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
        let mut probe_applied = false;
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
        } else if let Some(pb) = probe_bps {
            self.aimd.set_estimate(pb, now_ms);
            self.delay_based_bps = self.aimd.estimate_bps();
            self.last_probe_bps = Some(pb);
            probe_applied = true;
        } else {
            self.delay_based_bps = self.aimd.update(state, acked, now_ms);
        }
        if probe_applied {
            // SetSendBitrate: the loss-based side jumps too.
            self.loss.reset_to(now, self.delay_based_bps);
            if let Some(v2) = &mut self.loss_v2 {
                v2.set_bandwidth_estimate(self.delay_based_bps);
            }
        }
        // UpdateLossBasedEstimator (after the delay-based update, with the acked rate).
        let in_alr = self.in_alr();
        if let Some(v2) = &mut self.loss_v2 {
            if let Some(a) = acked {
                v2.set_acknowledged_bitrate(a);
            }
            v2.update(packets, self.delay_based_bps, in_alr);
        }
        self.lost += packets.iter().filter(|p| p.arrival.is_none()).count() as u32;
        self.expected += packets.len() as u32;
        if self.expected >= self.cfg.loss_report_packets {
            self.loss.on_report(now, self.lost as f64 / self.expected as f64, self.rtt);
            self.lost = 0;
            self.expected = 0;
        }
        self.update_target(now);
        if let Some(p) = &mut self.pushback {
            p.update_window(self.target_bps);
        }
        self.on_target_changed(now);
        let recovered = prev_state == BandwidthUsage::Underusing && state == BandwidthUsage::Normal;
        if recovered && !probe_applied {
            self.probe_controller.set_alr(self.alr.alr_start(), None);
            let probes = self.probe_controller.request_probe(now);
            self.queue_probes(probes);
        }
    }

    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        self.receiver_limit_bps =
            if bitrate == Rate::ZERO { f64::INFINITY } else { bitrate.as_bps() as f64 };
        self.update_target(now);
        self.on_target_changed(now);
    }

    fn handle_timeout(&mut self, now: Time) {
        let Some(due) = self.next_process else { return };
        if now >= due {
            self.process(now);
            self.next_process = Some(due.max(now - PROCESS_INTERVAL) + PROCESS_INTERVAL);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_process
    }

    fn poll_probe(&mut self, now: Time) -> Option<ProbeCluster> {
        if !self.network_up {
            // The transport is up once the sender asks: initial exponential probing.
            self.network_up = true;
            self.next_process = Some(now + PROCESS_INTERVAL);
            let probes = self.probe_controller.on_network_available(now);
            self.queue_probes(probes);
        }
        self.pending_probes.pop_front()
    }

    fn target(&self) -> CcTarget {
        let factor =
            if self.got_feedback { self.cfg.pacing_factor } else { self.cfg.initial_pacing_factor };
        let mut t = crate::rate_target(self.target_bps, factor);
        if self.cfg.pushback.drop_frame_only {
            if self.target_bps > 0.0 {
                t.frame_drop_ratio =
                    ((self.target_bps - self.pushback_bps) / self.target_bps).clamp(0.0, 1.0);
            }
        } else {
            t.target_rate = Some(Rate::from_bps(self.pushback_bps as u64));
        }
        t
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            pacing_rate: t.pacing_rate,
            target_rate: t.target_rate,
            state: (self.trendline.state().code() + 1.0) as u8,
            extra: crate::named(&[
                Some(("detector_state", self.detector_state().code())),
                Some(("delay_gradient", self.trendline.modified_trend())),
                Some(("threshold", self.trendline.threshold())),
                Some(("delay_based_mbps", self.delay_based_bps / 1e6)),
                Some(("loss_based_mbps", self.loss_based_bps() / 1e6)),
                self.loss_v2.as_ref().map(|v| ("loss_state", v.state().code())),
                self.loss_v2.as_ref().map(|v| ("inherent_loss", v.inherent_loss())),
                Some(("alr", self.in_alr() as u8 as f64)),
                Some(("pushback_mbps", self.pushback_bps / 1e6)),
                self.acked.bitrate_bps().map(|a| ("acked_mbps", a / 1e6)),
                Some(("rtt_ms", self.rtt.as_millis_f64())),
            ]),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feedback(g: &mut Gcc, from: u64, n: u64, t_ms: u64) {
        let pkts: Vec<PacketResult> = (from..from + n)
            .map(|s| PacketResult {
                seq: s,
                send_time: Time::from_millis(t_ms - 100 + s % 10),
                arrival: Some(Time::from_millis(t_ms - 50 + s % 10)),
                size: 1000,
                probe_cluster: None,
                ce: false,
            })
            .collect();
        g.on_transport_feedback(Time::from_millis(t_ms), &pkts);
    }

    /// A controller without probes after 2 s of regular feedback (10 packets per 100 ms).
    fn after_two_seconds_of_feedback() -> Gcc {
        let cfg = GccConfig {
            probe: ProbeConfig { enabled: false, ..ProbeConfig::default() },
            ..GccConfig::default()
        };
        let mut g = Gcc::new(cfg);
        g.poll_probe(Time::ZERO);
        for k in 1..=20u64 {
            feedback(&mut g, (k - 1) * 10, 10, k * 100);
        }
        g
    }

    #[test]
    fn rtt_backoff_when_feedback_stops() {
        // libwebrtc LimitsToFloorIfRttIsHighInTrial.
        let mut g = after_two_seconds_of_feedback();
        let before = g.target_bps();
        // Packets keep going out; feedback has stopped at 2 s.
        let sent = |g: &mut Gcc, t: Time| {
            let p = SentPacket {
                seq: 0,
                size: 1000,
                retransmit: false,
                bytes_in_flight: 0,
                probe_cluster: None,
                queued_bytes: 0,
            };
            g.on_packet_sent(t, &p);
            g.handle_timeout(t);
        };
        let mut t = Time::from_millis(2_000);
        while t < Time::from_millis(4_500) {
            sent(&mut g, t);
            t += TimeDelta::from_millis(25);
        }
        assert_eq!(g.target_bps(), before, "no backoff while RTT + silence < 3 s");
        while t < Time::from_secs(12) {
            sent(&mut g, t);
            t += TimeDelta::from_millis(25);
        }
        let after = g.target_bps();
        assert!(after < 0.3 * before && after >= 5_000.0, "{before} -> {after}");
    }

    #[test]
    fn no_rtt_backoff_when_the_sender_stops() {
        // libwebrtc NoRttBackoffCollapseWhenVideoStops.
        let mut g = after_two_seconds_of_feedback();
        let before = g.target_bps();
        let mut t = Time::from_millis(2_000);
        while t < Time::from_secs(12) {
            g.handle_timeout(t);
            t += TimeDelta::from_millis(25);
        }
        assert_eq!(g.target_bps(), before);
    }

    #[test]
    fn initial_probes_are_requested_once_the_sender_polls() {
        let mut g = Gcc::new(GccConfig::default());
        let a = g.poll_probe(Time::ZERO).unwrap();
        let b = g.poll_probe(Time::ZERO).unwrap();
        assert_eq!((a.rate.as_bps(), b.rate.as_bps()), (900_000, 1_800_000));
        assert!(g.poll_probe(Time::ZERO).is_none());
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(25)));
    }
}
