//! FQ-CoDel, flow queueing with CoDel in each flow queue.
//!
//! Lineage: RFC 8290 (Høiland-Jørgensen, McKenney, Taht, Gettys, Dumazet 2018) §4-5; defaults,
//! the fat-flow batch drop and the list handling as in Linux `net/sched/sch_fq_codel.c`.
//!
//! Packets are hashed by flow into `flows` buckets (`flow_hash`), each a FIFO with its own
//! CoDel state (`codel::CodelVars`). Buckets that turn active join the *new* list with a
//! deficit of one `quantum`; the scheduler serves the new list before the old one, a bucket
//! whose deficit is spent gets another quantum and moves to the old list's tail (deficit round
//! robin), and a new bucket that empties moves to the old list once (so a sparse flow cannot
//! starve others by re-entering the new list at will) before it is forgotten. When the whole
//! discipline is over `limit`, packets are dropped from the head of the bucket with the most
//! bytes, up to `drop_batch` of them or half its backlog. That bucket is found in O(log n) by a
//! tournament tree over the buckets' bytes (`fattest`), with Linux's choice on ties (the lowest
//! index), instead of Linux's scan of every bucket on each overflow.
//!
//! Differences from Linux: flows are hashed from the flow id (deterministic, `salt` picks
//! another assignment) instead of the 5-tuple with a random perturbation; the limit is
//! `queue.limit` (packets or bytes; Linux: 10240 packets and 32 MB); no `ce_threshold`.

use crate::element::{Dropped, ElementOutput};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::codel::{CodelConfig, CodelSource, CodelVars};
use crate::queues::fattest::FattestTree;
use crate::queues::fifo::TimedFifo;
use crate::queues::flow_hash::bucket;
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

pub static KIND: QdiscKind = QdiscKind {
    name: "fq_codel",
    help: "FQ-CoDel (RFC 8290): deficit round robin over hashed flow queues, new flows first, CoDel in each",
    params: || describe(FQ_CODEL_PARAMS, &FqCodelConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = FqCodelConfig::default();
        c.codel.mtu = a.mtu;
        a.apply(FQ_CODEL_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(FqCodel::new(limit, c)))))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelConfig {
    /// Number of flow buckets (Linux: 1024).
    pub flows: u32,
    /// Bytes a bucket may send per round (Linux: 1514, one Ethernet MTU).
    pub quantum: u32,
    /// Most packets dropped from the fat flow at once on overflow (Linux: 64).
    pub drop_batch: u32,
    /// Mixed into the flow hash.
    pub salt: u32,
    /// CoDel in each bucket (Linux: 5 ms / 100 ms, ECN on).
    pub codel: CodelConfig,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
            salt: 0,
            codel: CodelConfig { ecn: true, ..CodelConfig::default() },
        }
    }
}

pub static FQ_CODEL_PARAMS: &[Param<FqCodelConfig>] = &[
    param!(FqCodelConfig, "flows", "number of flow buckets (1024)", Integer, 1.0, 65536.0,
        |c| c.flows as f64, |c, v| c.flows = v as u32),
    param!(FqCodelConfig, "quantum", "bytes a flow may send per round (1514)", Integer, 64.0, 1_000_000.0,
        |c| c.quantum as f64, |c, v| c.quantum = v as u32),
    param!(FqCodelConfig, "target_ms", "CoDel's acceptable standing queue delay per flow, ms (5)", Real, 0.01, 10_000.0,
        |c| c.codel.target.as_millis_f64(), |c, v| c.codel.target = ms(v)),
    param!(FqCodelConfig, "interval_ms", "CoDel's interval, ms (100)", Real, 0.1, 100_000.0,
        |c| c.codel.interval.as_millis_f64(), |c, v| c.codel.interval = ms(v)),
    param!(FqCodelConfig, "ecn", "mark ECN-capable packets (CE) instead of dropping them (true, as Linux)", Bool, 0.0, 1.0,
        |c| c.codel.ecn as u8 as f64, |c, v| c.codel.ecn = v != 0.0),
    param!(FqCodelConfig, "drop_batch", "most packets dropped from the fattest flow on overflow (64)", Integer, 1.0, 65536.0,
        |c| c.drop_batch as f64, |c, v| c.drop_batch = v as u32),
    param!(FqCodelConfig, "salt", "mixed into the flow hash: another salt, another flow-to-bucket assignment (0)", Integer, 0.0, 4_294_967_295.0,
        |c| c.salt as f64, |c, v| c.salt = v as u32),
];

