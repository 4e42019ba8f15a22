//! Generic NACK (RFC 4585 section 6.2.1): RTPFB, PT 205, FMT 1.
//!
//! FCI entries `| PID (16) | BLP (16) |`: PID is lost; bit i of BLP set means PID + i + 1 is
//! lost too.

use crate::buf::{put_u16, put_u32, Reader};
use crate::WireError;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Nack {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    /// (PID, BLP) pairs as on the wire.
    pub items: Vec<(u16, u16)>,
}

impl Nack {
    /// Builds the FCI from lost sequence numbers (in sending order; wrap-around handled).
    pub fn from_lost(sender_ssrc: u32, media_ssrc: u32, lost: &[u16]) -> Self {
        let mut items: Vec<(u16, u16)> = Vec::new();
        for &seq in lost {
            if let Some((pid, blp)) = items.last_mut() {
                let d = seq.wrapping_sub(*pid);
                if (1..=16).contains(&d) {
                    *blp |= 1 << (d - 1);
                    continue;
                }
            }
            items.push((seq, 0));
        }
        Nack { sender_ssrc, media_ssrc, items }
    }

    /// Every lost sequence number this NACK names.
    pub fn lost(&self) -> Vec<u16> {
        let mut out = Vec::new();
        for &(pid, blp) in &self.items {
            out.push(pid);
            for i in 0..16u16 {
                if blp & (1 << i) != 0 {
                    out.push(pid.wrapping_add(i + 1));
                }
            }
        }
        out
    }

    pub fn parse(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sender_ssrc = r.u32("NACK")?;
        let media_ssrc = r.u32("NACK")?;
        if !r.remaining().is_multiple_of(4) {
            return Err(WireError::BadLength {
                what: "NACK",
                detail: format!("{} FCI bytes is not a multiple of 4", r.remaining()),
            });
        }
        let mut items = Vec::new();
        while !r.is_empty() {
            items.push((r.u16("NACK PID")?, r.u16("NACK BLP")?));
        }
        Ok(Nack { sender_ssrc, media_ssrc, items })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.sender_ssrc);
        put_u32(out, self.media_ssrc);
        for &(pid, blp) in &self.items {
            put_u16(out, pid);
            put_u16(out, blp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_list_round_trips_through_blp() {
        let lost = [100u16, 101, 103, 116, 117, 200, 65535, 0, 2];
        let n = Nack::from_lost(1, 2, &lost);
        assert_eq!(n.items, vec![(100, 0b1000_0000_0000_0101), (117, 0), (200, 0), (65535, 0b101)]);
        assert_eq!(n.lost(), lost.to_vec());
    }
}
