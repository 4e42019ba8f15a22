//! ABC's router at a wireless access point: accelerate/brake marks from the link's dequeue rate.
//!
//! Lineage: P. Goyal et al., *ABC: A Simple Explicit Congestion Controller for Wireless
//! Networks*, NSDI 2020; as the Zhuge evaluation ran it as a baseline (spec `zhuge-metis.md`
//! A.8: the released ns-3 code transys-project/zhuge `network-queue-abc.cc`, which measures the
//! AP, and `Ipv4Interface::ABCEstimation` in `ns-diff.patch`, which marks). A middlebox at the
//! access point's downlink hop (`[[middleboxes]] kind = "abc", at = "<link>"`):
//!
//! - `μ` = the link's dequeue rate over the last `w_rate` (40 ms) of 1 ms slots that were not
//!   idle (bytes left or a packet waited), at least 512 kbit/s — the Fortune Teller's estimator
//!   (`zhuge::fortune_teller`), the same arithmetic as the released `UpdateTxRate`;
//! - `cr` = what actually left over the whole window (idle slots included), same floor;
//! - `d` = 8 · (bytes queued at the link) / μ, in ms;
//! - target rate `tr = η·μ + (μ/δ)·min(0, d_t − d)` with η = 0.98, δ = 133 ms, d_t = 10 ms;
//! - each ECN-capable TCP data packet entering the link is left an accelerate (ECT(1)) with
//!   probability `0.5·tr/cr` and made a brake (ECT(0)) otherwise.
//!
//! The ABC sender (`cc = "abc"`, `rtclab_cc::abc`) answers an accelerate with two packets and a
//! brake with none, so the next round's rate is 2·(accelerate share)·(dequeue rate) = `tr`. The
//! marks are drawn at random as in the released code (the ABC paper's router uses a
//! deterministic token bucket; the mean is the same). Packets that are not ECN-capable, CE or
//! ACKs pass untouched; every packet entering the link counts toward its queue.

use crate::zhuge::fortune_teller::{FortuneTeller, FortuneTellerConfig};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Direction, Ecn, Packet, PacketKind, RngStream, Time, TimeDelta};
use rtclab_net::element::{DequeueRecord, ElementOutput, NetElement};
use rtclab_net::middleboxes::{MiddleboxArgs, MiddleboxKind};
use rtclab_net::queues::describe;

