//! How an endpoint's packets become UDP payloads and back, for the emulator's one endpoint
//! driver (`udp_endpoint.rs`):
//!
//! - [`RtpCodec`]: media flows as real RTP and RTCP (`rtclab_media::rtp_codec`: transport-wide
//!   sequence numbers, abs-send-time, TWCC / RFC 8888 / REMB / RR), so captures open in
//!   Wireshark and middleboxes can parse them.
//! - [`RecordCodec`]: every other rtclab endpoint (its own TCP with any controller, CBR,
//!   registered flow kinds) as a compact record of the packet's header fields, padded with
//!   zeros to the packet's size on the wire (docs/wire-formats.md, "endpoint records").
//!
//! The UDP payload is the packet's size less the IPv4 and UDP headers (28 bytes), so a packet
//! occupies the emulated link exactly as long as it does in the simulator — except where the
//! encoding needs more room than the simulator's size gives it (a 40-byte simulated TCP ACK
//! becomes a 56-byte datagram, 80 with three SACK blocks).

use rtclab_core::{FlowId, Packet, PacketInfo, PacketKind, Payload, SackBlocks, Time, TimeDelta};
use rtclab_media::fec_bytes::{FecDecoder, FecEncoder};
use rtclab_media::rtp_codec::{
    decode_data, decode_feedback, encode_data, encode_feedback, is_rtcp, SeqUnwrapper, REGION_AT,
};
use rtclab_media::sender::MediaFeedback;

/// IPv4 (20) + UDP (8).
pub const IP_UDP_OVERHEAD: u32 = 28;

/// Turns an endpoint's transmits into UDP payloads and received payloads into packets.
pub trait WireCodec: Send {
    /// The UDP payload for `pkt` (with `payload`, if it has one), written into `out` (empty).
    fn encode(
        &mut self,
        pkt: &Packet,
        payload: Option<&Payload>,
        out: &mut Vec<u8>,
    ) -> Result<(), String>;
    /// The packets in one received UDP payload (RTCP may be compound), appended to `out`.
    fn decode(
        &mut self,
        bytes: &[u8],
        flow: FlowId,
        now: Time,
        out: &mut Vec<(Packet, Option<Payload>)>,
    ) -> Result<(), String>;
    /// What the codec itself measured, for the flow's `metrics` (none by default).
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Media over RTP/RTCP: data packets are RTP, feedback is RTCP. Media payloads carry
/// stand-in codec bytes and FEC packets real parity of them (`rtclab_media::fec_bytes`); the
/// receiving end rebuilds lost media bytes from parity and counts what it rebuilt.
pub struct RtpCodec {
    ssrc: u32,
    seqs: SeqUnwrapper,
    fec_out: FecEncoder,
    fec_in: FecDecoder,
    parity_seen: bool,
}

impl RtpCodec {
    pub fn new(ssrc: u32) -> Self {
        RtpCodec {
            ssrc,
            seqs: SeqUnwrapper::default(),
            fec_out: FecEncoder::default(),
            fec_in: FecDecoder::default(),
            parity_seen: false,
        }
    }
}

impl WireCodec for RtpCodec {
    fn encode(
        &mut self,
        pkt: &Packet,
        payload: Option<&Payload>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let bytes = match pkt.kind {
            PacketKind::Data => encode_data(pkt, self.ssrc).map(|mut b| {
                if let PacketInfo::Media { frame_id, index, count, xor_groups, .. } = pkt.info {
                    if let Some(region) = b.get_mut(REGION_AT..) {
                        let len = region.len();
                        let bytes = if index < count {
                            Some(self.fec_out.media(self.ssrc, frame_id, index, count, len))
                        } else {
                            self.fec_out.parity(frame_id, index, count, xor_groups, len)
                        };
                        if let Some(r) = bytes {
                            region.copy_from_slice(&r);
                        }
                    }
                }
                b
            }),
            PacketKind::Ack => {
                let fb = payload
                    .and_then(|p| p.downcast_ref::<MediaFeedback>())
                    .ok_or("a media feedback packet without its feedback")?;
                encode_feedback(fb, self.ssrc ^ 1, self.ssrc)
            }
        };
        *out = bytes.map_err(|e| e.to_string())?;
        Ok(())
    }

