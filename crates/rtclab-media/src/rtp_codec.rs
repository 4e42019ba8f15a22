//! Media packets and feedback as real bytes, for an engine that carries them over UDP sockets
//! (the emulator): RTP (RFC 3550) with the transport-wide sequence number and abs-send-time
//! header extensions (RFC 8285 one-byte form, as libwebrtc negotiates them), and RTCP
//! (transport-wide feedback, RFC 8888, REMB, receiver reports) through `rtclab-wire`.
//!
//! Size: the packet's `size` is its IPv4 length, as in the simulator; the UDP payload is
//! `size − 28`. The RTP payload starts with a 34-byte descriptor the receiver needs to rebuild
//! the frame bookkeeping the simulator carries in `PacketInfo` (a real stream would carry
//! codec payload instead): kind (1 = media, 2 = padding, 3 = media of a key frame), frame id
//! (u32), index and count (u16 each), capture time (u64 ns), send time (u64 ns, the full
//! value behind the 24-bit abs-send-time), encode time and retransmission wait (u32 ns each,
//! for the latency breakdown), the frame's XOR group count (0 = Reed-Solomon); the rest is
//! filler.
//!
//! Ground truth of the network: every data packet carries an 8-byte header extension
//! (id [`EXT_QUEUE_DELAY`]) that leaves the sender zero and into which the emulator's
//! forwarder writes the time the packet spent in its queues ([`stamp_queue_delay`]), as the
//! simulator's packets carry `queue_delay`; the receiver's latency breakdown reads it.

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
/// rtclab's ground-truth queueing-delay slot (u64 ns), filled in by the emulator.
pub const EXT_QUEUE_DELAY: u8 = 14;
pub const PAYLOAD_TYPE: u8 = 96;
/// IPv4 (20) + UDP (8) header bytes.
pub const IP_UDP_OVERHEAD: u32 = 28;
const DESCRIPTOR: usize = 34;
/// Descriptor kinds: media of a delta frame, padding, media of a key frame.
const KIND_MEDIA: u8 = 1;
const KIND_PADDING: u8 = 2;
const KIND_KEY: u8 = 3;
/// RTP header (12) + extension header (4) + transport seq (3) + abs-send-time (4) + queue
/// delay (9).
const RTP_HEADER: usize = 32;
/// Where a data packet's payload region (after the descriptor; codec bytes in a real stream,
/// `fec_bytes` content here) starts in the RTP packet.
pub const REGION_AT: usize = RTP_HEADER + DESCRIPTOR;
/// The smallest data packet (IPv4 length) this codec can encode.
pub const MIN_PACKET: u32 = IP_UDP_OVERHEAD + (RTP_HEADER + DESCRIPTOR) as u32;

/// RTCP APP packets (RFC 3550 §6.7), and the name of rtclab's frame-rate request.
const RTCP_APP: u8 = 204;
const APP_FRAME_RATE: &[u8; 4] = b"AFRq";

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
    let (kind, frame, index, count, capture, encode, rtx_wait, groups) = match pkt.info {
        PacketInfo::Media { frame_id, index, count, key, xor_groups, encode_ns, rtx_wait_ns } => (
            if key { KIND_KEY } else { KIND_MEDIA },
            frame_id,
            index,
            count,
            pkt.echo,
            encode_ns,
            rtx_wait_ns,
            xor_groups,
        ),
        _ => (KIND_PADDING, 0, 0, 0, Time::ZERO, 0, 0, 0),
    };
    let udp_len = pkt.size.max(MIN_PACKET) - IP_UDP_OVERHEAD;
    let mut payload = Vec::with_capacity(udp_len as usize);
    payload.push(kind);
    payload.extend_from_slice(&frame.to_be_bytes());
    payload.extend_from_slice(&index.to_be_bytes());
    payload.extend_from_slice(&count.to_be_bytes());
    payload.extend_from_slice(&(capture - Time::ZERO).as_nanos().to_be_bytes());
    payload.extend_from_slice(&(pkt.sent_at - Time::ZERO).as_nanos().to_be_bytes());
    payload.extend_from_slice(&encode.to_be_bytes());
    payload.extend_from_slice(&rtx_wait.to_be_bytes());
    payload.push(groups);
    let room = udp_len as usize - RTP_HEADER;
    // Padding packets (probes) carry RTP padding (the P bit, RFC 3550 §5.1) after the
    // descriptor, as libwebrtc's padding-only packets do, so a capture shows what they are.
    let padding = if kind == KIND_PADDING { (room - DESCRIPTOR).min(255) as u8 } else { 0 };
    payload.resize(room - padding as usize, 0);
    let ts90k = ((capture - Time::ZERO).as_nanos() as u128 * 90 / 1_000_000) as u32;
    let mut rtp = RtpPacket::new(PAYLOAD_TYPE, pkt.seq as u16, ts90k, ssrc, payload);
    rtp.padding = padding;
    rtp.marker = kind != KIND_PADDING && index + 1 == count;
    let send_ns = (pkt.sent_at - Time::ZERO).as_nanos() as u64;
    rtp.extensions = Some(HeaderExtensions::Elements(vec![
        ExtensionElement { id: EXT_TRANSPORT_SEQ, data: transport_seq_bytes(pkt.seq as u16) },
        ExtensionElement {
            id: EXT_ABS_SEND_TIME,
            data: abs_send_time_bytes(abs_send_time_from_nanos(send_ns)),
        },
        ExtensionElement { id: EXT_QUEUE_DELAY, data: vec![0; 8] },
    ]));
    rtp.to_bytes()
}

