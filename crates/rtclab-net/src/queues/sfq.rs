//! SFQ, stochastic fairness queueing.
//!
//! Lineage: P. McKenney, *Stochastic Fairness Queueing*, INFOCOM 1990; the deficit round robin
//! over hashed slots, defaults and drop rules of Linux `net/sched/sch_sfq.c`.
//!
//! Packets are hashed by flow into `divisor` buckets; at most `flows` buckets are active at
//! once (an arrival that would need one more is dropped). Active buckets form a ring served
//! by deficit round robin with `quantum` bytes per turn; a bucket that turns active joins the
//! ring's tail with a full quantum. A bucket holds at most `depth` packets (beyond, the
//! arrival is dropped, or with `headdrop` the bucket's oldest packet). When the discipline
//! is over `limit`, the newest packet of the longest bucket is dropped.
//!
//! Differences from Linux: flows are hashed from the flow id (`flow_hash`), not perturbed over
//! time; the limit is `queue.limit` (Linux: 127 packets).

use crate::element::{Dropped, ElementOutput};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::fifo::TimedFifo;
use crate::queues::flow_hash::bucket;
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{param, Param};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

pub static KIND: QdiscKind = QdiscKind {
    name: "sfq",
    help: "SFQ (Linux sch_sfq): deficit round robin over hashed flow slots, tail drop from the longest",
    params: || describe(SFQ_PARAMS, &SfqConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = SfqConfig::default();
        a.apply(SFQ_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(Sfq::new(limit, c)))))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SfqConfig {
    /// Hash buckets (Linux: 1024).
    pub divisor: u32,
    /// Most buckets active at once (Linux: 128).
    pub flows: u32,
    /// Most packets per bucket (Linux: 127).
    pub depth: u32,
    /// Bytes per turn (Linux: 1514).
    pub quantum: u32,
    /// At a full bucket, drop its oldest packet instead of the arrival.
    pub headdrop: bool,
    pub salt: u32,
}

impl Default for SfqConfig {
    fn default() -> Self {
        SfqConfig { divisor: 1024, flows: 128, depth: 127, quantum: 1514, headdrop: false, salt: 0 }
    }
}

pub static SFQ_PARAMS: &[Param<SfqConfig>] = &[
    param!(SfqConfig, "divisor", "hash buckets (1024)", Integer, 1.0, 65536.0,
        |c| c.divisor as f64, |c, v| c.divisor = v as u32),
    param!(SfqConfig, "flows", "most buckets active at once (128)", Integer, 1.0, 65536.0,
        |c| c.flows as f64, |c, v| c.flows = v as u32),
    param!(SfqConfig, "depth", "most packets per bucket (127)", Integer, 1.0, 1_000_000.0,
        |c| c.depth as f64, |c, v| c.depth = v as u32),
    param!(SfqConfig, "quantum", "bytes a bucket sends per turn (1514)", Integer, 64.0, 1_000_000.0,
        |c| c.quantum as f64, |c, v| c.quantum = v as u32),
    param!(SfqConfig, "headdrop", "at a full bucket drop its oldest packet, not the arrival (false)", Bool, 0.0, 1.0,
        |c| c.headdrop as u8 as f64, |c, v| c.headdrop = v != 0.0),
    param!(SfqConfig, "salt", "mixed into the flow hash (0)", Integer, 0.0, 4_294_967_295.0,
        |c| c.salt as f64, |c, v| c.salt = v as u32),
];

#[derive(Debug, Default)]
struct Slot {
    fifo: TimedFifo,
    allot: i64,
}

#[derive(Debug)]
pub struct Sfq {
    limit: QueueLimit,
    cfg: SfqConfig,
    slots: Vec<Slot>,
    /// Active buckets; the front is served next.
    ring: VecDeque<u32>,
    total: Backlog,
}

impl Sfq {
    pub fn new(limit: QueueLimit, cfg: SfqConfig) -> Self {
        Sfq {
            limit,
            cfg,
            slots: (0..cfg.divisor).map(|_| Slot::default()).collect(),
            ring: VecDeque::new(),
            total: Backlog::default(),
        }
    }

    pub fn bucket_of(&self, pkt: &Packet) -> usize {
        bucket(pkt.flow, self.cfg.salt, self.cfg.divisor)
    }

    fn over_limit(&self) -> bool {
        self.limit.exceeded_by(self.total)
    }

    fn forget(&mut self, idx: usize) {
        if let Some(pos) = self.ring.iter().position(|&i| i as usize == idx) {
            self.ring.remove(pos);
        }
    }

    fn take(&mut self, pkt: Packet) {
        self.total.packets -= 1;
        self.total.bytes -= pkt.size as u64;
    }
}

