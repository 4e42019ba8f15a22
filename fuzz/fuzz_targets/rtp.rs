//! Fuzz target: RtpPacket::parse.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtclab_wire::RtpPacket;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = RtpPacket::parse(data) {
        // Whatever parses re-emits and parses back to the same packet.
        if let Ok(bytes) = p.to_bytes() {
            assert_eq!(RtpPacket::parse(&bytes).as_ref(), Ok(&p));
        }
    }
});