#[derive(Debug, Default)]
struct Bucket {
    fifo: TimedFifo,
    deficit: i64,
    vars: CodelVars,
    /// On the new or the old list.
    listed: bool,
}

/// One bucket's FIFO seen by CoDel, keeping the discipline's backlog in step.
struct BucketView<'a> {
    fifo: &'a mut TimedFifo,
    total: &'a mut Backlog,
}

impl CodelSource for BucketView<'_> {
    fn pop(&mut self, now: Time) -> Option<Dequeued> {
        let d = self.fifo.pop(now)?;
        self.total.packets -= 1;
        self.total.bytes -= d.pkt.size as u64;
        Some(d)
    }
    fn backlog_bytes(&self) -> u64 {
        self.total.bytes
    }
}

#[derive(Debug)]
pub struct FqCodel {
    limit: QueueLimit,
    cfg: FqCodelConfig,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    total: Backlog,
    /// Each bucket's bytes, for the overflow drop's choice.
    fattest: FattestTree,
}

impl FqCodel {
    pub fn new(limit: QueueLimit, cfg: FqCodelConfig) -> Self {
        FqCodel {
            limit,
            cfg,
            buckets: (0..cfg.flows).map(|_| Bucket::default()).collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            total: Backlog::default(),
            fattest: FattestTree::new(cfg.flows as usize),
        }
    }

    /// The bucket `pkt` goes to.
    pub fn bucket_of(&self, pkt: &Packet) -> usize {
        bucket(pkt.flow, self.cfg.salt, self.cfg.flows)
    }

    fn over_limit(&self) -> bool {
        self.limit.exceeded_by(self.total)
    }

    /// Linux `fq_codel_drop`: drops from the head of the bucket holding the most bytes, up to
    /// `drop_batch` packets or until half its backlog is gone.
    fn drop_from_fattest(&mut self, now: Time, out: &mut ElementOutput) {
        let (idx, fat) = self.fattest.fattest();
        let threshold = fat / 2;
        let (mut dropped_bytes, mut n) = (0u64, 0u32);
        let b = &mut self.buckets[idx];
        while let Some(d) = b.fifo.pop(now) {
            self.total.packets -= 1;
            self.total.bytes -= d.pkt.size as u64;
            dropped_bytes += d.pkt.size as u64;
            n += 1;
            out.drops.push(Dropped { pkt: d.pkt, reason: DropReason::QueueOverflow });
            if n >= self.cfg.drop_batch || dropped_bytes >= threshold {
                break;
            }
        }
        self.fattest.set(idx, b.fifo.backlog().bytes);
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        let idx = self.bucket_of(&pkt);
        let b = &mut self.buckets[idx];
        b.fifo.push(now, pkt);
        self.total.packets += 1;
        self.total.bytes += pkt.size as u64;
        self.fattest.set(idx, b.fifo.backlog().bytes);
        if !b.listed {
            b.listed = true;
            b.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(idx as u32);
        }
        if self.over_limit() {
            self.drop_from_fattest(now, out);
        }
    }

