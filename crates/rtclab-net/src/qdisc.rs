//! The queue-discipline interface and its dispatch enum.
//!
//! A queue discipline (ns-3's `QueueDisc`, Linux's `Qdisc`) sits in front of a link's
//! serializer. Contract:
//! - `enqueue(now, pkt, out)` accepts the packet or reports a drop with its reason in `out`;
//! - `dequeue(now, out)` hands the link its next packet together with the packet's *sojourn
//!   time* in this queue (the link adds it to the packet's ground-truth `queue_delay` and
//!   reports it to dequeue observers); it may drop packets on the way (AQM) or mark them
//!   (ECN CE, counted in `out.marks` with a reason);
//! - a discipline with timers of its own (pacing, shaping, periodic state) returns the next
//!   one from `poll_timeout`; the link forwards it to `handle_timeout`, after which it asks
//!   for a packet again if it is idle;
//! - `backlog` is what the discipline holds now, `held_by_kind` the same by packet kind for
//!   the engines' conservation checks;
//! - classification is per `Packet::flow` (both engines fill it: the simulator from the
//!   endpoint, the emulator from the packet's addresses and ports).
//!
//! Built-ins are chosen by name through the registry in `queues/mod.rs`; drop-tail is
//! dispatched without a virtual call, the others through `AnyQdisc::Other`.

use crate::element::ElementOutput;
use rtclab_core::{Packet, Time, TimeDelta};

/// A limit in packets or bytes (limits given in ms at capacity or in BDPs are converted to
/// bytes by the scenario layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether `pkt_size` more bytes fit next to a backlog of `b`.
    #[inline]
    pub fn admits(self, b: Backlog, pkt_size: u32) -> bool {
        match self {
            QueueLimit::Packets(n) => b.packets < n,
            QueueLimit::Bytes(max) => b.bytes + pkt_size as u64 <= max,
        }
    }

    /// Whether a backlog of `b` is over the limit (for disciplines that admit first and then
    /// drop from somewhere else: FQ-CoDel's fattest flow, SFQ's longest slot).
    #[inline]
    pub fn exceeded_by(self, b: Backlog) -> bool {
        match self {
            QueueLimit::Packets(n) => b.packets > n,
            QueueLimit::Bytes(max) => b.bytes > max,
        }
    }
}

pub use crate::accounting::{Backlog, DropReason};

/// A packet handed to the link, with the time it spent in the discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub pkt: Packet,
    pub sojourn: TimeDelta,
}

pub trait Qdisc {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput);
    fn dequeue(&mut self, now: Time, out: &mut ElementOutput) -> Option<Dequeued>;
    fn backlog(&self) -> Backlog;
    /// (data, acks) held.
    fn held_by_kind(&self) -> (u64, u64);
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time, _out: &mut ElementOutput) {}
    /// For disciplines that sort flows into classes (Confucius): the class `flow` is in now.
    fn flow_class(&self, _flow: rtclab_core::FlowId) -> Option<u8> {
        None
    }
}

/// (data, acks) among `pkts`.
pub fn count_kinds<'a>(pkts: impl Iterator<Item = &'a Packet>) -> (u64, u64) {
    pkts.fold((0, 0), |(d, a), p| match p.kind {
        rtclab_core::PacketKind::Data => (d + 1, a),
        rtclab_core::PacketKind::Ack => (d, a + 1),
    })
}
