//! Picture Loss Indication (RFC 4585 §6.3.1): PSFB, PT 206, FMT 1, no feedback control
//! information — "I lost pictures; send a key frame" (libwebrtc `rtcp::Pli`).
//!
//! ```text
//! | SSRC of packet sender | SSRC of media source |
//! ```

use crate::buf::{put_u32, Reader};
use crate::WireError;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pli {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
}

impl Pli {
    pub fn parse(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sender_ssrc = r.u32("PLI")?;
        let media_ssrc = r.u32("PLI")?;
        Ok(Pli { sender_ssrc, media_ssrc })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.sender_ssrc);
        put_u32(out, self.media_ssrc);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_compound, RtcpPacket};
    use super::*;

    #[test]
    fn round_trip_and_bytes() {
        let p = RtcpPacket::Pli(Pli { sender_ssrc: 1, media_ssrc: 0x0102_0304 });
        let mut b = Vec::new();
        p.write(&mut b).unwrap();
        // V=2, FMT=1 | PT 206 | length 2 words | sender | media.
        assert_eq!(b, [0x81, 206, 0, 2, 0, 0, 0, 1, 1, 2, 3, 4]);
        assert_eq!(parse_compound(&b).unwrap(), vec![p]);
        assert!(parse_compound(&b[..8]).is_err());
    }
}
