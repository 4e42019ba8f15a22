//! PIE, Proportional Integral controller Enhanced.
//!
//! Lineage: RFC 8033 (Pan, Natarajan, Baker, White 2017) §4-5; the fixed-point details —
//! auto-scaled α and β, the 2 % cap on increases above 10 %, the +2 % step above 250 ms, the
//! 1/64 decay, the burst allowance, de-randomisation with `accu_prob` — as Linux
//! `net/sched/sch_pie.c` does them in its default mode (queue delay from packet timestamps,
//! `dq_rate_estimator` off).
//!
//! Every `tupdate_ms` the drop probability moves by
//! `α·(qdelay − target) + β·(qdelay − qdelay_old)` (seconds; α and β shrunk by 2 below 10 %
//! and by a further 4 per decade below 1 %, down to /2048). An arrival is dropped (or, with
//! `ecn` and a probability of at most 10 %, marked CE) with that probability, except during
//! the burst allowance (150 ms after the queue was last calm), while the queue delay is below
//! half the target with a probability under 20 %, or with less than two MTUs queued.
//! `qdelay` is the sojourn time of the last packet dequeued (0 when it left the queue empty).
//!
//! Differences from Linux: probabilities are `f64` in [0, 1] (Linux: 56-bit fixed point); the
//! first update comes one `tupdate` after the start (Linux: 500 ms after the qdisc is made);
//! random draws come from the run's seeded stream for this link.

use crate::element::{Dropped, ElementOutput, Marked};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::fifo::TimedFifo;
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Ecn, Packet, RngStream, Time, TimeDelta};

pub static KIND: QdiscKind = QdiscKind {
    name: "pie",
    help: "PIE (RFC 8033): drops arrivals with a probability steered by the queue delay's error and trend",
    params: || describe(PIE_PARAMS, &PieConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = PieConfig { mtu: a.mtu, ..PieConfig::default() };
        a.apply(PIE_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |seed| AnyQdisc::Other(Box::new(Pie::new(limit, c, RngStream::from_seed(seed))))))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// Queue delay reference (RFC 8033 QDELAY_REF: 15 ms).
    pub target: TimeDelta,
    /// Update period (T_UPDATE: 15 ms).
    pub tupdate: TimeDelta,
    /// Gains per second (RFC 8033: 0.125 and 1.25; Linux: 2/16 and 20/16).
    pub alpha: f64,
    pub beta: f64,
    /// Burst allowance (MAX_BURST: 150 ms).
    pub max_burst: TimeDelta,
    pub ecn: bool,
    /// Scale the probability by packet size / MTU.
    pub bytemode: bool,
    /// Bytes (the "two MTUs queued" safeguard, the byte-mode scale).
    pub mtu: u32,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target: TimeDelta::from_millis(15),
            tupdate: TimeDelta::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: TimeDelta::from_millis(150),
            ecn: false,
            bytemode: false,
            mtu: 1500,
        }
    }
}

pub static PIE_PARAMS: &[Param<PieConfig>] = &[
    param!(PieConfig, "target_ms", "queue delay reference, ms (15)", Real, 0.01, 10_000.0,
        |c| c.target.as_millis_f64(), |c, v| c.target = ms(v)),
    param!(PieConfig, "tupdate_ms", "probability update period, ms (15)", Real, 0.1, 10_000.0,
        |c| c.tupdate.as_millis_f64(), |c, v| c.tupdate = ms(v)),
    param!(PieConfig, "alpha", "gain on the delay error, per second (0.125)", Real, 0.0, 32.0,
        |c| c.alpha, |c, v| c.alpha = v),
    param!(PieConfig, "beta", "gain on the delay trend, per second (1.25)", Real, 0.0, 32.0,
        |c| c.beta, |c, v| c.beta = v),
    param!(PieConfig, "max_burst_ms", "burst allowance after a calm queue, ms (150)", Real, 0.0, 100_000.0,
        |c| c.max_burst.as_millis_f64(), |c, v| c.max_burst = ms(v)),
    param!(PieConfig, "ecn", "mark ECN-capable packets (CE) instead of dropping while the probability is at most 10 % (false)", Bool, 0.0, 1.0,
        |c| c.ecn as u8 as f64, |c, v| c.ecn = v != 0.0),
    param!(PieConfig, "bytemode", "scale the probability by packet size / MTU (false)", Bool, 0.0, 1.0,
        |c| c.bytemode as u8 as f64, |c, v| c.bytemode = v != 0.0),
];

