//! Seeded, named random streams.
//!
//! One root seed per run; each component asks for a stream by a stable label
//! (`"link.fwd.loss"`, `"flow3.jitter"`). The stream's seed is a hash of (root, label), so
//! adding a component never shifts another component's stream.
//! Generator: xoshiro256++ (Blackman & Vigna, 2019), seeded through SplitMix64.

/// Derives independent streams from a root seed.
#[derive(Clone, Copy, Debug)]
pub struct SeedTree {
    root: u64,
}

/// A xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct RngStream {
    s: [u64; 4],
}

impl SeedTree {
    pub fn new(root: u64) -> Self {
        SeedTree { root }
    }
    pub fn root(&self) -> u64 {
        self.root
    }
    /// The stream for `label`; the same (root, label) always gives the same stream.
    pub fn stream(&self, label: &str) -> RngStream {
        RngStream::from_seed(self.root ^ fnv1a64(label.as_bytes()).rotate_left(17))
    }
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RngStream {
    pub fn from_seed(seed: u64) -> Self {
        let mut st = seed;
        let s =
            [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        RngStream { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// Uniform integer in [0, n); `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        // Lemire's multiply-shift; the tiny bias is irrelevant for simulation use.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_independent() {
        let t = SeedTree::new(7);
        let a1: Vec<u64> = (0..4)
            .map({
                let mut r = t.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = t.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let mut b = t.stream("b");
        assert_eq!(a1, a2);
        assert_ne!(a1[0], b.next_u64());
        assert_ne!(SeedTree::new(8).stream("a").next_u64(), a1[0]);
    }

    #[test]
    fn uniform_mean_is_half() {
        let mut r = RngStream::from_seed(1);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        let hits = (0..n).filter(|_| r.bernoulli(0.1)).count();
        assert!((hits as f64 / n as f64 - 0.1).abs() < 0.005);
    }
}
