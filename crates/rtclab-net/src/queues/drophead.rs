//! Head-drop FIFO: when full, the oldest packet is dropped to admit the arrival.
//!
//! Lineage: Linux `pfifo_head_drop` (net/sched/sch_fifo.c), ns-3's `DropHead`-style queues.
//! Dropping from the head gives the sender its loss signal one queue-drain earlier than
//! drop-tail and keeps the freshest data, which real-time media prefers.

use crate::element::{Dropped, ElementOutput};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::{QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::{Packet, Time};
use crate::queues::fifo::TimedFifo;

pub static KIND: QdiscKind = QdiscKind {
    name: "drophead",
    help: "FIFO that drops its oldest packets to admit an arrival once `limit` is reached",
    params: Vec::new,
    prepare: |a: &QdiscArgs| {
        a.no_params()?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(DropHead { limit, fifo: TimedFifo::default() }))))
    },
};

pub struct DropHead {
    limit: QueueLimit,
    fifo: TimedFifo,
}

impl Qdisc for DropHead {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        while !self.limit.admits(self.fifo.backlog(), pkt.size) {
            let Some(old) = self.fifo.pop(now) else {
                // Larger than the whole limit: nothing to make room with.
                out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
                return;
            };
            out.drops.push(Dropped { pkt: old.pkt, reason: DropReason::QueueOverflow });
        }
        self.fifo.push(now, pkt);
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        self.fifo.pop(now)
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

    #[test]
    fn a_full_queue_drops_its_oldest_packet() {
        let args = QdiscArgs { limit: QueueLimit::Packets(2), params: &[], mtu: 1500, seed: 0 };
        let mut q = (KIND.prepare)(&args).unwrap().make(0);
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
