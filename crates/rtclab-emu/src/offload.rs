//! TUN offloads, byte by byte: the `virtio_net_hdr` in front of every packet on a TUN device
//! opened with `IFF_VNET_HDR`, the segmentation of a TCP/IPv4 super-packet (what the sending
//! host's TCP hands a device that does TSO: one IP/TCP header and up to 64 KiB of payload)
//! into the MTU packets the emulated network queues and times one by one, and the
//! coalescing of consecutive MTU packets of one TCP connection back into one super-packet on
//! the way out (what GRO does on a receiving host). No system calls here (`sys.rs` has them).
//!
//! Lineage: the virtio specification's `struct virtio_net_hdr` (OASIS virtio 1.1 §5.1.6,
//! Linux `include/uapi/linux/virtio_net.h`); Linux's `tcp_gso_segment`
//! (net/ipv4/tcp_offload.c: per segment the sequence number advances by the segment size,
//! FIN and PSH stay on the last segment only, CWR on the first only, the IPv4 id increments)
//! and `tcp_gro_receive` (which packets may merge: same header but for length, id,
//! checksums, sequence number; every merged segment but the last full-sized); wireguard-go's
//! `tun/offload_linux.go` (Donenfeld et al., 2022), which passed 10 Gbit/s on Linux by reading
//! and writing TUN devices this way. Written from those descriptions, not copied.
//!
//! Checksums are left to the kernel where it allows: a TCP or UDP packet is written with
//! `VIRTIO_NET_HDR_F_NEEDS_CSUM` and the pseudo-header's sum in its checksum field (Linux's
//! `CHECKSUM_PARTIAL` convention), so neither segmenting nor coalescing touches payload bytes
//! beyond copying them; the IPv4 header checksum is always whole.

/// `sizeof(struct virtio_net_hdr)`: the TUN default (`TUNSETVNETHDRSZ` not used).
pub const VNET_HDR_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the L4 checksum is to be completed from `csum_start`.
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_ECN`, or-ed into `gso_type`: the first segment carries CWR.
pub const GSO_ECN: u8 = 0x80;
/// The largest IPv4 packet (its total-length field).
pub const MAX_IP: usize = 65_535;
/// The most MTU packets one coalesced write may carry.
pub const MAX_RUN: usize = 64;

const TCP: u8 = 6;
const UDP: u8 = 17;
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;
const URG: u8 = 0x20;
const CWR: u8 = 0x80;

/// Whether the emulator reads and writes its TUN devices with offloads: on unless the
/// environment says `RTCLAB_EMU_OFFLOAD=0` (or `off`, `false`, `no`), the switch for
/// measuring what the offloads bring (`rtclab bench emu`).
pub fn enabled_by_env() -> bool {
    !matches!(
        std::env::var("RTCLAB_EMU_OFFLOAD").map(|v| v.trim().to_ascii_lowercase()).as_deref(),
        Ok("0" | "off" | "false" | "no")
    )
}

/// `struct virtio_net_hdr` (legacy layout, native byte order: TUN's default without
/// `TUNSETVNETLE`/`TUNSETVNETBE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h = b.get(..VNET_HDR_LEN)?;
        let u = |i: usize| u16::from_ne_bytes([h[i], h[i + 1]]);
        Some(VnetHdr {
            flags: h[0],
            gso_type: h[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        })
    }

    pub fn to_bytes(self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        for (i, v) in
            [self.hdr_len, self.gso_size, self.csum_start, self.csum_offset].into_iter().enumerate()
        {
            b[2 + 2 * i..4 + 2 * i].copy_from_slice(&v.to_ne_bytes());
        }
        b
    }
}

/// The 32-bit one's-complement running sum of `data` (big-endian 16-bit words, an odd last
/// byte padded with zero) added to `sum`.
pub fn ones_sum(data: &[u8], mut sum: u64) -> u64 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = words.remainder() {
        sum += (*last as u64) << 8;
    }
    sum
}

/// `sum` folded to 16 bits (not inverted).
pub fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

