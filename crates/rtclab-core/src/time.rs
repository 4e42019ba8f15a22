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
        Time(round(s * 1e9).max(0.0) as u64)
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
        TimeDelta(round(s * 1e9) as i64)
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
        TimeDelta(round(self.0 as f64 * f) as i64)
    }
}

/// `x.round()` (half away from zero) as the integer value the conversions above cast it to:
/// the same integer for every input (NaN and infinities pass through), zero's sign aside.
/// `f64::round` is a library call on baseline x86-64 (no SSE4.1), about 25 instructions on
/// the simulator's hot path (RACK's reordering window, pacing); this is a truncating convert
/// and a compare. Exact: for 1 <= |x| < 2^52, `x - trunc(x)` is exact (Sterbenz), and every
/// larger |x| is already an integer.
#[inline]
pub(crate) fn round(x: f64) -> f64 {
    // Not `>=`: NaN must take this branch too.
    if x.abs().partial_cmp(&4_503_599_627_370_496.0) != Some(std::cmp::Ordering::Less) {
        return x;
    }
    let t = (x as i64) as f64;
    let d = x - t;
    if d >= 0.5 {
        t + 1.0
    } else if d <= -0.5 {
        t - 1.0
    } else {
        t
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
    fn round_gives_f64_rounds_integer_for_every_input() {
        let edge = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            9.3e18,
            -9.3e18,
            1.8e19,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN,
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let random = std::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        });
        let values = edge.into_iter().chain(random.take(200_000).flat_map(|r| {
            // Arbitrary bit patterns, and halves and near-halves at every scale.
            let k = (r >> 40) as f64 * 2f64.powi((r % 60) as i32 - 20);
            [f64::from_bits(r), k + 0.5, -(k + 0.5), k, (k + 0.5).next_up(), k * 1e-9]
        }));
        for v in values {
            let (want, got) = (v.round(), round(v));
            assert!(want == got || (want.is_nan() && got.is_nan()), "{v:e}: {want} vs {got}");
            assert_eq!(want as i64, got as i64, "{v:e}");
            assert_eq!(want.max(0.0) as u64, got.max(0.0) as u64, "{v:e}");
        }
    }

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