    fn decode(
        &mut self,
        bytes: &[u8],
        flow: FlowId,
        now: Time,
        out: &mut Vec<(Packet, Option<Payload>)>,
    ) -> Result<(), String> {
        if is_rtcp(bytes) {
            let size = bytes.len() as u32 + IP_UDP_OVERHEAD;
            for fb in decode_feedback(bytes).map_err(|e| e.to_string())? {
                let pkt = Packet::ack(flow, 0, now, size, now);
                out.push((pkt, Some(Payload::structured(fb))));
            }
        } else {
            let p = decode_data(bytes, flow, &mut self.seqs).map_err(|e| e.to_string())?;
            if let PacketInfo::Media { frame_id, index, count, xor_groups, .. } = p.info {
                let ssrc =
                    bytes.get(8..12).map_or(0, |b| u32::from_be_bytes(b.try_into().expect("4")));
                let region = bytes.get(REGION_AT..).unwrap_or_default();
                self.parity_seen |= index >= count;
                self.fec_in.on_packet(ssrc, frame_id, index, count, xor_groups, region);
            }
            out.push((p, None));
        }
        Ok(())
    }

    fn metrics(&self) -> Vec<(&'static str, f64)> {
        if self.parity_seen {
            self.fec_in.metrics()
        } else {
            Vec::new()
        }
    }
}

/// rtclab's own packet records (see the module documentation).
#[derive(Default)]
pub struct RecordCodec;

const MAGIC: u8 = 0xA7;
/// magic, flags, info tag, SACK block count, seq, sent_at, echo.
pub const RECORD_HEADER: usize = 28;
const FLAG_ACK: u8 = 0b01;
const FLAG_RETRANSMIT: u8 = 0b10;
const TAG_NONE: u8 = 0;
const TAG_SACK: u8 = 1;
const TAG_MEDIA: u8 = 2;
const TAG_PADDING: u8 = 3;
const TAG_BYTES: u8 = 4;
/// TCP data ending a video frame (`echo` = the frame's capture time).
const TAG_FRAME_END: u8 = 5;

impl WireCodec for RecordCodec {
    fn encode(
        &mut self,
        pkt: &Packet,
        payload: Option<&Payload>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        // The low two bits are the record's own; the rest are the transport's signalling bits
        // (ECE/CWR, D-SACK, ABC echo, AccECN's ACE), as a TCP header carries its flags.
        let mut flags = pkt.signal_bits();
        if pkt.kind == PacketKind::Ack {
            flags |= FLAG_ACK;
        }
        if pkt.retransmit() {
            flags |= FLAG_RETRANSMIT;
        }
        let bytes = match payload {
            None => None,
            Some(p) => Some(p.downcast_ref::<Vec<u8>>().ok_or(
                "a packet carries a structured payload, which the emulator cannot put on the \
                 wire (give it bytes: Payload::bytes)",
            )?),
        };
        let (tag, sack) = match (pkt.info, bytes) {
            (_, Some(_)) => (TAG_BYTES, None),
            (PacketInfo::Sack(s), _) => (TAG_SACK, Some(s)),
            (PacketInfo::Media { .. }, _) => (TAG_MEDIA, None),
            (PacketInfo::Padding, _) => (TAG_PADDING, None),
            (PacketInfo::FrameEnd, _) => (TAG_FRAME_END, None),
            _ => (TAG_NONE, None),
        };
        let blocks: Vec<(u64, u64)> = sack.map(|s| s.iter(pkt.seq).collect()).unwrap_or_default();
        out.push(MAGIC);
        out.push(flags);
        out.push(tag);
        out.push(blocks.len() as u8);
        out.extend_from_slice(&pkt.seq.to_be_bytes());
        out.extend_from_slice(&(pkt.sent_at - Time::ZERO).as_nanos().to_be_bytes());
        out.extend_from_slice(&(pkt.echo - Time::ZERO).as_nanos().to_be_bytes());
        for (s, e) in blocks {
            out.extend_from_slice(&((s - pkt.seq) as u32).to_be_bytes());
            out.extend_from_slice(&((e - pkt.seq) as u32).to_be_bytes());
        }
        if let PacketInfo::Media {
            frame_id,
            index,
            count,
            key,
            xor_groups,
            encode_ns,
            rtx_wait_ns,
        } = pkt.info
        {
            if tag == TAG_MEDIA {
                out.extend_from_slice(&frame_id.to_be_bytes());
                out.extend_from_slice(&index.to_be_bytes());
                out.extend_from_slice(&count.to_be_bytes());
                out.push(key as u8);
                out.push(xor_groups);
                out.extend_from_slice(&encode_ns.to_be_bytes());
                out.extend_from_slice(&rtx_wait_ns.to_be_bytes());
            }
        }
        if let Some(b) = bytes {
            let len = u16::try_from(b.len()).map_err(|_| "payload longer than 65535 bytes")?;
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(b);
        }
        let want = pkt.size.saturating_sub(IP_UDP_OVERHEAD) as usize;
        if out.len() < want {
            out.resize(want, 0);
        }
        Ok(())
    }