fn ihl(ip: &[u8]) -> usize {
    (ip[0] & 0x0f) as usize * 4
}

/// Rewrites an IPv4 header's checksum.
pub fn set_ipv4_checksum(ip: &mut [u8]) {
    let h = ihl(ip);
    ip[10..12].copy_from_slice(&[0, 0]);
    let c = !fold(ones_sum(&ip[..h], 0));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The pseudo-header's sum (source, destination, protocol, L4 length), folded, not inverted:
/// what a `CHECKSUM_PARTIAL` packet holds in its checksum field.
fn pseudo_sum(ip: &[u8], proto: u8, l4_len: usize) -> u16 {
    fold(ones_sum(&ip[12..20], proto as u64 + l4_len as u64))
}

/// Where the L4 checksum field sits, from the L4 header: TCP 16, UDP 6.
fn csum_offset(proto: u8) -> Option<usize> {
    match proto {
        TCP => Some(16),
        UDP => Some(6),
        _ => None,
    }
}

/// An IPv4 packet that is whole enough to touch: version 4, header inside, total length
/// equal to its bytes.
fn sane_ipv4(ip: &[u8]) -> bool {
    ip.len() >= 20
        && ip[0] >> 4 == 4
        && ihl(ip) >= 20
        && ip.len() >= ihl(ip)
        && u16::from_be_bytes([ip[2], ip[3]]) as usize == ip.len()
}

/// Readies a TCP or UDP IPv4 packet for a write with its checksum left to the kernel: the
/// pseudo-header sum goes into the checksum field and the returned header says where to
/// complete it. Other packets (and malformed ones) go as they are, with an empty header.
pub fn partial_checksum(ip: &mut [u8]) -> VnetHdr {
    if !sane_ipv4(ip) {
        return VnetHdr::default();
    }
    let (h, proto) = (ihl(ip), ip[9]);
    let Some(off) = csum_offset(proto) else { return VnetHdr::default() };
    if ip.len() < h + off + 2 {
        return VnetHdr::default();
    }
    let s = pseudo_sum(ip, proto, ip.len() - h);
    ip[h + off..h + off + 2].copy_from_slice(&s.to_be_bytes());
    VnetHdr {
        flags: F_NEEDS_CSUM,
        csum_start: h as u16,
        csum_offset: off as u16,
        ..VnetHdr::default()
    }
}

/// Completes a TCP or UDP IPv4 packet's checksum in software (for captures, whose readers
/// expect whole checksums, and for tests). Other packets are left as they are.
pub fn complete_checksum(ip: &mut [u8]) {
    if !sane_ipv4(ip) {
        return;
    }
    let (h, proto) = (ihl(ip), ip[9]);
    let Some(off) = csum_offset(proto) else { return };
    if ip.len() < h + off + 2 {
        return;
    }
    ip[h + off..h + off + 2].copy_from_slice(&[0, 0]);
    let sum = ones_sum(&ip[h..], ones_sum(&ip[12..20], proto as u64 + (ip.len() - h) as u64));
    let mut c = !fold(sum);
    if proto == UDP && c == 0 {
        c = 0xffff; // 0 means "no checksum" in UDP over IPv4
    }
    ip[h + off..h + off + 2].copy_from_slice(&c.to_be_bytes());
}

/// Why a packet read from a TUN device cannot be taken apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentError {
    /// A GSO type other than TCP/IPv4 (the devices offer only TSO4).
    UnsupportedGso(u8),
    /// Not a well-formed IPv4/TCP packet with its payload.
    Malformed,
}

/// A TCP/IPv4 super-packet read from a TUN device, kept whole where it was read: one
/// header, a payload cut into `gso_size`-byte segments. The network queues and times its
/// segments one by one (`held.rs`); they leave as ranges of it, so their payload bytes are
/// never copied inside the emulator.
#[derive(Debug)]
pub struct SuperPacket {
    /// The read buffer; the IPv4 packet is `bytes[ip]` (after the vnet header).
    bytes: Vec<u8>,
    ip: std::ops::Range<usize>,
    /// IP + TCP header length.
    hlen: usize,
    mss: usize,
}

