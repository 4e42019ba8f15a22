//! What the edge-stream packets carry besides the header: the FEC batch a packet belongs to,
//! and the per-packet acknowledgement — as bytes, so the same endpoints run in the simulator
//! and on real UDP in the emulator.
//!
//! Chunk (big-endian): type 1 (u8), frame (u64), encode time ns (u64), frame packets (u8),
//! frame interval ns (u64), batch (u64), round (u8), data index (u16, 0xFFFF = parity),
//! member count (u8), members (u8 each).
//! Ack: type 2 (u8), seq (u64), flags (u8: 1 = data, 2 = frame done), frame (u64), index
//! (u16), done frame (u64), dispersion ns (u64), arrival ns (u64, the receiver's clock).
//! Padding (a congestion controller's bandwidth probe): type 3 (u8), nothing else.

use rtclab_core::Time;
use std::sync::Arc;

/// A data or parity packet of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub frame: u64,
    pub encode: Time,
    /// Data packets in the frame (at most 255).
    pub frame_packets: u32,
    /// The frame interval (ns), so the receiver places frames it never saw a packet of.
    pub interval_ns: u64,
    /// The FEC block (one transmission round of one group) this packet is part of, and the
    /// frame's data indices it covers.
    pub batch: u64,
    pub members: Arc<[u32]>,
    /// `Some(i)`: data packet i of the frame; None: a parity packet of the batch.
    pub data_index: Option<u32>,
    /// Transmission round of the batch (0 = first transmission).
    pub round: u8,
}

/// The receiver's acknowledgement of one packet (global sequence number `seq`), with the
/// frame it completed, if it did, and the receiver's dispersion estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkAck {
    pub seq: u64,
    pub data: Option<(u64, u32)>,
    pub frame_done: Option<u64>,
    /// Smoothed spacing of consecutive packets of one batch at the receiver (ns).
    pub dispersion_ns: u64,
    /// When the packet arrived, on the receiver's clock (ns): per-packet transport feedback
    /// for a send-side congestion controller, which uses only differences of it.
    pub arrival_ns: u64,
}

/// The payload of a padding packet.
pub fn padding() -> Vec<u8> {
    vec![PADDING]
}

/// Whether `bytes` is a padding packet's payload.
pub fn is_padding(bytes: &[u8]) -> bool {
    bytes == [PADDING]
}

const CHUNK: u8 = 1;
const ACK: u8 = 2;
const PADDING: u8 = 3;
const PARITY: u16 = 0xFFFF;

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take::<2>().map(u16::from_be_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take::<8>().map(u64::from_be_bytes)
    }
}

impl Chunk {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(48 + self.members.len());
        b.push(CHUNK);
        b.extend(self.frame.to_be_bytes());
        b.extend(self.encode.as_nanos().to_be_bytes());
        b.push(self.frame_packets.min(255) as u8);
        b.extend(self.interval_ns.to_be_bytes());
        b.extend(self.batch.to_be_bytes());
        b.push(self.round);
        b.extend(self.data_index.map_or(PARITY, |i| i as u16).to_be_bytes());
        b.push(self.members.len().min(255) as u8);
        b.extend(self.members.iter().map(|&m| m as u8));
        b
    }

    pub fn decode(bytes: &[u8]) -> Option<Chunk> {
        let mut r = Reader(bytes);
        if r.u8()? != CHUNK {
            return None;
        }
        let frame = r.u64()?;
        let encode = Time::from_nanos(r.u64()?);
        let frame_packets = r.u8()? as u32;
        let interval_ns = r.u64()?;
        let batch = r.u64()?;
        let round = r.u8()?;
        let idx = r.u16()?;
        let n = r.u8()? as usize;
        if r.0.len() != n {
            return None;
        }
        let members: Arc<[u32]> = r.0.iter().map(|&m| m as u32).collect();
        let data_index = (idx != PARITY).then_some(idx as u32);
        if data_index.is_some_and(|i| i >= frame_packets)
            || members.iter().any(|&m| m >= frame_packets)
        {
            return None;
        }
        Some(Chunk { frame, encode, frame_packets, interval_ns, batch, members, data_index, round })
    }
}

impl ChunkAck {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(52);
        b.push(ACK);
        b.extend(self.seq.to_be_bytes());
        b.push(self.data.is_some() as u8 | (self.frame_done.is_some() as u8) << 1);
        let (f, i) = self.data.unwrap_or((0, 0));
        b.extend(f.to_be_bytes());
        b.extend((i as u16).to_be_bytes());
        b.extend(self.frame_done.unwrap_or(0).to_be_bytes());
        b.extend(self.dispersion_ns.to_be_bytes());
        b.extend(self.arrival_ns.to_be_bytes());
        b
    }

    pub fn decode(bytes: &[u8]) -> Option<ChunkAck> {
        let mut r = Reader(bytes);
        if r.u8()? != ACK {
            return None;
        }
        let seq = r.u64()?;
        let flags = r.u8()?;
        let (f, i) = (r.u64()?, r.u16()? as u32);
        let done = r.u64()?;
        let dispersion_ns = r.u64()?;
        let arrival_ns = r.u64()?;
        if !r.0.is_empty() {
            return None;
        }
        Some(ChunkAck {
            seq,
            data: (flags & 1 != 0).then_some((f, i)),
            frame_done: (flags & 2 != 0).then_some(done),
            dispersion_ns,
            arrival_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_and_acks_round_trip_and_garbage_is_refused() {
        let c = Chunk {
            frame: 7,
            encode: Time::from_nanos(123_456_789),
            frame_packets: 25,
            interval_ns: 16_666_667,
            batch: 99,
            members: vec![3, 4, 24].into(),
            data_index: Some(4),
            round: 2,
        };
        assert_eq!(Chunk::decode(&c.encode()), Some(c.clone()));
        let parity = Chunk { data_index: None, ..c.clone() };
        assert_eq!(Chunk::decode(&parity.encode()), Some(parity));
        let a = ChunkAck {
            seq: 5,
            data: Some((7, 4)),
            frame_done: Some(7),
            dispersion_ns: 10_000,
            arrival_ns: 42,
        };
        assert_eq!(ChunkAck::decode(&a.encode()), Some(a));
        let b = ChunkAck { data: None, frame_done: None, ..a };
        assert_eq!(ChunkAck::decode(&b.encode()), Some(b));
        // Truncated, wrong type, an index past the frame.
        let bytes = c.encode();
        assert_eq!(Chunk::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(ChunkAck::decode(&bytes), None);
        assert!(
            is_padding(&padding()) && !is_padding(&bytes) && Chunk::decode(&padding()).is_none()
        );
        let bad = Chunk { data_index: Some(30), ..c };
        assert_eq!(Chunk::decode(&bad.encode()), None);
    }
}
