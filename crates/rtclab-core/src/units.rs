//! Bit rates and data sizes as integers (bit/s, bytes).

use crate::time::{TimeDelta, NANOS_PER_SEC};
use std::fmt;

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataSize(u64);

impl Rate {
    pub const ZERO: Rate = Rate(0);
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn from_kbps(k: u64) -> Self {
        Rate(k * 1_000)
    }
    pub const fn from_mbps(m: u64) -> Self {
        Rate(m * 1_000_000)
    }
    pub fn from_mbps_f64(m: f64) -> Self {
        Rate(crate::time::round(m * 1e6).max(0.0) as u64)
    }
    pub const fn as_bps(self) -> u64 {
        self.0
    }
    pub fn as_mbps_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Serialization time of `bytes` at this rate, rounded up to the next nanosecond.
    /// A zero rate never finishes (`TimeDelta::MAX`).
    pub fn tx_time(self, bytes: u64) -> TimeDelta {
        if self.0 == 0 {
            return TimeDelta::MAX;
        }
        let bits = bytes as u128 * 8 * NANOS_PER_SEC as u128;
        let ns = bits.div_ceil(self.0 as u128);
        TimeDelta::from_nanos(ns.min(i64::MAX as u128) as i64)
    }
    /// Bytes this rate carries in `d` (floor).
    pub fn bytes_in(self, d: TimeDelta) -> u64 {
        if d.as_nanos() <= 0 {
            return 0;
        }
        (self.0 as u128 * d.as_nanos() as u128 / (8 * NANOS_PER_SEC as u128)) as u64
    }
    /// The rate that carries `bytes` in `d`.
    pub fn from_bytes_per(bytes: u64, d: TimeDelta) -> Rate {
        if d.as_nanos() <= 0 {
            return Rate(0);
        }
        Rate((bytes as u128 * 8 * NANOS_PER_SEC as u128 / d.as_nanos() as u128) as u64)
    }
    pub fn mul_f64(self, f: f64) -> Rate {
        Rate(crate::time::round(self.0 as f64 * f).max(0.0) as u64)
    }
}

impl DataSize {
    pub const ZERO: DataSize = DataSize(0);
    pub const fn from_bytes(b: u64) -> Self {
        DataSize(b)
    }
    pub const fn as_bytes(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Mbps", self.as_mbps_f64())
    }
}
impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_rounds_up() {
        // 1500 B at 100 Mbit/s = 120 us exactly.
        assert_eq!(Rate::from_mbps(100).tx_time(1500), TimeDelta::from_micros(120));
        // 1 B at 3 bit/s = 8/3 s, rounded up.
        assert_eq!(Rate::from_bps(3).tx_time(1).as_nanos(), 2_666_666_667);
        assert_eq!(Rate::ZERO.tx_time(1), TimeDelta::MAX);
    }

    #[test]
    fn bytes_and_rates_invert() {
        let r = Rate::from_mbps(12);
        assert_eq!(r.bytes_in(TimeDelta::from_secs(1)), 1_500_000);
        assert_eq!(Rate::from_bytes_per(1_500_000, TimeDelta::from_secs(1)), r);
    }
}