pub static KIND: MiddleboxKind = MiddleboxKind {
    name: "abc",
    help: "ABC (NSDI'20) at a wireless AP: marks ECN-capable TCP packets accelerate/brake from the link's dequeue rate and queue (the Zhuge evaluation's baseline; senders use cc = \"abc\")",
    params: || describe(ABC_PARAMS, &AbcRouterConfig::default()),
    build: |a: MiddleboxArgs| {
        let mut c = AbcRouterConfig::default();
        a.apply(ABC_PARAMS, &mut c)?;
        Ok(Box::new(AbcRouter::new(c, a.rng)))
    },
    acts_on_feedback: false,
    simulator_only: rtclab_net::middleboxes::runs_in_both,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbcRouterConfig {
    /// Target utilization η (0.98).
    pub eta: f64,
    /// How fast a standing queue is drained, δ (133 ms).
    pub delta: TimeDelta,
    /// Queueing delay the target allows, d_t (10 ms).
    pub delay_target: TimeDelta,
    /// Window and floor of the rate estimates (40 ms, 512 kbit/s).
    pub teller: FortuneTellerConfig,
}

impl Default for AbcRouterConfig {
    fn default() -> Self {
        AbcRouterConfig {
            eta: 0.98,
            delta: TimeDelta::from_millis(133),
            delay_target: TimeDelta::from_millis(10),
            teller: FortuneTellerConfig::default(),
        }
    }
}

pub static ABC_PARAMS: &[Param<AbcRouterConfig>] = &[
    param!(
        AbcRouterConfig,
        "eta",
        "target utilization η (0.98)",
        Real,
        0.01,
        1.0,
        |c| c.eta,
        |c, v| c.eta = v
    ),
    param!(
        AbcRouterConfig,
        "delta_ms",
        "queue drain time constant δ, ms (133)",
        Real,
        1.0,
        100_000.0,
        |c| c.delta.as_millis_f64(),
        |c, v| c.delta = ms(v)
    ),
    param!(
        AbcRouterConfig,
        "delay_target_ms",
        "queueing delay the target allows, d_t, ms (10)",
        Real,
        0.0,
        10_000.0,
        |c| c.delay_target.as_millis_f64(),
        |c, v| c.delay_target = ms(v)
    ),
    param!(
        AbcRouterConfig,
        "w_rate_ms",
        "window of the dequeue-rate estimates, ms (40)",
        Real,
        1.0,
        10_000.0,
        |c| c.teller.w_rate.as_millis_f64(),
        |c, v| c.teller.w_rate = ms(v)
    ),
    param!(
        AbcRouterConfig,
        "min_tx_rate_kbps",
        "floor of the rate estimates, kbit/s (512)",
        Real,
        1.0,
        1e7,
        |c| c.teller.min_tx_rate_bps / 1000.0,
        |c, v| c.teller.min_tx_rate_bps = v * 1000.0
    ),
];

/// What the router decided for one packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbcDecision {
    pub mu_bps: f64,
    pub current_bps: f64,
    pub queue_delay: TimeDelta,
    pub target_bps: f64,
    /// Probability of an accelerate (may exceed 1: then always).
    pub accelerate_probability: f64,
}

pub struct AbcRouter {
    cfg: AbcRouterConfig,
    rng: RngStream,
    teller: FortuneTeller,
    accelerates: u64,
    brakes: u64,
}

impl AbcRouter {
    pub fn new(cfg: AbcRouterConfig, rng: RngStream) -> Self {
        let mut teller_cfg = cfg.teller;
        teller_cfg.qshort = false;
        AbcRouter { cfg, rng, teller: FortuneTeller::new(teller_cfg), accelerates: 0, brakes: 0 }
    }

    /// The target and the accelerate probability for a packet arriving now.
    pub fn decide(&mut self, now: Time) -> AbcDecision {
        let mu = self.teller.tx_rate_bps(now);
        let current = self.teller.window_rate_bps(now);
        let queue_delay = TimeDelta::from_secs_f64(8.0 * self.teller.backlog_bytes() as f64 / mu);
        let excess_ms = (queue_delay - self.cfg.delay_target).as_millis_f64().max(0.0);
        let target = self.cfg.eta * mu - (mu / self.cfg.delta.as_millis_f64()) * excess_ms;
        AbcDecision {
            mu_bps: mu,
            current_bps: current,
            queue_delay,
            target_bps: target,
            accelerate_probability: 0.5 * target / current,
        }
    }

    pub fn marks(&self) -> (u64, u64) {
        (self.accelerates, self.brakes)
    }
}

impl NetElement for AbcRouter {
    fn handle_packet(
        &mut self,
        now: Time,
        dir: Direction,
        mut pkt: Packet,
        out: &mut ElementOutput,
    ) {
        if dir == Direction::Forward {
            if pkt.kind == PacketKind::Data && matches!(pkt.ecn(), Ecn::Ect0 | Ecn::Ect1) {
                let p = self.decide(now).accelerate_probability;
                if self.rng.next_f64() < p {
                    pkt.set_ecn(Ecn::Ect1);
                    self.accelerates += 1;
                } else {
                    pkt.set_ecn(Ecn::Ect0);
                    self.brakes += 1;
                }
            }
            self.teller.on_arrival(now, &pkt);
        }
        out.packets.push(pkt);
    }

