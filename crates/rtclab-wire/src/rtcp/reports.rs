//! Sender report (PT 200) and receiver report (PT 201), RFC 3550 sections 6.4.1-6.4.2.

use crate::buf::{put_u32, put_u64, Reader};
use crate::rtcp::ReportBlock;
use crate::WireError;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderReport {
    pub ssrc: u32,
    /// 64-bit NTP timestamp (seconds since 1900 in the high 32 bits).
    pub ntp_time: u64,
    pub rtp_timestamp: u32,
    pub packet_count: u32,
    pub octet_count: u32,
    pub reports: Vec<ReportBlock>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverReport {
    pub ssrc: u32,
    pub reports: Vec<ReportBlock>,
}

fn parse_blocks(count: u8, r: &mut Reader<'_>) -> Result<Vec<ReportBlock>, WireError> {
    if (count as usize) * ReportBlock::SIZE > r.remaining() {
        return Err(WireError::BadLength {
            what: "report",
            detail: format!(
                "{count} report blocks need {} bytes, {} present",
                count as usize * ReportBlock::SIZE,
                r.remaining()
            ),
        });
    }
    (0..count).map(|_| ReportBlock::parse(r)).collect()
}

fn write_blocks(blocks: &[ReportBlock], out: &mut Vec<u8>) -> Result<u8, WireError> {
    if blocks.len() > 31 {
        return Err(WireError::Unrepresentable {
            what: "report blocks",
            detail: format!("{} > 31", blocks.len()),
        });
    }
    for b in blocks {
        b.write(out)?;
    }
    Ok(blocks.len() as u8)
}

impl SenderReport {
    pub fn parse(count: u8, r: &mut Reader<'_>) -> Result<Self, WireError> {
        let ssrc = r.u32("sender report")?;
        let ntp_time = r.u64("sender report")?;
        let rtp_timestamp = r.u32("sender report")?;
        let packet_count = r.u32("sender report")?;
        let octet_count = r.u32("sender report")?;
        // Profile-specific extensions after the blocks are ignored.
        let reports = parse_blocks(count, r)?;
        Ok(SenderReport { ssrc, ntp_time, rtp_timestamp, packet_count, octet_count, reports })
    }

    /// Writes the body; returns the report count.
    pub fn write(&self, out: &mut Vec<u8>) -> Result<u8, WireError> {
        put_u32(out, self.ssrc);
        put_u64(out, self.ntp_time);
        put_u32(out, self.rtp_timestamp);
        put_u32(out, self.packet_count);
        put_u32(out, self.octet_count);
        write_blocks(&self.reports, out)
    }
}

impl ReceiverReport {
    pub fn parse(count: u8, r: &mut Reader<'_>) -> Result<Self, WireError> {
        let ssrc = r.u32("receiver report")?;
        let reports = parse_blocks(count, r)?;
        Ok(ReceiverReport { ssrc, reports })
    }

    pub fn write(&self, out: &mut Vec<u8>) -> Result<u8, WireError> {
        put_u32(out, self.ssrc);
        write_blocks(&self.reports, out)
    }
}
