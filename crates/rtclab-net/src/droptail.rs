//! Drop-tail FIFO with a limit in packets or bytes.
//!
//! Limits given in milliseconds at capacity or in multiples of the BDP are converted to bytes
//! by the scenario layer. Queuing delay (sojourn) is added to each packet's ground-truth
//! `queue_delay` when it leaves.

use crate::element::Dropped;
use crate::qdisc::{Backlog, DropReason, Qdisc};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    fifo: VecDeque<(Time, Packet)>,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Self {
        DropTail { limit, fifo: VecDeque::new(), bytes: 0 }
    }
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

impl Qdisc for DropTail {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: Packet, drops: &mut Vec<Dropped>) {
        let fits = match self.limit {
            QueueLimit::Packets(n) => (self.fifo.len() as u64) < n as u64,
            QueueLimit::Bytes(b) => self.bytes + pkt.size as u64 <= b,
        };
        if fits {
            self.bytes += pkt.size as u64;
            self.fifo.push_back((now, pkt));
        } else {
            drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
        }
    }

    #[inline]
    fn dequeue(&mut self, now: Time, _drops: &mut Vec<Dropped>) -> Option<Packet> {
        let (enq, mut pkt) = self.fifo.pop_front()?;
        self.bytes -= pkt.size as u64;
        pkt.queue_delay += now - enq;
        Some(pkt)
    }

    #[inline]
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
    use rtclab_core::{FlowId, TimeDelta};

    fn p(seq: u64, size: u32) -> Packet {
        Packet::data(FlowId(0), seq, size, Time::ZERO)
    }

    #[test]
    fn packet_limit_drops_the_arrival() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        let mut drops = Vec::new();
        for s in 0..3 {
            q.enqueue(Time::ZERO, p(s, 100), &mut drops);
        }
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].pkt.seq, 2);
        assert_eq!(drops[0].reason, DropReason::QueueOverflow);
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 200 });
    }

    #[test]
    fn byte_limit_and_sojourn() {
        let mut q = DropTail::new(QueueLimit::Bytes(1500));
        let mut drops = Vec::new();
        q.enqueue(Time::ZERO, p(0, 1000), &mut drops);
        q.enqueue(Time::ZERO, p(1, 600), &mut drops);
        q.enqueue(Time::ZERO, p(2, 500), &mut drops);
        assert_eq!(drops.len(), 1);
        let out = q.dequeue(Time::from_millis(3), &mut drops).unwrap();
        assert_eq!(out.seq, 0);
        assert_eq!(out.queue_delay, TimeDelta::from_millis(3));
        assert_eq!(q.backlog().bytes, 500);
    }
}
