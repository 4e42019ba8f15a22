//! Link capacity over time: constant, piecewise constant (a schedule or a looping
//! "time bandwidth" trace), or mahimahi packet-delivery opportunities.
//!
//! Lineage: the opportunity model follows mahimahi's `LinkQueue` (ravinet/mahimahi
//! `src/packet/link_queue.cc`): each trace line is one chance to deliver up to 1504 bytes, a
//! packet may span several opportunities, and unused opportunities are lost. The trace loops
//! with a period equal to its last timestamp, as mahimahi does.

use rtclab_core::{Rate, Time, TimeDelta};

/// Bytes delivered by one mahimahi opportunity (MTU 1500 + 4 bytes of framing).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u32 = 1504;

#[derive(Clone, Debug)]
pub enum CapacityModel {
    Constant(Rate),
    Piecewise(Piecewise),
    Opportunities(Opportunities),
}

/// Piecewise-constant rate. `starts[0] == 0`, strictly increasing; with a period the
/// pattern repeats, otherwise the last rate holds for ever.
#[derive(Clone, Debug)]
pub struct Piecewise {
    starts: Vec<u64>,
    rates: Vec<u64>,
    period: Option<u64>,
}

/// Packet-delivery opportunities at millisecond instants, `count` of them at `ms`.
#[derive(Clone, Debug)]
pub struct Opportunities {
    ms: Vec<u64>,
    counts: Vec<u32>,
    /// prefix[i] = number of opportunities strictly before index i.
    prefix: Vec<u64>,
    period_ms: u64,
    bytes_each: u32,
}

/// Construction errors (callers add file and line context).
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityError(pub String);

impl Piecewise {
    /// Steps `(start, rate)`; the first must start at zero. `period` repeats the pattern.
    pub fn new(steps: &[(Time, Rate)], period: Option<TimeDelta>) -> Result<Self, CapacityError> {
        if steps.is_empty() {
            return Err(CapacityError("a capacity schedule needs at least one step".into()));
        }
        if steps[0].0 != Time::ZERO {
            return Err(CapacityError("the first capacity step must start at 0s".into()));
        }
        for w in steps.windows(2) {
            if w[1].0 <= w[0].0 {
                return Err(CapacityError(format!(
                    "capacity steps must have strictly increasing times ({} then {})",
                    w[0].0, w[1].0
                )));
            }
        }
        let starts: Vec<u64> = steps.iter().map(|s| s.0.as_nanos()).collect();
        let rates: Vec<u64> = steps.iter().map(|s| s.1.as_bps()).collect();
        let period = period.map(|p| p.as_nanos() as u64);
        if let Some(p) = period {
            if p <= *starts.last().unwrap() {
                return Err(CapacityError("the loop period must end after the last step".into()));
            }
            if rates.iter().all(|&r| r == 0) {
                return Err(CapacityError("the capacity is zero throughout the trace".into()));
            }
        }
        Ok(Piecewise { starts, rates, period })
    }

    /// Index of the segment containing `t`, the segment's absolute start and end.
    fn segment(&self, t: u64) -> (usize, u64, u64) {
        let (base, off) = match self.period {
            Some(p) => ((t / p) * p, t % p),
            None => (0, t),
        };
        let idx = self.starts.partition_point(|&s| s <= off) - 1;
        let end = if idx + 1 < self.starts.len() {
            base + self.starts[idx + 1]
        } else {
            match self.period {
                Some(p) => base + p,
                None => u64::MAX,
            }
        };
        (idx, base + self.starts[idx], end)
    }

    fn rate_at(&self, t: u64) -> u64 {
        self.rates[self.segment(t).0]
    }

    /// Integral of the rate over [t0, t1), in bit-nanoseconds (bits * 1e9).
    fn bit_ns_between(&self, t0: u64, t1: u64) -> u128 {
        let mut acc = 0u128;
        let mut t = t0;
        while t < t1 {
            let (idx, _, end) = self.segment(t);
            let stop = end.min(t1);
            acc += self.rates[idx] as u128 * (stop - t) as u128;
            t = stop;
        }
        acc
    }

