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
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::Time;

    #[test]
    fn even_split_and_overhead() {
        let f = Frame { id: 7, capture_time: Time::ZERO, size: 2500, key: false };
        let p = packetize(&f, PacketizerConfig::default());
        assert_eq!(p.len(), 3);
        let payload: u32 = p.iter().map(|x| x.size - 48).sum();
        assert_eq!(payload, 2500);
        assert!(p.iter().all(|x| x.size - 48 <= 1200 && x.size - 48 >= 833));
        assert!(p[2].marker() && !p[0].marker());
    }
}
