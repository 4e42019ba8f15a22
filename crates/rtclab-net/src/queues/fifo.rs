//! A FIFO of timestamped packets with its byte count: the storage drop-tail, head-drop and
//! CoDel share (each adds its own admission and dropping rules).

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
    #[inline]
    pub fn backlog(&self) -> Backlog {
        Backlog { packets: self.fifo.len() as u32, bytes: self.bytes }
    }
    /// (data, acks) held.
    pub fn held_by_kind(&self) -> (u64, u64) {
        count_kinds(self.fifo.iter().map(|x| &x.1))
    }
}
