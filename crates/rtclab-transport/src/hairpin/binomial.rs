//! Binomial coefficients C(n, k) for n ≤ 330 as f64, each the correctly rounded (ties to
//! even) value of the exact integer. Hairpin's solver multiplies and divides by them in a
//! fixed order; rounding the exact integer once, as the published solver's arbitrary-precision
//! integers are rounded when they meet a float, keeps our table bit-identical to theirs.
//!
//! The exact values come from Pascal's rule on a small unsigned big integer (little-endian
//! 32-bit limbs): 330 rows, at most 11 limbs each.

/// Largest n: 55 packets + 500 % redundancy = 330 packets in one block.
pub const MAX_N: usize = 330;

/// Exact unsigned integer, little-endian base 2^32.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn one() -> Big {
        Big(vec![1])
    }

    fn add(&self, o: &Big) -> Big {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s = *self.0.get(i).unwrap_or(&0) as u64 + *o.0.get(i).unwrap_or(&0) as u64 + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        Big(out)
    }

    fn bits(&self) -> u32 {
        match self.0.iter().rposition(|&l| l != 0) {
            None => 0,
            Some(i) => 32 * i as u32 + (32 - self.0[i].leading_zeros()),
        }
    }

    fn bit(&self, i: u32) -> bool {
        let limb = (i / 32) as usize;
        limb < self.0.len() && (self.0[limb] >> (i % 32)) & 1 == 1
    }

    /// Nearest f64, ties to even.
    fn to_f64(&self) -> f64 {
        let bits = self.bits();
        if bits <= 53 {
            let mut v = 0u64;
            for (i, &l) in self.0.iter().enumerate().take(2) {
                v |= (l as u64) << (32 * i);
            }
            return v as f64;
        }
        // The top 53 bits, the next (half) bit, and whether anything below it is set.
        let shift = bits - 53;
        let mut top = 0u64;
        for i in 0..53 {
            if self.bit(shift + i) {
                top |= 1 << i;
            }
        }
        let half = self.bit(shift - 1);
        let sticky = (0..shift - 1).any(|i| self.bit(i));
        if half && (sticky || top & 1 == 1) {
            top += 1; // may reach 2^53: still exact
        }
        top as f64 * 2f64.powi(shift as i32)
    }
}

/// C(n, k) for 0 ≤ k ≤ n ≤ [`MAX_N`], row-major in a triangle.
pub struct Binomials {
    rows: Vec<Vec<f64>>,
}

impl Binomials {
    pub fn new() -> Binomials {
        let mut rows = Vec::with_capacity(MAX_N + 1);
        let mut exact = vec![Big::one()];
        for n in 0..=MAX_N {
            rows.push(exact.iter().map(Big::to_f64).collect());
            let mut next = Vec::with_capacity(n + 2);
            next.push(Big::one());
            for k in 1..=n {
                next.push(exact[k - 1].add(&exact[k]));
            }
            next.push(Big::one());
            exact = next;
        }
        Binomials { rows }
    }

    /// C(n, k); 0 when k > n.
    #[inline]
    pub fn c(&self, n: usize, k: usize) -> f64 {
        if k > n {
            0.0
        } else {
            self.rows[n][k]
        }
    }
}

impl Default for Binomials {
    fn default() -> Self {
        Binomials::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_correctly_rounded() {
        let b = Binomials::new();
        assert_eq!(b.c(5, 2), 10.0);
        assert_eq!(b.c(55, 27), 3_824_345_300_380_220.0);
        assert_eq!(b.c(3, 4), 0.0);
        // C(60, 30) = 118264581564861424 (> 2^53): nearest f64 is 118264581564861424
        // rounded to a multiple of 16.
        assert_eq!(b.c(60, 30), 118_264_581_564_861_424_f64);
        // Rows are symmetric and sum to 2^n (exactly representable).
        let sum: f64 = (0..=40).map(|k| b.c(40, k)).sum();
        assert_eq!(sum, 2f64.powi(40));
        for k in 0..=MAX_N {
            assert_eq!(b.c(MAX_N, k), b.c(MAX_N, MAX_N - k));
        }
        // The middle of the last row: C(330, 165) ≈ 1.7×10^97.
        let mid = b.c(330, 165);
        assert!(mid > 1e97 && mid < 1e98 && mid.is_finite(), "{mid}");
    }

    #[test]
    fn rounding_ties_go_to_even() {
        // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: ties to even gives 2^53.
        let v = Big(vec![1, 1 << 21]);
        assert_eq!(v.bits(), 54);
        assert_eq!(v.to_f64(), 9_007_199_254_740_992.0);
        // 2^53 + 3 ties between 2^53 + 2 and 2^53 + 4: to even is 2^53 + 4.
        let v = Big(vec![3, 1 << 21]);
        assert_eq!(v.to_f64(), 9_007_199_254_740_996.0);
    }
}
