//! Fuzz target: SenderReport::parse, on a packet body (after the RTCP header).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtclab_wire::buf::Reader;
use rtclab_wire::rtcp::{SenderReport, RtcpPacket};
use rtclab_wire::{parse_compound, write_compound};

fuzz_target!(|data: &[u8]| {
    let count = data.first().map_or(0, |b| b & 0x1F);
    let data = data.get(1..).unwrap_or(&[]);
    if let Ok(p) = SenderReport::parse(count, &mut Reader::new(data)) {
        // A parsed body re-emits as a whole packet that parses back to the same thing.
        let packet = RtcpPacket::SenderReport(p);
        if let Ok(bytes) = write_compound(std::slice::from_ref(&packet)) {
            assert_eq!(parse_compound(&bytes), Ok(vec![packet]));
        }
    }
});