impl SuperPacket {
    /// `bytes[ip]` is the IPv4 packet that followed the vnet header `hdr`. On error the
    /// buffer comes back with the reason.
    pub fn parse(
        bytes: Vec<u8>,
        ip: std::ops::Range<usize>,
        hdr: VnetHdr,
    ) -> Result<Self, (SegmentError, Vec<u8>)> {
        if hdr.gso_type & !GSO_ECN != GSO_TCPV4 {
            return Err((SegmentError::UnsupportedGso(hdr.gso_type), bytes));
        }
        let range = ip;
        let ip = bytes.get(range.clone()).unwrap_or_default();
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != TCP || ihl(ip) < 20 {
            return Err((SegmentError::Malformed, bytes));
        }
        let h = ihl(ip);
        let thl = ip.get(h + 12).map_or(0, |b| (b >> 4) as usize * 4);
        let hlen = h + thl;
        let mss = hdr.gso_size as usize;
        if thl < 20 || ip.len() <= hlen || mss == 0 {
            return Err((SegmentError::Malformed, bytes));
        }
        Ok(SuperPacket { bytes, ip: range, hlen, mss })
    }

    /// The IPv4 packet as read (its header says the whole length).
    pub fn ip(&self) -> &[u8] {
        &self.bytes[self.ip.clone()]
    }

    /// The read buffer back, for the next read.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// How many MTU packets it makes.
    pub fn count(&self) -> usize {
        (self.ip().len() - self.hlen).div_ceil(self.mss)
    }

    /// Segment `k`'s length as an IPv4 packet.
    pub fn segment_len(&self, k: usize) -> usize {
        let plen = self.ip().len() - self.hlen;
        self.hlen + (plen - k * self.mss).min(self.mss)
    }

    /// The payload of segments `k0..k1`, contiguous.
    pub fn payload(&self, k0: usize, k1: usize) -> &[u8] {
        let ip = self.ip();
        let from = self.hlen + k0 * self.mss;
        &ip[from..(self.hlen + k1 * self.mss).min(ip.len())]
    }

