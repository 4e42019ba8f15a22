//! CoDel, Controlled Delay active queue management.
//!
//! Lineage: RFC 8289 (Nichols, Jacobson, McGregor, Iyengar 2018) §5 pseudo-code; ECN marking
//! and the "count − lastcount" re-entry as in Linux `include/net/codel_impl.h`.
//!
//! Each packet is timestamped on enqueue. At dequeue its sojourn time is compared with
//! `target`: once the sojourn has stayed at or above `target` for a full `interval` (and more
//! than one MTU is queued), CoDel enters the dropping state and drops (or CE-marks, for
//! ECN-capable packets when `ecn` is on) at times spaced by the control law
//! `interval / sqrt(count)`, leaving it as soon as a packet's sojourn falls below `target`.
//! Re-entering soon after leaving resumes from the previous drop rate (RFC 8289 §5.6).
//!
//! Differences from Linux: the control law uses an exact square root where Linux keeps a
//! Newton-iterated reciprocal (a few ppm apart); the enqueue limit is `limit` (packets or
//! bytes) as for drop-tail (Linux: 1000 packets).

use crate::element::{Dropped, ElementOutput, Marked};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Ecn, Packet, Time, TimeDelta};
use crate::queues::fifo::TimedFifo;

pub static KIND: QdiscKind = QdiscKind {
    name: "codel",
    help: "CoDel (RFC 8289): drops or marks once the sojourn time stays above `target_ms` for `interval_ms`",
    params: || describe(CODEL_PARAMS, &CodelConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = CodelConfig { mtu: a.mtu, ..CodelConfig::default() };
        a.apply(CODEL_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(Codel::new(limit, c)))))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// Acceptable standing queue delay (RFC 8289: 5 ms).
    pub target: TimeDelta,
    /// Sliding window over which the sojourn must stay above target (RFC 8289: 100 ms).
    pub interval: TimeDelta,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Bytes: with no more than this queued, never drop (RFC 8289's MAXPACKET).
    pub mtu: u32,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: TimeDelta::from_millis(5),
            interval: TimeDelta::from_millis(100),
            ecn: false,
            mtu: 1500,
        }
    }
}

pub static CODEL_PARAMS: &[Param<CodelConfig>] = &[
    param!(
        CodelConfig,
        "target_ms",
        "acceptable standing queue delay, ms (5)",
        Real,
        0.01,
        10_000.0,
        |c| c.target.as_millis_f64(),
        |c, v| c.target = ms(v)
    ),
    param!(
        CodelConfig,
        "interval_ms",
        "window the sojourn must stay above target before dropping, ms (100)",
        Real,
        0.1,
        100_000.0,
        |c| c.interval.as_millis_f64(),
        |c, v| c.interval = ms(v)
    ),
    param!(
        CodelConfig,
        "ecn",
        "mark ECN-capable packets (CE) instead of dropping them (false)",
        Bool,
        0.0,
        1.0,
        |c| c.ecn as u8 as f64,
        |c, v| c.ecn = v != 0.0
    ),
];

/// Where CoDel takes its packets from: a FIFO of its own, or one flow's queue inside a
/// flow-queueing discipline (FQ-CoDel runs one `CodelVars` per flow over its flow's queue,
/// with the whole discipline's backlog in the "one MTU queued" rule, as Linux does).
pub trait CodelSource {
    /// The head packet with its sojourn time.
    fn pop(&mut self, now: Time) -> Option<Dequeued>;
    /// Bytes still queued after a pop (the discipline's, not only this queue's).
    fn backlog_bytes(&self) -> u64;
}

impl CodelSource for TimedFifo {
    fn pop(&mut self, now: Time) -> Option<Dequeued> {
        TimedFifo::pop(self, now)
    }
    fn backlog_bytes(&self) -> u64 {
        self.backlog().bytes
    }
}

/// CoDel's state machine (RFC 8289 §5; Linux `struct codel_vars`), independent of where the
/// packets are stored.
#[derive(Clone, Debug, Default)]
pub struct CodelVars {
    /// When the sojourn will have been above target for an interval (None: below target).
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

impl CodelVars {
    pub fn is_dropping(&self) -> bool {
        self.dropping
    }
    pub fn count(&self) -> u32 {
        self.count
    }

    fn control_law(cfg: &CodelConfig, t: Time, count: u32) -> Time {
        let spacing = cfg.interval.as_nanos() as f64 / (count.max(1) as f64).sqrt();
        t + TimeDelta::from_nanos(spacing as i64)
    }

