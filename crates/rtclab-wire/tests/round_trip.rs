//! Every packet type: emit, parse, equal.
mod samples;
use rtclab_wire::{parse_compound, write_compound, RtpPacket};

#[test]
fn rtp_round_trips() {
    for p in samples::rtp_packets() {
        assert_eq!(RtpPacket::parse(&p.to_bytes().unwrap()).unwrap(), p);
    }
}

#[test]
fn rtcp_round_trips() {
    for compound in samples::rtcp_packets() {
        let bytes = write_compound(&compound).unwrap();
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(parse_compound(&bytes).unwrap(), compound);
    }
}

#[test]
fn all_in_one_compound() {
    let all: Vec<_> = samples::rtcp_packets().into_iter().flatten().collect();
    let bytes = write_compound(&all).unwrap();
    assert_eq!(parse_compound(&bytes).unwrap(), all);
}
