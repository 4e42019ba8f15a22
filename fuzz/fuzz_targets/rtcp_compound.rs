//! Fuzz target: parse_compound (every RTCP parser through dispatch).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtclab_wire::{parse_compound, write_compound};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = parse_compound(data) {
        if let Ok(bytes) = write_compound(&p) {
            assert_eq!(parse_compound(&bytes).as_ref(), Ok(&p));
        }
    }
});
