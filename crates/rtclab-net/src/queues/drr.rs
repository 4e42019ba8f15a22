//! DRR, deficit round robin between two traffic classes, or strict priority.
//!
//! Lineage: M. Shreedhar, G. Varghese, *Efficient Fair Queuing Using Deficit Round Robin*,
//! SIGCOMM 1995; the active-list handling of Linux `net/sched/sch_drr.c`; with `strict` the
//! class order of Linux `sch_prio`. These are the class-based baselines of the Confucius
//! chapter (dissertation §8.7.1): CBQ 1:1 and 1:5 are `weight0`:`weight1` = 1:1 and 1:5, and
//! StrictPriority is `strict = true`.
//!
//! Class-based schemes need labels. The label here is the flow's position in the scenario:
//! flows with id below `class0_flows` (the first entries of `[[flows]]`, counting each copy
//! of a `count`) form class 0, the others class 1. Each class is a FIFO holding up to
//! `queue.limit` (as each Linux DRR class has its own child queue); an arrival beyond its
//! class's limit is dropped. A class that turns active joins the active list's tail with a
//! deficit of `weight × quantum` bytes; the head class sends while its head packet fits its
//! deficit, else it gets another `weight × quantum` and moves to the tail.

use crate::element::{Dropped, ElementOutput};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::fifo::TimedFifo;
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{param, Param};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

pub static KIND: QdiscKind = QdiscKind {
    name: "drr",
    help: "two classes (the first `class0_flows` flows, the rest) served by weighted deficit round robin, or strict priority",
    params: || describe(DRR_PARAMS, &DrrConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = DrrConfig::default();
        a.apply(DRR_PARAMS, &mut c)?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(Drr::new(limit, c)))))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrrConfig {
    /// Flows with an id below this are class 0.
    pub class0_flows: u32,
    pub weights: [u32; 2],
    /// Bytes per unit of weight and round (Linux DRR: the device MTU, 1514).
    pub quantum: u32,
    /// Class 0 first whenever it has a packet (strict priority).
    pub strict: bool,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig { class0_flows: 1, weights: [1, 1], quantum: 1514, strict: false }
    }
}

pub static DRR_PARAMS: &[Param<DrrConfig>] = &[
    param!(DrrConfig, "class0_flows", "flows with an id below this (the first flows of the scenario) form class 0 (1)", Integer, 0.0, 4_294_967_295.0,
        |c| c.class0_flows as f64, |c, v| c.class0_flows = v as u32),
    param!(DrrConfig, "weight0", "class 0's share of each round, in quanta (1)", Integer, 1.0, 1000.0,
        |c| c.weights[0] as f64, |c, v| c.weights[0] = v as u32),
    param!(DrrConfig, "weight1", "class 1's share of each round, in quanta (1)", Integer, 1.0, 1000.0,
        |c| c.weights[1] as f64, |c, v| c.weights[1] = v as u32),
    param!(DrrConfig, "quantum", "bytes per unit of weight and round (1514)", Integer, 64.0, 1_000_000.0,
        |c| c.quantum as f64, |c, v| c.quantum = v as u32),
    param!(DrrConfig, "strict", "strict priority: class 0 whenever it has a packet (false)", Bool, 0.0, 1.0,
        |c| c.strict as u8 as f64, |c, v| c.strict = v != 0.0),
];

#[derive(Debug)]
pub struct Drr {
    limit: QueueLimit,
    cfg: DrrConfig,
    classes: [TimedFifo; 2],
    deficits: [i64; 2],
    active: VecDeque<usize>,
}

impl Drr {
    pub fn new(limit: QueueLimit, cfg: DrrConfig) -> Self {
        Drr { limit, cfg, classes: Default::default(), deficits: [0; 2], active: VecDeque::new() }
    }

    pub fn class_of(&self, pkt: &Packet) -> usize {
        usize::from(pkt.flow.0 >= self.cfg.class0_flows)
    }

