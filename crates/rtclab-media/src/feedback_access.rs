//! Reading and rewriting the transport-wide feedback a packet carries, the same way in both
//! engines — for middleboxes that act on feedback as it travels (Zhuge's feedback updater at
//! a wireless access point, Meng et al., SIGCOMM 2022; spec `zhuge-metis.md` part A).
//!
//! A feedback packet's content is its [`Payload`]: in the simulator the structured
//! [`MediaFeedback`] the receiver produced; in the emulator the packet's bytes, a whole IPv4
//! packet holding UDP and an RTCP compound packet (draft-holmer-rmcat-transport-wide-cc-
//! extensions-01 §3.1 for TWCC). [`rewrite_transport_feedback`] hands every TWCC message in
//! either form to a closure and, for bytes, writes the compound packet back with the IPv4
//! and UDP lengths and the IPv4 header checksum fixed (the UDP checksum is set to zero, which
//! IPv4 allows: RFC 768).

use crate::receiver::feedback_wire_size;
use crate::sender::MediaFeedback;
use rtclab_core::Payload;
use rtclab_wire::rtcp::{parse_compound, write_compound, RtcpPacket, TransportFeedback};
use rtclab_wire::WireError;

/// What a rewrite did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewritten {
    /// The payload holds no transport-wide feedback (other feedback, or not media at all).
    NoFeedback,
    /// `f` saw every TWCC message; the packet's size on the wire is now `size` bytes (set
    /// `Packet::size` to it).
    Done { size: u32 },
}

/// Calls `f` on every transport-wide feedback message in `payload` and keeps its changes.
pub fn rewrite_transport_feedback(
    payload: &mut Payload,
    mut f: impl FnMut(&mut TransportFeedback),
) -> Result<Rewritten, WireError> {
    if let Some(fb) = payload.downcast_mut::<MediaFeedback>() {
        return Ok(match fb {
            MediaFeedback::Twcc(t) => {
                f(t);
                Rewritten::Done { size: feedback_wire_size(fb) }
            }
            _ => Rewritten::NoFeedback,
        });
    }
    let Some(ip) = payload.downcast_mut::<Vec<u8>>() else {
        return Ok(Rewritten::NoFeedback);
    };
    let Some(rtcp_at) = rtcp_offset(ip) else {
        return Ok(Rewritten::NoFeedback);
    };
    let mut packets = parse_compound(&ip[rtcp_at..])?;
    let mut any = false;
    for p in &mut packets {
        if let RtcpPacket::TransportFeedback(t) = p {
            f(t);
            any = true;
        }
    }
    if !any {
        return Ok(Rewritten::NoFeedback);
    }
    let body = write_compound(&packets)?;
    ip.truncate(rtcp_at);
    ip.extend_from_slice(&body);
    let total = ip.len();
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let udp_len = (total - ihl) as u16;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[ihl + 4..ihl + 6].copy_from_slice(&udp_len.to_be_bytes());
    ip[ihl + 6..ihl + 8].copy_from_slice(&[0, 0]);
    ip[10..12].copy_from_slice(&[0, 0]);
    let sum = ipv4_checksum(&ip[..ihl]);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    Ok(Rewritten::Done { size: total as u32 })
}

/// The transport-wide feedback messages in `payload` (either engine's form).
pub fn transport_feedback(payload: &Payload) -> Result<Vec<TransportFeedback>, WireError> {
    if let Some(fb) = payload.downcast_ref::<MediaFeedback>() {
        return Ok(match fb {
            MediaFeedback::Twcc(t) => vec![t.clone()],
            _ => Vec::new(),
        });
    }
    let Some(ip) = payload.downcast_ref::<Vec<u8>>() else { return Ok(Vec::new()) };
    let Some(at) = rtcp_offset(ip) else { return Ok(Vec::new()) };
    Ok(parse_compound(&ip[at..])?
        .into_iter()
        .filter_map(|p| match p {
            RtcpPacket::TransportFeedback(t) => Some(t),
            _ => None,
        })
        .collect())
}

