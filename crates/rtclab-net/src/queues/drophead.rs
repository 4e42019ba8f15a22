//! Head-drop FIFO: when full, the oldest packet is dropped to admit the arrival.
//!
//! Lineage: Linux `pfifo_head_drop` (net/sched/sch_fifo.c), ns-3's `DropHead`-style queues.
//! Dropping from the head gives the sender its loss signal one queue-drain earlier than
//! drop-tail and keeps the freshest data, which real-time media prefers.

use crate::element::{Dropped, ElementOutput};
use crate::qdisc::{AnyQdisc, Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::{QdiscArgs, QdiscKind};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

pub static KIND: QdiscKind = QdiscKind {
    name: "drophead",
    help: "FIFO that drops its oldest packets to admit an arrival once `limit` is reached",
    params: Vec::new,
    build: |a: &QdiscArgs| {
        a.no_params()?;
        Ok(AnyQdisc::Other(Box::new(DropHead { limit: a.limit, fifo: VecDeque::new(), bytes: 0 })))
    },
};

pub struct DropHead {
    limit: QueueLimit,
    fifo: VecDeque<(Time, Packet)>,
    bytes: u64,
}

impl Qdisc for DropHead {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        while !self.limit.admits(self.backlog(), pkt.size) {
            let Some((_, old)) = self.fifo.pop_front() else {
                // Larger than the whole limit: nothing to make room with.
                out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
                return;
            };
            self.bytes -= old.size as u64;
            out.drops.push(Dropped { pkt: old, reason: DropReason::QueueOverflow });
        }
        self.bytes += pkt.size as u64;
        self.fifo.push_back((now, pkt));
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        let (enq, pkt) = self.fifo.pop_front()?;
        self.bytes -= pkt.size as u64;
        Some(Dequeued { pkt, sojourn: now - enq })
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.fifo.len() as u32, bytes: self.bytes }
    }

    fn held_by_kind(&self) -> (u64, u64) {
        crate::qdisc::count_kinds(self.fifo.iter().map(|x| &x.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    #[test]
    fn a_full_queue_drops_its_oldest_packet() {
        let args = QdiscArgs { limit: QueueLimit::Packets(2), params: &[], mtu: 1500 };
        let mut q = (KIND.build)(&args).unwrap();
        let mut out = ElementOutput::default();
        for s in 0..4 {
            q.enqueue(Time::ZERO, Packet::data(FlowId(0), s, 100, Time::ZERO), &mut out);
        }
        let dropped: Vec<u64> = out.drops.iter().map(|d| d.pkt.seq).collect();
        assert_eq!(dropped, vec![0, 1]);
        let kept: Vec<u64> =
            std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut out)).map(|d| d.pkt.seq).collect();
        assert_eq!(kept, vec![2, 3]);
    }
}
