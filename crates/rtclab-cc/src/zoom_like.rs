//! A "Zoom-like" conferencing sender: a behavioural model of the application measured in the
//! fairness study (seed `001_91b98b49efd2e704.txt` §1-3; spec `copa-qlibra-tcp.md` §2.7-2.8),
//! a competitor for QLibra's experiments, not a claim about the real product.
//!
//! The controlled quantity is the wire budget R (media + FEC). Once per `update` (1 s):
//! - queuing delay (one-way delay above its minimum over `base_delay_window`, 300 s, long
//!   enough to outlast a standing queue) above `max_queuing_delay`, or above
//!   `lossy_queuing_delay` (150 ms) while the loss estimate exceeds `lossy_loss` (6 %: loss
//!   with a long queue is congestion, loss with a short one is left to FEC):
//!   R ← `decrease` · R (the study saw Zoom's share collapse only at 16 BDP of its 2 Mbit/s
//!   bottleneck, 2.3 s of queue, and hold it up to 4 BDP, 0.57 s);
//! - otherwise R ← min(`increase` · R + 10 kbit/s, `overshoot` · D, R_max), where D is the
//!   rate the receiver got over the interval: the app sends more than gets through (0.6 Mbit/s
//!   into a 0.5 Mbit/s bottleneck, the study's "self-congestion") and, not backing off on loss,
//!   settles where its own loss reaches 1 − 1/`overshoot`;
//! - no multiplicative back-off on loss: loss only raises FEC.
//!
//! FEC: packets per media packet f(p̂) in steps of the estimated loss p̂ (`fec_levels`, times
//! `fec_scale`), baseline 0.25-0.35; media target = R / (1 + f), at most `max_media_bps`,
//! R_max = `max_media_bps` · (1 + f). p̂ = lost / reported per feedback, EWMA gain 0.1.
//!
//! Probing: while R is held below R_max (constrained), a probe cluster of padding and media at
//! `probe_gain` · R for `probe_duration` every `probe_interval` (the study's Fig. 3: throughput
//! bursts with probe-packet bursts). Retransmission: the sender resends lost packets while the
//! RTT is below `rtx_max_rtt` (FEC replaces RTX on long paths); see `rtclab_media::rtx`.
//!
//! The constants marked [A] in `docs/algorithms/zoom_like.md` are ours, chosen against the
//! study's shares by `rtclab repro qlibra` (the calibration table), not measured from Zoom.

use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
    ProbeCluster, SentPacket,
};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
pub struct ZoomLikeConfig {
    pub max_media_bps: f64,
    /// Ceiling of the wire budget (media + FEC + retransmission).
    pub max_wire_bps: f64,
    pub min_media_bps: f64,
    pub start_media_bps: f64,
    pub max_queuing_delay: TimeDelta,
    /// Loss with a queue: back off also when the queuing delay exceeds `lossy_queuing_delay`
    /// while the loss estimate exceeds `lossy_loss`.
    pub lossy_queuing_delay: TimeDelta,
    pub lossy_loss: f64,
    /// Window of the one-way-delay minimum (the base delay).
    pub base_delay_window: TimeDelta,
    /// (loss rate from which, FEC packets per media packet), ascending.
    pub fec_levels: Vec<(f64, f64)>,
    /// Multiplies every FEC level.
    pub fec_scale: f64,
    pub update: TimeDelta,
    pub increase: f64,
    pub decrease: f64,
    /// Wire budget at most this × the rate the receiver got.
    pub overshoot: f64,
    pub probe_interval: TimeDelta,
    pub probe_gain: f64,
    pub probe_duration: TimeDelta,
    /// Resend lost packets while the RTT is below this; zero = never.
    pub rtx_max_rtt: TimeDelta,
    pub pacing_factor: f64,
}

