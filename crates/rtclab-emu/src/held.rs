//! The forwarder's own store of TCP super-packets (`offload.rs`) while the network holds
//! their segments: each MTU packet in the model carries `PacketInfo::Held { slot, tag }`
//! instead of a payload of its own, so a segment costs the forwarder no allocation and no
//! memory it must visit apart from the packet itself; one slot serves all of a
//! super-packet's segments. A slot keeps which of its segments are still in the network
//! and a generation, so a segment handed back twice (an element that copies packets) or
//! after its slot was reused is refused instead of sending another packet's bytes.

use crate::offload::SuperPacket;

/// Segments per super-packet at most (a bit each in `Slot::pending`).
pub const MAX_SEGMENTS: usize = 64;

struct Slot {
    sp: Option<SuperPacket>,
    /// Bit k: segment k is still in the network.
    pending: u64,
    generation: u32,
    /// The IPv4 TOS byte as read (a queue's CE mark shows as a difference).
    tos: u8,
}

/// A held segment: which super-packet, which segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub slot: u32,
    pub tag: u32,
}

impl Handle {
    pub fn segment(self) -> usize {
        (self.tag & 0xff) as usize
    }
    fn generation(self) -> u32 {
        self.tag >> 8
    }
}

#[derive(Default)]
pub struct Held {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Read buffers of super-packets whose segments have all left, for the next reads.
    buffers: Vec<Vec<u8>>,
}

impl Held {
    /// Read buffers kept at most (each 64 KiB; a 10 Gbit/s path with 20 ms of delay holds
    /// about 400 super-packets).
    const BUFFERS_KEPT: usize = 1024;

    /// Holds `sp`; its segments' handles are `handle(first, k)`. A super-packet of more
    /// than [`MAX_SEGMENTS`] segments (a small segment size) comes back.
    pub fn insert(&mut self, sp: SuperPacket) -> Result<Handle, SuperPacket> {
        let n = sp.count();
        if !(1..=MAX_SEGMENTS).contains(&n) {
            return Err(sp);
        }
        let pending = if n == MAX_SEGMENTS { u64::MAX } else { (1u64 << n) - 1 };
        let tos = sp.ip()[1];
        let slot = match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                (s.sp, s.pending, s.tos) = (Some(sp), pending, tos);
                i
            }
            None => {
                self.slots.push(Slot { sp: Some(sp), pending, generation: 0, tos });
                (self.slots.len() - 1) as u32
            }
        };
        Ok(Handle { slot, tag: self.slots[slot as usize].generation << 8 })
    }

    /// Segment `k` of the super-packet `first` names.
    pub fn handle(first: Handle, k: usize) -> Handle {
        Handle { slot: first.slot, tag: (first.tag & !0xff) | k as u32 }
    }

    /// The super-packet and TOS byte of a segment still in the network.
    pub fn get(&self, h: Handle) -> Option<(&SuperPacket, u8)> {
        let s = self.slots.get(h.slot as usize)?;
        let live = s.generation == h.generation() && s.pending & (1 << h.segment()) != 0;
        live.then(|| s.sp.as_ref().map(|sp| (sp, s.tos))).flatten()
    }

    /// The network is done with a segment (delivered or dropped); the last one frees its
    /// super-packet. False for a handle that is not (or no longer) held.
    pub fn finish(&mut self, h: Handle) -> bool {
        let Some(s) = self.slots.get_mut(h.slot as usize) else { return false };
        let bit = 1u64 << h.segment();
        if s.generation != h.generation() || s.pending & bit == 0 {
            return false;
        }
        s.pending &= !bit;
        if s.pending == 0 {
            s.generation = (s.generation + 1) & 0x00ff_ffff;
            if let Some(sp) = s.sp.take() {
                if self.buffers.len() < Self::BUFFERS_KEPT {
                    self.buffers.push(sp.into_bytes());
                }
            }
            self.free.push(h.slot);
        }
        true
    }

    /// A read buffer of a super-packet that has left, if any.
    pub fn spare_buffer(&mut self) -> Option<Vec<u8>> {
        self.buffers.pop()
    }

    /// Super-packets held (for leak checks).
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offload::{VnetHdr, GSO_TCPV4};

    fn super_packet(segments: usize) -> SuperPacket {
        let len = 52 + segments * 100;
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[1] = 0x02; // ECT(0)
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[9] = 6;
        p[32] = 8 << 4;
        let hdr = VnetHdr { gso_type: GSO_TCPV4, gso_size: 100, ..VnetHdr::default() };
        SuperPacket::parse(p, 0..len, hdr).unwrap()
    }

    #[test]
    fn a_slot_lives_until_its_last_segment_leaves() {
        let mut held = Held::default();
        let first = held.insert(super_packet(3)).unwrap();
        let hs: Vec<Handle> = (0..3).map(|k| Held::handle(first, k)).collect();
        assert_eq!(held.get(hs[1]).map(|(sp, tos)| (sp.count(), tos)), Some((3, 2)));
        assert!(held.finish(hs[1]));
        assert!(held.get(hs[1]).is_none() && !held.finish(hs[1]), "a segment leaves once");
        assert!(held.finish(hs[0]) && held.finish(hs[2]));
        assert!(held.is_empty() && held.spare_buffer().is_some());
        // The slot is reused under a new generation: old handles stay dead.
        let again = held.insert(super_packet(2)).unwrap();
        assert_eq!(again.slot, first.slot);
        assert!(held.get(hs[0]).is_none() && !held.finish(hs[0]));
        assert!(held.get(Held::handle(again, 1)).is_some());
        assert!(held.get(Held::handle(again, 2)).is_none(), "past its last segment");
    }

    #[test]
    fn sixty_four_segments_fill_the_mask() {
        let mut held = Held::default();
        let first = held.insert(super_packet(64)).unwrap();
        for k in 0..64 {
            assert!(held.finish(Held::handle(first, k)));
        }
        assert!(held.is_empty());
        assert!(held.insert(super_packet(65)).is_err(), "more than a mask's worth comes back");
    }
}