    fn finish(&self, start: u64, bytes: u64) -> u64 {
        let mut need = bytes as u128 * 8 * 1_000_000_000; // bit-ns
        let mut t = start;
        loop {
            let (idx, _, end) = self.segment(t);
            let r = self.rates[idx] as u128;
            if end == u64::MAX {
                if r == 0 {
                    return u64::MAX;
                }
                return t.saturating_add(need.div_ceil(r).min(u64::MAX as u128) as u64);
            }
            let avail = r * (end - t) as u128;
            if avail >= need && r > 0 {
                return t + need.div_ceil(r) as u64;
            }
            need -= avail;
            t = end;
        }
    }
}

impl Opportunities {
    /// `ms`: non-decreasing millisecond timestamps, one per opportunity (mahimahi format).
    pub fn new(ms_lines: &[u64], bytes_each: u32) -> Result<Self, CapacityError> {
        let last = *ms_lines.last().ok_or_else(|| CapacityError("the trace is empty".into()))?;
        if last == 0 {
            return Err(CapacityError("the trace's last timestamp must be positive".into()));
        }
        let mut ms = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        for &m in ms_lines {
            if ms.last() == Some(&m) {
                *counts.last_mut().unwrap() += 1;
            } else {
                ms.push(m);
                counts.push(1);
            }
        }
        let mut prefix = Vec::with_capacity(ms.len() + 1);
        let mut acc = 0u64;
        for &c in &counts {
            prefix.push(acc);
            acc += c as u64;
        }
        prefix.push(acc);
        Ok(Opportunities { ms, counts, prefix, period_ms: last, bytes_each })
    }

    pub fn bytes_each(&self) -> u32 {
        self.bytes_each
    }

    fn period_ns(&self) -> u64 {
        self.period_ms * 1_000_000
    }

    /// The first opportunity instant at or after `t`, and how many opportunities it has.
    pub fn next_at_or_after(&self, t: Time) -> (Time, u32) {
        let p = self.period_ns();
        let t = t.as_nanos();
        let cycle = t / p;
        let off = t % p;
        // Opportunities of one cycle lie at ms in (0, period]; ms == period belongs to the
        // cycle's end, which is the same instant as the next cycle's offset 0.
        let idx = self.ms.partition_point(|&m| m * 1_000_000 < off);
        if idx < self.ms.len() {
            (Time::from_nanos(cycle * p + self.ms[idx] * 1_000_000), self.counts[idx])
        } else {
            (Time::from_nanos((cycle + 1) * p + self.ms[0] * 1_000_000), self.counts[0])
        }
    }

    /// Number of opportunities at instants in [0, t).
    fn count_before(&self, t: u64) -> u64 {
        let p = self.period_ns();
        let cycle = t / p;
        let off = t % p;
        let idx = self.ms.partition_point(|&m| m * 1_000_000 < off);
        cycle * self.prefix[self.ms.len()] + self.prefix[idx]
    }
}

impl CapacityModel {
    /// When a transmission of `bytes` starting at `start` completes (rate-based models).
    /// Opportunity models are driven by `Link` directly and return `start` here.
    pub fn finish_time(&self, start: Time, bytes: u64) -> Time {
        match self {
            CapacityModel::Constant(r) => start + r.tx_time(bytes),
            CapacityModel::Piecewise(p) => Time::from_nanos(p.finish(start.as_nanos(), bytes)),
            CapacityModel::Opportunities(_) => start,
        }
    }

    /// Bits the link could carry in [t0, t1).
    pub fn bits_between(&self, t0: Time, t1: Time) -> f64 {
        if t1 <= t0 {
            return 0.0;
        }
        match self {
            CapacityModel::Constant(r) => r.as_bps() as f64 * (t1 - t0).as_secs_f64(),
            CapacityModel::Piecewise(p) => {
                p.bit_ns_between(t0.as_nanos(), t1.as_nanos()) as f64 / 1e9
            }
            CapacityModel::Opportunities(o) => {
                let n = o.count_before(t1.as_nanos()) - o.count_before(t0.as_nanos());
                n as f64 * o.bytes_each as f64 * 8.0
            }
        }
    }

