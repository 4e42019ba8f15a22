//! Fuzz target: Nack::parse, on a packet body (after the RTCP header).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtclab_wire::buf::Reader;
use rtclab_wire::rtcp::{Nack, RtcpPacket};
use rtclab_wire::{parse_compound, write_compound};

fuzz_target!(|data: &[u8]| {
    
    if let Ok(p) = Nack::parse(&mut Reader::new(data)) {
        // A parsed body re-emits as a whole packet that parses back to the same thing.
        let packet = RtcpPacket::Nack(p);
        if let Ok(bytes) = write_compound(std::slice::from_ref(&packet)) {
            assert_eq!(parse_compound(&bytes), Ok(vec![packet]));
        }
    }
});
