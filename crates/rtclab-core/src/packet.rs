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
/// The two ECN bits of the IP header (RFC 3168, RFC 9331 for ECT(1)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport: an AQM drops instead of marking.
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    /// Congestion experienced (set by a marking queue).
    Ce = 0b11,
}

impl Ecn {
    /// From the two low bits of the IP TOS / traffic-class byte.
    pub const fn from_bits(b: u8) -> Ecn {
        match b & 0b11 {
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            0b11 => Ecn::Ce,
            _ => Ecn::NotEct,
        }
    }
    pub const fn bits(self) -> u8 {
        self as u8
    }
    /// ECT(0), ECT(1) or already CE: a queue may mark it instead of dropping it.
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Application data (a TCP segment, a UDP datagram, an RTP packet).
    Data,
    /// Transport feedback (a TCP ACK, RTCP).
    Ack,
}

/// Up to three SACK blocks (RFC 2018 with timestamps leaves room for three): packet ranges
/// `[start, end)` above a cumulative acknowledgement `base`, stored as 32-bit offsets from it
/// to keep `Packet` small. Unused blocks are empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u32, u32); 3],
}

impl SackBlocks {
    pub const MAX: usize = 3;

    /// Builds blocks above `base`; blocks beyond 2^32 packets above it are dropped.
    pub fn new(base: u64, blocks: &[(u64, u64)]) -> Self {
        let mut out = SackBlocks::default();
        let mut n = 0;
        for &(s, e) in blocks.iter().take(Self::MAX) {
            if s >= base && e > s && e - base <= u32::MAX as u64 {
                out.blocks[n] = ((s - base) as u32, (e - base) as u32);
                n += 1;
            }
        }
        out
    }
    pub fn is_empty(&self) -> bool {
        self.blocks[0].0 == self.blocks[0].1
    }
    /// The non-empty blocks as absolute ranges, given the cumulative acknowledgement `base`.
    pub fn iter(&self, base: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks
            .iter()
            .take_while(|b| b.0 < b.1)
            .map(move |&(s, e)| (base + s as u64, base + e as u64))
    }
}

/// What a packet carries besides its header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketInfo {
    #[default]
    None,
    /// TCP ACK: selective acknowledgement blocks.
    Sack(SackBlocks),
    /// Media data: which frame, and the packet's place in it (`echo` holds the capture time,
    /// as an RTP timestamp would).
    /// `key`: the frame is a key frame (decodable on its own); every other frame depends on
    /// the one before it. `encode_ns`: how long the encoder took for the frame;
    /// `rtx_wait_ns`: for a retransmission, the time since the packet's first transmission
    /// (0 otherwise). Both feed the receiver's per-frame latency breakdown (ground truth a
    /// real stream would carry in a header extension or not at all). `xor_groups`: the
    /// frame's FEC code — 0 for an MDS (Reed-Solomon) code, where any `count` of its packets
    /// recover it; k > 0 for k XOR parity packets, parity j covering the media packets
    /// i ≡ j (mod k) (FlexFEC-style 1-D interleaved parity).
    Media {
        frame_id: u32,
        index: u16,
        count: u16,
        key: bool,
        xor_groups: u8,
        encode_ns: u32,
        rtx_wait_ns: u32,
    },
    /// TCP data: the last packet of an application frame (video over TCP); `echo` holds the
    /// frame's capture time. The receiver times the frame once it is delivered in order.
    FrameEnd,
    /// Media-path padding (probe clusters with no media to send): counted by transport
    /// feedback, ignored by frame assembly.
    Padding,
    /// Media feedback (RTCP): a handle to its content, which the engine keeps aside (the
    /// emulator sends real RTCP bytes instead).
    /// The packet's content is in the engine's `Payloads` under this id.
    Payload { id: u32 },
    /// The packet's bytes are held by the engine itself under this handle, where elements
    /// cannot read them (the emulator's segments of a TCP super-packet: `slot` names the
    /// super-packet, `tag` the segment and the slot's generation).
    Held { slot: u32, tag: u32 },
}