impl Qdisc for Sfq {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        let idx = self.bucket_of(&pkt);
        let fresh = self.slots[idx].fifo.is_empty();
        if fresh && self.ring.len() >= self.cfg.flows as usize {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
            return;
        }
        if self.slots[idx].fifo.backlog().packets >= self.cfg.depth {
            if !self.cfg.headdrop {
                out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
                return;
            }
            let old = self.slots[idx].fifo.pop(now).expect("a full bucket").pkt;
            self.take(old);
            out.drops.push(Dropped { pkt: old, reason: DropReason::QueueOverflow });
        }
        let s = &mut self.slots[idx];
        s.fifo.push(now, pkt);
        self.total.packets += 1;
        self.total.bytes += pkt.size as u64;
        if fresh {
            s.allot = self.cfg.quantum as i64;
            self.ring.push_back(idx as u32);
        }
        if self.over_limit() {
            // The longest bucket by packets (the lowest index among equals) loses its newest.
            let longest = self
                .ring
                .iter()
                .map(|&i| (self.slots[i as usize].fifo.backlog().packets, std::cmp::Reverse(i)))
                .max()
                .map(|(_, std::cmp::Reverse(i))| i as usize)
                .expect("over the limit, so something is queued");
            let victim = self.slots[longest].fifo.pop_back().expect("longest bucket");
            self.take(victim);
            if self.slots[longest].fifo.is_empty() {
                self.forget(longest);
            }
            out.drops.push(Dropped { pkt: victim, reason: DropReason::QueueOverflow });
        }
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        loop {
            let idx = *self.ring.front()? as usize;
            let s = &mut self.slots[idx];
            if s.allot <= 0 {
                s.allot += self.cfg.quantum as i64;
                self.ring.rotate_left(1);
                continue;
            }
            let d = s.fifo.pop(now).expect("active buckets hold packets");
            s.allot -= d.pkt.size as i64;
            if s.fifo.is_empty() {
                self.ring.pop_front();
            }
            self.take(d.pkt);
            return Some(d);
        }
    }

    fn backlog(&self) -> Backlog {
        self.total
    }

    fn held_by_kind(&self) -> (u64, u64) {
        self.ring.iter().fold((0, 0), |(d, a), &i| {
            let (bd, ba) = self.slots[i as usize].fifo.held_by_kind();
            (d + bd, a + ba)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
        Packet::data(FlowId(flow), seq, size, Time::ZERO)
    }

    #[test]
    fn byte_fair_round_robin_and_newcomers_at_the_tail() {
        // Quantum 1500: flow 0 sends 500 B packets (3 per turn), flow 1 1500 B (1 per turn).
        let cfg = SfqConfig { quantum: 1500, ..SfqConfig::default() };
        let mut q = Sfq::new(QueueLimit::Packets(1000), cfg);
        assert_ne!(q.bucket_of(&pkt(0, 0, 1)), q.bucket_of(&pkt(1, 0, 1)));
        let mut out = ElementOutput::default();
        for s in 0..6 {
            q.enqueue(Time::ZERO, pkt(0, s, 500), &mut out);
        }
        for s in 0..2 {
            q.enqueue(Time::ZERO, pkt(1, s, 1500), &mut out);
        }
        let order: Vec<(u32, u64)> = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut out))
            .map(|d| (d.pkt.flow.0, d.pkt.seq))
            .collect();
        assert_eq!(order, vec![(0, 0), (0, 1), (0, 2), (1, 0), (0, 3), (0, 4), (0, 5), (1, 1)]);
    }

    #[test]
    fn overflow_drops_the_newest_packet_of_the_longest_bucket() {
        let mut q = Sfq::new(QueueLimit::Packets(4), SfqConfig::default());
        let mut out = ElementOutput::default();
        for s in 0..3 {
            q.enqueue(Time::ZERO, pkt(0, s, 1000), &mut out);
        }
        q.enqueue(Time::ZERO, pkt(1, 0, 1000), &mut out);
        q.enqueue(Time::ZERO, pkt(1, 1, 1000), &mut out);
        assert_eq!(out.drops.len(), 1);
        assert_eq!((out.drops[0].pkt.flow.0, out.drops[0].pkt.seq), (0, 2));
        assert_eq!(q.backlog().packets, 4);
    }

    #[test]
    fn depth_and_active_bucket_limits() {
        let cfg = SfqConfig { depth: 2, flows: 1, ..SfqConfig::default() };
        let mut q = Sfq::new(QueueLimit::Packets(100), cfg);
        let mut out = ElementOutput::default();
        for s in 0..3 {
            q.enqueue(Time::ZERO, pkt(0, s, 100), &mut out);
        }
        // The third packet of flow 0 is over its depth; flow 1 finds no free slot.
        q.enqueue(Time::ZERO, pkt(1, 0, 100), &mut out);
        let dropped: Vec<(u32, u64)> = out.drops.iter().map(|d| (d.pkt.flow.0, d.pkt.seq)).collect();
        assert_eq!(dropped, vec![(0, 2), (1, 0)]);
        // With headdrop the bucket's oldest packet goes instead.
        let cfg = SfqConfig { depth: 2, headdrop: true, ..SfqConfig::default() };
        let mut q = Sfq::new(QueueLimit::Packets(100), cfg);
        let mut out = ElementOutput::default();
        for s in 0..3 {
            q.enqueue(Time::ZERO, pkt(0, s, 100), &mut out);
        }
        assert_eq!(out.drops[0].pkt.seq, 0);
        assert_eq!(q.held_by_kind().0, 2);
    }
}
