//! Reception report block (RFC 3550 section 6.4.1), 24 bytes.
//!
//! ```text
//! | SSRC_n | fraction lost (8) | cumulative lost (24, signed) |
//! | extended highest sequence number received | interarrival jitter |
//! | last SR (LSR) | delay since last SR (DLSR, 1/65536 s) |
//! ```

use crate::buf::{put_u24, put_u32, sign_extend_24, Reader};
use crate::WireError;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportBlock {
    pub ssrc: u32,
    /// Fraction lost since the previous report, in 1/256.
    pub fraction_lost: u8,
    /// Cumulative packets lost (24-bit signed on the wire).
    pub cumulative_lost: i32,
    pub extended_highest_sequence: u32,
    /// Interarrival jitter in RTP timestamp units.
    pub jitter: u32,
    pub last_sr: u32,
    pub delay_since_last_sr: u32,
}

impl ReportBlock {
    pub const SIZE: usize = 24;

    pub fn parse(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let ssrc = r.u32("report block")?;
        let fraction_lost = r.u8("report block")?;
        let cumulative_lost = sign_extend_24(r.u24("report block")?);
        Ok(ReportBlock {
            ssrc,
            fraction_lost,
            cumulative_lost,
            extended_highest_sequence: r.u32("report block")?,
            jitter: r.u32("report block")?,
            last_sr: r.u32("report block")?,
            delay_since_last_sr: r.u32("report block")?,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        if !(-(1 << 23)..(1 << 23)).contains(&self.cumulative_lost) {
            return Err(WireError::Unrepresentable {
                what: "cumulative lost",
                detail: format!("{} does not fit 24 signed bits", self.cumulative_lost),
            });
        }
        put_u32(out, self.ssrc);
        out.push(self.fraction_lost);
        put_u24(out, (self.cumulative_lost as u32) & 0xFF_FFFF);
        put_u32(out, self.extended_highest_sequence);
        put_u32(out, self.jitter);
        put_u32(out, self.last_sr);
        put_u32(out, self.delay_since_last_sr);
        Ok(())
    }
}
