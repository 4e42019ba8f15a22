//! RTCP packets and compound packets (RFC 3550 section 6).
//!
//! ```text
//! |V=2|P| RC/FMT  |      PT       |        length (32-bit words - 1)  |
//! ```
//! A compound packet is several such packets back to back. Packet types we do not model
//! (SDES, BYE, APP, other feedback) are kept as [`RtcpPacket::Other`] and re-emitted as they
//! were.

pub mod ccfb;
pub mod nack;
pub mod pli;
pub mod remb;
pub mod report_block;
pub mod reports;
pub mod transport_feedback;

pub use ccfb::{CcfbBlock, CcfbReport, CongestionControlFeedback};
pub use nack::Nack;
pub use pli::Pli;
pub use remb::Remb;
pub use report_block::ReportBlock;
pub use reports::{ReceiverReport, SenderReport};
pub use transport_feedback::{PacketStatus, TransportFeedback};

use crate::buf::{put_u16, Reader};
use crate::WireError;

pub const PT_SR: u8 = 200;
pub const PT_RR: u8 = 201;
pub const PT_SDES: u8 = 202;
pub const PT_BYE: u8 = 203;
pub const PT_RTPFB: u8 = 205;
pub const PT_PSFB: u8 = 206;
pub const FMT_NACK: u8 = 1;
pub const FMT_PLI: u8 = 1;
pub const FMT_CCFB: u8 = 11;
pub const FMT_TWCC: u8 = 15;
pub const FMT_AFB: u8 = 15;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RtcpPacket {
    SenderReport(SenderReport),
    ReceiverReport(ReceiverReport),
    Nack(Nack),
    TransportFeedback(TransportFeedback),
    CongestionControlFeedback(CongestionControlFeedback),
    Remb(Remb),
    /// Picture loss indication: a key-frame request.
    Pli(Pli),
    /// Any other packet: its header count/format field, type and body (padding removed).
    Other {
        count: u8,
        packet_type: u8,
        body: Vec<u8>,
    },
}

/// The fixed header of one RTCP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub padding: bool,
    pub count: u8,
    pub packet_type: u8,
    /// Length of the whole packet in bytes.
    pub len: usize,
}

/// Parses every packet of a compound RTCP packet.
pub fn parse_compound(buf: &[u8]) -> Result<Vec<RtcpPacket>, WireError> {
    let mut r = Reader::new(buf);
    let mut out = Vec::new();
    if r.is_empty() {
        return Err(WireError::Truncated { what: "RTCP packet", needed: 4, available: 0 });
    }
    while !r.is_empty() {
        out.push(parse_one(&mut r)?);
    }
    Ok(out)
}

fn parse_one(r: &mut Reader<'_>) -> Result<RtcpPacket, WireError> {
    let b0 = r.u8("RTCP header")?;
    let version = b0 >> 6;
    if version != 2 {
        return Err(WireError::BadVersion(version));
    }
    let padding = b0 & 0x20 != 0;
    let count = b0 & 0x1F;
    let packet_type = r.u8("RTCP header")?;
    let words = r.u16("RTCP length")? as usize;
    let mut body = r.bytes(words * 4, "RTCP packet body")?;
    if padding {
        let n = *body.last().ok_or(WireError::BadPadding { count: 0, available: 0 })?;
        if n == 0 || n as usize > body.len() {
            return Err(WireError::BadPadding { count: n, available: body.len() });
        }
        body = body.get(..body.len() - n as usize).unwrap_or(&[]);
    }
    let mut b = Reader::new(body);
    Ok(match (packet_type, count) {
        (PT_SR, _) => RtcpPacket::SenderReport(SenderReport::parse(count, &mut b)?),
        (PT_RR, _) => RtcpPacket::ReceiverReport(ReceiverReport::parse(count, &mut b)?),
        (PT_RTPFB, FMT_NACK) => RtcpPacket::Nack(Nack::parse(&mut b)?),
        (PT_RTPFB, FMT_TWCC) => RtcpPacket::TransportFeedback(TransportFeedback::parse(&mut b)?),
        (PT_RTPFB, FMT_CCFB) => {
            RtcpPacket::CongestionControlFeedback(CongestionControlFeedback::parse(&mut b)?)
        }
        (PT_PSFB, FMT_AFB) if Remb::is_remb(body) => RtcpPacket::Remb(Remb::parse(&mut b)?),
        (PT_PSFB, FMT_PLI) => RtcpPacket::Pli(Pli::parse(&mut b)?),
        _ => RtcpPacket::Other { count, packet_type, body: body.to_vec() },
    })
}

impl RtcpPacket {
    /// Appends this packet (header included, padded to 32 bits) to `out`.
    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut body = Vec::new();
        let (count, packet_type) = match self {
            RtcpPacket::SenderReport(p) => (p.write(&mut body)?, PT_SR),
            RtcpPacket::ReceiverReport(p) => (p.write(&mut body)?, PT_RR),
            RtcpPacket::Nack(p) => {
                p.write(&mut body);
                (FMT_NACK, PT_RTPFB)
            }
            RtcpPacket::TransportFeedback(p) => {
                p.write(&mut body)?;
                (FMT_TWCC, PT_RTPFB)
            }
            RtcpPacket::CongestionControlFeedback(p) => {
                p.write(&mut body)?;
                (FMT_CCFB, PT_RTPFB)
            }
            RtcpPacket::Remb(p) => {
                p.write(&mut body)?;
                (FMT_AFB, PT_PSFB)
            }
            RtcpPacket::Pli(p) => {
                p.write(&mut body);
                (FMT_PLI, PT_PSFB)
            }
            RtcpPacket::Other { count, packet_type, body: b } => {
                if *count > 31 {
                    return Err(WireError::Unrepresentable {
                        what: "RTCP count",
                        detail: format!("{count} > 31"),
                    });
                }
                body.extend_from_slice(b);
                (*count, *packet_type)
            }
        };
        write_packet(count, packet_type, &body, out)
    }
}

/// Writes header + body, adding RTCP padding (P bit, count in the last byte) to 32 bits.
pub(crate) fn write_packet(
    count: u8,
    packet_type: u8,
    body: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), WireError> {
    let pad = (4 - body.len() % 4) % 4;
    let total = body.len() + pad;
    let words = u16::try_from(total / 4).map_err(|_| WireError::Unrepresentable {
        what: "RTCP packet",
        detail: format!("{total} bytes is too long"),
    })?;
    out.push(0x80 | if pad > 0 { 0x20 } else { 0 } | (count & 0x1F));
    out.push(packet_type);
    put_u16(out, words);
    out.extend_from_slice(body);
    if pad > 0 {
        out.extend(std::iter::repeat_n(0u8, pad - 1));
        out.push(pad as u8);
    }
    Ok(())
}

/// Emits a compound packet.
pub fn write_compound(packets: &[RtcpPacket]) -> Result<Vec<u8>, WireError> {
    let mut out = Vec::new();
    for p in packets {
        p.write(&mut out)?;
    }
    Ok(out)
}