    /// RFC 8289 `dodequeue`: the head packet, and whether CoDel may drop it.
    fn do_dequeue<S: CodelSource>(&mut self, cfg: &CodelConfig, q: &mut S, now: Time) -> Option<(Dequeued, bool)> {
        let Some(d) = q.pop(now) else {
            self.first_above_time = None;
            return None;
        };
        let mut ok_to_drop = false;
        if d.sojourn < cfg.target || q.backlog_bytes() <= cfg.mtu as u64 {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + cfg.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Some((d, ok_to_drop))
    }

    /// Marks `d` CE if ECN is on and the packet allows it; else drops it. True if marked.
    fn signal(cfg: &CodelConfig, d: &mut Dequeued, out: &mut ElementOutput) -> bool {
        if cfg.ecn && d.pkt.ecn().is_capable() {
            d.pkt.set_ecn(Ecn::Ce);
            out.marks.push(Marked { pkt: d.pkt, reason: DropReason::Aqm });
            true
        } else {
            out.drops.push(Dropped { pkt: d.pkt, reason: DropReason::Aqm });
            false
        }
    }

    /// RFC 8289 `dequeue`: the next packet CoDel lets through from `q`, dropping (into
    /// `out.drops`) or marking on the way.
    pub fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &CodelConfig,
        q: &mut S,
        now: Time,
        out: &mut ElementOutput,
    ) -> Option<Dequeued> {
        let Some((mut d, mut ok_to_drop)) = self.do_dequeue(cfg, q, now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            } else {
                while now >= self.drop_next && self.dropping {
                    self.count += 1;
                    if Self::signal(cfg, &mut d, out) {
                        self.drop_next = Self::control_law(cfg, self.drop_next, self.count);
                        return Some(d);
                    }
                    match self.do_dequeue(cfg, q, now) {
                        None => {
                            self.dropping = false;
                            return None;
                        }
                        Some((next, ok)) => {
                            d = next;
                            ok_to_drop = ok;
                        }
                    }
                    if !ok_to_drop {
                        self.dropping = false;
                    } else {
                        self.drop_next = Self::control_law(cfg, self.drop_next, self.count);
                    }
                }
            }
        } else if ok_to_drop {
            let next = if Self::signal(cfg, &mut d, out) {
                Some(d)
            } else {
                self.do_dequeue(cfg, q, now).map(|x| x.0)
            };
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = if delta > 1
                && now - self.drop_next < TimeDelta::from_nanos(cfg.interval.as_nanos() * 16)
            {
                delta
            } else {
                1
            };
            self.drop_next = Self::control_law(cfg, now, self.count);
            self.lastcount = self.count;
            return next;
        }
        Some(d)
    }
}

#[derive(Debug)]
pub struct Codel {
    limit: QueueLimit,
    cfg: CodelConfig,
    fifo: TimedFifo,
    vars: CodelVars,
}

impl Codel {
    pub fn new(limit: QueueLimit, cfg: CodelConfig) -> Self {
        Codel { limit, cfg, fifo: TimedFifo::default(), vars: CodelVars::default() }
    }

    pub fn is_dropping(&self) -> bool {
        self.vars.dropping
    }
    pub fn count(&self) -> u32 {
        self.vars.count
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        if self.limit.admits(self.fifo.backlog(), pkt.size) {
            self.fifo.push(now, pkt);
        } else {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
        }
    }