    fn quantum(&self, class: usize) -> i64 {
        self.cfg.weights[class] as i64 * self.cfg.quantum as i64
    }
}

impl Qdisc for Drr {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        let c = self.class_of(&pkt);
        if !self.limit.admits(self.classes[c].backlog(), pkt.size) {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
            return;
        }
        if self.classes[c].is_empty() {
            self.deficits[c] = self.quantum(c);
            self.active.push_back(c);
        }
        self.classes[c].push(now, pkt);
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        if self.cfg.strict {
            let c = if self.classes[0].is_empty() { 1 } else { 0 };
            let d = self.classes[c].pop(now)?;
            if self.classes[c].is_empty() {
                self.active.retain(|&x| x != c);
            }
            return Some(d);
        }
        loop {
            let c = *self.active.front()?;
            let head = self.classes[c].peek_size().expect("active classes hold packets") as i64;
            if head <= self.deficits[c] {
                self.deficits[c] -= head;
                let d = self.classes[c].pop(now).expect("non-empty");
                if self.classes[c].is_empty() {
                    self.active.pop_front();
                }
                return Some(d);
            }
            self.deficits[c] += self.quantum(c);
            self.active.rotate_left(1);
        }
    }

    fn backlog(&self) -> Backlog {
        self.classes[0].backlog() + self.classes[1].backlog()
    }

    fn held_by_kind(&self) -> (u64, u64) {
        let (a, b) = (self.classes[0].held_by_kind(), self.classes[1].held_by_kind());
        (a.0 + b.0, a.1 + b.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    fn pkt(flow: u32, seq: u64) -> Packet {
        Packet::data(FlowId(flow), seq, 1000, Time::ZERO)
    }

    fn order(q: &mut Drr, n: usize) -> Vec<u32> {
        let mut out = ElementOutput::default();
        (0..n).filter_map(|_| q.dequeue(Time::ZERO, &mut out)).map(|d| d.pkt.flow.0).collect()
    }

    fn fill(q: &mut Drr, flows: &[u32], each: u64) {
        let mut out = ElementOutput::default();
        for &f in flows {
            for s in 0..each {
                q.enqueue(Time::ZERO, pkt(f, s), &mut out);
            }
        }
        assert!(out.drops.is_empty());
    }

    #[test]
    fn weights_one_to_five_give_class_one_five_times_the_bytes() {
        // Quantum 1000 B = one packet: per round class 0 sends 1, class 1 five.
        let cfg = DrrConfig { weights: [1, 5], quantum: 1000, ..DrrConfig::default() };
        let mut q = Drr::new(QueueLimit::Packets(1000), cfg);
        fill(&mut q, &[0, 1, 2, 3, 4, 5], 20);
        let first: Vec<u32> = order(&mut q, 12).into_iter().map(|f| u32::from(f >= 1)).collect();
        assert_eq!(first, vec![0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1]);
        // Within class 1 the flows share one FIFO (filled flow by flow).
        let mut q = Drr::new(QueueLimit::Packets(1000), cfg);
        fill(&mut q, &[0, 1, 2], 3);
        assert_eq!(order(&mut q, 9), vec![0, 1, 1, 1, 2, 2, 0, 2, 0]);
    }

    #[test]
    fn strict_priority_serves_class_zero_first_and_per_class_limits() {
        let cfg = DrrConfig { strict: true, class0_flows: 2, ..DrrConfig::default() };
        let mut q = Drr::new(QueueLimit::Packets(3), cfg);
        let mut out = ElementOutput::default();
        for s in 0..4 {
            q.enqueue(Time::ZERO, pkt(5, s), &mut out);
        }
        assert_eq!(out.drops.len(), 1, "class 1 holds at most 3");
        q.enqueue(Time::ZERO, pkt(1, 0), &mut out);
        q.enqueue(Time::ZERO, pkt(0, 0), &mut out);
        assert_eq!(out.drops.len(), 1, "class 0 has its own limit");
        assert_eq!(order(&mut q, 10), vec![1, 0, 5, 5, 5]);
    }
}
