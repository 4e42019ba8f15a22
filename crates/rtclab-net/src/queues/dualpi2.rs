//! DualPI2, the DualQ Coupled AQM of L4S: a low-latency queue for scalable (L4S) traffic and
//! a classic queue, one PI controller coupling the two.
//!
//! Lineage: RFC 9332 (De Schepper, Briscoe, White 2023), Appendix A; the defaults and the
//! edge-case rules of Linux `net/sched/sch_dualpi2.c` (Nokia, merged in Linux 6.17), its
//! default mode: drop on dequeue, drop on overload, step threshold in time.
//!
//! ```text
//! enqueue:  limit full → drop (overflow)
//!           ECN field & 0b01 (ECT(1) or CE) → L queue, else → C queue   (timestamped)
//! dequeue:  WRR between the queues: L while credit ≤ 0 (or C empty); serving L with C
//!           backlogged adds wc·len to the credit, serving C with L backlogged takes wl·len
//!           (wc = 10 %, wl = 90 %; credit starts at mtu·(wc − wl) and resets when both empty)
//!           less than 2 MTU left queued → no AQM action
//!           C packet:  with p_C = p'²  (two rolls of p'): drop if not-ECT or overload, else CE
//!           L packet:  overload (k·p' > 1): with p'² drop, else CE
//!                      else with p_CL = k·p': CE (drop if not-ECT)
//!                      then the native step AQM: sojourn > step_thresh (1 ms) → CE
//!                      (or, with ramp_range > 0, RFC 9332 §A.1's ramp: CE with probability
//!                      min(1, (sojourn − step_thresh)/ramp_range) above step_thresh)
//! every tupdate (16 ms):  qdelay = max(C head's, L head's sojourn so far)
//!           p' += α·(qdelay − target) + β·(qdelay − qdelay_prev)     (α 0.16 Hz, β 3.2 Hz,
//!           p' ∈ [0, 1], target 15 ms)
//! ```
//!
//! The coupling k = 2 makes a scalable flow (window ∝ 1/p_L) and a classic one (window ∝
//! 1/√p_C) get equal windows at equal RTTs (RFC 9332 §2.1).
//!
//! Differences from Linux: probabilities are `f64` in [0, 1] (Linux: u32 fixed point, α and β
//! in 1/256 Hz: 41/256 and 819/256, which the defaults here copy); the queue limit is the
//! scenario's `limit` (Linux: 10,000 packets and a memory limit); no tc filters, GSO splitting
//! or packet-count step threshold; the first update comes one `tupdate` after the start;
//! random rolls come from the run's seeded stream for this link.

use crate::any_qdisc::AnyQdisc;
use crate::element::{Dropped, ElementOutput, Marked};
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::fifo::TimedFifo;
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Ecn, Packet, RngStream, Time, TimeDelta};

pub static KIND: QdiscKind = QdiscKind {
    name: "dualpi2",
    help: "DualPI2 (RFC 9332): L4S queue (ECT(1)/CE, step and coupled marking) and classic queue (PI², squared drop) coupled by k",
    params: || describe(DUALPI2_PARAMS, &DualPi2Config::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = DualPi2Config { mtu: a.mtu, ..DualPi2Config::default() };
        a.apply(DUALPI2_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |seed| {
            AnyQdisc::Other(Box::new(DualPi2::new(limit, c, RngStream::from_seed(seed))))
        }))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Config {
    /// PI2 queue delay target (15 ms).
    pub target: TimeDelta,
    /// Probability update period (16 ms).
    pub tupdate: TimeDelta,
    /// Integral and proportional gains, Hz (Linux 41/256 and 819/256).
    pub alpha: f64,
    pub beta: f64,
    /// L queue native AQM: CE above this sojourn time (1 ms).
    pub step_thresh: TimeDelta,
    /// L queue native AQM as a ramp of this width above `step_thresh` (zero: a step, Linux).
    pub ramp_range: TimeDelta,
    /// Coupling factor k (2).
    pub coupling: f64,
    /// The classic queue's share of the WRR scheduler, percent (10).
    pub c_protection: f64,
    /// On overload (k·p' > 1) drop L packets with p'² as classic ones (true), or only mark.
    pub drop_overload: bool,
    /// Bytes (the "two MTUs queued" safeguard, the scheduler's initial credit).
    pub mtu: u32,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            target: TimeDelta::from_millis(15),
            tupdate: TimeDelta::from_millis(16),
            alpha: 41.0 / 256.0,
            beta: 819.0 / 256.0,
            step_thresh: TimeDelta::from_millis(1),
            ramp_range: TimeDelta::ZERO,
            coupling: 2.0,
            c_protection: 10.0,
            drop_overload: true,
            mtu: 1500,
        }
    }
}

