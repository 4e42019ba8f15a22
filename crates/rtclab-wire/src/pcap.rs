//! A minimal pcap (libpcap 2.4, microsecond) writer: Ethernet + IPv4 + UDP framing around
//! RTP/RTCP payloads, so captures open in Wireshark/tshark. Pure bytes: the caller writes the
//! file.

use crate::buf::{put_u16, put_u32};

const LINKTYPE_ETHERNET: u32 = 1;

/// Accumulates a pcap file in memory.
#[derive(Clone, Debug)]
pub struct PcapWriter {
    bytes: Vec<u8>,
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapWriter {
    pub fn new() -> Self {
        let mut b = Vec::new();
        b.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes()); // magic, microseconds
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        b.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        b.extend_from_slice(&65535u32.to_le_bytes()); // snaplen
        b.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        PcapWriter { bytes: b }
    }

    /// Adds one UDP datagram sent at `time_us` from `src` to `dst` (IPv4 address, port).
    pub fn add_udp(
        &mut self,
        time_us: u64,
        src: ([u8; 4], u16),
        dst: ([u8; 4], u16),
        payload: &[u8],
    ) {
        let mut frame = Vec::with_capacity(42 + payload.len());
        frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02]); // dst MAC (locally administered)
        frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01]); // src MAC
        put_u16(&mut frame, 0x0800);
        let ip_len = (20 + 8 + payload.len()) as u16;
        let mut ip = vec![0x45, 0];
        put_u16(&mut ip, ip_len);
        put_u32(&mut ip, 0); // id, flags, fragment offset
        ip.extend_from_slice(&[64, 17, 0, 0]); // TTL, UDP, checksum placeholder
        ip.extend_from_slice(&src.0);
        ip.extend_from_slice(&dst.0);
        let sum = checksum(&ip).to_be_bytes();
        if let Some(field) = ip.get_mut(10..12) {
            field.copy_from_slice(&sum);
        }
        frame.extend_from_slice(&ip);
        put_u16(&mut frame, src.1);
        put_u16(&mut frame, dst.1);
        put_u16(&mut frame, 8 + payload.len() as u16);
        put_u16(&mut frame, 0); // UDP checksum optional over IPv4
        frame.extend_from_slice(payload);
        self.bytes.extend_from_slice(&((time_us / 1_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&((time_us % 1_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&frame);
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// RFC 1071 Internet checksum.
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = match pair {
            [a, b] => u16::from_be_bytes([*a, *b]),
            [a] => u16::from_be_bytes([*a, 0]),
            _ => 0,
        };
        sum += word as u32;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_checksum_verifies_to_zero() {
        let mut w = PcapWriter::new();
        w.add_udp(1_500_000, ([10, 0, 0, 1], 5004), ([10, 0, 0, 2], 5004), &[1, 2, 3]);
        let b = w.into_bytes();
        let ip = &b[24 + 16 + 14..24 + 16 + 14 + 20];
        assert_eq!(checksum(ip), 0);
    }
}
