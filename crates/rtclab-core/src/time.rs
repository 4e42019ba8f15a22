//! Integer-nanosecond simulation time.
//!
//! `Time` is an instant measured from the run's epoch; `TimeDelta` is a signed span (delay
//! gradients are signed). There is deliberately no `Time::now()`: only engines own a clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A signed span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeDelta(i64);

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The earliest of some optional instants (None if all are None). A plain loop: the
/// `[..].into_iter().flatten().min()` idiom compiles to kilobytes of code on hot paths.
#[inline]
#[allow(clippy::manual_flatten)] // the flatten adapter is what this avoids
pub fn earliest<const N: usize>(ts: [Option<Time>; N]) -> Option<Time> {
    let mut best: Option<Time> = None;
    for t in ts {
        if let Some(t) = t {
            if best.is_none_or(|b| t < b) {
                best = Some(t);
            }
        }
    }
    best
}

impl Time {
    pub const ZERO: Time = Time(0);
    /// A time that is never reached; used for "no deadline".
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Time(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Time(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Time(s * NANOS_PER_SEC)
    }
    /// Rounds to the nearest nanosecond; negative inputs clamp to zero.
    pub fn from_secs_f64(s: f64) -> Self {
        Time((s * 1e9).round().max(0.0) as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> TimeDelta {
        TimeDelta(self.0.saturating_sub(earlier.0).min(i64::MAX as u64) as i64)
    }
    pub fn saturating_add(self, d: TimeDelta) -> Time {
        if d.0 >= 0 {
            Time(self.0.saturating_add(d.0 as u64))
        } else {
            Time(self.0.saturating_sub(d.0.unsigned_abs()))
        }
    }
}

impl TimeDelta {
    pub const ZERO: TimeDelta = TimeDelta(0);
    pub const MAX: TimeDelta = TimeDelta(i64::MAX);

    pub const fn from_nanos(ns: i64) -> Self {
        TimeDelta(ns)
    }
    pub const fn from_micros(us: i64) -> Self {
        TimeDelta(us * 1_000)
    }
    pub const fn from_millis(ms: i64) -> Self {
        TimeDelta(ms * 1_000_000)
    }
    pub const fn from_secs(s: i64) -> Self {
        TimeDelta(s * NANOS_PER_SEC as i64)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        TimeDelta((s * 1e9).round() as i64)
    }
    pub const fn as_nanos(self) -> i64 {
        self.0
    }
    pub const fn as_micros(self) -> i64 {
        self.0 / 1_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }
    pub fn abs(self) -> TimeDelta {
        TimeDelta(self.0.abs())
    }
    /// Multiplies by a float factor, rounding to the nearest nanosecond.
    pub fn mul_f64(self, f: f64) -> TimeDelta {
        TimeDelta((self.0 as f64 * f).round() as i64)
    }
}

impl Add<TimeDelta> for Time {
    type Output = Time;
    fn add(self, d: TimeDelta) -> Time {
        self.saturating_add(d)
    }
}
impl AddAssign<TimeDelta> for Time {
    fn add_assign(&mut self, d: TimeDelta) {
        *self = *self + d;
    }
}
impl Sub<TimeDelta> for Time {
    type Output = Time;
    fn sub(self, d: TimeDelta) -> Time {
        self.saturating_add(TimeDelta(-d.0))
    }
}
impl Sub<Time> for Time {
    type Output = TimeDelta;
    fn sub(self, other: Time) -> TimeDelta {
        TimeDelta(self.0 as i64 - other.0 as i64)
    }
}
impl Add for TimeDelta {
    type Output = TimeDelta;
    fn add(self, o: TimeDelta) -> TimeDelta {
        TimeDelta(self.0.saturating_add(o.0))
    }
}
impl AddAssign for TimeDelta {
    fn add_assign(&mut self, o: TimeDelta) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for TimeDelta {
    type Output = TimeDelta;
    fn sub(self, o: TimeDelta) -> TimeDelta {
        TimeDelta(self.0.saturating_sub(o.0))
    }
}
impl SubAssign for TimeDelta {
    fn sub_assign(&mut self, o: TimeDelta) {
        self.0 = self.0.saturating_sub(o.0);
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = format!("{:.6}", self.as_secs_f64());
        write!(f, "{}s", s.trim_end_matches('0').trim_end_matches('.'))
    }
}
impl fmt::Display for TimeDelta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.as_millis_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_exact_in_nanoseconds() {
        let t = Time::from_millis(20) + TimeDelta::from_micros(5);
        assert_eq!(t.as_nanos(), 20_005_000);
        assert_eq!(t - Time::from_millis(20), TimeDelta::from_micros(5));
        assert_eq!(Time::from_millis(1) - Time::from_millis(3), TimeDelta::from_millis(-2));
        assert_eq!(Time::ZERO - TimeDelta::from_secs(1), Time::ZERO);
        assert_eq!(Time::from_secs_f64(1.5), Time::from_millis(1500));
    }

    #[test]
    fn max_saturates() {
        assert_eq!(Time::MAX + TimeDelta::from_secs(1), Time::MAX);
        assert_eq!(Time::from_secs(1).saturating_since(Time::from_secs(2)), TimeDelta::ZERO);
    }
}
