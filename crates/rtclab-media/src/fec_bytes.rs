//! Forward error correction on real bytes, for an engine that carries them (the emulator):
//! the parity packets a media sender adds (`packetizer::add_fec`) carry actual Reed-Solomon or
//! XOR parity of the frame's media payloads, and the receiving end rebuilds lost media
//! payloads from the packets that arrived and checks them.
//!
//! The simulator decides recovery by counting (any n of a frame's n + k packets for an MDS
//! code; one loss per XOR group); this module does the arithmetic the count stands for, so an
//! emulated run shows it holds on the bytes (`fec_rebuilt_packets`, `fec_rebuilt_verified`,
//! `fec_rebuild_failures` in the flow's metrics). Reed-Solomon over GF(2^8) is the
//! `reed-solomon-erasure` crate's (Backblaze's systematic Vandermonde construction, as RFC
//! 5510 describes for FEC); XOR is FlexFEC's 1-D interleaved parity (RFC 8627 §1.1.2): parity
//! j covers media packets i ≡ j (mod groups).
//!
//! A media packet's payload region (what follows the RTP payload descriptor, where a codec's
//! bytes would be) holds an 8-byte header — frame id (u32), index (u16), region length (u16)
//! — and deterministic stand-in codec bytes for (SSRC, frame, index). Shards are the regions,
//! zero-padded to the frame's parity length (parity packets are as large as the frame's largest
//! media packet). Parity row j of this construction does not depend on how many parity packets
//! the frame has, so each parity packet is computed as it is sent.

use reed_solomon_erasure::galois_8::ReedSolomon;
use std::collections::BTreeMap;

/// Frame id (u32), index (u16), region length (u16).
pub const REGION_HEADER: usize = 8;
/// Frames remembered at each end (older ones are forgotten).
const FRAMES_KEPT: u32 = 256;
/// GF(2^8) codes hold at most 256 shards.
const MAX_SHARDS: usize = 256;

/// The payload region of media packet `index` of `frame`, `len` bytes (all zero when too
/// short for the header).
pub fn media_region(ssrc: u32, frame: u32, index: u16, len: usize) -> Vec<u8> {
    if len < REGION_HEADER {
        return vec![0; len];
    }
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&frame.to_be_bytes());
    v.extend_from_slice(&index.to_be_bytes());
    v.extend_from_slice(&(len.min(u16::MAX as usize) as u16).to_be_bytes());
    // splitmix64 over (ssrc, frame, index): stand-in codec bytes, different per packet.
    let mut x = (ssrc as u64) << 32 ^ (frame as u64) << 16 ^ index as u64;
    while v.len() < len {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let take = (len - v.len()).min(8);
        v.extend_from_slice(&z.to_be_bytes()[..take]);
    }
    v
}

fn padded(region: &[u8], len: usize) -> Vec<u8> {
    let mut s = region[..region.len().min(len)].to_vec();
    s.resize(len, 0);
    s
}

fn xor_into(acc: &mut [u8], s: &[u8]) {
    for (a, b) in acc.iter_mut().zip(s) {
        *a ^= b;
    }
}

/// Forgets frames more than `FRAMES_KEPT` ids behind `newest`.
fn prune<T>(frames: &mut BTreeMap<u32, T>, newest: u32) {
    let keep_from = newest.saturating_sub(FRAMES_KEPT);
    while frames.first_key_value().is_some_and(|(f, _)| *f < keep_from) {
        frames.pop_first();
    }
}

/// The sending end: media regions as they are sent, parity computed from them.
#[derive(Debug, Default)]
pub struct FecEncoder {
    frames: BTreeMap<u32, Vec<Option<Vec<u8>>>>,
    /// Reed-Solomon parity rows computed per frame, with their length: a frame's parity
    /// packets leave one by one, and each row is computed once (rows are added in doubling
    /// batches, which the row-independence above allows).
    parity_rows: BTreeMap<u32, (usize, Vec<Vec<u8>>)>,
}

impl FecEncoder {
    /// The region of a media packet (the same bytes every time it is sent), remembered for
    /// its frame's parity.
    pub fn media(&mut self, ssrc: u32, frame: u32, index: u16, count: u16, len: usize) -> Vec<u8> {
        let r = media_region(ssrc, frame, index, len);
        let shards = self.frames.entry(frame).or_insert_with(|| vec![None; count as usize]);
        if let Some(s) = shards.get_mut(index as usize) {
            *s = Some(r.clone());
        }
        prune(&mut self.frames, frame);
        prune(&mut self.parity_rows, frame);
        r
    }