pub static DUALPI2_PARAMS: &[Param<DualPi2Config>] = &[
    param!(DualPi2Config, "target_ms", "PI2 queue delay target, ms (15)", Real, 0.01, 10_000.0,
        |c| c.target.as_millis_f64(), |c, v| c.target = ms(v)),
    param!(DualPi2Config, "tupdate_ms", "probability update period, ms (16)", Real, 0.1, 10_000.0,
        |c| c.tupdate.as_millis_f64(), |c, v| c.tupdate = ms(v)),
    param!(DualPi2Config, "alpha", "integral gain, Hz (0.16)", Real, 0.0, 1000.0,
        |c| c.alpha, |c, v| c.alpha = v),
    param!(DualPi2Config, "beta", "proportional gain, Hz (3.2)", Real, 0.0, 1000.0,
        |c| c.beta, |c, v| c.beta = v),
    param!(DualPi2Config, "step_thresh_ms", "L4S queue: CE above this sojourn time, ms (1)", Real, 0.0, 10_000.0,
        |c| c.step_thresh.as_millis_f64(), |c, v| c.step_thresh = ms(v)),
    param!(DualPi2Config, "ramp_range_ms", "L4S queue: mark on a ramp this wide above step_thresh_ms instead of a step, ms (0: step)", Real, 0.0, 10_000.0,
        |c| c.ramp_range.as_millis_f64(), |c, v| c.ramp_range = ms(v)),
    param!(DualPi2Config, "coupling", "coupling factor k: p_L = k·p' (2)", Real, 1.0, 255.0,
        |c| c.coupling, |c, v| c.coupling = v),
    param!(DualPi2Config, "c_protection", "classic queue's WRR share, percent (10)", Real, 0.0, 100.0,
        |c| c.c_protection, |c, v| c.c_protection = v),
    param!(DualPi2Config, "drop_overload", "when k·p' > 1, drop L4S packets with p'² (true) instead of only marking", Bool, 0.0, 1.0,
        |c| c.drop_overload as u8 as f64, |c, v| c.drop_overload = v != 0.0),
];

/// Which queue a packet is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    L,
    C,
}

/// Counters for tests and the docs' comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Stats {
    pub packets_in_l: u64,
    pub packets_in_c: u64,
    /// CE marks from the PI probability (either queue) and from the L queue's step.
    pub pi_marks: u64,
    pub step_marks: u64,
    pub aqm_drops: u64,
}

#[derive(Debug)]
pub struct DualPi2 {
    limit: QueueLimit,
    cfg: DualPi2Config,
    l: TimedFifo,
    c: TimedFifo,
    rng: RngStream,
    /// The base probability p'.
    prob: f64,
    last_qdelay: TimeDelta,
    next_update: Time,
    /// WRR credit in byte·percent: L is served while it is ≤ 0.
    credit: i64,
    credit_init: i64,
    pub stats: DualPi2Stats,
}