    fn dequeue(&mut self, now: Time, out: &mut ElementOutput) -> Option<Dequeued> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let idx = *if from_new { self.new_flows.front() } else { self.old_flows.front() }? as usize;
            let b = &mut self.buckets[idx];
            if b.deficit <= 0 {
                b.deficit += self.cfg.quantum as i64;
                let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
                list.pop_front();
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut view = BucketView { fifo: &mut b.fifo, total: &mut self.total };
            let got = b.vars.dequeue(&self.cfg.codel, &mut view, now, out);
            // CoDel may have dropped packets besides the one it returns.
            self.fattest.set(idx, b.fifo.backlog().bytes);
            match got {
                Some(d) => {
                    b.deficit -= d.pkt.size as i64;
                    return Some(d);
                }
                None => {
                    // Empty: a new bucket passes through the old list once (RFC 8290 §4.2);
                    // an old one is forgotten.
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            self.old_flows.push_back(idx as u32);
                            continue;
                        }
                    } else {
                        self.old_flows.pop_front();
                    }
                    self.buckets[idx].listed = false;
                }
            }
        }
    }

    fn backlog(&self) -> Backlog {
        self.total
    }

    fn held_by_kind(&self) -> (u64, u64) {
        self.buckets.iter().fold((0, 0), |(d, a), b| {
            let (bd, ba) = b.fifo.held_by_kind();
            (d + bd, a + ba)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::{Ecn, FlowId, TimeDelta};

    fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
        Packet::data(FlowId(flow), seq, size, Time::ZERO)
    }

    /// Flows 0..n in distinct buckets for these tests (no collision with the default salt).
    fn distinct(q: &FqCodel, n: u32) {
        let mut seen = std::collections::BTreeSet::new();
        for f in 0..n {
            assert!(seen.insert(q.bucket_of(&pkt(f, 0, 1))), "flows collide; pick another salt");
        }
    }

    fn drain(q: &mut FqCodel, now: Time) -> Vec<(u32, u64)> {
        let mut out = ElementOutput::default();
        std::iter::from_fn(|| q.dequeue(now, &mut out)).map(|d| (d.pkt.flow.0, d.pkt.seq)).collect()
    }

    #[test]
    fn round_robin_by_quantum_between_backlogged_flows() {
        // Quantum 3000 B, 1000 B packets: a flow sends 3 packets per round. Flow 0 queues 6,
        // flow 1 queues 6 (both new). Hand-computed order: flow 0 spends its first quantum
        // (0,1,2), goes to the old list; flow 1 does the same (0,1,2); then the old list:
        // flow 0 (3,4,5), flow 1 (3,4,5).
        let cfg = FqCodelConfig { quantum: 3000, ..FqCodelConfig::default() };
        let mut q = FqCodel::new(QueueLimit::Packets(1000), cfg);
        distinct(&q, 2);
        let mut out = ElementOutput::default();
        for s in 0..6 {
            q.enqueue(Time::ZERO, pkt(0, s, 1000), &mut out);
        }
        for s in 0..6 {
            q.enqueue(Time::ZERO, pkt(1, s, 1000), &mut out);
        }
        let order = drain(&mut q, Time::ZERO);
        let expect: Vec<(u32, u64)> =
            [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (0, 3), (0, 4), (0, 5), (1, 3), (1, 4), (1, 5)]
                .to_vec();
        assert_eq!(order, expect);
        assert_eq!(q.backlog(), Backlog::default());
    }

    #[test]
    fn a_sparse_flow_goes_before_the_backlogged_one() {
        // Flow 0 is backlogged (on the old list after its first quantum); a packet of flow 1
        // arrives: it is served next, ahead of flow 0's remaining packets.
        let cfg = FqCodelConfig { quantum: 1000, ..FqCodelConfig::default() };
        let mut q = FqCodel::new(QueueLimit::Packets(1000), cfg);
        distinct(&q, 2);
        let mut out = ElementOutput::default();
        for s in 0..5 {
            q.enqueue(Time::ZERO, pkt(0, s, 1000), &mut out);
        }
        assert_eq!(q.dequeue(Time::ZERO, &mut out).unwrap().pkt.seq, 0);
        q.enqueue(Time::ZERO, pkt(1, 0, 100), &mut out);
        let d = q.dequeue(Time::ZERO, &mut out).unwrap();
        assert_eq!((d.pkt.flow.0, d.pkt.seq), (1, 0));
        assert_eq!(drain(&mut q, Time::ZERO), vec![(0, 1), (0, 2), (0, 3), (0, 4)]);
    }

    #[test]
    fn overflow_drops_half_the_fattest_flows_bytes_from_its_head() {
        // Limit 10 packets: flow 0 holds 8, flow 1 holds 2; the 11th packet (flow 1) makes the
        // discipline overflow: flow 0 (8000 B) loses packets from its head until 4000 B are gone.
        let mut q = FqCodel::new(QueueLimit::Packets(10), FqCodelConfig::default());
        distinct(&q, 2);
        let mut out = ElementOutput::default();
        for s in 0..8 {
            q.enqueue(Time::ZERO, pkt(0, s, 1000), &mut out);
        }
        for s in 0..3 {
            q.enqueue(Time::ZERO, pkt(1, s, 1000), &mut out);
        }
        let dropped: Vec<(u32, u64)> = out.drops.iter().map(|d| (d.pkt.flow.0, d.pkt.seq)).collect();
        assert_eq!(dropped, vec![(0, 0), (0, 1), (0, 2), (0, 3)]);
        assert!(out.drops.iter().all(|d| d.reason == DropReason::QueueOverflow));
        assert_eq!(q.backlog(), Backlog { packets: 7, bytes: 7000 });
    }

    #[test]
    fn codel_acts_per_flow_and_spares_the_sparse_one() {
        // 12 Mbit/s of service (one 1500 B packet per ms) shared by a flow sending two packets
        // per ms and a flow sending one packet every 10 ms: CoDel drops or marks only the
        // heavy flow's packets, and the light flow waits at most for the heavy flow's quantum
        // (1514 B: two packets, 2 ms) when its bucket is still on the old list.
        let mut q = FqCodel::new(QueueLimit::Packets(100_000), FqCodelConfig::default());
        distinct(&q, 2);
        let mut out = ElementOutput::default();
        let mut light_max = TimeDelta::ZERO;
        for t in 0..2000 {
            let now = Time::ZERO + TimeDelta::from_millis(t);
            for k in 0..2 {
                q.enqueue(now, pkt(0, (2 * t + k) as u64, 1500), &mut out);
            }
            if t % 10 == 0 {
                q.enqueue(now, pkt(1, t as u64, 1500), &mut out);
            }
            if let Some(d) = q.dequeue(now, &mut out) {
                if d.pkt.flow.0 == 1 {
                    light_max = light_max.max(d.sojourn);
                }
            }
        }
        assert!(!out.drops.is_empty());
        assert!(out.drops.iter().all(|d| d.pkt.flow.0 == 0 && d.reason == DropReason::Aqm));
        assert!(light_max <= TimeDelta::from_millis(2), "{light_max}");
        // ECT packets of the heavy flow are marked, not dropped (ecn on by default).
        let mut q = FqCodel::new(QueueLimit::Packets(100_000), FqCodelConfig::default());
        let mut out = ElementOutput::default();
        for t in 0..400 {
            let now = Time::ZERO + TimeDelta::from_millis(t);
            for k in 0..2 {
                let mut p = pkt(0, (2 * t + k) as u64, 1500);
                p.set_ecn(Ecn::Ect0);
                q.enqueue(now, p, &mut out);
            }
            let _ = q.dequeue(now, &mut out);
        }
        assert!(out.drops.is_empty());
        // The same instants as CoDel alone on a FIFO (codel.rs: 109, 209, 280, 338, 388 ms).
        assert_eq!(out.marks.len(), 5);
    }

    #[test]
    fn conservation_and_kinds() {
        let mut q = FqCodel::new(QueueLimit::Bytes(5000), FqCodelConfig::default());
        let mut out = ElementOutput::default();
        for s in 0..20 {
            q.enqueue(Time::ZERO, pkt((s % 4) as u32, s, 1000), &mut out);
        }
        let held = q.held_by_kind().0;
        assert_eq!(held + out.drops.len() as u64, 20);
        assert_eq!(held, q.backlog().packets as u64);
        assert!(q.backlog().bytes <= 5000);
    }
}