#[derive(Debug)]
pub struct Pie {
    limit: QueueLimit,
    cfg: PieConfig,
    fifo: TimedFifo,
    rng: RngStream,
    prob: f64,
    accu_prob: f64,
    qdelay: TimeDelta,
    qdelay_old: TimeDelta,
    burst_time: TimeDelta,
    dq_tstamp: Option<Time>,
    next_update: Time,
}

impl Pie {
    pub fn new(limit: QueueLimit, cfg: PieConfig, rng: RngStream) -> Self {
        Pie {
            limit,
            cfg,
            fifo: TimedFifo::default(),
            rng,
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: TimeDelta::ZERO,
            qdelay_old: TimeDelta::ZERO,
            burst_time: cfg.max_burst,
            dq_tstamp: None,
            next_update: Time::ZERO + cfg.tupdate,
        }
    }

    pub fn probability(&self) -> f64 {
        self.prob
    }

    /// Linux `pie_vars_init` (the probability and delays stay).
    fn restart(&mut self) {
        self.burst_time = self.cfg.max_burst;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
    }

    /// RFC 8033 `calculate_drop_prob` as Linux `pie_calculate_probability` does it.
    fn calculate_probability(&mut self) {
        let backlog = self.fifo.backlog().bytes;
        let (qdelay, qdelay_old) = (self.qdelay, self.qdelay_old);
        let mut update_prob = !(qdelay == TimeDelta::ZERO && backlog != 0);
        let (mut alpha, mut beta) = (self.cfg.alpha, self.cfg.beta);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let mut delta = alpha * (qdelay - self.cfg.target).as_secs_f64()
            + beta * (qdelay - qdelay_old).as_secs_f64();
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > TimeDelta::from_millis(250) {
            delta += 0.02;
        }
        self.prob += delta;
        if self.prob > 1.0 {
            self.prob = 1.0;
            update_prob = false;
        } else if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == TimeDelta::ZERO && qdelay_old == TimeDelta::ZERO && update_prob {
            self.prob -= self.prob / 64.0;
        }
        let half = TimeDelta::from_nanos(self.cfg.target.as_nanos() / 2);
        if qdelay < half && qdelay_old < half && self.prob == 0.0 {
            self.restart();
        }
        self.qdelay_old = qdelay;
    }

