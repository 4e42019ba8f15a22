//! Media packets and feedback as real bytes, for an engine that carries them over UDP sockets
//! (the emulator): RTP (RFC 3550) with the transport-wide sequence number and abs-send-time
//! header extensions (RFC 8285 one-byte form, as libwebrtc negotiates them), and RTCP
//! (transport-wide feedback, RFC 8888, REMB, receiver reports) through `rtclab-wire`.
//!
//! Size: the packet's `size` is its IPv4 length, as in the simulator; the UDP payload is
//! `size − 28`. The RTP payload starts with a 17-byte descriptor the receiver needs to rebuild
//! the frame bookkeeping the simulator carries in `PacketInfo` (a real stream would carry
//! codec payload instead): kind (1 = media, 2 = padding, 3 = media of a key frame), frame id
//! (u32), index and count
//! (u16 each), capture time (u64 ns); the rest is filler.

use crate::sender::MediaFeedback;
use rtclab_core::{FlowId, Packet, PacketInfo, Time};
use rtclab_wire::extensions::{
    abs_send_time_bytes, abs_send_time_from_nanos, abs_send_time_to_nanos, parse_abs_send_time,
    parse_transport_seq, transport_seq_bytes,
};
use rtclab_wire::rtcp::{
    parse_compound, write_compound, Pli, ReceiverReport, Remb, ReportBlock, RtcpPacket,
};
use rtclab_wire::rtp::{ExtensionElement, HeaderExtensions, RtpPacket};
use rtclab_wire::WireError;

/// Extension ids (libwebrtc's defaults in its own tests: abs-send-time 3, transport-cc 5).
pub const EXT_ABS_SEND_TIME: u8 = 3;
pub const EXT_TRANSPORT_SEQ: u8 = 5;
pub const PAYLOAD_TYPE: u8 = 96;
/// IPv4 (20) + UDP (8) header bytes.
pub const IP_UDP_OVERHEAD: u32 = 28;
const DESCRIPTOR: usize = 17;
/// Descriptor kinds: media of a delta frame, padding, media of a key frame.
const KIND_MEDIA: u8 = 1;
const KIND_PADDING: u8 = 2;
const KIND_KEY: u8 = 3;
/// RTP header (12) + extension header (4) + transport seq (3) + abs-send-time (4) + pad (1).
const RTP_HEADER: usize = 24;
/// The smallest data packet (IPv4 length) this codec can encode.
pub const MIN_PACKET: u32 = IP_UDP_OVERHEAD + (RTP_HEADER + DESCRIPTOR) as u32;

/// RFC 5761 demultiplexing: RTCP packet types 192-223 sit where RTP has its marker bit and
/// payload type.
pub fn is_rtcp(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && (192..=223).contains(&bytes[1])
}

/// The transport-wide sequence number of an RTP packet in a whole IPv4/UDP packet (what the
/// emulator's elements hold), if `ip` is one; for middleboxes that follow media flows.
pub fn transport_seq_of_ip(ip: &[u8]) -> Option<u16> {
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 17 {
        return None;
    }
    let body = ip.get((ip[0] & 0x0f) as usize * 4 + 8..)?;
    if is_rtcp(body) {
        return None;
    }
    let rtp = RtpPacket::parse(body).ok()?;
    rtp.extension(EXT_TRANSPORT_SEQ).and_then(|e| parse_transport_seq(e).ok())
}

