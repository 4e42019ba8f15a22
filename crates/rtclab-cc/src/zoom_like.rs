//! A "Zoom-like" conferencing sender: a behavioural model of the application measured in the
//! fairness study (seed `001_91b98b49efd2e704.txt` §1-3; spec `copa-qlibra-tcp.md` §2.7-2.8),
//! a competitor for QLibra's experiments, not a claim about the real product.
//!
//! - Media at up to `max_media_bps`; no multiplicative back-off on loss.
//! - FEC grows with the estimated loss rate in steps (baseline 25-35 %): the default levels
//!   make a 0.55 Mbit/s media stream send about 0.71 Mbit/s on the wire at 1 % loss and
//!   1.42 Mbit/s at 20 % (the study's send rates under a 2 Mbit/s cap).
//! - Delay-triggered back-off: once per second, if the queuing delay (one-way delay above its
//!   10 s minimum) exceeds `max_queuing_delay`, media ×0.85, else +5 % (+10 kbit/s) toward the
//!   maximum; the default 1 s lets it hold its share up to 4 BDP of the study's 2 Mbit/s
//!   bottleneck and collapse at 16 BDP, as measured.
//! - Loss estimate: lost / reported packets per feedback, EWMA with gain 0.1.
//!
//! Not modelled: NACK retransmission and probe bursts.

use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
};
use rtclab_core::{Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
pub struct ZoomLikeConfig {
    pub max_media_bps: f64,
    pub min_media_bps: f64,
    pub start_media_bps: f64,
    pub max_queuing_delay: TimeDelta,
    /// (loss rate from which, FEC packets per media packet), ascending.
    pub fec_levels: Vec<(f64, f64)>,
    pub pacing_factor: f64,
}

impl Default for ZoomLikeConfig {
    fn default() -> Self {
        ZoomLikeConfig {
            max_media_bps: 900_000.0,
            min_media_bps: 50_000.0,
            start_media_bps: 600_000.0,
            max_queuing_delay: TimeDelta::from_secs(1),
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
            pacing_factor: 1.5,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ZoomLike {
    cfg: ZoomLikeConfig,
    media_bps: f64,
    loss: f64,
    /// (arrival, one-way delay) samples for the 10 s minimum.
    owd: VecDeque<(Time, TimeDelta)>,
    queuing: TimeDelta,
    last_update: Option<Time>,
}

impl ZoomLike {
    pub fn new(cfg: ZoomLikeConfig) -> Self {
        ZoomLike {
            media_bps: cfg.start_media_bps.clamp(cfg.min_media_bps, cfg.max_media_bps),
            cfg,
            loss: 0.0,
            owd: VecDeque::new(),
            queuing: TimeDelta::ZERO,
            last_update: None,
        }
    }

    pub fn fec_ratio(&self) -> f64 {
        self.cfg.fec_levels.iter().rev().find(|(from, _)| self.loss >= *from).map_or(0.0, |l| l.1)
    }
    pub fn loss_estimate(&self) -> f64 {
        self.loss
    }
    pub fn media_bps(&self) -> f64 {
        self.media_bps
    }
}

impl CongestionController for ZoomLike {
    fn name(&self) -> &'static str {
        "zoom_like"
    }
    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
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
                let d = a - p.send_time;
                while self.owd.back().is_some_and(|b| b.1 >= d) {
                    self.owd.pop_back();
                }
                self.owd.push_back((a, d));
                while self.owd.front().is_some_and(|f| a - f.0 > TimeDelta::from_secs(10)) {
                    self.owd.pop_front();
                }
                if let Some(min) = self.owd.front() {
                    self.queuing = d - min.1;
                }
            }
        }
        let due = self.last_update.is_none_or(|t| now - t >= TimeDelta::from_secs(1));
        if due {
            self.last_update = Some(now);
            self.media_bps = if self.queuing > self.cfg.max_queuing_delay {
                self.media_bps * 0.85
            } else {
                self.media_bps * 1.05 + 10_000.0
            }
            .clamp(self.cfg.min_media_bps, self.cfg.max_media_bps);
        }
    }

    fn target(&self) -> CcTarget {
        let mut t =
            crate::rate_target(self.media_bps, self.cfg.pacing_factor * (1.0 + self.fec_ratio()));
        t.fec_ratio = self.fec_ratio();
        t
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            pacing_rate: t.pacing_rate,
            target_rate: t.target_rate,
            extra: [
                Some(("loss_estimate", self.loss)),
                Some(("fec_ratio", self.fec_ratio())),
                Some(("queuing_ms", self.queuing.as_millis_f64())),
                None,
                None,
                None,
                None,
                None,
            ],
            ..Default::default()
        }
    }
}

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
    fn backs_off_on_delay_not_on_loss() {
        let mut z = ZoomLike::new(ZoomLikeConfig::default());
        let start = z.media_bps();
        for k in 0..50 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 4, 100 * k, 20));
        }
        assert!(z.media_bps() > start, "25 % loss alone does not reduce the rate");
        for k in 50..100 {
            z.on_transport_feedback(Time::from_millis(100 * k), &fb(50, 0, 100 * k, 1_500));
        }
        assert!(z.media_bps() < start, "1.5 s of queuing does");
    }
}
