//! Packet capture of the emulated bottleneck: every packet the emulator delivers, in both
//! directions, as a pcap file (libpcap 2.4 with nanosecond timestamps, magic 0xa1b23c4d;
//! link type 101 = raw IP, as the TUN devices carry it). Timestamps are the packets' ideal
//! release times on the emulation's clock (0 = start of the run). Each direction's forwarder
//! writes its own part; `merge` interleaves the parts by time into the final file.

use rtclab_core::Time;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;
const HEADER: usize = 24;

fn global_header(snaplen: u32) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// One direction's capture file.
pub struct PcapSink {
    w: BufWriter<File>,
    snaplen: u32,
}

impl PcapSink {
    /// `snaplen` 0 = whole packets.
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let snaplen = if snaplen == 0 { 65_535 } else { snaplen };
        let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
        w.write_all(&global_header(snaplen))?;
        Ok(PcapSink { w, snaplen })
    }

    pub fn record(&mut self, t: Time, pkt: &[u8]) -> io::Result<()> {
        let ns = (t - Time::ZERO).as_nanos().max(0) as u64;
        let caplen = (pkt.len() as u32).min(self.snaplen);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&(pkt.len() as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&pkt[..caplen as usize])
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

struct Part {
    r: BufReader<File>,
    next: Option<(u64, Vec<u8>)>,
}

impl Part {
    fn advance(&mut self) -> io::Result<()> {
        let mut h = [0u8; 16];
        match self.r.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                self.next = None;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        let sec = u32::from_le_bytes(h[0..4].try_into().expect("4")) as u64;
        let nsec = u32::from_le_bytes(h[4..8].try_into().expect("4")) as u64;
        let caplen = u32::from_le_bytes(h[8..12].try_into().expect("4")) as usize;
        let mut rec = h.to_vec();
        rec.resize(16 + caplen, 0);
        self.r.read_exact(&mut rec[16..])?;
        self.next = Some((sec * 1_000_000_000 + nsec, rec));
        Ok(())
    }
}

/// Interleaves the parts' records by timestamp into `out` (parts are removed afterwards).
pub fn merge(parts: &[PathBuf], out: &Path, snaplen: u32) -> io::Result<()> {
    let snaplen = if snaplen == 0 { 65_535 } else { snaplen };
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out)?);
    w.write_all(&global_header(snaplen))?;
    let mut ps = Vec::new();
    for p in parts {
        let mut r = BufReader::with_capacity(1 << 20, File::open(p)?);
        let mut h = [0u8; HEADER];
        r.read_exact(&mut h)?;
        let mut part = Part { r, next: None };
        part.advance()?;
        ps.push(part);
    }
    while let Some(i) = (0..ps.len())
        .filter(|i| ps[*i].next.is_some())
        .min_by_key(|i| ps[*i].next.as_ref().map(|x| x.0))
    {
        let (_, rec) = ps[i].next.take().expect("filtered");
        w.write_all(&rec)?;
        ps[i].advance()?;
    }
    w.flush()?;
    for p in parts {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_merge_in_time_order() {
        let dir = std::env::temp_dir().join(format!("rtclab-capture-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, out) = (dir.join("a"), dir.join("b"), dir.join("out.pcap"));
        let mut sa = PcapSink::create(&a, 0).unwrap();
        let mut sb = PcapSink::create(&b, 0).unwrap();
        sa.record(Time::from_millis(1), &[0x45; 40]).unwrap();
        sb.record(Time::from_millis(2), &[0x45; 60]).unwrap();
        sa.record(Time::from_millis(3), &[0x45; 20]).unwrap();
        sa.finish().unwrap();
        sb.finish().unwrap();
        merge(&[a.clone(), b.clone()], &out, 0).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(u32::from_le_bytes(bytes[0..4].try_into().unwrap()), MAGIC_NS);
        // Records: 16-byte headers + 40, 60, 20 bytes, in that order.
        assert_eq!(bytes.len(), HEADER + 16 * 3 + 120);
        let len_at = |off: usize| u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap());
        assert_eq!(len_at(HEADER), 40);
        assert_eq!(len_at(HEADER + 56), 60);
        assert_eq!(len_at(HEADER + 132), 20);
        assert!(!a.exists() && !b.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