    /// RFC 8033 `drop_early` as Linux `pie_drop_early`.
    fn drop_early(&mut self, size: u32) -> bool {
        if self.burst_time > TimeDelta::ZERO {
            return false;
        }
        let half = TimeDelta::from_nanos(self.cfg.target.as_nanos() / 2);
        if self.qdelay < half && self.prob < 0.2 {
            return false;
        }
        if self.fifo.backlog().bytes < 2 * self.cfg.mtu as u64 {
            return false;
        }
        let p = if self.cfg.bytemode && size <= self.cfg.mtu {
            self.prob * size as f64 / self.cfg.mtu as f64
        } else {
            self.prob
        };
        if p == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += p;
        }
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if self.rng.next_f64() < p {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, now: Time, mut pkt: Packet, out: &mut ElementOutput) {
        if !self.limit.admits(self.fifo.backlog(), pkt.size) {
            self.accu_prob = 0.0;
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
            return;
        }
        if self.drop_early(pkt.size) {
            if self.cfg.ecn && self.prob <= 0.1 && pkt.ecn().is_capable() {
                pkt.set_ecn(Ecn::Ce);
                out.marks.push(Marked { pkt, reason: DropReason::Aqm });
            } else {
                self.accu_prob = 0.0;
                out.drops.push(Dropped { pkt, reason: DropReason::Aqm });
                return;
            }
        }
        self.fifo.push(now, pkt);
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        let d = self.fifo.pop(now)?;
        // Linux `pie_process_dequeue`, timestamp mode.
        self.qdelay = if self.fifo.is_empty() { TimeDelta::ZERO } else { d.sojourn };
        let dtime = self.dq_tstamp.map_or(TimeDelta::ZERO, |t| now - t);
        self.dq_tstamp = Some(now);
        if dtime > TimeDelta::ZERO && self.burst_time > TimeDelta::ZERO {
            self.burst_time = if self.burst_time > dtime { self.burst_time - dtime } else { TimeDelta::ZERO };
        }
        Some(d)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn held_by_kind(&self) -> (u64, u64) {
        self.fifo.held_by_kind()
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn handle_timeout(&mut self, now: Time, _out: &mut ElementOutput) {
        while self.next_update <= now {
            self.calculate_probability();
            self.next_update += self.cfg.tupdate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    fn pie() -> Pie {
        Pie::new(QueueLimit::Packets(100_000), PieConfig::default(), RngStream::from_seed(1))
    }

    fn step(q: &mut Pie, prob: f64, qdelay_ms: i64, old_ms: i64) -> f64 {
        q.prob = prob;
        q.qdelay = TimeDelta::from_millis(qdelay_ms);
        q.qdelay_old = TimeDelta::from_millis(old_ms);
        q.calculate_probability();
        q.prob
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn probability_updates_by_hand() {
        // From 0 with qdelay 20 ms, old 10 ms: α, β scaled by 1/2048 (2 · 4^5):
        // (0.125 · 0.005 + 1.25 · 0.010) / 2048.
        let mut q = pie();
        q.fifo.push(Time::ZERO, Packet::data(FlowId(0), 0, 1500, Time::ZERO));
        assert!(close(step(&mut q, 0.0, 20, 10), 0.013125 / 2048.0));
        // From 5 %: scaled by 1/2 (below 10 %, not below 1 %); from 0.5 %: by 1/8 (2 · 4).
        assert!(close(step(&mut q, 0.05, 20, 10), 0.05 + 0.013125 / 2.0));
        assert!(close(step(&mut q, 0.005, 20, 10), 0.005 + 0.013125 / 8.0));
        // From 50 % at 300 ms after 100 ms: the increase is capped at 2 %, plus 2 % above 250 ms.
        assert!(close(step(&mut q, 0.5, 300, 100), 0.54));
        // A calm, empty queue: 0.125 · (−0.015) unscaled (above 10 %), then the 1/64 decay.
        let mut q = pie();
        let p = step(&mut q, 0.5, 0, 0);
        assert!(close(p, (0.5 - 0.001875) * (63.0 / 64.0)), "{p}");
        // Bounded at 1.
        assert_eq!(step(&mut q, 0.99, 400, 0), 1.0);
    }

    #[test]
    fn no_early_drop_within_the_burst_allowance_or_below_two_mtus() {
        let mut q = pie();
        q.prob = 0.9;
        q.qdelay = TimeDelta::from_millis(100);
        assert!(!q.drop_early(1500), "burst allowance");
        q.burst_time = TimeDelta::ZERO;
        assert!(!q.drop_early(1500), "less than two MTUs queued");
        for s in 0..3 {
            q.fifo.push(Time::ZERO, Packet::data(FlowId(0), s, 1500, Time::ZERO));
        }
        // accu_prob 0.9 >= 0.85: a random draw; 8.5 reached after ten: certain.
        let drops = (0..10).filter(|_| q.drop_early(1500)).count();
        assert!(drops >= 1);
    }

    #[test]
    fn holds_an_overloaded_queue_near_the_target() {
        // One 1500 B packet served per ms; an unresponsive source sends 1.25 per ms. PIE must
        // settle at a drop probability near 1 − 1/1.25 = 0.2 with the queue delay near 15 ms.
        let mut q = pie();
        let mut out = ElementOutput::default();
        let (mut sum, mut n, mut sent, mut dropped) = (0.0, 0u32, 0u32, 0usize);
        let mut acc = 0.0;
        for us in (0..20_000_000i64).step_by(250) {
            let now = Time::ZERO + TimeDelta::from_micros(us);
            acc += 0.3125;
            while acc >= 1.0 {
                acc -= 1.0;
                q.enqueue(now, Packet::data(FlowId(0), sent as u64, 1500, Time::ZERO), &mut out);
                if us >= 10_000_000 {
                    sent += 1;
                }
            }
            if q.poll_timeout().is_some_and(|t| t <= now) {
                q.handle_timeout(now, &mut out);
            }
            if us % 1000 == 0 {
                if let Some(d) = q.dequeue(now, &mut out) {
                    if us >= 10_000_000 {
                        sum += d.sojourn.as_millis_f64();
                        n += 1;
                    }
                }
            }
            if us >= 10_000_000 {
                dropped += out.drops.len();
            }
            out.drops.clear();
        }
        let mean = sum / n as f64;
        let ratio = dropped as f64 / sent as f64;
        assert!((8.0..=25.0).contains(&mean), "mean queue delay {mean} ms");
        assert!((0.17..=0.23).contains(&ratio), "drop ratio {ratio}");
    }
}