impl DualPi2 {
    pub fn new(limit: QueueLimit, cfg: DualPi2Config, rng: RngStream) -> Self {
        let wc = cfg.c_protection;
        let credit_init = (cfg.mtu as f64 * (wc - (100.0 - wc))).round() as i64;
        DualPi2 {
            limit,
            cfg,
            l: TimedFifo::default(),
            c: TimedFifo::default(),
            rng,
            prob: 0.0,
            last_qdelay: TimeDelta::ZERO,
            next_update: Time::ZERO + cfg.tupdate,
            credit: credit_init,
            credit_init,
            stats: DualPi2Stats::default(),
        }
    }

    /// The base probability p' (classic p_C = p'², coupled L4S p_CL = k·p').
    pub fn probability(&self) -> f64 {
        self.prob
    }

    fn total(&self) -> Backlog {
        let (l, c) = (self.l.backlog(), self.c.backlog());
        Backlog { packets: l.packets + c.packets, bytes: l.bytes + c.bytes }
    }

    /// Linux `calculate_probability`: PI on the larger of the two heads' sojourn times.
    fn update_probability(&mut self, now: Time) {
        let age = |t: Option<Time>| t.map_or(TimeDelta::ZERO, |t| now - t);
        let qdelay = age(self.c.head_time()).max(age(self.l.head_time()));
        let delta = self.cfg.alpha * (qdelay - self.cfg.target).as_secs_f64()
            + self.cfg.beta * (qdelay - self.last_qdelay).as_secs_f64();
        self.last_qdelay = qdelay;
        self.prob = (self.prob + delta).clamp(0.0, 1.0);
        if !self.cfg.drop_overload {
            self.prob = self.prob.min(1.0 / self.cfg.coupling);
        }
    }

    /// The L queue's native AQM above the threshold: always (a step) or on the ramp.
    fn native_mark(&mut self, sojourn: TimeDelta) -> bool {
        if self.cfg.ramp_range <= TimeDelta::ZERO {
            return true;
        }
        let over = (sojourn - self.cfg.step_thresh).as_secs_f64();
        self.roll((over / self.cfg.ramp_range.as_secs_f64()).min(1.0))
    }

    fn roll(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.next_f64() < p
    }

    /// Linux `must_drop` with its marking: true = drop the packet; CE may be set on it.
    fn pi_action(&mut self, which: Which, pkt: &mut Packet) -> bool {
        if self.total().bytes < 2 * self.cfg.mtu as u64 {
            return false;
        }
        let p = self.prob;
        let l_prob = p * self.cfg.coupling;
        let overload = l_prob > 1.0;
        let ect = pkt.ecn().is_capable();
        match which {
            Which::C => {
                if self.roll(p) && self.roll(p) {
                    if overload || !ect {
                        return true;
                    }
                    self.mark(pkt, false);
                }
                false
            }
            Which::L => {
                if overload {
                    if self.cfg.drop_overload && self.roll(p) && self.roll(p) {
                        return true;
                    }
                    self.mark(pkt, false);
                } else if self.roll(l_prob) {
                    if !ect {
                        return true;
                    }
                    self.mark(pkt, false);
                }
                false
            }
        }
    }

    fn mark(&mut self, pkt: &mut Packet, step: bool) {
        if pkt.ecn().is_capable() {
            pkt.set_ecn(Ecn::Ce);
            if step {
                self.stats.step_marks += 1;
            } else {
                self.stats.pi_marks += 1;
            }
        }
    }

