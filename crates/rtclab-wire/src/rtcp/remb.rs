//! REMB, receiver estimated maximum bitrate (draft-alvestrand-rmcat-remb-03): PSFB, PT 206,
//! FMT 15 (application layer feedback) with the identifier "REMB".
//!
//! ```text
//! | SSRC of packet sender | SSRC of media source = 0 | 'R' 'E' 'M' 'B' |
//! | Num SSRC (8) | BR Exp (6) | BR Mantissa (18) | SSRC feedback ... |
//! ```
//! bitrate = mantissa * 2^exp.

use crate::buf::{put_u32, Reader};
use crate::WireError;

const IDENTIFIER: [u8; 4] = *b"REMB";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Remb {
    pub sender_ssrc: u32,
    pub bitrate_bps: u64,
    pub ssrcs: Vec<u32>,
}

impl Remb {
    /// Whether an AFB body carries the REMB identifier.
    pub fn is_remb(body: &[u8]) -> bool {
        body.get(8..12) == Some(&IDENTIFIER[..])
    }

    /// The bitrate after the lossy mantissa/exponent encoding.
    pub fn representable(bitrate_bps: u64) -> u64 {
        let (m, e) = encode(bitrate_bps);
        (m as u64) << e
    }

    pub fn parse(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sender_ssrc = r.u32("REMB")?;
        let _media = r.u32("REMB")?;
        let id = r.bytes(4, "REMB identifier")?;
        if id != IDENTIFIER {
            return Err(WireError::Invalid { what: "REMB identifier", detail: format!("{id:?}") });
        }
        let num = r.u8("REMB")?;
        let v = r.u24("REMB bitrate")?;
        let exp = v >> 18;
        let mantissa = (v & 0x3FFFF) as u64;
        let bitrate_bps = mantissa.checked_shl(exp).filter(|b| b >> exp == mantissa).ok_or(
            WireError::Invalid {
                what: "REMB bitrate",
                detail: format!("{mantissa} * 2^{exp} overflows"),
            },
        )?;
        let mut ssrcs = Vec::with_capacity(num as usize);
        for _ in 0..num {
            ssrcs.push(r.u32("REMB SSRC list")?);
        }
        Ok(Remb { sender_ssrc, bitrate_bps, ssrcs })
    }

    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        if self.ssrcs.len() > 255 {
            return Err(WireError::Unrepresentable {
                what: "REMB SSRC list",
                detail: format!("{} > 255", self.ssrcs.len()),
            });
        }
        put_u32(out, self.sender_ssrc);
        put_u32(out, 0);
        out.extend_from_slice(&IDENTIFIER);
        out.push(self.ssrcs.len() as u8);
        let (m, e) = encode(self.bitrate_bps);
        let v = (e << 18) | m;
        out.extend_from_slice(&v.to_be_bytes()[1..]);
        for s in &self.ssrcs {
            put_u32(out, *s);
        }
        Ok(())
    }
}

/// (mantissa < 2^18, exponent < 64), rounding down as libwebrtc does.
fn encode(bitrate: u64) -> (u32, u32) {
    let mut e = 0;
    while (bitrate >> e) > 0x3FFFF {
        e += 1;
    }
    ((bitrate >> e) as u32, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mantissa_exponent() {
        assert_eq!(encode(262_143), (262_143, 0));
        assert_eq!(encode(1_000_000), (250_000, 2));
        assert_eq!(Remb::representable(1_000_001), 1_000_000);
        assert_eq!(Remb::representable(u64::MAX) >> 46, 0x3FFFF);
    }
}