/// 72 bytes; it is copied through queues and delay lines, so keep it small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    pub kind: PacketKind,
    pub dir: Direction,
    /// Position on the flow's route in `dir` (engine bookkeeping).
    pub hop: u8,
    /// True for a retransmitted data packet.
    /// Retransmission bit (0x4) and the ECN field (0x3): see `retransmit()` and `ecn()`.
    /// One byte for both keeps `Packet` at 72 bytes, which the hot path notices.
    flags: u8,
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
    /// Kind-specific content (SACK blocks, media frame membership, feedback handle).
    pub info: PacketInfo,
}

const RETRANSMIT: u8 = 0b100;
const ECN_ECHO: u8 = 0b1000;
const DSACK: u8 = 0b1_0000;
/// ABC (Goyal et al., NSDI'20): the ACK echoes the mark of the data packet it answers.
const ABC_ECHO: u8 = 0b10_0000;
const ABC_ACCELERATE: u8 = 0b100_0000;
/// Accurate ECN (AccECN, draft-ietf-tcpm-accurate-ecn §3.2.2): an ACK's three-bit ACE field,
/// the count of CE-marked data packets received modulo 8. It shares bits 5-7 with the ABC
/// echo: a flow runs ABC or AccECN, never both.
const ACE_SHIFT: u8 = 5;
const ACE_MASK: u8 = 0b1110_0000;
/// The TCP signalling bits a transport header carries (ECE/CWR, D-SACK, the ABC echo, ACE):
/// everything in `flags` but the retransmission bit and the ECN field.
const SIGNALS: u8 = 0b1111_1000;

impl Packet {
    /// `hop` of a packet a network element made itself (a forged ACK, a local
    /// retransmission): the engine puts it on its flow's route in `dir` just after the element.
    pub const ORIGINATED: u8 = u8::MAX;

    /// A retransmission of data sent before.
    #[inline]
    pub fn retransmit(&self) -> bool {
        self.flags & RETRANSMIT != 0
    }
    #[inline]
    pub fn set_retransmit(&mut self, on: bool) {
        self.flags = (self.flags & !RETRANSMIT) | if on { RETRANSMIT } else { 0 };
    }
    /// TCP's ECN signalling bit (RFC 3168 §6.1): ECE on an ACK (the receiver saw CE), CWR on
    /// a data packet (the sender has reduced its window).
    #[inline]
    pub fn ecn_echo(&self) -> bool {
        self.flags & ECN_ECHO != 0
    }
    #[inline]
    pub fn set_ecn_echo(&mut self, on: bool) {
        self.flags = (self.flags & !ECN_ECHO) | if on { ECN_ECHO } else { 0 };
    }

    /// Ack only: the data packet that triggered it was a duplicate (RFC 2883 D-SACK; the
    /// block itself is not carried, only that one arrived).
    #[inline]
    pub fn dsack(&self) -> bool {
        self.flags & DSACK != 0
    }

    #[inline]
    pub fn set_dsack(&mut self, on: bool) {
        self.flags = (self.flags & !DSACK) | if on { DSACK } else { 0 };
    }
    /// Ack only: the ABC mark of the data packet this ACK answers, as its receiver echoes it
    /// (`Some(true)`: accelerate, ECT(1); `Some(false)`: brake, ECT(0); None: no ABC mark).
    #[inline]
    pub fn abc_echo(&self) -> Option<bool> {
        (self.flags & ABC_ECHO != 0).then_some(self.flags & ABC_ACCELERATE != 0)
    }

    #[inline]
    pub fn set_abc_echo(&mut self, echo: Option<bool>) {
        self.flags &= !(ABC_ECHO | ABC_ACCELERATE);
        match echo {
            Some(true) => self.flags |= ABC_ECHO | ABC_ACCELERATE,
            Some(false) => self.flags |= ABC_ECHO,
            None => {}
        }
    }

    /// The transport's signalling bits (ECE/CWR, D-SACK, ABC echo, ACE) as one byte whose
    /// three low bits are zero, for a wire format to carry as they are.
    #[inline]
    pub fn signal_bits(&self) -> u8 {
        self.flags & SIGNALS
    }

    /// Sets the signalling bits from a byte made by `signal_bits` (its three low bits ignored).
    #[inline]
    pub fn set_signal_bits(&mut self, bits: u8) {
        self.flags = (self.flags & !SIGNALS) | (bits & SIGNALS);
    }