/// Encodes a data packet the media sender produced (`PacketInfo::Media` or `Padding`).
pub fn encode_data(pkt: &Packet, ssrc: u32) -> Result<Vec<u8>, WireError> {
    let (kind, frame, index, count, capture) = match pkt.info {
        PacketInfo::Media { frame_id, index, count, key } => {
            (if key { KIND_KEY } else { KIND_MEDIA }, frame_id, index, count, pkt.echo)
        }
        _ => (KIND_PADDING, 0, 0, 0, Time::ZERO),
    };
    let udp_len = pkt.size.max(MIN_PACKET) - IP_UDP_OVERHEAD;
    let mut payload = Vec::with_capacity(udp_len as usize);
    payload.push(kind);
    payload.extend_from_slice(&frame.to_be_bytes());
    payload.extend_from_slice(&index.to_be_bytes());
    payload.extend_from_slice(&count.to_be_bytes());
    payload.extend_from_slice(&(capture - Time::ZERO).as_nanos().to_be_bytes());
    payload.resize(udp_len as usize - RTP_HEADER, 0);
    let ts90k = ((capture - Time::ZERO).as_nanos() as u128 * 90 / 1_000_000) as u32;
    let mut rtp = RtpPacket::new(PAYLOAD_TYPE, pkt.seq as u16, ts90k, ssrc, payload);
    rtp.marker = kind != KIND_PADDING && index + 1 == count;
    let send_ns = (pkt.sent_at - Time::ZERO).as_nanos() as u64;
    rtp.extensions = Some(HeaderExtensions::Elements(vec![
        ExtensionElement { id: EXT_TRANSPORT_SEQ, data: transport_seq_bytes(pkt.seq as u16) },
        ExtensionElement {
            id: EXT_ABS_SEND_TIME,
            data: abs_send_time_bytes(abs_send_time_from_nanos(send_ns)),
        },
    ]));
    rtp.to_bytes()
}

/// Unwraps 16-bit transport sequence numbers to the nearest 64-bit value.
#[derive(Clone, Debug, Default)]
pub struct SeqUnwrapper {
    last: Option<u64>,
}

impl SeqUnwrapper {
    pub fn unwrap(&mut self, s: u16) -> u64 {
        let v = match self.last {
            None => s as u64,
            Some(last) => {
                let base = last & !0xffff;
                [base.wrapping_sub(0x1_0000), base, base + 0x1_0000]
                    .into_iter()
                    .map(|b| b.wrapping_add(s as u64))
                    .filter(|c| *c < (1 << 62))
                    .min_by_key(|c| c.abs_diff(last))
                    .unwrap_or(s as u64)
            }
        };
        self.last = Some(self.last.map_or(v, |l| l.max(v)));
        v
    }
}

/// Decodes a received data packet (its `size` = UDP payload + 28).
pub fn decode_data(
    bytes: &[u8],
    flow: FlowId,
    seqs: &mut SeqUnwrapper,
) -> Result<Packet, WireError> {
    let rtp = RtpPacket::parse(bytes)?;
    let tseq = rtp
        .extension(EXT_TRANSPORT_SEQ)
        .ok_or(WireError::Invalid {
            what: "RTP",
            detail: "no transport-wide sequence number".into(),
        })
        .and_then(parse_transport_seq)?;
    let abs = rtp
        .extension(EXT_ABS_SEND_TIME)
        .ok_or(WireError::Invalid { what: "RTP", detail: "no abs-send-time".into() })
        .and_then(parse_abs_send_time)?;
    let d = &rtp.payload;
    if d.len() < DESCRIPTOR {
        return Err(WireError::Invalid {
            what: "RTP payload",
            detail: "shorter than the descriptor".into(),
        });
    }
    let size = bytes.len() as u32 + IP_UDP_OVERHEAD;
    let sent = Time::ZERO + rtclab_core::TimeDelta::from_nanos(abs_send_time_to_nanos(abs) as i64);
    let mut p = Packet::data(flow, seqs.unwrap(tseq), size, sent);
    p.info = match d[0] {
        KIND_MEDIA | KIND_KEY => PacketInfo::Media {
            frame_id: u32::from_be_bytes([d[1], d[2], d[3], d[4]]),
            index: u16::from_be_bytes([d[5], d[6]]),
            count: u16::from_be_bytes([d[7], d[8]]),
            key: d[0] == KIND_KEY,
        },
        _ => PacketInfo::Padding,
    };
    let capture = i64::from_be_bytes(d[9..17].try_into().expect("8 bytes"));
    p.echo = Time::ZERO + rtclab_core::TimeDelta::from_nanos(capture.max(0));
    Ok(p)
}