/// Writes `queue_ns` into the queue-delay extension of an rtclab RTP data packet held as a
/// whole IPv4/UDP packet (the emulator's forwarder, as a packet leaves its path), and clears
/// the UDP checksum (optional in IPv4). Returns whether the packet had the slot (other
/// packets are left untouched).
pub fn stamp_queue_delay(ip: &mut [u8], queue_ns: u64) -> bool {
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 17 {
        return false;
    }
    let udp = (ip[0] & 0x0f) as usize * 4;
    let rtp = udp + 8;
    let Some(b) = ip.get(rtp..) else { return false };
    if b.len() < 12
        || b[0] >> 6 != 2
        || b[0] & 0x10 == 0
        || is_rtcp(b)
        || b[1] & 0x7f != PAYLOAD_TYPE
    {
        return false;
    }
    let ext = 12 + 4 * (b[0] & 0x0f) as usize;
    if b.len() < ext + 4 || b[ext..ext + 2] != [0xBE, 0xDE] {
        return false;
    }
    let end = ext + 4 + 4 * u16::from_be_bytes([b[ext + 2], b[ext + 3]]) as usize;
    let mut i = ext + 4;
    while i < end.min(b.len()) {
        let (id, len) = (b[i] >> 4, (b[i] & 0x0f) as usize + 1);
        if id == 0 {
            i += 1; // padding
            continue;
        }
        if id == 15 || i + 1 + len > end.min(b.len()) {
            return false;
        }
        if id == EXT_QUEUE_DELAY && len == 8 {
            let at = rtp + i + 1;
            ip[at..at + 8].copy_from_slice(&queue_ns.to_be_bytes());
            ip[udp + 6..udp + 8].copy_from_slice(&[0, 0]);
            return true;
        }
        i += 1 + len;
    }
    false
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
        .ok_or_else(|| WireError::Invalid {
            what: "RTP",
            detail: "no transport-wide sequence number".into(),
        })
        .and_then(parse_transport_seq)?;
    let abs = rtp
        .extension(EXT_ABS_SEND_TIME)
        .ok_or_else(|| WireError::Invalid { what: "RTP", detail: "no abs-send-time".into() })
        .and_then(parse_abs_send_time)?;
    let d = &rtp.payload;
    if d.len() < DESCRIPTOR {
        return Err(WireError::Invalid {
            what: "RTP payload",
            detail: "shorter than the descriptor".into(),
        });
    }
    let size = bytes.len() as u32 + IP_UDP_OVERHEAD;
    let u64_at = |i: usize| u64::from_be_bytes(d[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_be_bytes(d[i..i + 4].try_into().expect("4 bytes"));
    let ns =
        |v: u64| Time::ZERO + rtclab_core::TimeDelta::from_nanos(v.min(i64::MAX as u64) as i64);
    // The descriptor's full send time; the abs-send-time agrees with it to 4 µs (checked so a
    // foreign stream's bytes are not taken for one).
    let sent = ns(u64_at(17));
    let abs_ns = abs_send_time_to_nanos(abs) as i64;
    let wire_ns =
        abs_send_time_to_nanos(abs_send_time_from_nanos((sent - Time::ZERO).as_nanos() as u64))
            as i64;
    if (abs_ns - wire_ns).abs() > 4_000 {
        return Err(WireError::Invalid {
            what: "RTP payload",
            detail: "the descriptor's send time disagrees with abs-send-time".into(),
        });
    }
    let mut p = Packet::data(flow, seqs.unwrap(tseq), size, sent);
    p.info = match d[0] {
        KIND_MEDIA | KIND_KEY => PacketInfo::Media {
            frame_id: u32::from_be_bytes([d[1], d[2], d[3], d[4]]),
            index: u16::from_be_bytes([d[5], d[6]]),
            count: u16::from_be_bytes([d[7], d[8]]),
            key: d[0] == KIND_KEY,
            xor_groups: d[33],
            encode_ns: u32_at(25),
            rtx_wait_ns: u32_at(29),
        },
        _ => PacketInfo::Padding,
    };
    p.echo = ns(u64_at(9));
    if let Some(q) = rtp.extension(EXT_QUEUE_DELAY).filter(|e| e.len() == 8) {
        let q = u64::from_be_bytes(q.try_into().expect("8 bytes"));
        p.queue_delay = rtclab_core::TimeDelta::from_nanos(q.min(i64::MAX as u64) as i64);
    }
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
        MediaFeedback::FrameRate { fps } => {
            // RTCP APP (RFC 3550 §6.7), name "AFRq", the rate in millihertz.
            let mut body = ssrc.to_be_bytes().to_vec();
            body.extend_from_slice(APP_FRAME_RATE);
            body.extend_from_slice(&((fps.max(0.0) * 1000.0).round() as u32).to_be_bytes());
            RtcpPacket::Other { count: 0, packet_type: RTCP_APP, body }
        }
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
            RtcpPacket::Other { packet_type: RTCP_APP, body, .. }
                if body.len() >= 12 && &body[4..8] == APP_FRAME_RATE =>
            {
                let mhz = u32::from_be_bytes(body[8..12].try_into().expect("4 bytes"));
                Some(MediaFeedback::FrameRate { fps: mhz as f64 / 1000.0 })
            }
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
        p.info = PacketInfo::Media {
            frame_id: 42,
            index: 2,
            count: 3,
            key: true,
            xor_groups: 3,
            encode_ns: 4_000_000,
            rtx_wait_ns: 55_000_123,
        };
        p.echo = Time::from_millis(1490);
        let bytes = encode_data(&p, 7).unwrap();
        assert_eq!(bytes.len() as u32 + IP_UDP_OVERHEAD, 1248);
        let rtp = RtpPacket::parse(&bytes).unwrap();
        assert!(rtp.marker, "last packet of the frame");
        let mut u = SeqUnwrapper { last: Some(69_990) };
        let q = decode_data(&bytes, FlowId(3), &mut u).unwrap();
        assert_eq!((q.seq, q.size, q.info, q.echo), (70_000, 1248, p.info, p.echo));
        assert_eq!(q.sent_at, p.sent_at, "the descriptor keeps the full send time");
        assert_eq!(q.queue_delay, rtclab_core::TimeDelta::ZERO);
        // A padding packet: the P bit, the same size, decoded as padding.
        let mut pad = Packet::data(FlowId(3), 70_001, 1000, Time::from_millis(1500));
        pad.info = PacketInfo::Padding;
        let bytes = encode_data(&pad, 7).unwrap();
        assert_eq!(bytes.len() as u32 + IP_UDP_OVERHEAD, 1000);
        assert!(RtpPacket::parse(&bytes).unwrap().padding > 0 && bytes[0] & 0x20 != 0);
        let q = decode_data(&bytes, FlowId(3), &mut u).unwrap();
        assert_eq!((q.size, q.info), (1000, PacketInfo::Padding));
    }

    #[test]
    fn the_forwarder_stamps_the_queue_delay_into_the_ip_packet() {
        let mut p = Packet::data(FlowId(0), 5, 300, Time::from_millis(10));
        p.info = PacketInfo::Padding;
        let rtp = encode_data(&p, 7).unwrap();
        // A minimal IPv4 + UDP header around it (checksums as a host would leave them).
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0];
        ip.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        ip.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 0, 0xab, 0xcd]);
        ip.extend_from_slice(&rtp);
        assert!(stamp_queue_delay(&mut ip, 12_345_678));
        assert_eq!(ip[26..28], [0, 0], "UDP checksum cleared");
        let q = decode_data(&ip[28..], FlowId(0), &mut SeqUnwrapper::default()).unwrap();
        assert_eq!(q.queue_delay, rtclab_core::TimeDelta::from_nanos(12_345_678));
        // RTCP and non-UDP packets are left alone.
        let fb = encode_feedback(&MediaFeedback::KeyFrameRequest, 1, 2).unwrap();
        let mut ip2 = ip[..28].to_vec();
        ip2.extend_from_slice(&fb);
        let before = ip2.clone();
        assert!(!stamp_queue_delay(&mut ip2, 1));
        assert_eq!(ip2, before);
        ip[9] = 6;
        assert!(!stamp_queue_delay(&mut ip, 1));
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
        for fb in [
            MediaFeedback::Remb(1_234_000),
            MediaFeedback::ReceiverReport { fraction_lost: 0.25 },
            MediaFeedback::FrameRate { fps: 45.0 },
            MediaFeedback::FrameRate { fps: 0.0 },
            MediaFeedback::KeyFrameRequest,
        ] {
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