    fn decode(
        &mut self,
        b: &[u8],
        flow: FlowId,
        _now: Time,
        out: &mut Vec<(Packet, Option<Payload>)>,
    ) -> Result<(), String> {
        let mut r = Reader(b);
        if r.u8()? != MAGIC {
            return Err("not an rtclab endpoint record".into());
        }
        let (flags, tag, n) = (r.u8()?, r.u8()?, r.u8()? as usize);
        let seq = r.u64()?;
        let sent_at = Time::ZERO + TimeDelta::from_nanos(r.u64()? as i64);
        let echo = Time::ZERO + TimeDelta::from_nanos(r.u64()? as i64);
        let size = b.len() as u32 + IP_UDP_OVERHEAD;
        let mut p = if flags & FLAG_ACK != 0 {
            Packet::ack(flow, seq, echo, size, sent_at)
        } else {
            let mut p = Packet::data(flow, seq, size, sent_at);
            p.echo = echo;
            p
        };
        p.set_retransmit(flags & FLAG_RETRANSMIT != 0);
        p.set_signal_bits(flags);
        let mut payload = None;
        p.info = match tag {
            TAG_NONE => PacketInfo::None,
            TAG_SACK => {
                if n > SackBlocks::MAX {
                    return Err(format!("{n} SACK blocks (at most {})", SackBlocks::MAX));
                }
                let mut blocks = [(0u64, 0u64); SackBlocks::MAX];
                for blk in blocks.iter_mut().take(n) {
                    *blk = (seq + r.u32()? as u64, seq + r.u32()? as u64);
                }
                PacketInfo::Sack(SackBlocks::new(seq, &blocks[..n]))
            }
            TAG_MEDIA => PacketInfo::Media {
                frame_id: r.u32()?,
                index: r.u16()?,
                count: r.u16()?,
                key: r.u8()? != 0,
                xor_groups: r.u8()?,
                encode_ns: r.u32()?,
                rtx_wait_ns: r.u32()?,
            },
            TAG_PADDING => PacketInfo::Padding,
            TAG_FRAME_END => PacketInfo::FrameEnd,
            TAG_BYTES => {
                let len = r.u16()? as usize;
                payload = Some(Payload::bytes(r.take(len)?.to_vec()));
                PacketInfo::Payload { id: 0 }
            }
            t => return Err(format!("unknown record tag {t}")),
        };
        out.push((p, payload));
        Ok(())
    }
}

/// Bounds-checked big-endian reads.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("record truncated".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(p: Packet, payload: Option<Payload>) -> (usize, Packet, Option<Payload>) {
        let mut c = RecordCodec;
        let mut b = Vec::new();
        c.encode(&p, payload.as_ref(), &mut b).unwrap();
        let mut out = Vec::new();
        c.decode(&b, p.flow, Time::ZERO, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        let (q, pl) = out.pop().unwrap();
        (b.len(), q, pl)
    }