    /// The region of parity packet `index` (≥ `count`) of `frame`, `len` bytes; `groups` > 0:
    /// XOR over that many interleaved groups, else Reed-Solomon. None (the caller sends
    /// zeros) when one of the frame's media packets was not sent through this encoder or the
    /// frame is beyond what GF(2^8) codes.
    pub fn parity(
        &mut self,
        frame: u32,
        index: u16,
        count: u16,
        groups: u8,
        len: usize,
    ) -> Option<Vec<u8>> {
        let media = self.frames.get(&frame)?;
        let j = index.checked_sub(count)? as usize;
        let cached = self.parity_rows.get(&frame).filter(|(l, _)| *l == len && groups == 0);
        if let Some(row) = cached.and_then(|(_, rows)| rows.get(j)) {
            return Some(row.clone());
        }
        let have = cached.map_or(0, |(_, rows)| rows.len());
        let shards: Vec<Vec<u8>> =
            media.iter().map(|s| s.as_deref().map(|r| padded(r, len))).collect::<Option<_>>()?;
        if groups > 0 {
            let g = groups as usize;
            let mut acc = vec![0; len];
            for s in shards.iter().skip(j % g).step_by(g) {
                xor_into(&mut acc, s);
            }
            return Some(acc);
        }
        let n = shards.len();
        if n == 0 || n + j + 1 > MAX_SHARDS {
            return None;
        }
        let k = (j + 1).max(2 * have).max(4).min(MAX_SHARDS - n);
        let rs = ReedSolomon::new(n, k).ok()?;
        let mut all = shards;
        all.extend((0..k).map(|_| vec![0; len]));
        rs.encode(&mut all).ok()?;
        let rows = all.split_off(n);
        let row = rows[j].clone();
        self.parity_rows.insert(frame, (len, rows));
        Some(row)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FecByteStats {
    /// Media payloads rebuilt from parity, and how many of them were the bytes sent.
    pub rebuilt: u64,
    pub verified: u64,
    /// Rebuilds the arithmetic refused or whose bytes were wrong.
    pub failures: u64,
}

#[derive(Debug)]
struct RxFrame {
    count: u16,
    groups: u8,
    /// Index → region, for packets that arrived or were rebuilt.
    shards: BTreeMap<u16, Vec<u8>>,
}

/// The receiving end: regions as they arrive; rebuilds lost media regions when the code can.
#[derive(Debug, Default)]
pub struct FecDecoder {
    frames: BTreeMap<u32, RxFrame>,
    pub stats: FecByteStats,
}

impl FecDecoder {
    /// A packet of `frame` arrived with payload region `region` (sent with SSRC `ssrc`).
    pub fn on_packet(
        &mut self,
        ssrc: u32,
        frame: u32,
        index: u16,
        count: u16,
        groups: u8,
        region: &[u8],
    ) {
        if count == 0 {
            return;
        }
        let f = self.frames.entry(frame).or_insert_with(|| RxFrame {
            count,
            groups,
            shards: BTreeMap::new(),
        });
        f.shards.entry(index).or_insert_with(|| region.to_vec());
        prune(&mut self.frames, frame);
        let Some(f) = self.frames.get_mut(&frame) else { return };
        let rebuilt = if f.groups > 0 { rebuild_xor(f) } else { rebuild_rs(f) };
        for (i, r) in rebuilt {
            self.stats.rebuilt += 1;
            match r {
                Some(bytes) if verify(ssrc, frame, i, &bytes) => self.stats.verified += 1,
                _ => self.stats.failures += 1,
            }
        }
    }

    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("fec_rebuilt_packets", self.stats.rebuilt as f64),
            ("fec_rebuilt_verified", self.stats.verified as f64),
            ("fec_rebuild_failures", self.stats.failures as f64),
        ]
    }
}

fn missing_media(f: &RxFrame) -> Vec<u16> {
    (0..f.count).filter(|i| !f.shards.contains_key(i)).collect()
}

/// Reed-Solomon: once `count` of the frame's packets are in and media is missing, rebuilds
/// every missing media region.
fn rebuild_rs(f: &mut RxFrame) -> Vec<(u16, Option<Vec<u8>>)> {
    let n = f.count as usize;
    let missing = missing_media(f);
    if missing.is_empty() || f.shards.len() < n {
        return Vec::new();
    }
    let Some((&last, _)) = f.shards.last_key_value() else { return Vec::new() };
    let len = f.shards.range(f.count..).map(|(_, s)| s.len()).max().unwrap_or(0);
    let total = last as usize + 1;
    let result = (|| {
        if total > MAX_SHARDS || total <= n {
            return None;
        }
        let rs = ReedSolomon::new(n, total - n).ok()?;
        let mut shards: Vec<Option<Vec<u8>>> =
            (0..total as u16).map(|i| f.shards.get(&i).map(|s| padded(s, len))).collect();
        rs.reconstruct_data(&mut shards).ok()?;
        Some(shards)
    })();
    missing
        .into_iter()
        .map(|i| {
            let r = result.as_ref().and_then(|s| s[i as usize].clone());
            // Counted once either way: the frame is complete from here on.
            f.shards.insert(i, r.clone().unwrap_or_default());
            (i, r)
        })
        .collect()
}