    /// Linux `dequeue_packet`: the WRR choice; returns the packet, its queue and the credit
    /// change to apply if it is sent.
    fn pick(&mut self, now: Time) -> Option<(Dequeued, Which, i64)> {
        let (l_len, c_len) = (self.l.backlog().packets, self.c.backlog().packets);
        let wc = self.cfg.c_protection;
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let d = self.l.pop(now)?;
            let change = if c_len > 0 { (wc * d.pkt.size as f64).round() as i64 } else { 0 };
            Some((d, Which::L, change))
        } else if c_len > 0 {
            let d = self.c.pop(now)?;
            let wl = 100.0 - wc;
            let change = if l_len > 0 { -(wl * d.pkt.size as f64).round() as i64 } else { 0 };
            Some((d, Which::C, change))
        } else {
            self.credit = self.credit_init;
            None
        }
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        if !self.limit.admits(self.total(), pkt.size) {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
            return;
        }
        // RFC 9331 §5.1: ECT(1) and CE are the L4S identifier.
        if matches!(pkt.ecn(), Ecn::Ect1 | Ecn::Ce) {
            self.stats.packets_in_l += 1;
            self.l.push(now, pkt);
        } else {
            self.stats.packets_in_c += 1;
            self.c.push(now, pkt);
        }
    }

    fn dequeue(&mut self, now: Time, out: &mut ElementOutput) -> Option<Dequeued> {
        while let Some((mut d, which, change)) = self.pick(now) {
            let before = d.pkt.ecn();
            if self.pi_action(which, &mut d.pkt) {
                self.stats.aqm_drops += 1;
                out.drops.push(Dropped { pkt: d.pkt, reason: DropReason::Aqm });
                continue;
            }
            if which == Which::L && d.sojourn > self.cfg.step_thresh && self.native_mark(d.sojourn) {
                if !d.pkt.ecn().is_capable() {
                    self.stats.aqm_drops += 1;
                    out.drops.push(Dropped { pkt: d.pkt, reason: DropReason::Aqm });
                    continue;
                }
                self.mark(&mut d.pkt, true);
            }
            if before != Ecn::Ce && d.pkt.ecn() == Ecn::Ce {
                out.marks.push(Marked { pkt: d.pkt, reason: DropReason::Aqm });
            }
            self.credit += change;
            return Some(d);
        }
        None
    }

    fn backlog(&self) -> Backlog {
        self.total()
    }

    fn held_by_kind(&self) -> (u64, u64) {
        let (a, b) = (self.l.held_by_kind(), self.c.held_by_kind());
        (a.0 + b.0, a.1 + b.1)
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn handle_timeout(&mut self, now: Time, _out: &mut ElementOutput) {
        while self.next_update <= now {
            self.update_probability(now);
            self.next_update += self.cfg.tupdate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    fn q() -> DualPi2 {
        DualPi2::new(QueueLimit::Packets(100_000), DualPi2Config::default(), RngStream::from_seed(3))
    }

    fn pkt(flow: u32, seq: u64, ecn: Ecn) -> Packet {
        let mut p = Packet::data(FlowId(flow), seq, 1500, Time::ZERO);
        p.set_ecn(ecn);
        p
    }

    fn at(us: i64) -> Time {
        Time::ZERO + TimeDelta::from_micros(us)
    }

    #[test]
    fn classifies_on_the_ecn_field_and_schedules_by_weighted_round_robin() {
        let mut q = q();
        let mut out = ElementOutput::default();
        for s in 0..50 {
            q.enqueue(Time::ZERO, pkt(0, s, Ecn::Ect1), &mut out);
            q.enqueue(Time::ZERO, pkt(1, s, Ecn::NotEct), &mut out);
        }
        q.enqueue(Time::ZERO, pkt(2, 0, Ecn::Ce), &mut out);
        q.enqueue(Time::ZERO, pkt(3, 0, Ecn::Ect0), &mut out);
        assert_eq!((q.stats.packets_in_l, q.stats.packets_in_c), (51, 51));
        // With both backlogged and equal sizes: 9 L packets for each C packet (wc = 10 %).
        let flows: Vec<u32> = (0..40).map(|_| q.dequeue(Time::ZERO, &mut out).unwrap().pkt.flow.0).collect();
        let classic = flows.iter().filter(|&&f| f == 1).count();
        assert_eq!(classic, 4, "{flows:?}");
        assert_eq!(flows[0], 0, "L first: the credit starts negative");
    }

    #[test]
    fn probability_follows_the_pi_law_on_the_larger_head_delay() {
        let mut q = q();
        let mut out = ElementOutput::default();
        q.enqueue(Time::ZERO, pkt(0, 0, Ecn::NotEct), &mut out);
        q.enqueue(at(10_000), pkt(1, 0, Ecn::Ect1), &mut out);
        // At 16 ms: C head 16 ms old, L head 6 ms: qdelay 16 ms.
        q.handle_timeout(at(16_000), &mut out);
        let a = 41.0 / 256.0;
        let b = 819.0 / 256.0;
        let want = a * (0.016 - 0.015) + b * 0.016;
        assert!((q.probability() - want).abs() < 1e-12, "{} vs {want}", q.probability());
        // At 32 ms: qdelay 32 ms.
        q.handle_timeout(at(32_000), &mut out);
        let want2 = want + a * (0.032 - 0.015) + b * 0.016;
        assert!((q.probability() - want2).abs() < 1e-12);
    }

    #[test]
    fn step_marks_l4s_packets_above_the_threshold_and_never_classic_ones() {
        let mut q = q();
        let mut out = ElementOutput::default();
        q.enqueue(Time::ZERO, pkt(0, 0, Ecn::Ect1), &mut out);
        q.enqueue(Time::ZERO, pkt(0, 1, Ecn::Ect1), &mut out);
        q.enqueue(Time::ZERO, pkt(1, 0, Ecn::Ect0), &mut out);
        let d = q.dequeue(at(500), &mut out).unwrap();
        assert_eq!(d.pkt.ecn(), Ecn::Ect1, "0.5 ms: below the step");
        let d = q.dequeue(at(1_500), &mut out).unwrap();
        assert_eq!(d.pkt.ecn(), Ecn::Ce, "1.5 ms: above the step");
        assert_eq!(out.marks.len(), 1);
        let d = q.dequeue(at(50_000), &mut out).unwrap();
        assert_eq!(d.pkt.ecn(), Ecn::Ect0, "a classic packet is not step-marked");
        assert_eq!(q.stats.step_marks, 1);
    }

    /// An unresponsive classic source at 1.25× the link: PI2 must settle with p'² near
    /// 1 − 1/1.25 = 0.2 and the queue delay near the 15 ms target.
    #[test]
    fn holds_an_overloaded_classic_queue_near_the_target() {
        let mut q = q();
        let mut out = ElementOutput::default();
        let (mut sum, mut n, mut sent, mut dropped) = (0.0, 0u32, 0u32, 0usize);
        let mut acc = 0.0;
        for us in (0..30_000_000i64).step_by(250) {
            let now = at(us);
            acc += 0.3125;
            while acc >= 1.0 {
                acc -= 1.0;
                q.enqueue(now, pkt(0, sent as u64, Ecn::NotEct), &mut out);
                if us >= 15_000_000 {
                    sent += 1;
                }
            }
            if q.poll_timeout().is_some_and(|t| t <= now) {
                q.handle_timeout(now, &mut out);
            }
            if us % 1000 == 0 {
                if let Some(d) = q.dequeue(now, &mut out) {
                    if us >= 15_000_000 {
                        sum += d.sojourn.as_millis_f64();
                        n += 1;
                    }
                }
            }
            if us >= 15_000_000 {
                dropped += out.drops.len();
            }
            out.drops.clear();
        }
        let mean = sum / n as f64;
        let ratio = dropped as f64 / sent as f64;
        assert!((10.0..=20.0).contains(&mean), "mean queue delay {mean} ms");
        assert!((0.17..=0.23).contains(&ratio), "drop ratio {ratio}");
        assert!((q.probability().powi(2) - 0.2).abs() < 0.08, "p' {}", q.probability());
    }
}
