//! The queue discipline interface. Every drop is reported with its reason.

use crate::droptail::DropTail;
use crate::element::Dropped;
use rtclab_core::{Packet, Time};

/// What a queue holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u32,
    pub bytes: u64,
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// Drop-tail: the queue limit was reached.
    QueueOverflow,
    /// Independent random loss.
    RandomLoss,
    /// Gilbert-Elliott burst loss.
    BurstLoss,
    /// An active queue management decision.
    Aqm,
}

impl DropReason {
    pub const ALL: [DropReason; 4] =
        [DropReason::QueueOverflow, DropReason::RandomLoss, DropReason::BurstLoss, DropReason::Aqm];
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueOverflow => "queue_overflow",
            DropReason::RandomLoss => "random_loss",
            DropReason::BurstLoss => "burst_loss",
            DropReason::Aqm => "aqm",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A queue discipline. `enqueue` may drop the arriving packet or others; `dequeue` may drop
/// packets it decides not to send (AQMs). Drops go to `drops` with a reason.
pub trait Qdisc {
    fn enqueue(&mut self, now: Time, pkt: Packet, drops: &mut Vec<Dropped>);
    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Packet>;
    fn backlog(&self) -> Backlog;
    /// Packets held, counted as (data, acks); for conservation checks.
    fn held_by_kind(&self) -> (u64, u64);
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
}

/// Built-in queue disciplines (enum dispatch keeps the hot path free of vtables).
#[derive(Debug)]
pub enum AnyQdisc {
    DropTail(DropTail),
}

impl Qdisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: Packet, drops: &mut Vec<Dropped>) {
        match self {
            AnyQdisc::DropTail(q) => q.enqueue(now, pkt, drops),
        }
    }
    #[inline]
    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Packet> {
        match self {
            AnyQdisc::DropTail(q) => q.dequeue(now, drops),
        }
    }
    #[inline]
    fn backlog(&self) -> Backlog {
        match self {
            AnyQdisc::DropTail(q) => q.backlog(),
        }
    }
    fn held_by_kind(&self) -> (u64, u64) {
        match self {
            AnyQdisc::DropTail(q) => q.held_by_kind(),
        }
    }
}

/// Counts packets by kind: (data, acks).
pub fn count_kinds<'a>(pkts: impl Iterator<Item = &'a Packet>) -> (u64, u64) {
    pkts.fold((0, 0), |(d, a), p| match p.kind {
        rtclab_core::PacketKind::Data => (d + 1, a),
        rtclab_core::PacketKind::Ack => (d, a + 1),
    })
}
