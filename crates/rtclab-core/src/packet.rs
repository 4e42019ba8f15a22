//! The packet record that crosses network elements.
//!
//! A `Packet` is a small `Copy` value: the simulator never allocates per packet. It carries
//! ground-truth bookkeeping (send time, accumulated queuing delay) that real packets do not;
//! endpoints must not base control decisions on those fields (they are for metrics only),
//! except `echo`, which models the TCP timestamp option (RFC 7323) that real stacks carry.

use crate::time::{Time, TimeDelta};

/// Index of a flow in its scenario (0-based).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// Which way a packet travels through a dumbbell: data goes forward, feedback in reverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
    pub const fn index(self) -> usize {
        match self {
            Direction::Forward => 0,
            Direction::Reverse => 1,
        }
    }
}

/// What the packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Application data (a TCP segment, a UDP datagram, an RTP packet).
    Data,
    /// Transport feedback (a TCP ACK, RTCP).
    Ack,
}

/// Up to three SACK blocks (RFC 2018 with timestamps leaves room for three), as packet
/// ranges `[start, end)`; unused blocks are empty (`start == end`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub blocks: [(u64, u64); 3],
}

impl SackBlocks {
    pub const MAX: usize = 3;
    pub fn is_empty(&self) -> bool {
        self.blocks[0].0 == self.blocks[0].1
    }
    /// The non-empty blocks.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks.iter().copied().take_while(|b| b.0 < b.1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    pub kind: PacketKind,
    pub dir: Direction,
    /// Position on the flow's route in `dir` (engine bookkeeping).
    pub hop: u8,
    /// True for a retransmitted data packet.
    pub retransmit: bool,
    /// Size on the wire, in bytes.
    pub size: u32,
    /// Data: segment/sequence number. Ack: cumulative acknowledgement (next expected).
    pub seq: u64,
    /// When the sender emitted the packet (TSval for data).
    pub sent_at: Time,
    /// Ack only: the TSval echoed back (TSecr).
    pub echo: Time,
    /// Ground truth: time spent waiting in queues so far (metrics only).
    pub queue_delay: TimeDelta,
    /// Ack only: selective acknowledgement blocks.
    pub sack: SackBlocks,
}

impl Packet {
    pub fn data(flow: FlowId, seq: u64, size: u32, now: Time) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Data,
            dir: Direction::Forward,
            hop: 0,
            retransmit: false,
            size,
            seq,
            sent_at: now,
            echo: Time::ZERO,
            queue_delay: TimeDelta::ZERO,
            sack: SackBlocks::default(),
        }
    }

    pub fn ack(flow: FlowId, cumulative: u64, echo: Time, size: u32, now: Time) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Ack,
            dir: Direction::Reverse,
            hop: 0,
            retransmit: false,
            size,
            seq: cumulative,
            sent_at: now,
            echo,
            queue_delay: TimeDelta::ZERO,
            sack: SackBlocks::default(),
        }
    }
}
