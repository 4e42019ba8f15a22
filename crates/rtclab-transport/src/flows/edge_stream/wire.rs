//! What the edge-stream packets carry besides the header (structured payloads in the
//! simulator): the FEC batch a packet belongs to, and the per-packet acknowledgement.

use rtclab_core::Time;
use std::sync::Arc;

/// A data or parity packet of one frame.
#[derive(Clone, Debug)]
pub struct Chunk {
    pub frame: u64,
    pub encode: Time,
    /// Data packets in the frame.
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
#[derive(Clone, Copy, Debug)]
pub struct ChunkAck {
    pub seq: u64,
    pub data: Option<(u64, u32)>,
    pub frame_done: Option<u64>,
    /// Smoothed spacing of consecutive packets of one batch at the receiver (ns).
    pub dispersion_ns: u64,
}
