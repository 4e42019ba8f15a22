//! Streaming log-linear histogram for delay percentiles (HDR-histogram style).
//!
//! Values are non-negative integers (nanoseconds). Each power-of-two range is split into
//! `2^SUB_BITS` linear sub-buckets, so a reported percentile is within 1/2^SUB_BITS (0.8 %)
//! relative error of the true sample, with memory independent of the number of samples.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
    min: u64,
    max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) - SUB; // in [0, SUB)
    ((shift as u64 + 1) * SUB + sub) as usize
}

/// Midpoint value represented by bucket `b`.
fn value_of(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    let lo = (SUB + sub) << shift;
    lo + ((1u64 << shift) >> 1)
}

impl LogHistogram {
    pub fn new() -> Self {
        LogHistogram { min: u64::MAX, ..Default::default() }
    }

    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.total += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum as f64 / self.total as f64)
    }

    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The `q`-quantile (0..=1), nearest-rank, clamped to the observed min/max.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        if rank == 1 {
            return Some(self.min);
        }
        if rank >= self.total {
            return Some(self.max);
        }
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(value_of(b).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// [`quantile`](Self::quantile) at each of `qs` (ascending), in one walk over the buckets
    /// instead of one per quantile: the same values, for the 53-point distribution tables.
    pub fn quantiles(&self, qs: &[f64]) -> Vec<Option<u64>> {
        debug_assert!(qs.windows(2).all(|w| w[0] <= w[1]), "quantiles must be ascending");
        if self.total == 0 {
            return vec![None; qs.len()];
        }
        let mut out = Vec::with_capacity(qs.len());
        let (mut b, mut seen) = (0usize, 0u64);
        for &q in qs {
            let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
            let v = if rank == 1 {
                self.min
            } else if rank >= self.total {
                self.max
            } else {
                // Advance to the first bucket whose running count reaches `rank`; a later
                // (larger) rank starts from there.
                while b < self.counts.len() && seen + self.counts[b] < rank {
                    seen += self.counts[b];
                    b += 1;
                }
                if b < self.counts.len() {
                    value_of(b).clamp(self.min, self.max)
                } else {
                    self.max
                }
            };
            out.push(Some(v));
        }
        out
    }

    pub fn merge(&mut self, other: &LogHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_within_relative_error() {
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456, 20_000_000, 3_000_000_000] {
            let back = value_of(bucket_of(v));
            let err = (back as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / SUB as f64, "v={v} back={back}");
        }
    }

    #[test]
    fn quantiles_of_uniform_ramp() {
        let mut h = LogHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5).unwrap() as f64;
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.01, "{p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 0.01, "{p99}");
        assert_eq!(h.quantile(0.0), Some(1000));
        assert_eq!(h.quantile(1.0), Some(10_000_000));
        assert!((h.mean().unwrap() - 5_000_500.0).abs() < 1.0);
    }

    #[test]
    fn quantiles_in_one_walk_equal_quantile_one_by_one() {
        let mut h = LogHistogram::new();
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            h.record((x >> 40) % 300_000_000);
        }
        h.record(0);
        let qs: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).chain([1.5]).collect();
        let want: Vec<_> = qs.iter().map(|&q| h.quantile(q)).collect();
        assert_eq!(h.quantiles(&qs), want);
        assert_eq!(LogHistogram::new().quantiles(&[0.5, 0.9]), vec![None, None]);
        let mut one = LogHistogram::new();
        one.record(7);
        assert_eq!(one.quantiles(&[0.0, 0.5, 1.0]), vec![Some(7); 3]);
    }
}
