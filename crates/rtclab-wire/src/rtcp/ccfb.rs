//! RFC 8888 RTP Control Protocol Feedback for Congestion Control: RTPFB, PT 205, FMT 11.
//!
//! ```text
//! | SSRC of RTCP packet sender |
//! repeated per media SSRC:
//!   | SSRC of media source | begin_seq (16) | num_reports (16) |
//!   | R|ECN(2)|ATO(13) | ... one per sequence number, padded to 32 bits |
//! | report timestamp (32, NTP 16.16) |
//! ```
//! ATO = arrival time offset before the report timestamp in 1/1024 s; 0x1FFE over range,
//! 0x1FFF unavailable. `num_reports` is the number of metric blocks (as libwebrtc and pion
//! write it). A block with R = 0 carries no ECN or ATO.

use crate::buf::{put_u16, put_u32, Reader};
use crate::WireError;

pub const ATO_OVER_RANGE: u16 = 0x1FFE;
pub const ATO_UNAVAILABLE: u16 = 0x1FFF;
pub const MAX_REPORTS_PER_BLOCK: usize = 16384;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcfbReport {
    pub received: bool,
    /// ECN codepoint: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Arrival time offset before the report timestamp, 1/1024 s (13 bits).
    pub arrival_time_offset: u16,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CcfbBlock {
    pub media_ssrc: u32,
    pub begin_seq: u16,
    pub reports: Vec<CcfbReport>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CongestionControlFeedback {
    pub sender_ssrc: u32,
    pub blocks: Vec<CcfbBlock>,
    /// Compact NTP (16.16 seconds).
    pub report_timestamp: u32,
}

impl CcfbReport {
    /// A received packet that arrived `offset_us` before the report timestamp.
    pub fn received(offset_us: i64, ecn: u8) -> Self {
        let ato = if offset_us < 0 {
            ATO_UNAVAILABLE
        } else {
            let units = (offset_us * 1024).div_euclid(1_000_000);
            if units >= ATO_OVER_RANGE as i64 {
                ATO_OVER_RANGE
            } else {
                units as u16
            }
        };
        CcfbReport { received: true, ecn: ecn & 3, arrival_time_offset: ato }
    }

    fn from_bits(v: u16) -> Self {
        if v & 0x8000 == 0 {
            return CcfbReport::default();
        }
        CcfbReport { received: true, ecn: ((v >> 13) & 3) as u8, arrival_time_offset: v & 0x1FFF }
    }

    fn to_bits(self) -> u16 {
        if !self.received {
            return 0;
        }
        0x8000 | ((self.ecn as u16 & 3) << 13) | (self.arrival_time_offset & 0x1FFF)
    }
}

impl CongestionControlFeedback {
    pub fn parse(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sender_ssrc = r.u32("CCFB")?;
        let mut blocks = Vec::new();
        while r.remaining() > 4 {
            let media_ssrc = r.u32("CCFB report block")?;
            let begin_seq = r.u16("CCFB report block")?;
            let num = r.u16("CCFB report block")? as usize;
            if num > MAX_REPORTS_PER_BLOCK {
                return Err(WireError::Invalid {
                    what: "CCFB num_reports",
                    detail: format!("{num} > {MAX_REPORTS_PER_BLOCK}"),
                });
            }
            let padded = num.div_ceil(2) * 4;
            if padded > r.remaining().saturating_sub(4) {
                return Err(WireError::BadLength {
                    what: "CCFB report block",
                    detail: format!(
                        "{num} reports need {padded} bytes, {} present before the timestamp",
                        r.remaining().saturating_sub(4)
                    ),
                });
            }
            let mut reports = Vec::with_capacity(num);
            for _ in 0..num {
                reports.push(CcfbReport::from_bits(r.u16("CCFB metric block")?));
            }
            if num % 2 == 1 {
                r.u16("CCFB padding")?;
            }
            blocks.push(CcfbBlock { media_ssrc, begin_seq, reports });
        }
        let report_timestamp = r.u32("CCFB report timestamp")?;
        if !r.is_empty() {
            return Err(WireError::BadLength {
                what: "CCFB",
                detail: format!("{} bytes after the report timestamp", r.remaining()),
            });
        }
        Ok(CongestionControlFeedback { sender_ssrc, blocks, report_timestamp })
    }

    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.sender_ssrc);
        for b in &self.blocks {
            if b.reports.len() > MAX_REPORTS_PER_BLOCK {
                return Err(WireError::Unrepresentable {
                    what: "CCFB block",
                    detail: format!("{} reports", b.reports.len()),
                });
            }
            put_u32(out, b.media_ssrc);
            put_u16(out, b.begin_seq);
            put_u16(out, b.reports.len() as u16);
            for rep in &b.reports {
                put_u16(out, rep.to_bits());
            }
            if b.reports.len() % 2 == 1 {
                put_u16(out, 0);
            }
        }
        put_u32(out, self.report_timestamp);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtcp::{parse_compound, write_compound, RtcpPacket};

    // Vectors from pion/rtcp `rfc8888_test.go` (MIT).
    const REPORT: [u8; 44] = [
        0x8B, 0xCD, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x01, // header, sender SSRC 1
        0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x04, 0x9F, 0xFD, 0x9F, 0xFC, 0x00, 0x00, 0x00,
        0x00, //
        0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x03, 0x9F, 0xFD, 0x9F, 0xFC, 0x00, 0x00, 0x00,
        0x00, //
        0x00, 0x00, 0x00, 0x01,
    ];

    #[test]
    fn pion_vector_two_blocks_with_padding() {
        let p = parse_compound(&REPORT).unwrap();
        let [RtcpPacket::CongestionControlFeedback(f)] = p.as_slice() else { panic!("{p:?}") };
        assert_eq!(f.sender_ssrc, 1);
        assert_eq!(f.report_timestamp, 1);
        assert_eq!(f.blocks.len(), 2);
        assert_eq!(f.blocks[0].reports.len(), 4);
        assert_eq!(f.blocks[1].reports.len(), 3);
        assert_eq!(
            f.blocks[0].reports[0],
            CcfbReport { received: true, ecn: 0, arrival_time_offset: 8189 }
        );
        assert_eq!(f.blocks[0].reports[1].arrival_time_offset, 8188);
        assert!(!f.blocks[1].reports[2].received);
        assert_eq!(write_compound(&p).unwrap(), REPORT.to_vec());
    }

    #[test]
    fn metric_block_bits() {
        assert_eq!(
            CcfbReport::from_bits(0xFFF8),
            CcfbReport { received: true, ecn: 3, arrival_time_offset: 8184 }
        );
        // Not received ignores the other 15 bits.
        assert_eq!(CcfbReport::from_bits(0x6200), CcfbReport::default());
        assert_eq!(CcfbReport::received(1_000_000, 0).arrival_time_offset, 1024);
        assert_eq!(CcfbReport::received(10_000_000, 0).arrival_time_offset, ATO_OVER_RANGE);
        assert_eq!(CcfbReport::received(-1, 0).arrival_time_offset, ATO_UNAVAILABLE);
    }

    #[test]
    fn rejects_more_reports_than_bytes() {
        let mut b = REPORT;
        b[15] = 0x06; // num_reports 6 in the first block
        assert!(parse_compound(&b).is_err());
    }
}