    fn handle_timeout(&mut self, _now: Time, _out: &mut ElementOutput) {}

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn observe_dequeue(&mut self, now: Time, rec: &DequeueRecord) {
        self.teller.on_dequeue(now, rec);
    }

    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let total = (self.accelerates + self.brakes).max(1) as f64;
        vec![
            ("accelerates", self.accelerates as f64),
            ("brakes", self.brakes as f64),
            ("accelerate_share", self.accelerates as f64 / total),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;
    use rtclab_net::qdisc::Backlog;

    fn data(seq: u64, now: Time) -> Packet {
        let mut p = Packet::data(FlowId(0), seq, 1500, now);
        p.set_ecn(Ecn::Ect1);
        p
    }

    /// Drives the router with a link that serves one 1500-byte packet per `serve_ms` while
    /// `queued` packets wait behind it (12 Mbit/s at 1 ms), for 50 ms.
    fn busy_link(r: &mut AbcRouter, serve_ms: u64, queued: u32) -> Time {
        let mut out = ElementOutput::default();
        let mut t = 0;
        for seq in 0..50 {
            let now = Time::from_millis(t);
            r.handle_packet(now, Direction::Forward, data(seq, now), &mut out);
            let rec = DequeueRecord {
                pkt: data(seq, now),
                sojourn: TimeDelta::ZERO,
                backlog: Backlog { packets: queued, bytes: queued as u64 * 1500 },
                aggregate: None,
                leaves_at: None,
            };
            r.observe_dequeue(now, &rec);
            t += serve_ms;
        }
        Time::from_millis(t)
    }

    #[test]
    fn a_short_queue_at_full_speed_gets_just_under_half_accelerates() {
        // μ = cr = 12 Mbit/s, queue 1 packet = 1 ms < d_t: tr = 0.98 μ, p = 0.49.
        let mut r = AbcRouter::new(AbcRouterConfig::default(), RngStream::from_seed(3));
        let now = busy_link(&mut r, 1, 1);
        let d = r.decide(now);
        assert!((d.mu_bps - 12e6).abs() < 0.5e6, "{d:?}");
        assert!((d.accelerate_probability - 0.49).abs() < 0.03, "{d:?}");
    }

    #[test]
    fn a_standing_queue_brakes_and_an_idle_link_accelerates() {
        // 100 packets queued at 12 Mbit/s = 100 ms: tr = 0.98 μ − μ/133 · 90 ≈ 0.30 μ.
        let mut r = AbcRouter::new(AbcRouterConfig::default(), RngStream::from_seed(3));
        let now = busy_link(&mut r, 1, 100);
        let d = r.decide(now);
        assert!((d.target_bps / d.mu_bps - (0.98 - 90.0 / 133.0)).abs() < 0.05, "{d:?}");
        assert!(d.accelerate_probability < 0.2);
        // Half the slots idle: μ stays 12 Mbit/s while only 6 leave: p ≈ 0.98 (accelerate).
        let mut r = AbcRouter::new(AbcRouterConfig::default(), RngStream::from_seed(3));
        let now = busy_link(&mut r, 2, 0);
        let d = r.decide(now);
        assert!(d.accelerate_probability > 0.9, "{d:?}");
    }

    #[test]
    fn marks_follow_the_probability_and_spare_other_packets() {
        let mut r = AbcRouter::new(AbcRouterConfig::default(), RngStream::from_seed(9));
        busy_link(&mut r, 1, 1);
        let (a, b) = r.marks();
        assert_eq!(a + b, 50);
        let mut out = ElementOutput::default();
        let plain = Packet::data(FlowId(1), 0, 1500, Time::ZERO);
        r.handle_packet(Time::from_millis(60), Direction::Forward, plain, &mut out);
        let ack = Packet::ack(FlowId(0), 3, Time::ZERO, 52, Time::ZERO);
        r.handle_packet(Time::from_millis(60), Direction::Reverse, ack, &mut out);
        assert_eq!(out.packets[0].ecn(), Ecn::NotEct);
        assert_eq!(out.packets[1], ack);
        assert_eq!(r.marks(), (a, b));
    }
}