    #[test]
    fn records_keep_every_header_field_and_the_wire_size() {
        let mut d = Packet::data(FlowId(3), 77, 1500, Time::from_millis(12));
        d.set_retransmit(true);
        let (len, q, _) = round_trip(d, None);
        assert_eq!(len, 1472, "padded to the packet's size less IPv4 + UDP");
        assert_eq!((q.seq, q.size, q.sent_at, q.kind), (77, 1500, d.sent_at, PacketKind::Data));
        assert!(q.retransmit());

        let mut a = Packet::ack(FlowId(3), 100, Time::from_millis(5), 40, Time::from_millis(30));
        a.info = PacketInfo::Sack(SackBlocks::new(100, &[(102, 105), (110, 111)]));
        let (len, q, _) = round_trip(a, None);
        assert_eq!(len, RECORD_HEADER + 16, "a 40-byte ACK needs more room on the wire");
        assert_eq!((q.kind, q.seq, q.echo, q.sent_at), (PacketKind::Ack, 100, a.echo, a.sent_at));
        assert_eq!(q.sack().iter(100).collect::<Vec<_>>(), [(102, 105), (110, 111)]);

        // The transport's signalling bits travel: ECE, D-SACK, AccECN's ACE count.
        let mut e = a;
        e.set_ecn_echo(true);
        e.set_dsack(true);
        e.set_ace(5);
        let q = round_trip(e, None).1;
        assert!(q.ecn_echo() && q.dsack() && q.ace() == 5, "{q:?}");
        let mut c = d;
        c.set_ecn_echo(true); // CWR on data
        assert!(round_trip(c, None).1.ecn_echo());

        let mut m = Packet::data(FlowId(0), 5, 1200, Time::from_millis(1));
        m.info = PacketInfo::Media {
            frame_id: 9,
            index: 1,
            count: 4,
            key: true,
            xor_groups: 2,
            encode_ns: 3_000_000,
            rtx_wait_ns: 41_000_000,
        };
        assert_eq!(round_trip(m, None).1.info, m.info);

        // Video over TCP: the frame's last packet and its capture time.
        let mut f = Packet::data(FlowId(0), 40, 1500, Time::from_millis(90));
        f.info = PacketInfo::FrameEnd;
        f.echo = Time::from_millis(80);
        let q = round_trip(f, None).1;
        assert_eq!((q.info, q.echo), (PacketInfo::FrameEnd, f.echo));
    }

    #[test]
    fn byte_payloads_travel_and_structured_ones_are_refused() {
        let p = Packet::data(FlowId(0), 1, 200, Time::ZERO);
        let (_, _, pl) = round_trip(p, Some(Payload::bytes(vec![1, 2, 3])));
        assert_eq!(pl.unwrap().downcast_ref::<Vec<u8>>().unwrap(), &vec![1u8, 2, 3]);
        let err =
            RecordCodec.encode(&p, Some(&Payload::structured(5u32)), &mut Vec::new()).unwrap_err();
        assert!(err.contains("structured payload"), "{err}");
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let mut b = Vec::new();
        let mut a = Packet::ack(FlowId(0), 1, Time::ZERO, 40, Time::ZERO);
        a.info = PacketInfo::Sack(SackBlocks::new(1, &[(3, 4)]));
        RecordCodec.encode(&a, None, &mut b).unwrap();
        for cut in 0..b.len() {
            let _ = RecordCodec.decode(&b[..cut], FlowId(0), Time::ZERO, &mut Vec::new());
        }
        b[0] = 0;
        assert!(RecordCodec.decode(&b, FlowId(0), Time::ZERO, &mut Vec::new()).is_err());
    }
}