impl Default for ZoomLikeConfig {
    fn default() -> Self {
        ZoomLikeConfig {
            max_media_bps: 900_000.0,
            max_wire_bps: 1_450_000.0,
            min_media_bps: 50_000.0,
            start_media_bps: 600_000.0,
            max_queuing_delay: TimeDelta::from_secs(1),
            lossy_queuing_delay: TimeDelta::from_millis(150),
            lossy_loss: 0.06,
            base_delay_window: TimeDelta::from_secs(300),
            // Steps at the midpoints between the quantised loss levels 0, 1, 2, 5, 10, 15, 20 %.
            fec_levels: vec![
                (0.0, 0.25),
                (0.005, 0.30),
                (0.015, 0.45),
                (0.035, 0.75),
                (0.075, 1.10),
                (0.125, 1.35),
                (0.175, 1.60),
            ],
            fec_scale: 1.0,
            update: TimeDelta::from_secs(1),
            increase: 1.05,
            decrease: 0.85,
            overshoot: 1.2,
            probe_interval: TimeDelta::from_secs(5),
            probe_gain: 1.5,
            probe_duration: TimeDelta::from_millis(300),
            rtx_max_rtt: TimeDelta::from_millis(400),
            pacing_factor: 1.5,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ZoomLike {
    cfg: ZoomLikeConfig,
    /// Wire budget, media + FEC (bit/s).
    wire_bps: f64,
    loss: f64,
    /// (arrival, one-way delay) samples for the base-delay minimum.
    owd: VecDeque<(Time, TimeDelta)>,
    queuing: TimeDelta,
    last_update: Option<Time>,
    /// Bytes the receiver got since the last update.
    delivered: u64,
    delivered_rate: f64,
    /// Retransmitted bytes since the last update, and their rate over the last interval.
    rtx_bytes: u64,
    rtx_rate: f64,
    constrained: bool,
    next_probe: Option<Time>,
    probes: u32,
}

impl ZoomLike {
    pub fn new(cfg: ZoomLikeConfig) -> Self {
        let mut z = ZoomLike {
            wire_bps: 0.0,
            cfg,
            loss: 0.0,
            owd: VecDeque::new(),
            queuing: TimeDelta::ZERO,
            last_update: None,
            delivered: 0,
            delivered_rate: 0.0,
            rtx_bytes: 0,
            rtx_rate: 0.0,
            constrained: false,
            next_probe: None,
            probes: 0,
        };
        z.wire_bps = z.cfg.start_media_bps.clamp(z.cfg.min_media_bps, z.cfg.max_media_bps)
            * (1.0 + z.fec_ratio());
        z
    }

    pub fn fec_ratio(&self) -> f64 {
        self.cfg.fec_scale
            * self
                .cfg
                .fec_levels
                .iter()
                .rev()
                .find(|(from, _)| self.loss >= *from)
                .map_or(0.0, |l| l.1)
    }
    /// The wire budget (media + FEC + retransmission), bit/s.
    pub fn wire_bps(&self) -> f64 {
        self.wire_bps
    }
    pub fn loss_estimate(&self) -> f64 {
        self.loss
    }
    /// Media target: the wire budget less retransmissions, over 1 + FEC.
    pub fn media_bps(&self) -> f64 {
        ((self.wire_bps - self.rtx_rate) / (1.0 + self.fec_ratio()))
            .clamp(self.cfg.min_media_bps, self.cfg.max_media_bps)
    }
    fn max_wire(&self) -> f64 {
        (self.cfg.max_media_bps * (1.0 + self.fec_ratio()) + self.rtx_rate)
            .min(self.cfg.max_wire_bps)
            .max(self.min_wire())
    }
    fn min_wire(&self) -> f64 {
        self.cfg.min_media_bps * (1.0 + self.fec_ratio())
    }

    fn update(&mut self, now: Time, since: Time) {
        let secs = (now - since).as_secs_f64().max(1e-3);
        self.delivered_rate = self.delivered as f64 * 8.0 / secs;
        self.delivered = 0;
        self.rtx_rate = self.rtx_bytes as f64 * 8.0 / secs;
        self.rtx_bytes = 0;
        let (lo, hi) = (self.min_wire(), self.max_wire());
        let congested = self.queuing > self.cfg.max_queuing_delay
            || (self.queuing > self.cfg.lossy_queuing_delay && self.loss > self.cfg.lossy_loss);
        if congested {
            self.wire_bps = (self.wire_bps * self.cfg.decrease).clamp(lo, hi);
            self.constrained = true;
        } else {
            let grown = self.wire_bps * self.cfg.increase + 10_000.0;
            let cap = self.cfg.overshoot * self.delivered_rate;
            self.constrained = cap < grown.min(hi);
            self.wire_bps = grown.min(cap).clamp(lo, hi);
        }
    }
}

impl CongestionController for ZoomLike {
    fn name(&self) -> &'static str {
        "zoom_like"
    }
    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_packet_sent(&mut self, _now: Time, p: &SentPacket) {
        if p.retransmit {
            self.rtx_bytes += p.size as u64;
        }
    }
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        if packets.is_empty() {
            return;
        }
        let lost = packets.iter().filter(|p| p.arrival.is_none()).count() as f64;
        self.loss += 0.1 * (lost / packets.len() as f64 - self.loss);
        // One-way delay (receiver clock − sender clock; the offset cancels against its min).
        for p in packets {
            if let Some(a) = p.arrival {
                self.delivered += p.size as u64;
                let d = a - p.send_time;
                while self.owd.back().is_some_and(|b| b.1 >= d) {
                    self.owd.pop_back();
                }
                self.owd.push_back((a, d));
                while self.owd.front().is_some_and(|f| a - f.0 > self.cfg.base_delay_window) {
                    self.owd.pop_front();
                }
                if let Some(min) = self.owd.front() {
                    self.queuing = d - min.1;
                }
            }
        }
        match self.last_update {
            None => self.last_update = Some(now),
            Some(t) if now - t >= self.cfg.update => {
                self.last_update = Some(now);
                self.update(now, t);
            }
            Some(_) => {}
        }
    }

    fn poll_probe(&mut self, now: Time) -> Option<ProbeCluster> {
        if self.cfg.probe_interval == TimeDelta::ZERO || !self.constrained {
            return None;
        }
        let due = *self.next_probe.get_or_insert(now + self.cfg.probe_interval);
        if now < due {
            return None;
        }
        self.next_probe = Some(now + self.cfg.probe_interval);
        self.probes += 1;
        let rate = self.cfg.probe_gain * self.wire_bps;
        Some(ProbeCluster {
            id: self.probes,
            rate: Rate::from_bps(rate as u64),
            min_bytes: (rate * self.cfg.probe_duration.as_secs_f64() / 8.0) as u64,
            min_probes: 5,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_probe.filter(|_| self.constrained && self.cfg.probe_interval > TimeDelta::ZERO)
    }

    fn target(&self) -> CcTarget {
        let mut t =
            crate::rate_target(self.media_bps(), self.cfg.pacing_factor * (1.0 + self.fec_ratio()));
        t.fec_ratio = self.fec_ratio();
        t
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            pacing_rate: t.pacing_rate,
            target_rate: t.target_rate,
            extra: crate::named(&[
                Some(("loss_estimate", self.loss)),
                Some(("fec_ratio", self.fec_ratio())),
                Some(("queuing_ms", self.queuing.as_millis_f64())),
                Some(("wire_budget_mbps", self.wire_bps / 1e6)),
                Some(("delivered_mbps", self.delivered_rate / 1e6)),
                Some(("rtx_mbps", self.rtx_rate / 1e6)),
            ]),
            ..Default::default()
        }
    }
}

/// Every Zoom-like tunable by name (see [`crate::params`]); `media.zoom_like = { ... }`.
pub static ZOOM_LIKE_PARAMS: &[crate::params::Param<ZoomLikeConfig>] = {
    use crate::params::{ms, param};
    &[
        param!(
            ZoomLikeConfig,
            "max_queuing_delay_ms",
            "queuing delay above which the wire budget backs off, ms (1000)",
            Real,
            1.0,
            60000.0,
            |c| c.max_queuing_delay.as_millis_f64(),
            |c, v| c.max_queuing_delay = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "lossy_queuing_delay_ms",
            "queuing delay above which loss counts as congestion, ms (150)",
            Real,
            1.0,
            60000.0,
            |c| c.lossy_queuing_delay.as_millis_f64(),
            |c, v| c.lossy_queuing_delay = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "lossy_loss",
            "loss estimate above which a queue counts as congestion (0.06)",
            Real,
            0.0,
            1.0,
            |c| c.lossy_loss,
            |c, v| c.lossy_loss = v
        ),
        param!(
            ZoomLikeConfig,
            "base_delay_window_s",
            "window of the one-way-delay minimum, s (300)",
            Real,
            1.0,
            86400.0,
            |c| c.base_delay_window.as_secs_f64(),
            |c, v| c.base_delay_window = TimeDelta::from_secs_f64(v)
        ),
        param!(
            ZoomLikeConfig,
            "max_wire_kbps",
            "ceiling of media + FEC + retransmission, kbit/s (1450)",
            Real,
            10.0,
            1000000.0,
            |c| c.max_wire_bps / 1000.0,
            |c, v| c.max_wire_bps = v * 1000.0
        ),
        param!(
            ZoomLikeConfig,
            "overshoot",
            "wire budget at most this × the rate the receiver got (1.2)",
            Real,
            1.0,
            10.0,
            |c| c.overshoot,
            |c, v| c.overshoot = v
        ),
        param!(
            ZoomLikeConfig,
            "increase",
            "multiplicative increase per update when not delayed (1.05)",
            Real,
            1.0,
            2.0,
            |c| c.increase,
            |c, v| c.increase = v
        ),
        param!(
            ZoomLikeConfig,
            "decrease",
            "multiplicative decrease per update on queuing delay (0.85)",
            Real,
            0.1,
            1.0,
            |c| c.decrease,
            |c, v| c.decrease = v
        ),
        param!(
            ZoomLikeConfig,
            "update_ms",
            "rate update interval, ms (1000)",
            Real,
            10.0,
            60000.0,
            |c| c.update.as_millis_f64(),
            |c, v| c.update = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "fec_scale",
            "multiplies every FEC level, 0 = no FEC (1)",
            Real,
            0.0,
            10.0,
            |c| c.fec_scale,
            |c, v| c.fec_scale = v
        ),
        param!(
            ZoomLikeConfig,
            "probe_interval_ms",
            "probe cluster interval while constrained, ms, 0 = no probing (5000)",
            Real,
            0.0,
            600000.0,
            |c| c.probe_interval.as_millis_f64(),
            |c, v| c.probe_interval = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "probe_gain",
            "probe rate / wire budget (1.5)",
            Real,
            1.0,
            10.0,
            |c| c.probe_gain,
            |c, v| c.probe_gain = v
        ),
        param!(
            ZoomLikeConfig,
            "probe_duration_ms",
            "probe cluster length at the probe rate, ms (300)",
            Real,
            10.0,
            10000.0,
            |c| c.probe_duration.as_millis_f64(),
            |c, v| c.probe_duration = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "rtx_max_rtt_ms",
            "retransmit lost packets while the RTT is below this, ms, 0 = never (400)",
            Real,
            0.0,
            60000.0,
            |c| c.rtx_max_rtt.as_millis_f64(),
            |c, v| c.rtx_max_rtt = ms(v)
        ),
        param!(
            ZoomLikeConfig,
            "pacing_factor",
            "pacing rate / (media × (1 + FEC)) (1.5)",
            Real,
            1.0,
            10.0,
            |c| c.pacing_factor,
            |c, v| c.pacing_factor = v
        ),
    ]
};

/// The "Bilibili-like" live stream is a configuration, not a controller: a media flow driven
/// by BBR, capped at 1.9 Mbit/s, 10 ms from its ingest server (spec §2.8).
pub const BILIBILI_LIKE_MAX_BPS: f64 = 1_900_000.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn fb(n: u64, lost_every: u64, t_ms: u64, owd_ms: u64) -> Vec<PacketResult> {
        (0..n)
            .map(|i| PacketResult {
                seq: i,
                send_time: Time::from_millis(t_ms),
                arrival: (lost_every == 0 || i % lost_every != 0)
                    .then(|| Time::from_millis(t_ms + owd_ms)),
                size: 1200,
                probe_cluster: None,
                ce: false,
            })
            .collect()
    }

    #[test]
    fn fec_follows_loss_and_calibrates_the_wire_rate() {
        let mut z = ZoomLike::new(ZoomLikeConfig {
            start_media_bps: 550_000.0,
            max_media_bps: 550_000.0,
            ..Default::default()
        });
        for k in 0..200 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(100, 100, 100 * k, 20));
        }
        let wire = z.media_bps() * (1.0 + z.fec_ratio());
        assert!((z.loss_estimate() - 0.01).abs() < 1e-3);
        assert!((wire - 715_000.0).abs() < 20_000.0, "{wire}");
        for k in 200..400 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(100, 5, 100 * k, 20));
        }
        let wire = z.media_bps() * (1.0 + z.fec_ratio());
        assert!((wire - 1_430_000.0).abs() < 20_000.0, "{wire}");
    }

    #[test]
    fn parameters_are_documented() {
        crate::params::assert_documented(ZOOM_LIKE_PARAMS);
    }

    #[test]
    fn sends_at_most_overshoot_times_what_gets_through() {
        let mut z = ZoomLike::new(ZoomLikeConfig::default());
        // 10 packets of 1200 B per 100 ms reported, 4 of them lost: 576 kbit/s delivered.
        for k in 0..100 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(10, 3, 100 * k, 20));
        }
        assert!((z.wire_bps() - 1.2 * 576_000.0).abs() < 10_000.0, "{}", z.wire_bps());
        assert!(z.poll_probe(Time::from_secs(20)).is_none(), "first probe one interval on");
        assert!(z.poll_probe(Time::from_secs(25)).is_some(), "constrained: probes");
        assert!(z.poll_probe(Time::from_secs(26)).is_none(), "one per interval");
    }

    #[test]
    fn backs_off_on_delay_not_on_loss() {
        let mut z = ZoomLike::new(ZoomLikeConfig::default());
        let start = z.wire_bps();
        for k in 0..50 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 4, 100 * k, 20));
        }
        let lossy = z.wire_bps();
        assert!(lossy > start, "25 % loss without a queue does not reduce the budget");
        for k in 50..100 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 0, 100 * k, 1_500));
        }
        assert!(z.wire_bps() < 0.5 * lossy, "1.5 s of queuing does");
    }

    #[test]
    fn loss_with_a_queue_is_congestion() {
        let mut z = ZoomLike::new(ZoomLikeConfig::default());
        for k in 0..10 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 0, 100 * k, 20));
        }
        let before = z.wire_bps();
        // 200 ms of queue and 10 % loss: both conditions of the lossy rule.
        for k in 10..40 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 10, 100 * k, 220));
        }
        assert!(z.wire_bps() < before, "{} vs {before}", z.wire_bps());
    }
}