/// Where the RTCP starts in an IPv4/UDP packet carrying RTCP (not RTP), if `ip` is one.
fn rtcp_offset(ip: &[u8]) -> Option<usize> {
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 17 {
        return None;
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let at = ihl + 8;
    (ihl >= 20 && ip.len() >= at && crate::rtp_codec::is_rtcp(&ip[at..])).then_some(at)
}

/// RFC 791 header checksum (the checksum field counted as zero).
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 =
        h.chunks(2).map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtp_codec::encode_feedback;
    use rtclab_wire::rtcp::PacketStatus;

    fn twcc() -> TransportFeedback {
        let arrivals = [Some(1_000), Some(1_500), None, Some(2_250), Some(3_000)];
        TransportFeedback::from_arrivals(1, 2, 100, 7, &arrivals).unwrap()
    }

    /// The emulator's form: IPv4 + UDP + the RTCP bytes the media receiver sends.
    fn as_ip(fb: &MediaFeedback) -> Vec<u8> {
        let rtcp = encode_feedback(fb, 1, 2).unwrap();
        let total = 28 + rtcp.len();
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 77, 0, 2, 10, 77, 0, 1];
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        let sum = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ip.extend_from_slice(&5000u16.to_be_bytes());
        ip.extend_from_slice(&40000u16.to_be_bytes());
        ip.extend_from_slice(&((8 + rtcp.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0]);
        ip.extend_from_slice(&rtcp);
        ip
    }

    /// A Zhuge-like rewrite: report the lost packet as received 1 ms after the one before.
    fn fill_loss(t: &mut TransportFeedback) {
        for s in &mut t.packets {
            if *s == PacketStatus::NotReceived {
                *s = PacketStatus::Received { delta_ticks: 4 };
            }
        }
    }

    #[test]
    fn both_engines_forms_are_rewritten_alike() {
        let fb = MediaFeedback::Twcc(twcc());
        let mut sim = Payload::structured(fb.clone());
        let mut emu = Payload::bytes(as_ip(&fb));
        let a = rewrite_transport_feedback(&mut sim, fill_loss).unwrap();
        let b = rewrite_transport_feedback(&mut emu, fill_loss).unwrap();
        assert_eq!(a, b, "the same size on the wire");
        let (ts, te) = (transport_feedback(&sim).unwrap(), transport_feedback(&emu).unwrap());
        assert_eq!(ts, te);
        assert_eq!(ts[0].arrivals().iter().filter(|x| x.1.is_none()).count(), 0);
        // The rewritten IPv4 header is consistent: lengths and checksum.
        let ip = emu.downcast_ref::<Vec<u8>>().unwrap();
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, ip.len());
        assert_eq!(u16::from_be_bytes([ip[24], ip[25]]) as usize, ip.len() - 20);
        assert_eq!(ipv4_checksum(&ip[..20]), 0, "a valid header sums to zero");
        assert_eq!(Rewritten::Done { size: ip.len() as u32 }, b);
    }

    #[test]
    fn other_content_is_left_alone() {
        let mut remb = Payload::structured(MediaFeedback::Remb(1_000_000));
        assert_eq!(
            rewrite_transport_feedback(&mut remb, fill_loss).unwrap(),
            Rewritten::NoFeedback
        );
        let mut ip = as_ip(&MediaFeedback::Remb(1_000_000));
        let before = ip.clone();
        let mut p = Payload::bytes(std::mem::take(&mut ip));
        assert_eq!(rewrite_transport_feedback(&mut p, fill_loss).unwrap(), Rewritten::NoFeedback);
        assert_eq!(p.downcast_ref::<Vec<u8>>().unwrap(), &before);
        let mut tcp = Payload::bytes(vec![0x45; 60]);
        assert_eq!(rewrite_transport_feedback(&mut tcp, fill_loss).unwrap(), Rewritten::NoFeedback);
    }
}
