//! Frames into packets: payloads of at most `max_payload` bytes, split as evenly as possible
//! (as libwebrtc's RtpPacketizer does), each carrying `overhead` header bytes on the wire
//! (IPv4 20 + UDP 8 + RTP 12 + header extensions 8 = 48 by default).

use crate::encoder::Frame;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketizerConfig {
    pub max_payload: u32,
    pub overhead: u32,
}

impl Default for PacketizerConfig {
    fn default() -> Self {
        PacketizerConfig { max_payload: 1200, overhead: 48 }
    }
}

/// One media packet before it gets a transport sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaPacket {
    pub frame_id: u64,
    pub capture_time: rtclab_core::Time,
    /// Index in the frame and the frame's packet count; the last carries the RTP marker.
    pub index: u32,
    pub count: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// A retransmission (RTX) of a packet reported lost.
    pub rtx: bool,
    /// The frame is a key frame (the receiver's decoder needs no earlier frame for it).
    pub key: bool,
    /// The frame's capture → encoded time (ns, saturating).
    pub encode_ns: u32,
    /// The frame's FEC code: 0 = MDS (any `count` packets recover it), k = k XOR parity
    /// packets over the media packets interleaved mod k.
    pub xor_groups: u8,
    /// When this packet's content was first sent (set by the sender's protection on the
    /// first transmission; a retransmission keeps it).
    pub first_sent: Option<rtclab_core::Time>,
}

impl MediaPacket {
    pub fn marker(&self) -> bool {
        self.index + 1 == self.count
    }
}

pub fn packetize(frame: &Frame, cfg: PacketizerConfig) -> Vec<MediaPacket> {
    let max = cfg.max_payload.max(1);
    let count = frame.size.div_ceil(max).max(1);
    let base = frame.size / count;
    let extra = frame.size % count;
    (0..count)
        .map(|i| MediaPacket {
            frame_id: frame.id,
            capture_time: frame.capture_time,
            index: i,
            count,
            size: base + u32::from(i < extra) + cfg.overhead,
            rtx: false,
            key: frame.key,
            encode_ns: frame.encode_time.as_nanos().clamp(0, u32::MAX as i64) as u32,
            xor_groups: 0,
            first_sent: None,
        })
        .collect()
}

/// Which erasure code FEC packets carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FecCode {
    /// Reed-Solomon (MDS): any `n` of a frame's `n + k` packets recover it.
    #[default]
    ReedSolomon,
    /// XOR parity (FlexFEC-style, 1-D interleaved): parity packet j is the XOR of the media
    /// packets i ≡ j (mod k); it recovers one lost packet of its group.
    Xor,
}

/// Appends FEC packets to a frame's `n` media packets: `n × ratio` of them on average, the
/// fraction carried in `credit` from frame to frame (so one-packet frames do not round a 25 %
/// ratio up to 100 %; a frame gets a FEC packet whenever the credit reaches one). They carry
/// the frame's id and media packet count (indices from `n` on), are as large as its largest
/// media packet; with Reed-Solomon any `n` of the frame's packets recover it, with XOR each
/// parity packet recovers one loss among the media packets of its group (at most 255 groups).
pub fn add_fec(packets: &mut Vec<MediaPacket>, ratio: f64, credit: &mut f64, code: FecCode) -> u32 {
    let Some(first) = packets.first().copied() else { return 0 };
    if ratio.is_nan() || ratio <= 0.0 {
        *credit = 0.0;
        return 0;
    }
    let n = first.count;
    *credit += n as f64 * ratio;
    let mut k = credit.floor() as u32;
    *credit -= k as f64;
    if code == FecCode::Xor {
        k = k.min(n).min(u8::MAX as u32); // a group holds at least one media packet
        if k > 0 {
            for p in packets.iter_mut() {
                p.xor_groups = k as u8;
            }
        }
    }
    let first = packets[0];
    let size = packets.iter().map(|p| p.size).max().unwrap_or(first.size);
    for i in 0..k {
        packets.push(MediaPacket { index: n + i, size, ..first });
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::{Time, TimeDelta};

    #[test]
    fn even_split_and_overhead() {
        let f = Frame {
            id: 7,
            capture_time: Time::ZERO,
            size: 2500,
            key: false,
            encode_time: TimeDelta::ZERO,
        };
        let p = packetize(&f, PacketizerConfig::default());
        assert_eq!(p.len(), 3);
        let payload: u32 = p.iter().map(|x| x.size - 48).sum();
        assert_eq!(payload, 2500);
        assert!(p.iter().all(|x| x.size - 48 <= 1200 && x.size - 48 >= 833));
        assert!(p[2].marker() && !p[0].marker());
    }

    #[test]
    fn fec_packets_follow_the_frame() {
        let f = Frame {
            id: 3,
            capture_time: Time::ZERO,
            size: 2500,
            key: false,
            encode_time: TimeDelta::ZERO,
        };
        let mut p = packetize(&f, PacketizerConfig::default());
        let mut credit = 0.5;
        assert_eq!(add_fec(&mut p, 0.3, &mut credit, FecCode::ReedSolomon), 1); // 0.5 + 3 × 0.3 = 1.4
        assert!((credit - 0.4).abs() < 1e-9);
        assert_eq!(p.len(), 4);
        assert_eq!((p[3].index, p[3].count, p[3].frame_id), (3, 3, 3));
        assert_eq!(p[3].size, p[0].size);
        assert!(!p[3].marker() && p[2].marker());
        assert_eq!(add_fec(&mut p, 0.0, &mut credit, FecCode::ReedSolomon), 0);
        assert_eq!(credit, 0.0);
        // XOR: every packet of the frame names the group count.
        let mut p = packetize(&f, PacketizerConfig::default());
        assert_eq!(add_fec(&mut p, 0.5, &mut credit, FecCode::Xor), 1);
        assert!(p.iter().all(|q| q.xor_groups == 1));
    }

    #[test]
    fn fec_ratio_is_exact_on_average_for_small_frames() {
        let f = Frame {
            id: 1,
            capture_time: Time::ZERO,
            size: 1000,
            key: false,
            encode_time: TimeDelta::ZERO,
        };
        let mut credit = 0.0;
        let fec: u32 = (0..100)
            .map(|_| {
                add_fec(
                    &mut packetize(&f, PacketizerConfig::default()),
                    0.25,
                    &mut credit,
                    FecCode::ReedSolomon,
                )
            })
            .sum();
        assert_eq!(fec, 25, "one-packet frames at 25 %: one FEC packet every fourth frame");
    }
}
