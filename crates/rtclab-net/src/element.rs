//! The network element contract (`NetElement`) and what elements hand the engine
//! (`ElementOutput`). The dispatch enum over the built-in elements is `any_element.rs`, so that
//! the elements (links, delay lines, loss) depend on this file and nothing here on them.
//!
//! An element receives packets with `handle_packet(now, dir, pkt, out)`, releases packets it
//! holds when the engine calls `handle_timeout(now, out)` at or after `poll_timeout()`, and
//! reports drops in `out`. An element may sit on both directions of a path (a middlebox that
//! sees data one way and feedback the other): it is told the direction of every packet.
//! Spurious wake-ups (a `handle_timeout` before anything is due) must be harmless.

use crate::accounting::{Backlog, DropReason};
use rtclab_core::{Direction, Packet, Time};

#[derive(Clone, Copy, Debug)]
pub struct Dropped {
    pub pkt: Packet,
    pub reason: DropReason,
}

/// What an element produced in one call; the engine drains it after every call.
/// A packet a queue marked CE instead of dropping (it travels on).
#[derive(Clone, Copy, Debug)]
pub struct Marked {
    pub pkt: Packet,
    pub reason: DropReason,
}

/// A link handed a packet from its queue to its serializer (recorded only for links with
/// observers, `Link::set_observed`): what a middlebox at that hop (a wireless access point's
/// feedback updater) learns about the queue.
#[derive(Clone, Copy, Debug)]
pub struct DequeueRecord {
    pub pkt: Packet,
    /// Time the packet spent in the queue discipline.
    pub sojourn: rtclab_core::TimeDelta,
    /// What the link holds after this packet left (a wireless link: qdisc + MAC queue).
    pub backlog: Backlog,
    /// The A-MPDU it left in, numbered per link (None: a link that sends packets one by
    /// one). Records of one aggregate share the time and the number.
    pub aggregate: Option<u64>,
    /// When its last bit leaves the link, where the link knows it at dequeue (rate links: the
    /// serializer's finish; wireless: the end of its PPDU unless that attempt collided); None
    /// otherwise.
    pub leaves_at: Option<Time>,
}

#[derive(Debug, Default)]
pub struct ElementOutput {
    pub packets: Vec<Packet>,
    pub drops: Vec<Dropped>,
    pub marks: Vec<Marked>,
    pub dequeues: Vec<DequeueRecord>,
    /// What packets in flight carry beyond their header (by `PacketInfo::Payload` id): an
    /// element may read or rewrite it (parse and rewrite transport feedback, for instance).
    /// Owned by the engine; `clear` leaves it alone.
    pub payloads: rtclab_core::Payloads,
}

impl ElementOutput {
    pub fn clear(&mut self) {
        self.packets.clear();
        self.drops.clear();
        self.marks.clear();
        self.dequeues.clear();
    }
}

/// What an element added to and took from the network, by kind (data, feedback).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MadeAbsorbed {
    pub made: (u64, u64),
    pub absorbed: (u64, u64),
}

pub trait NetElement {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput);
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput);
    fn poll_timeout(&self) -> Option<Time>;
    /// A link at the same hop dequeued a packet (only elements the engine registered as
    /// observers of that link are told).
    fn observe_dequeue(&mut self, _now: Time, _rec: &DequeueRecord) {}
    /// A link at the same hop dropped a packet (on arrival or from its queue); told to the
    /// same observers as its dequeues, before the packet's payload is freed.
    fn observe_drop(&mut self, _now: Time, _pkt: &Packet, _payloads: &rtclab_core::Payloads) {}
    /// Packets this element holds right now, (data, feedback): the conservation identities
    /// count them (every packet sent is delivered, dropped, or held by some element). An
    /// element that keeps packets must report them.
    fn held_by_kind(&self) -> (u64, u64) {
        (0, 0)
    }
    /// Packets this element made (`Packet::ORIGINATED`: forged ACKs, local retransmissions)
    /// and packets it took out of the network without losing them (feedback it answered
    /// itself), all time: the conservation identities count them.
    fn made_and_absorbed(&self) -> MadeAbsorbed {
        MadeAbsorbed::default()
    }
    /// Named figures for the run's summary (`summary.middleboxes[].metrics`); none by default.
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}