    /// The IP+TCP header of segments `k0..k1` sent as one packet, into `hdr` (cleared first):
    /// total length, id (+k0), sequence number (+k0·gso_size), FIN/PSH only if the range ends
    /// the super-packet, CWR only if it starts it (Linux's `tcp_gso_segment`), a fresh IPv4
    /// checksum and the pseudo-header sum in the TCP checksum field; and the vnet header for
    /// the write: a TCP/IPv4 GSO packet for two or more segments, a plain one for one, the
    /// TCP checksum left to the kernel either way.
    pub fn range_header(&self, k0: usize, k1: usize, hdr: &mut Vec<u8>) -> VnetHdr {
        let (ip, hlen) = (self.ip(), self.hlen);
        let h = ihl(ip);
        let len = hlen + self.payload(k0, k1).len();
        hdr.clear();
        hdr.extend_from_slice(&ip[..hlen]);
        hdr[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(k0 as u16);
        hdr[4..6].copy_from_slice(&id.to_be_bytes());
        set_ipv4_checksum(hdr);
        let seq = u32::from_be_bytes([ip[h + 4], ip[h + 5], ip[h + 6], ip[h + 7]])
            .wrapping_add((k0 * self.mss) as u32);
        hdr[h + 4..h + 8].copy_from_slice(&seq.to_be_bytes());
        if k1 < self.count() {
            hdr[h + 13] &= !(FIN | PSH);
        }
        if k0 > 0 {
            hdr[h + 13] &= !CWR;
        }
        tcp_write_header(hdr, len, k1 - k0 > 1, self.mss)
    }

    /// Segment `k` as a whole IPv4 packet in `out` (cleared first), as `range_header` makes
    /// it: for a segment the network changes (a CE mark) and for captures.
    pub fn write_segment(&self, k: usize, out: &mut Vec<u8>) {
        self.range_header(k, k + 1, out);
        out.extend_from_slice(self.payload(k, k + 1));
    }
}

/// A TCP/IPv4 packet's layout, when it is one that may start or join a coalesced write:
/// (IP+TCP header length, payload length). SYN, RST and URG packets, CWR on a packet that
/// is not first, and empty payloads are written alone.
fn mergeable(ip: &[u8]) -> Option<(usize, usize)> {
    if !sane_ipv4(ip) || ip[9] != TCP || ip[6] & 0x3f != 0 || ip[7] != 0 {
        return None; // not TCP/IPv4, or a fragment
    }
    let h = ihl(ip);
    let thl = (*ip.get(h + 12)? >> 4) as usize * 4;
    let hlen = h + thl;
    if thl < 20 || ip.len() <= hlen || ip[h + 13] & (SYN | RST | URG) != 0 {
        return None;
    }
    Some((hlen, ip.len() - hlen))
}

/// Whether two packets' headers agree everywhere but where segments of one super-packet
/// differ: IPv4 total length, id and header checksum; TCP sequence number, FIN/PSH/CWR and
/// checksum. Both have header length `hlen`.
fn same_header(a: &[u8], b: &[u8], hlen: usize) -> bool {
    let h = ihl(a);
    let (ta, tb) = (h + 13, h + 16);
    a[0..2] == b[0..2]
        && a[6..10] == b[6..10]
        && a[12..h + 4] == b[12..h + 4]
        && a[h + 8..ta] == b[h + 8..ta]
        && a[ta] & !(FIN | PSH | CWR) == b[ta] & !(FIN | PSH | CWR)
        && a[ta + 1..tb] == b[ta + 1..tb]
        && a[tb + 2..hlen] == b[tb + 2..hlen]
}

fn seq(ip: &[u8]) -> u32 {
    let h = ihl(ip);
    u32::from_be_bytes([ip[h + 4], ip[h + 5], ip[h + 6], ip[h + 7]])
}

/// How many of `pkts` (from the first) go out as one super-packet: a TCP/IPv4 connection's
/// consecutive segments with the same header, each but the last exactly as long as the first
/// and without FIN or PSH, no CWR after the first, at most [`MAX_RUN`] of them and
/// [`MAX_IP`] bytes in all. 1 when the first packet cannot start a run.
pub fn run_length<'p>(pkts: impl IntoIterator<Item = &'p [u8]>) -> usize {
    let mut it = pkts.into_iter();
    let Some(first) = it.next() else { return 0 };
    let Some((hlen, mss)) = mergeable(first) else { return 1 };
    let h = ihl(first);
    let (mut prev, mut n, mut total) = (first, 1usize, hlen + mss);
    for next in it {
        let prev_flags = prev[h + 13];
        let prev_len = prev.len() - hlen;
        let ok = n < MAX_RUN
            && prev_len == mss
            && prev_flags & (FIN | PSH) == 0
            && mergeable(next).is_some_and(|(hl, len)| hl == hlen && len <= mss)
            && next[h + 13] & CWR == 0
            && total + (next.len() - hlen) <= MAX_IP
            && seq(next) == seq(prev).wrapping_add(prev_len as u32)
            && same_header(first, next, hlen);
        if !ok {
            break;
        }
        total += next.len() - hlen;
        prev = next;
        n += 1;
    }
    n
}

