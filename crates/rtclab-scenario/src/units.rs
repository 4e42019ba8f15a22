//! Unit-carrying config values: `"20ms"`, `"5Mbps"`, `"1500B"`, queue limits `"1bdp"`.
//!
//! Every parser rejects a bare number or a unit it does not know with a message that quotes
//! the value and lists what is accepted, e.g. `invalid rate "5 Mbit": ...`.

use rtclab_core::{Rate, TimeDelta};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// Splits `"12.5Mbps"` into (12.5, "Mbps"). Whitespace between number and unit is allowed.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some((v, unit.trim()))
}

pub const DURATION_UNITS: &str = "ns, us, ms, s, min";
pub const RATE_UNITS: &str =
    "bps, kbps, Mbps, Gbps (bits per second) or Bps, kBps, MBps, GBps (bytes per second)";
/// The fastest rate a scenario may name: 10 Tbit/s (a packet every ~1 ns at 1500 B).
pub const MAX_RATE_BPS: f64 = 1e13;
pub const SIZE_UNITS: &str = "B, KB, KiB, MB, MiB";
pub const QUEUE_UNITS: &str =
    "packets (\"100pkt\"), bytes (\"150KB\"), milliseconds at capacity (\"50ms\") or BDP multiples (\"1bdp\")";

/// A non-negative duration, e.g. `"20ms"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Duration(pub TimeDelta);

/// A rate, e.g. `"5Mbps"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateValue(pub Rate);

/// A size in bytes, e.g. `"1500B"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub u64);

/// A queue limit before resolution against the link (BDP and time need capacity and RTT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimitValue {
    Packets(u32),
    Bytes(u64),
    Time(TimeDelta),
    Bdp(f64),
}