/// XOR: a group missing exactly one media packet whose parity arrived gets it back.
fn rebuild_xor(f: &mut RxFrame) -> Vec<(u16, Option<Vec<u8>>)> {
    let g = f.groups as u16;
    let mut out = Vec::new();
    for j in 0..g.min(f.count) {
        let members: Vec<u16> = (j..f.count).step_by(g as usize).collect();
        let lost: Vec<u16> =
            members.iter().copied().filter(|i| !f.shards.contains_key(i)).collect();
        let Some(parity) = f.shards.get(&(f.count + j)) else { continue };
        if lost.len() != 1 {
            continue;
        }
        let len = parity.len();
        let mut acc = parity.clone();
        for i in &members {
            if let Some(s) = f.shards.get(i) {
                xor_into(&mut acc, &padded(s, len));
            }
        }
        f.shards.insert(lost[0], acc.clone());
        out.push((lost[0], Some(acc)));
    }
    out
}

/// Whether `bytes` (a rebuilt, zero-padded region) is what the sender sent for the packet.
fn verify(ssrc: u32, frame: u32, index: u16, bytes: &[u8]) -> bool {
    if bytes.len() < REGION_HEADER {
        return false;
    }
    let len = u16::from_be_bytes([bytes[6], bytes[7]]) as usize;
    len >= REGION_HEADER
        && len <= bytes.len()
        && bytes[..len] == media_region(ssrc, frame, index, len)[..]
        && bytes[len..].iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame of `n` media regions of slightly different lengths (as the packetizer splits)
    /// and `k` parity regions, through the encoder.
    fn frame(enc: &mut FecEncoder, n: u16, k: u16, groups: u8) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> =
            (0..n).map(|i| enc.media(7, 3, i, n, 1000 + (i as usize % 2))).collect();
        let len = v.iter().map(Vec::len).max().unwrap();
        for j in 0..k {
            v.push(enc.parity(3, n + j, n, groups, len).unwrap());
        }
        v
    }

    #[test]
    fn any_n_of_n_plus_k_rebuild_the_lost_media_bytes() {
        let (n, k) = (10u16, 4u16);
        let mut enc = FecEncoder::default();
        let pkts = frame(&mut enc, n, k, 0);
        // Lose media 1, 4, 8 and parity 11: 10 of 14 arrive.
        let mut dec = FecDecoder::default();
        for (i, p) in pkts.iter().enumerate() {
            if ![1, 4, 8, 11].contains(&i) {
                dec.on_packet(7, 3, i as u16, n, 0, p);
            }
        }
        assert_eq!(dec.stats, FecByteStats { rebuilt: 3, verified: 3, failures: 0 });
        // One more loss (9 of 14): nothing can be rebuilt.
        let mut dec = FecDecoder::default();
        for (i, p) in pkts.iter().enumerate() {
            if ![1, 4, 8, 11, 12].contains(&i) {
                dec.on_packet(7, 3, i as u16, n, 0, p);
            }
        }
        assert_eq!(dec.stats.rebuilt, 0);
    }

    #[test]
    fn parity_rows_do_not_depend_on_how_many_there_are() {
        // Parity 0 computed for a (10, 1) code equals parity 0 of a (10, 4) code.
        let mut enc = FecEncoder::default();
        let pkts = frame(&mut enc, 10, 4, 0);
        let rs = ReedSolomon::new(10, 4).unwrap();
        let mut all: Vec<Vec<u8>> = pkts[..10].iter().map(|s| padded(s, 1001)).collect();
        all.extend((0..4).map(|_| vec![0; 1001]));
        rs.encode(&mut all).unwrap();
        assert_eq!(all[10..], pkts[10..]);
    }

    #[test]
    fn xor_groups_rebuild_one_loss_each_and_corruption_is_caught() {
        let (n, k) = (6u16, 2u16);
        let mut enc = FecEncoder::default();
        let pkts = frame(&mut enc, n, k, 2);
        // Groups {0, 2, 4} + P6 and {1, 3, 5} + P7: lose 2 (one in group 0) and 3 and 5
        // (two in group 1): only 2 comes back.
        let mut dec = FecDecoder::default();
        for (i, p) in pkts.iter().enumerate() {
            if ![2, 3, 5].contains(&i) {
                dec.on_packet(7, 3, i as u16, n, 2, p);
            }
        }
        assert_eq!(dec.stats, FecByteStats { rebuilt: 1, verified: 1, failures: 0 });
        // A parity byte flipped on the way: the rebuilt bytes are not what was sent.
        let mut dec = FecDecoder::default();
        for (i, p) in pkts.iter().enumerate() {
            let mut p = p.clone();
            if i == 6 {
                p[100] ^= 0x40;
            }
            if i != 2 {
                dec.on_packet(7, 3, i as u16, n, 2, &p);
            }
        }
        assert_eq!(dec.stats, FecByteStats { rebuilt: 1, verified: 0, failures: 1 });
    }
}