    /// Mean rate over [t0, t1).
    pub fn mean_rate(&self, t0: Time, t1: Time) -> Rate {
        let secs = (t1 - t0).as_secs_f64();
        if secs <= 0.0 {
            return self.rate_at(t0);
        }
        Rate::from_bps((self.bits_between(t0, t1) / secs).round() as u64)
    }

    /// The instantaneous rate (for opportunity traces: the mean over the surrounding 100 ms).
    pub fn rate_at(&self, t: Time) -> Rate {
        match self {
            CapacityModel::Constant(r) => *r,
            CapacityModel::Piecewise(p) => Rate::from_bps(p.rate_at(t.as_nanos())),
            CapacityModel::Opportunities(_) => {
                let t0 = Time::from_nanos(t.as_nanos().saturating_sub(50_000_000));
                self.mean_rate(t0, t0 + TimeDelta::from_millis(100))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(v: &[(u64, u64)]) -> Vec<(Time, Rate)> {
        v.iter().map(|&(ms, mbps)| (Time::from_millis(ms), Rate::from_mbps(mbps))).collect()
    }

    #[test]
    fn schedule_finish_time_spans_a_rate_change() {
        // 1 Mbit/s for 10 ms then 2 Mbit/s: 2500 B = 20000 bits.
        // First 10 ms carry 10000 bits; the rest at 2 Mbit/s takes 5 ms.
        let p = Piecewise::new(&steps(&[(0, 1), (10, 2)]), None).unwrap();
        let m = CapacityModel::Piecewise(p);
        assert_eq!(m.finish_time(Time::ZERO, 2500), Time::from_millis(15));
        assert_eq!(m.bits_between(Time::ZERO, Time::from_millis(20)), 30_000.0);
    }

    #[test]
    fn zero_rate_segments_are_skipped() {
        let p =
            Piecewise::new(&steps(&[(0, 0), (5, 1)]), Some(TimeDelta::from_millis(10))).unwrap();
        let m = CapacityModel::Piecewise(p);
        // 125 B = 1000 bits at 1 Mbit/s = 1 ms, starting when capacity returns at 5 ms.
        assert_eq!(m.finish_time(Time::from_millis(1), 125), Time::from_millis(6));
        // Needs 6 ms of service: 5 ms in [5,10), then the next non-zero segment [15, ...).
        assert_eq!(m.finish_time(Time::from_millis(5), 750), Time::from_millis(16));
        assert!(Piecewise::new(&steps(&[(0, 0)]), Some(TimeDelta::from_millis(5))).is_err());
    }

    #[test]
    fn schedule_ending_at_zero_never_finishes() {
        let p = Piecewise::new(&steps(&[(0, 1), (1, 0)]), None).unwrap();
        assert_eq!(CapacityModel::Piecewise(p).finish_time(Time::from_millis(2), 1), Time::MAX);
    }

    #[test]
    fn opportunities_loop_with_the_last_timestamp() {
        let o = Opportunities::new(&[2, 2, 5, 10], 1504).unwrap();
        assert_eq!(o.next_at_or_after(Time::ZERO), (Time::from_millis(2), 2));
        assert_eq!(o.next_at_or_after(Time::from_millis(2)), (Time::from_millis(2), 2));
        assert_eq!(o.next_at_or_after(Time::from_micros(2001)), (Time::from_millis(5), 1));
        assert_eq!(o.next_at_or_after(Time::from_micros(10_001)), (Time::from_millis(12), 2));
        let m = CapacityModel::Opportunities(o);
        // Two full cycles hold 8 opportunities.
        assert_eq!(
            m.bits_between(Time::ZERO, Time::from_millis(20) + TimeDelta::from_nanos(1)),
            8.0 * 1504.0 * 8.0
        );
    }
}