pub fn parse_duration(s: &str) -> Result<TimeDelta, String> {
    let bad = || {
        format!("invalid duration {s:?}: expected a non-negative number followed by one of {DURATION_UNITS} (e.g. \"20ms\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 {
        return Err(format!("invalid duration {s:?}: must not be negative"));
    }
    let ns = match unit {
        "ns" => v,
        "us" | "µs" => v * 1e3,
        "ms" => v * 1e6,
        "s" => v * 1e9,
        "min" => v * 60e9,
        _ => return Err(bad()),
    };
    if ns > 1e18 {
        return Err(format!("invalid duration {s:?}: too long"));
    }
    Ok(TimeDelta::from_nanos(ns.round() as i64))
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bad = || {
        format!("invalid rate {s:?}: expected a non-negative number followed by one of {RATE_UNITS} (e.g. \"5Mbps\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 {
        return Err(format!("invalid rate {s:?}: must not be negative"));
    }
    // The spelling rule: `b` is bits, `B` bytes (as in "MB/s"), and the case of that one letter
    // is all that tells them apart, so the rest must be written as the rule shows: "ps" in lower
    // case, prefixes k, M, G in either case. A unit in capitals ("10MBPS", "10KBPS") could mean
    // either and is refused with both readings; bits are what links are quoted in, so bytes are
    // said explicitly and converted (never read as bits).
    if unit.ends_with("PS") || unit.ends_with("Ps") || unit.ends_with("pS") {
        let chars: Vec<char> = unit.chars().collect();
        let p: String = chars[..chars.len().saturating_sub(3)].iter().collect();
        return Err(format!(
            "invalid rate {s:?}: ambiguous unit {unit:?}: only the case of the b tells bits from bytes, so \"ps\" \
             must be lower case: write \"{v}{p}bps\" for bits or \"{v}{p}Bps\" for bytes per second"
        ));
    }
    let (prefix, per_unit) = match unit.strip_suffix("ps") {
        Some(p) if p.ends_with('b') => (&p[..p.len() - 1], 1.0),
        Some(p) if p.ends_with('B') => (&p[..p.len() - 1], 8.0),
        _ => return Err(bad()),
    };
    let mult = match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "m" | "M" => 1e6,
        "g" | "G" => 1e9,
        _ => return Err(bad()),
    };
    let bps = v * mult * per_unit;
    if bps > MAX_RATE_BPS {
        return Err(format!(
            "invalid rate {s:?}: above the largest rtclab models ({} Gbit/s)",
            MAX_RATE_BPS / 1e9
        ));
    }
    Ok(Rate::from_bps(bps.round() as u64))
}

pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || {
        format!("invalid size {s:?}: expected a non-negative number followed by one of {SIZE_UNITS} (e.g. \"1500B\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 {
        return Err(format!("invalid size {s:?}: must not be negative"));
    }
    let mult = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    Ok((v * mult).round() as u64)
}

pub fn parse_queue_limit(s: &str) -> Result<QueueLimitValue, String> {
    let bad = || format!("invalid queue limit {s:?}: expected {QUEUE_UNITS}");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v <= 0.0 {
        return Err(format!("invalid queue limit {s:?}: must be positive"));
    }
    match unit.to_ascii_lowercase().as_str() {
        "pkt" | "pkts" | "packet" | "packets" | "p" => {
            if v.fract() != 0.0 {
                return Err(format!(
                    "invalid queue limit {s:?}: a packet count must be a whole number"
                ));
            }
            if v > u32::MAX as f64 {
                return Err(format!(
                    "invalid queue limit {s:?}: at most {} packets (or give bytes, time or BDPs: {QUEUE_UNITS})",
                    u32::MAX
                ));
            }
            Ok(QueueLimitValue::Packets(v as u32))
        }
        "bdp" => Ok(QueueLimitValue::Bdp(v)),
        _ => {
            if let Ok(d) = parse_duration(s) {
                return Ok(QueueLimitValue::Time(d));
            }
            if let Ok(b) = parse_size(s) {
                return Ok(QueueLimitValue::Bytes(b));
            }
            Err(bad())
        }
    }
}

macro_rules! string_value {
    ($ty:ident, $parse:ident, $expect:expr, $wrap:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($wrap).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $expect)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $expect)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_value!(
    Duration,
    parse_duration,
    "a duration string such as \"20ms\" (units: ns, us, ms, s, min)",
    Duration
);
string_value!(
    RateValue,
    parse_rate,
    "a rate string such as \"5Mbps\" (units: bps, kbps, Mbps, Gbps; bytes: Bps, kBps, MBps, GBps)",
    RateValue
);
string_value!(
    Size,
    parse_size,
    "a size string such as \"1500B\" (units: B, KB, KiB, MB, MiB)",
    Size
);
string_value!(
    QueueLimitValue,
    parse_queue_limit,
    "a queue limit string such as \"100pkt\", \"150KB\", \"50ms\" or \"1bdp\"",
    std::convert::identity
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20ms").unwrap(), TimeDelta::from_millis(20));
        assert_eq!(parse_duration("1.5s").unwrap(), TimeDelta::from_millis(1500));
        assert_eq!(parse_duration("2min").unwrap(), TimeDelta::from_secs(120));
        assert_eq!(parse_duration("250us").unwrap(), TimeDelta::from_micros(250));
        assert!(parse_duration("20").unwrap_err().contains("ms"));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5Mbps").unwrap(), Rate::from_mbps(5));
        assert_eq!(parse_rate("1.5Gbps").unwrap(), Rate::from_bps(1_500_000_000));
        assert_eq!(parse_rate("500kbps").unwrap(), Rate::from_kbps(500));
        let e = parse_rate("5 Mbit").unwrap_err();
        assert!(e.contains("\"5 Mbit\"") && e.contains("Mbps"), "{e}");
        // A capital B is bytes, never silently bits.
        assert_eq!(parse_rate("10MBps").unwrap(), Rate::from_mbps(80));
        assert_eq!(parse_rate("1kBps").unwrap(), Rate::from_kbps(8));
        assert_eq!(parse_rate("10mbps").unwrap(), Rate::from_mbps(10));
        assert!(parse_rate("10Tbps").unwrap_err().contains("bytes per second"));
        assert!(parse_rate("1000000Gbps").unwrap_err().contains("largest"));
        // Capitals are ambiguous (only the b's case tells bits from bytes): refused with both.
        for (text, bits, bytes) in [
            ("10MBPS", "10Mbps", "10MBps"),
            ("5KBPS", "5Kbps", "5KBps"),
            ("7mbPS", "7mbps", "7mBps"),
        ] {
            let e = parse_rate(text).unwrap_err();
            assert!(e.contains("ambiguous") && e.contains(bits) && e.contains(bytes), "{e}");
        }
        assert!(parse_rate("1µPS").unwrap_err().contains("ambiguous"));
    }

    #[test]
    fn sizes_and_queue_limits() {
        assert_eq!(parse_size("1500B").unwrap(), 1500);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_queue_limit("100pkt").unwrap(), QueueLimitValue::Packets(100));
        assert_eq!(parse_queue_limit("1.5bdp").unwrap(), QueueLimitValue::Bdp(1.5));
        assert_eq!(
            parse_queue_limit("50ms").unwrap(),
            QueueLimitValue::Time(TimeDelta::from_millis(50))
        );
        assert_eq!(parse_queue_limit("150KB").unwrap(), QueueLimitValue::Bytes(150_000));
        assert!(parse_queue_limit("0pkt").is_err());
        assert!(parse_queue_limit("3 furlongs").unwrap_err().contains("bdp"));
    }
}