    /// Ack only, AccECN flows: the ACE field (CE-marked packets received, modulo 8).
    #[inline]
    pub fn ace(&self) -> u8 {
        (self.flags & ACE_MASK) >> ACE_SHIFT
    }

    #[inline]
    pub fn set_ace(&mut self, count: u8) {
        self.flags = (self.flags & !ACE_MASK) | ((count & 0b111) << ACE_SHIFT);
    }

    /// The ECN field as the packet carries it now (a queue may set CE).
    #[inline]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.flags)
    }
    #[inline]
    pub fn set_ecn(&mut self, e: Ecn) {
        self.flags = (self.flags & !0b11) | e.bits();
    }

    /// The SACK blocks of a TCP ACK (empty for anything else).
    pub fn sack(&self) -> SackBlocks {
        match self.info {
            PacketInfo::Sack(b) => b,
            _ => SackBlocks::default(),
        }
    }

    pub fn data(flow: FlowId, seq: u64, size: u32, now: Time) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Data,
            dir: Direction::Forward,
            hop: 0,
            flags: 0,
            size,
            seq,
            sent_at: now,
            echo: Time::ZERO,
            queue_delay: TimeDelta::ZERO,
            info: PacketInfo::None,
        }
    }

    pub fn ack(flow: FlowId, cumulative: u64, echo: Time, size: u32, now: Time) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Ack,
            dir: Direction::Reverse,
            hop: 0,
            flags: 0,
            size,
            seq: cumulative,
            sent_at: now,
            echo,
            queue_delay: TimeDelta::ZERO,
            info: PacketInfo::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        assert!(std::mem::size_of::<Packet>() <= 72, "{}", std::mem::size_of::<Packet>());
    }

    #[test]
    fn abc_echo_round_trips_and_leaves_the_other_flags_alone() {
        let mut p = Packet::ack(FlowId(1), 5, Time::ZERO, 52, Time::ZERO);
        p.set_dsack(true);
        for e in [Some(true), Some(false), None, Some(true)] {
            p.set_abc_echo(e);
            assert_eq!(p.abc_echo(), e);
            assert!(p.dsack() && p.ecn() == Ecn::NotEct);
        }
    }

    #[test]
    fn ace_counts_modulo_eight_beside_the_other_flags() {
        let mut p = Packet::ack(FlowId(1), 5, Time::ZERO, 52, Time::ZERO);
        p.set_dsack(true);
        p.set_ecn_echo(true);
        for n in 0..20u8 {
            p.set_ace(n);
            assert_eq!(p.ace(), n % 8);
            assert!(p.dsack() && p.ecn_echo() && p.ecn() == Ecn::NotEct);
        }
        // The signalling bits travel as one byte, leaving the ECN field and retransmit bit.
        let mut q = Packet::ack(FlowId(1), 5, Time::ZERO, 52, Time::ZERO);
        q.set_ecn(Ecn::Ect1);
        q.set_signal_bits(p.signal_bits() | 0b111);
        assert!(q.dsack() && q.ecn_echo() && q.ace() == p.ace() && q.ecn() == Ecn::Ect1);
        assert!(!q.retransmit() && p.signal_bits() & 0b111 == 0);
    }

    #[test]
    fn ecn_bits_round_trip() {
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e.bits()), e);
        }
        assert_eq!(Ecn::from_bits(0xfe), Ecn::Ect0); // only the two low bits count
        assert!(!Ecn::NotEct.is_capable() && Ecn::Ect1.is_capable());
        let mut p = Packet::data(FlowId(0), 0, 100, Time::ZERO);
        p.set_retransmit(true);
        p.set_ecn(Ecn::Ect0);
        assert!(p.retransmit() && p.ecn() == Ecn::Ect0);
        p.set_ecn(Ecn::Ce);
        p.set_retransmit(false);
        assert!(!p.retransmit() && p.ecn() == Ecn::Ce);
    }

    #[test]
    fn sack_blocks_round_trip_relative_to_the_ack() {
        let b = SackBlocks::new(100, &[(105, 107), (110, 120), (90, 95), (130, 131)]);
        assert_eq!(b.iter(100).collect::<Vec<_>>(), vec![(105, 107), (110, 120)]);
        assert!(SackBlocks::default().is_empty());
    }
}
