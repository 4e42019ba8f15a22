//! Malformed and truncated input never panics: every prefix, many single-byte corruptions
//! and random buffers, for every parser. (Coverage-guided fuzzing lives in `fuzz/`.)
mod samples;
use rtclab_core::RngStream;
use rtclab_wire::{parse_compound, write_compound, RtpPacket};

fn corpus() -> Vec<Vec<u8>> {
    let mut c: Vec<Vec<u8>> =
        samples::rtp_packets().iter().map(|p| p.to_bytes().unwrap()).collect();
    c.extend(samples::rtcp_packets().iter().map(|p| write_compound(p).unwrap()));
    c
}

/// Parses with every entry point; whatever parses must re-emit and parse back to the same
/// value (the property the cargo-fuzz targets check too).
fn parse_all(b: &[u8]) {
    if let Ok(p) = RtpPacket::parse(b) {
        if let Ok(bytes) = p.to_bytes() {
            assert_eq!(RtpPacket::parse(&bytes).as_ref(), Ok(&p), "RTP re-emit of {b:02x?}");
        }
    }
    if let Ok(p) = parse_compound(b) {
        if let Ok(bytes) = write_compound(&p) {
            assert_eq!(parse_compound(&bytes).as_ref(), Ok(&p), "RTCP re-emit of {b:02x?}");
        }
    }
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    for b in corpus() {
        for n in 0..b.len() {
            parse_all(&b[..n]);
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let mut rng = RngStream::from_seed(42);
    for b in corpus() {
        for _ in 0..30_000 {
            let mut m = b.clone();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(m.len() as u64) as usize;
                m[i] = rng.next_u64() as u8;
            }
            parse_all(&m);
        }
    }
}

#[test]
fn random_buffers_never_panic() {
    let mut rng = RngStream::from_seed(7);
    for _ in 0..500_000 {
        let len = rng.below(200) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if len > 0 && rng.bernoulli(0.5) {
            b[0] = 0x80 | (b[0] & 0x3F); // version 2, to get past the first check
        }
        if len > 1 && rng.bernoulli(0.5) {
            b[1] = [200, 201, 205, 206][rng.below(4) as usize];
        }
        parse_all(&b);
    }
}
