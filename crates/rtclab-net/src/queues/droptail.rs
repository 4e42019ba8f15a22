//! Drop-tail FIFO with a limit in packets or bytes.
//!
//! Limits given in milliseconds at capacity or in multiples of the BDP are converted to bytes
//! by the scenario layer. Lineage: ns-3 `FifoQueueDisc`, Linux `pfifo`/`bfifo`.

use crate::element::{Dropped, ElementOutput};
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::{QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::{Packet, Time};
use crate::queues::fifo::TimedFifo;

pub static KIND: QdiscKind = QdiscKind {
    name: "droptail",
    help: "FIFO that drops arrivals once `limit` is reached (the default)",
    params: Vec::new,
    prepare: |a: &QdiscArgs| {
        a.no_params()?;
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| DropTail::new(limit).into()))
    },
};

#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    fifo: TimedFifo,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Self {
        DropTail { limit, fifo: TimedFifo::default() }
    }
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

impl Qdisc for DropTail {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        if self.limit.admits(self.fifo.backlog(), pkt.size) {
            self.fifo.push(now, pkt);
        } else {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
        }
    }

    #[inline]
    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        self.fifo.pop(now)
    }

    #[inline]
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
    use rtclab_core::{FlowId, TimeDelta};

    fn p(seq: u64, size: u32) -> Packet {
        Packet::data(FlowId(0), seq, size, Time::ZERO)
    }

    #[test]
    fn packet_limit_drops_the_arrival() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        let mut out = ElementOutput::default();
        for s in 0..3 {
            q.enqueue(Time::ZERO, p(s, 100), &mut out);
        }
        assert_eq!(out.drops.len(), 1);
        assert_eq!(out.drops[0].pkt.seq, 2);
        assert_eq!(out.drops[0].reason, DropReason::QueueOverflow);
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 200 });
    }

    #[test]
    fn byte_limit_and_sojourn() {
        let mut q = DropTail::new(QueueLimit::Bytes(1500));
        let mut out = ElementOutput::default();
        q.enqueue(Time::ZERO, p(0, 1000), &mut out);
        q.enqueue(Time::ZERO, p(1, 600), &mut out);
        q.enqueue(Time::ZERO, p(2, 500), &mut out);
        assert_eq!(out.drops.len(), 1);
        let d = q.dequeue(Time::from_millis(3), &mut out).unwrap();
        assert_eq!(d.pkt.seq, 0);
        assert_eq!(d.sojourn, TimeDelta::from_millis(3));
        assert_eq!(q.backlog().bytes, 500);
    }
}