    fn dequeue(&mut self, now: Time, out: &mut ElementOutput) -> Option<Dequeued> {
        self.vars.dequeue(&self.cfg, &mut self.fifo, now, out)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn held_by_kind(&self) -> (u64, u64) {
        self.fifo.held_by_kind()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    fn pkt(seq: u64, ecn: Ecn) -> Packet {
        let mut p = Packet::data(FlowId(0), seq, 1500, Time::ZERO);
        p.set_ecn(ecn);
        p
    }

    /// A 12 Mbit/s link (one 1500-byte packet per ms) fed two packets per ms: the queue
    /// grows by one packet per ms, so every sojourn from the 6th ms on exceeds 5 ms.
    /// Returns the times (ms) of AQM drops or marks over `ms` milliseconds.
    fn overload(cfg: CodelConfig, ecn: Ecn, ms_total: i64) -> (Vec<f64>, Codel) {
        let mut q = Codel::new(QueueLimit::Packets(100_000), cfg);
        let mut out = ElementOutput::default();
        let mut seq = 0;
        let mut signals = Vec::new();
        for t in 0..ms_total {
            let now = Time::ZERO + TimeDelta::from_millis(t);
            for _ in 0..2 {
                q.enqueue(now, pkt(seq, ecn), &mut out);
                seq += 1;
            }
            let _ = q.dequeue(now, &mut out);
            for _ in out.drops.drain(..) {
                signals.push(t as f64);
            }
            for _ in out.marks.drain(..) {
                signals.push(t as f64);
            }
        }
        (signals, q)
    }

    #[test]
    fn first_drop_one_interval_after_the_sojourn_passes_target_then_sqrt_spacing() {
        let (drops, q) = overload(CodelConfig::default(), Ecn::NotEct, 400);
        // The packet dequeued at t ms (seq t) arrived at floor(t/2) ms: its sojourn is
        // ceil(t/2) ms, >= 5 ms from t = 9 ms: first_above_time = 9 + 100 = 109 ms, the first
        // drop is at 109 ms.
        assert_eq!(drops[0], 109.0);
        // Then drop_next = 109 + 100/sqrt(1) = 209; 209 + 100/sqrt(2) = 279.71 -> the dequeue
        // at 280; 279.71 + 100/sqrt(3) = 337.45 -> 338; 337.45 + 100/sqrt(4) = 387.45 -> 388.
        assert_eq!(&drops[1..], &[209.0, 280.0, 338.0, 388.0]);
        assert!(q.is_dropping());
        assert_eq!(q.count(), 5);
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let cfg = CodelConfig { ecn: true, ..CodelConfig::default() };
        let (marks, mut q) = overload(cfg, Ecn::Ect0, 400);
        assert_eq!(marks, vec![109.0, 209.0, 280.0, 338.0, 388.0]);
        // Every packet is still there (marked packets travel on).
        let mut out = ElementOutput::default();
        let mut n = 0;
        while q.dequeue(Time::from_secs(10), &mut out).is_some() {
            n += 1;
        }
        assert_eq!(n + 400, 800);
        // Not-ECT packets are dropped even with ecn on.
        let (drops, _) = overload(cfg, Ecn::NotEct, 250);
        assert_eq!(drops, vec![109.0, 209.0]);
    }

    #[test]
    fn leaves_dropping_once_the_sojourn_falls_below_target_and_one_mtu_is_never_dropped() {
        let mut q = Codel::new(QueueLimit::Packets(1000), CodelConfig::default());
        let mut out = ElementOutput::default();
        // One packet queued for a long time: sojourn above target, but only one MTU queued.
        q.enqueue(Time::ZERO, pkt(0, Ecn::NotEct), &mut out);
        assert!(q.dequeue(Time::from_secs(1), &mut out).is_some());
        q.enqueue(Time::from_secs(1), pkt(1, Ecn::NotEct), &mut out);
        assert!(q.dequeue(Time::from_secs(2), &mut out).is_some());
        assert!(out.drops.is_empty() && !q.is_dropping());
    }

    #[test]
    fn reentry_soon_after_resumes_the_previous_rate() {
        let (_, mut q) = overload(CodelConfig::default(), Ecn::NotEct, 400);
        assert_eq!(q.count(), 5);
        // Drain: sojourns stay high until the queue is short; leave the dropping state.
        let mut out = ElementOutput::default();
        while q.dequeue(Time::from_millis(400), &mut out).is_some() {}
        assert!(!q.is_dropping());
        // Overload again right away: the count restarts from count - lastcount, not 1.
        let lastcount = q.vars.lastcount;
        let before = q.count();
        let mut seq = 10_000;
        let mut now = Time::from_millis(401);
        let mut entered = None;
        for _ in 0..300 {
            for _ in 0..2 {
                q.enqueue(now, pkt(seq, Ecn::NotEct), &mut out);
                seq += 1;
            }
            let _ = q.dequeue(now, &mut out);
            if q.is_dropping() && entered.is_none() {
                entered = Some(q.count());
            }
            now += TimeDelta::from_millis(1);
        }
        let delta = before - lastcount;
        let expect = if delta > 1 { delta } else { 1 };
        assert_eq!(entered, Some(expect));
    }

    #[test]
    fn parameters_by_name_with_ranges() {
        let p = [("target_ms".to_string(), rtclab_core::params::Value::Num(0.0))];
        let a = QdiscArgs { limit: QueueLimit::Packets(10), params: &p, mtu: 1500, seed: 0 };
        let e = crate::queues::build("codel", &a).unwrap_err().to_string();
        assert!(e.contains("target_ms") && e.contains("out of range"), "{e}");
    }
}
