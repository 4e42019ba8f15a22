//! RTP header extensions used by congestion control.
//!
//! - Transport-wide sequence number
//!   (`http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`): 16 bits,
//!   +1 per packet on the transport; the -02 form adds `|T|seq_count(15)|` feedback requests.
//! - abs-send-time (`http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time`): 24-bit
//!   6.18 fixed-point seconds, wrapping every 64 s: `(ntp_64 >> 14) & 0xFFFFFF`.

use crate::WireError;

pub const TRANSPORT_WIDE_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
pub const ABS_SEND_TIME_URI: &str = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time";

/// Transport-wide sequence number element data (2 bytes).
pub fn transport_seq_bytes(seq: u16) -> Vec<u8> {
    seq.to_be_bytes().to_vec()
}

pub fn parse_transport_seq(data: &[u8]) -> Result<u16, WireError> {
    match data {
        [a, b] | [a, b, _, _] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(WireError::Invalid {
            what: "transport-wide sequence number",
            detail: format!("{} bytes, expected 2 or 4", data.len()),
        }),
    }
}

/// abs-send-time from a time in nanoseconds (any epoch; only the low 64 s matter).
pub fn abs_send_time_from_nanos(ns: u64) -> u32 {
    // 6.18 fixed point: seconds * 2^18, modulo 2^24.
    let units = ((ns as u128) << 18) / 1_000_000_000;
    (units & 0xFF_FFFF) as u32
}

/// abs-send-time in nanoseconds within its 64 s wrap.
pub fn abs_send_time_to_nanos(v: u32) -> u64 {
    (((v & 0xFF_FFFF) as u128 * 1_000_000_000) >> 18) as u64
}

pub fn abs_send_time_bytes(v: u32) -> Vec<u8> {
    v.to_be_bytes().get(1..).map(<[u8]>::to_vec).unwrap_or_default()
}

pub fn parse_abs_send_time(data: &[u8]) -> Result<u32, WireError> {
    match data {
        [a, b, c] => Ok(u32::from_be_bytes([0, *a, *b, *c])),
        _ => Err(WireError::Invalid {
            what: "abs-send-time",
            detail: format!("{} bytes, expected 3", data.len()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abs_send_time_resolution_and_wrap() {
        // 1 s = 2^18 units.
        assert_eq!(abs_send_time_from_nanos(1_000_000_000), 1 << 18);
        // Wraps after 64 s.
        assert_eq!(abs_send_time_from_nanos(64_000_000_000), 0);
        let t = 12_345_678_901u64;
        let back = abs_send_time_to_nanos(abs_send_time_from_nanos(t));
        assert!(t - back < 3_815, "resolution is 3.8 us: {t} vs {back}");
        assert_eq!(parse_abs_send_time(&abs_send_time_bytes(0xABCDEF)).unwrap(), 0xABCDEF);
    }

    #[test]
    fn transport_seq() {
        assert_eq!(parse_transport_seq(&transport_seq_bytes(0xBEEF)).unwrap(), 0xBEEF);
        assert!(parse_transport_seq(&[1]).is_err());
    }
}
