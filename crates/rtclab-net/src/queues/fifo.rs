//! A FIFO of timestamped packets with its byte count: the storage every discipline shares
//! (each adds its own admission, scheduling and dropping rules).

use crate::qdisc::{count_kinds, Backlog, Dequeued};
use rtclab_core::{Packet, Time};
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct TimedFifo {
    fifo: VecDeque<(Time, Packet)>,
    bytes: u64,
}

impl TimedFifo {
    #[inline]
    pub fn push(&mut self, now: Time, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.fifo.push_back((now, pkt));
    }
    /// The head packet with the time it spent queued.
    #[inline]
    pub fn pop(&mut self, now: Time) -> Option<Dequeued> {
        let (enq, pkt) = self.fifo.pop_front()?;
        self.bytes -= pkt.size as u64;
        Some(Dequeued { pkt, sojourn: now - enq })
    }
    /// The tail packet (the newest), for disciplines that drop from the tail.
    #[inline]
    pub fn pop_back(&mut self) -> Option<Packet> {
        let (_, pkt) = self.fifo.pop_back()?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
    /// The head packet's size.
    #[inline]
    pub fn peek_size(&self) -> Option<u32> {
        self.fifo.front().map(|x| x.1.size)
    }
    /// When the head packet arrived.
    #[inline]
    pub fn head_time(&self) -> Option<Time> {
        self.fifo.front().map(|x| x.0)
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
    #[inline]
    pub fn backlog(&self) -> Backlog {
        Backlog { packets: self.fifo.len() as u32, bytes: self.bytes }
    }
    /// (data, acks) held.
    pub fn held_by_kind(&self) -> (u64, u64) {
        count_kinds(self.fifo.iter().map(|x| &x.1))
    }
}