/// The header of a coalesced write of `pkts` (a run as [`run_length`] found it, at least
/// two): the first packet's IP+TCP header with the run's total length, a fresh IPv4 checksum,
/// the last packet's FIN/PSH, and the pseudo-header sum for the whole TCP length; and the
/// vnet header asking the kernel for a TCP/IPv4 GSO packet of the first's segment size.
pub fn coalesced_header(pkts: &[&[u8]], hdr: &mut Vec<u8>) -> VnetHdr {
    let first = pkts[0];
    let last = pkts[pkts.len() - 1];
    let h = ihl(first);
    let thl = (first[h + 12] >> 4) as usize * 4;
    let hlen = h + thl;
    let total = hlen + pkts.iter().map(|p| p.len() - hlen).sum::<usize>();
    hdr.clear();
    hdr.extend_from_slice(&first[..hlen]);
    hdr[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    set_ipv4_checksum(hdr);
    hdr[h + 13] |= last[h + 13] & (FIN | PSH);
    tcp_write_header(hdr, total, true, first.len() - hlen)
}

/// The last step of a TCP/IPv4 header about to be written (`hdr`: IP + TCP header, IPv4
/// checksum already fresh; `len`: the packet's whole length): the pseudo-header sum into the
/// TCP checksum field, and the vnet header leaving the checksum to the kernel — for a GSO
/// packet of `mss`-byte segments (ECN-flagged if it carries CWR), or a plain one.
fn tcp_write_header(hdr: &mut [u8], len: usize, gso: bool, mss: usize) -> VnetHdr {
    let h = ihl(hdr);
    let s = pseudo_sum(hdr, TCP, len - h);
    hdr[h + 16..h + 18].copy_from_slice(&s.to_be_bytes());
    let ecn = if gso && hdr[h + 13] & CWR != 0 { GSO_ECN } else { 0 };
    VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: if gso { GSO_TCPV4 | ecn } else { GSO_NONE },
        hdr_len: if gso { hdr.len() as u16 } else { 0 },
        gso_size: if gso { mss as u16 } else { 0 },
        csum_start: h as u16,
        csum_offset: 16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP/IPv4 packet with a 12-byte timestamp option, `payload` bytes of a pattern that
    /// depends on the sequence number (so a payload in the wrong place shows).
    fn tcp_packet(seq: u32, payload: usize, flags: u8) -> Vec<u8> {
        let thl = 32;
        let len = 20 + thl + payload;
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = TCP;
        p[12..16].copy_from_slice(&[10, 77, 0, 1]);
        p[16..20].copy_from_slice(&[10, 77, 0, 2]);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&5000u16.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[28..32].copy_from_slice(&777u32.to_be_bytes());
        p[32] = (thl as u8 / 4) << 4;
        p[33] = 0x10 | flags; // ACK
        p[34..36].copy_from_slice(&512u16.to_be_bytes());
        p[40..52].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 3]); // NOP NOP TS
        for i in 0..payload {
            p[52 + i] = (seq as usize + i) as u8;
        }
        set_ipv4_checksum(&mut p);
        complete_checksum(&mut p);
        p
    }

    fn verify(ip: &[u8]) -> bool {
        let h = ihl(ip);
        let ip_ok = fold(ones_sum(&ip[..h], 0)) == 0xffff;
        let l4 =
            fold(ones_sum(&ip[h..], ones_sum(&ip[12..20], ip[9] as u64 + (ip.len() - h) as u64)));
        ip_ok && l4 == 0xffff
    }

    fn tso(seq: u32, payload: usize, mss: usize, flags: u8) -> (Vec<u8>, VnetHdr) {
        let p = tcp_packet(seq, payload, flags);
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 52,
            gso_size: mss as u16,
            csum_start: 20,
            csum_offset: 16,
        };
        (p, hdr)
    }

    #[test]
    fn the_vnet_header_round_trips() {
        let h = VnetHdr {
            flags: 1,
            gso_type: 0x81,
            hdr_len: 52,
            gso_size: 1448,
            csum_start: 20,
            csum_offset: 16,
        };
        assert_eq!(VnetHdr::parse(&h.to_bytes()), Some(h));
        assert_eq!(VnetHdr::parse(&[0u8; 9]), None);
    }

    #[test]
    fn a_super_packet_becomes_the_packets_the_sender_would_have_sent() {
        let (sp, hdr) = tso(1_000, 10_000, 1448, PSH | FIN | CWR);
        let s = SuperPacket::parse(sp, 0..10_052, hdr).unwrap();
        assert_eq!(s.count(), 7); // 6 × 1448 + 1312
        let mut out = Vec::new();
        for k in 0..7 {
            s.write_segment(k, &mut out);
            let want_len = if k < 6 { 1448 } else { 10_000 - 6 * 1448 };
            let mut whole = tcp_packet(1_000 + 1448 * k as u32, want_len, 0);
            // Flags as Linux's tcp_gso_segment leaves them.
            whole[33] |= if k == 0 { CWR } else { 0 } | if k == 6 { PSH | FIN } else { 0 };
            whole[4..6].copy_from_slice(&(0x1234 + k as u16).to_be_bytes());
            set_ipv4_checksum(&mut whole);
            complete_checksum(&mut whole);
            let mut got = out.clone();
            complete_checksum(&mut got);
            assert_eq!(got, whole, "segment {k}");
            assert!(verify(&got));
        }
    }

    #[test]
    fn segments_coalesce_back_into_the_super_packet() {
        let (sp, hdr) = tso(5, 8 * 1448 + 100, 1448, PSH);
        let s = SuperPacket::parse(sp.clone(), 0..sp.len(), hdr).unwrap();
        let segs: Vec<Vec<u8>> = (0..s.count())
            .map(|k| {
                let mut v = Vec::new();
                s.write_segment(k, &mut v);
                v
            })
            .collect();
        assert_eq!(run_length(segs.iter().map(|v| v.as_slice())), 9);
        let refs: Vec<&[u8]> = segs.iter().map(|v| v.as_slice()).collect();
        let mut h = Vec::new();
        let vh = coalesced_header(&refs, &mut h);
        assert_eq!((vh.gso_type, vh.gso_size, vh.hdr_len), (GSO_TCPV4, 1448, 52));
        let mut joined = h.clone();
        for p in &refs {
            joined.extend_from_slice(&p[52..]);
        }
        let mut want = sp.clone();
        complete_checksum(&mut want);
        complete_checksum(&mut joined);
        assert_eq!(joined, want, "the coalesced packet is the original super-packet");
    }

    #[test]
    fn a_range_of_segments_leaves_as_the_super_packet_it_was_cut_from() {
        let (sp, hdr) = tso(77, 5 * 1448 + 9, 1448, PSH | CWR);
        let mut prefixed = vec![0xee; VNET_HDR_LEN];
        prefixed.extend_from_slice(&sp);
        prefixed.extend_from_slice(&[0xdd; 100]); // the rest of the read buffer
        let s = SuperPacket::parse(prefixed, VNET_HDR_LEN..VNET_HDR_LEN + sp.len(), hdr).unwrap();
        assert_eq!((s.count(), s.segment_len(5), s.segment_len(0)), (6, 52 + 9, 52 + 1448));
        let mut h = Vec::new();
        // The whole range is the original packet.
        let vh = s.range_header(0, 6, &mut h);
        assert_eq!((vh.gso_type, vh.gso_size, vh.hdr_len), (GSO_TCPV4 | GSO_ECN, 1448, 52));
        let mut whole = h.clone();
        whole.extend_from_slice(s.payload(0, 6));
        let mut want = sp.clone();
        complete_checksum(&mut want);
        complete_checksum(&mut whole);
        assert_eq!(whole, want);
        // A middle range is the segments it covers, joined.
        let vh = s.range_header(2, 4, &mut h);
        assert_eq!((vh.gso_type, vh.gso_size), (GSO_TCPV4, 1448));
        assert_eq!(u32::from_be_bytes(h[24..28].try_into().unwrap()), 77 + 2 * 1448);
        assert_eq!(h[33] & (PSH | CWR), 0);
        // One segment goes as a plain packet with a partial checksum.
        let vh = s.range_header(5, 6, &mut h);
        assert_eq!((vh.gso_type, vh.gso_size, vh.flags), (GSO_NONE, 0, F_NEEDS_CSUM));
        assert_eq!(h[33] & PSH, PSH);
    }

    #[test]
    fn runs_stop_where_gro_would_flush() {
        let a = tcp_packet(0, 1448, 0);
        let b = tcp_packet(1448, 1448, 0);
        let gap = tcp_packet(3 * 1448, 1448, 0);
        let short = tcp_packet(1448, 1000, 0);
        let after_short = tcp_packet(2448, 1448, 0);
        let psh = tcp_packet(0, 1448, PSH);
        let syn = tcp_packet(0, 1448, SYN);
        let mut other_ts = tcp_packet(1448, 1448, 0);
        other_ts[51] = 4; // another TSval
        let mut ce = tcp_packet(1448, 1448, 0);
        ce[1] |= 3;
        let cwr = tcp_packet(1448, 1448, CWR);
        let r = |v: &[&Vec<u8>]| run_length(v.iter().map(|p| p.as_slice()));
        assert_eq!(r(&[&a, &b]), 2);
        assert_eq!(r(&[&a, &b, &gap]), 2, "a hole in the sequence");
        assert_eq!(r(&[&a, &short, &after_short]), 2, "only the last may be short");
        assert_eq!(r(&[&psh, &b]), 1, "PSH ends a run");
        assert_eq!(r(&[&syn, &b]), 1);
        assert_eq!(r(&[&a, &other_ts]), 1, "options differ");
        assert_eq!(r(&[&a, &ce]), 1, "a CE mark differs");
        assert_eq!(r(&[&a, &cwr]), 1, "CWR only first");
        assert_eq!(r(&[]), 0);
        let udp = {
            let mut u = tcp_packet(0, 100, 0);
            u[9] = UDP;
            u
        };
        assert_eq!(r(&[&udp, &udp]), 1);
    }

    #[test]
    fn runs_are_bounded_by_the_ip_length() {
        let pkts: Vec<Vec<u8>> = (0..60).map(|k| tcp_packet(k * 1448, 1448, 0)).collect();
        let n = run_length(pkts.iter().map(|v| v.as_slice()));
        assert_eq!(n, (MAX_IP - 52) / 1448);
        let mut h = Vec::new();
        let refs: Vec<&[u8]> = pkts[..n].iter().map(|v| v.as_slice()).collect();
        coalesced_header(&refs, &mut h);
        assert!(u16::from_be_bytes([h[2], h[3]]) as usize <= MAX_IP);
    }

    #[test]
    fn partial_checksums_complete_to_the_whole_one() {
        let mut p = tcp_packet(9, 700, PSH);
        let whole = p.clone();
        let vh = partial_checksum(&mut p);
        assert_eq!((vh.flags, vh.csum_start, vh.csum_offset), (F_NEEDS_CSUM, 20, 16));
        // What the kernel does with NEEDS_CSUM: sum from csum_start with the field as it is.
        let c = !fold(ones_sum(&p[20..], 0));
        p[36..38].copy_from_slice(&c.to_be_bytes());
        assert_eq!(p, whole);
        let mut icmp = tcp_packet(0, 10, 0);
        icmp[9] = 1;
        assert_eq!(partial_checksum(&mut icmp), VnetHdr::default());
    }

    #[test]
    fn malformed_super_packets_are_refused_by_name() {
        let (sp, hdr) = tso(0, 3000, 1448, 0);
        let err = |b: Vec<u8>, h| SuperPacket::parse(b.clone(), 0..b.len(), h).unwrap_err().0;
        assert_eq!(
            err(sp.clone(), VnetHdr { gso_type: 3, ..hdr }),
            SegmentError::UnsupportedGso(3)
        );
        assert_eq!(err(sp[..40].to_vec(), hdr), SegmentError::Malformed);
        assert_eq!(err(sp.clone(), VnetHdr { gso_size: 0, ..hdr }), SegmentError::Malformed);
        let (_, back) = SuperPacket::parse(sp.clone(), 0..3052, VnetHdr::default()).unwrap_err();
        assert_eq!(back, sp, "the buffer comes back");
    }
}