/// One feedback message as a (compound) RTCP packet.
pub fn encode_feedback(
    fb: &MediaFeedback,
    ssrc: u32,
    media_ssrc: u32,
) -> Result<Vec<u8>, WireError> {
    let pkt = match fb {
        MediaFeedback::Twcc(t) => RtcpPacket::TransportFeedback(t.clone()),
        MediaFeedback::Ccfb(c) => RtcpPacket::CongestionControlFeedback(c.clone()),
        MediaFeedback::Remb(bps) => {
            RtcpPacket::Remb(Remb { sender_ssrc: ssrc, bitrate_bps: *bps, ssrcs: vec![media_ssrc] })
        }
        MediaFeedback::ReceiverReport { fraction_lost } => {
            RtcpPacket::ReceiverReport(ReceiverReport {
                ssrc,
                reports: vec![ReportBlock {
                    ssrc: media_ssrc,
                    fraction_lost: (fraction_lost * 256.0).clamp(0.0, 255.0) as u8,
                    cumulative_lost: 0,
                    extended_highest_sequence: 0,
                    jitter: 0,
                    last_sr: 0,
                    delay_since_last_sr: 0,
                }],
            })
        }
        MediaFeedback::KeyFrameRequest => RtcpPacket::Pli(Pli { sender_ssrc: ssrc, media_ssrc }),
    };
    write_compound(&[pkt])
}

/// The feedback in an RTCP packet (packets of other types are skipped).
pub fn decode_feedback(bytes: &[u8]) -> Result<Vec<MediaFeedback>, WireError> {
    Ok(parse_compound(bytes)?
        .into_iter()
        .filter_map(|p| match p {
            RtcpPacket::TransportFeedback(t) => Some(MediaFeedback::Twcc(t)),
            RtcpPacket::CongestionControlFeedback(c) => Some(MediaFeedback::Ccfb(c)),
            RtcpPacket::Remb(r) => Some(MediaFeedback::Remb(r.bitrate_bps)),
            RtcpPacket::Pli(_) => Some(MediaFeedback::KeyFrameRequest),
            RtcpPacket::ReceiverReport(rr) => rr.reports.first().map(|b| {
                MediaFeedback::ReceiverReport { fraction_lost: b.fraction_lost as f64 / 256.0 }
            }),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_packet_round_trip_keeps_size_and_frame_bookkeeping() {
        let mut p = Packet::data(FlowId(3), 70_000, 1248, Time::from_millis(1500));
        p.info = PacketInfo::Media { frame_id: 42, index: 2, count: 3, key: true };
        p.echo = Time::from_millis(1490);
        let bytes = encode_data(&p, 7).unwrap();
        assert_eq!(bytes.len() as u32 + IP_UDP_OVERHEAD, 1248);
        let rtp = RtpPacket::parse(&bytes).unwrap();
        assert!(rtp.marker, "last packet of the frame");
        let mut u = SeqUnwrapper { last: Some(69_990) };
        let q = decode_data(&bytes, FlowId(3), &mut u).unwrap();
        assert_eq!((q.seq, q.size, q.info, q.echo), (70_000, 1248, p.info, p.echo));
        // abs-send-time: 6.18 fixed point, within 4 µs.
        assert!((q.sent_at - p.sent_at).as_nanos().abs() < 4_000);
    }

    #[test]
    fn unwrapping_follows_the_stream_across_the_16_bit_edge() {
        let mut u = SeqUnwrapper::default();
        assert_eq!(u.unwrap(65_534), 65_534);
        assert_eq!(u.unwrap(1), 65_537);
        assert_eq!(u.unwrap(65_535), 65_535, "a late packet from before the wrap");
    }

    #[test]
    fn feedback_round_trips() {
        for fb in
            [MediaFeedback::Remb(1_234_000), MediaFeedback::ReceiverReport { fraction_lost: 0.25 }]
        {
            let b = encode_feedback(&fb, 1, 2).unwrap();
            let back = decode_feedback(&b).unwrap();
            match (&fb, &back[0]) {
                (MediaFeedback::Remb(a), MediaFeedback::Remb(b)) => {
                    assert!((*a as f64 - *b as f64).abs() / (*a as f64) < 0.001)
                }
                (a, b) => assert_eq!(a, b),
            }
        }
    }
}
