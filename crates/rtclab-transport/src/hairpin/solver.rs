//! Hairpin's offline solver: the backward dynamic programme over the Markov chain of
//! (missing data packets d, transmission opportunities l) for one loss rate α and frame size F
//! (spec `afr-hairpin-confucius.md` §3.3-3.4; dissertation ch. 7, eq. 7.4-7.7; the released
//! solver `model/fec_w_rtx.py` of hkust-spark/hairpin, which fixed the details below).
//!
//! - One round sends the d missing data packets as a systematic MDS block with k parity
//!   packets. At most k of the N = d + k lost: the block decodes (→ d' = 0). More than k lost:
//!   the block fails and the lost data packets (a hypergeometric share of the i losses) are
//!   missing next round.
//! - Absorbing layer l = 0: deadline missed if d > 0 (score −1), met if d = 0 (score 0).
//! - score(d, l; k) = Σ_{d'} P(d → d'; k) · score*(d', l − 1) − λ · k / F, maximised over the
//!   candidate counts k ∈ unique(round_half_even(β · d)) for β ∈ {0, 0.05, …, 0.95, 1, 2, 3,
//!   4, 5}; the first (smallest) k wins a tie. The objective counts parity only.
//! - States d = 0..55 and l = 0..15 for every F (the chain does not stop at F: a batch may
//!   hold more packets than the nominal frame size).
//!
//! The arithmetic is done in the released solver's order (the same sums, products and
//! divisions, binomials rounded once from exact integers, powers from the C library's `pow`)
//! so the tables it produces are bit-identical; the test against the published tables counts
//! the cells that match.

use super::binomial::Binomials;

/// Most packets in a block (data).
pub const MAX_PACKETS: usize = 55;
/// Most transmission opportunities.
pub const MAX_LAYERS: usize = 15;

/// The redundancy candidates β of the released solver, as it computes them
/// (`concatenate(arange(0, 1, 0.05), arange(1, 6, 1))`: i · 0.05 in floating point).
pub fn beta_candidates() -> Vec<f64> {
    let mut b: Vec<f64> = (0..20).map(|i| i as f64 * 0.05).collect();
    b.extend((1..6).map(|i| i as f64));
    b
}

/// The distinct parity counts k a block of `d` data packets may carry, ascending.
pub fn parity_candidates(d: usize) -> Vec<usize> {
    let mut ks: Vec<usize> =
        beta_candidates().iter().map(|b| (b * d as f64).round_ties_even() as usize).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// Transition probabilities of one loss rate: for every d and candidate k, P(d → d') for
/// d' = 0..=d. Independent of F, λ and the layer, so shared by every chain of this α.
pub struct Transitions {
    /// `[d]` → list of (k, probabilities over d' = 0..=d).
    per_d: Vec<Vec<(usize, Vec<f64>)>>,
}

impl Transitions {
    pub fn new(alpha: f64, binom: &Binomials) -> Transitions {
        let n_max = MAX_PACKETS * 6;
        let loss_pow: Vec<f64> = (0..=n_max).map(|i| alpha.powf(i as f64)).collect();
        let keep_pow: Vec<f64> = (0..=n_max).map(|i| (1.0 - alpha).powf(i as f64)).collect();
        let mut per_d = vec![Vec::new()];
        for d in 1..=MAX_PACKETS {
            let row = parity_candidates(d)
                .into_iter()
                .map(|k| {
                    let n = d + k;
                    let probs = (0..=d)
                        .map(|d1| {
                            let mut p = 0.0;
                            if d1 == 0 {
                                for i in 0..=k {
                                    p += binom.c(n, i) * loss_pow[i] * keep_pow[n - i];
                                }
                            } else {
                                for i in (k + 1).max(d1)..=d1 + k {
                                    p += binom.c(n, i)
                                        * loss_pow[i]
                                        * keep_pow[n - i]
                                        * binom.c(k, i - d1)
                                        * binom.c(d, d1)
                                        / binom.c(n, i);
                                }
                            }
                            p
                        })
                        .collect();
                    (k, probs)
                })
                .collect();
            per_d.push(row);
        }
        Transitions { per_d }
    }

    /// (k, P(d → ·)) for each candidate k of `d` data packets.
    pub fn of(&self, d: usize) -> &[(usize, Vec<f64>)] {
        &self.per_d[d]
    }
}

/// One solved chain: the best parity count and its score per (layer, packets).
#[derive(Clone, Debug)]
pub struct Chain {
    /// `[layer][packets]`; layer 0 and packets 0 have no decision (k = 0).
    pub parity: Vec<Vec<u8>>,
    /// −(deadline miss probability) − λ·(parity per frame packet), the maximised objective.
    pub score: Vec<Vec<f64>>,
}

/// Solve the chain of one frame size `frame` and weight `lambda` over `trans`.
pub fn solve_chain(trans: &Transitions, frame: usize, lambda: f64) -> Chain {
    let mut score = vec![vec![0.0f64; MAX_PACKETS + 1]; MAX_LAYERS + 1];
    let mut parity = vec![vec![0u8; MAX_PACKETS + 1]; MAX_LAYERS + 1];
    for s in score[0].iter_mut().skip(1) {
        *s = -1.0;
    }
    for l in 1..=MAX_LAYERS {
        for d in 1..=MAX_PACKETS {
            let mut best = f64::NEG_INFINITY;
            let mut best_k = 0;
            for (k, probs) in trans.of(d) {
                let mut s = 0.0;
                for (d1, p) in probs.iter().enumerate() {
                    s += p * score[l - 1][d1];
                }
                s += -(lambda * (*k as f64 / frame as f64));
                if s > best {
                    best = s;
                    best_k = *k;
                }
            }
            score[l][d] = best;
            parity[l][d] = best_k as u8;
        }
    }
    Chain { parity, score }
}

/// Expected deadline miss probability and parity per frame packet of following `chain`'s
/// policy from (d, l) — the two terms of the objective, separately (for reports and tests).
pub fn evaluate(
    trans: &Transitions,
    chain: &Chain,
    frame: usize,
    d: usize,
    l: usize,
) -> (f64, f64) {
    let mut miss = vec![vec![0.0f64; MAX_PACKETS + 1]; l + 1];
    let mut cost = vec![vec![0.0f64; MAX_PACKETS + 1]; l + 1];
    for m in miss[0].iter_mut().skip(1) {
        *m = 1.0;
    }
    for layer in 1..=l {
        for dd in 1..=MAX_PACKETS {
            let k = chain.parity[layer][dd] as usize;
            let (_, probs) = trans.of(dd).iter().find(|(kk, _)| *kk == k).expect("a candidate k");
            let (mut m, mut c) = (0.0, k as f64 / frame as f64);
            for (d1, p) in probs.iter().enumerate() {
                m += p * miss[layer - 1][d1];
                c += p * cost[layer - 1][d1];
            }
            miss[layer][dd] = m;
            cost[layer][dd] = c;
        }
    }
    (miss[l][d], cost[l][d])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_the_released_rounding() {
        // β·d rounds half to even: 0.05·10 = 0.5 → 0, 0.15·10 = 1.5 → 2.
        let ks = parity_candidates(10);
        assert_eq!(ks[..4], [0, 1, 2, 3]);
        assert_eq!(*ks.last().unwrap(), 50);
        assert_eq!(parity_candidates(1), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn transition_probabilities_sum_to_one() {
        let b = Binomials::new();
        for alpha in [0.0, 0.01, 0.2, 0.5] {
            let t = Transitions::new(alpha, &b);
            for d in 1..=MAX_PACKETS {
                for (k, probs) in t.of(d) {
                    let s: f64 = probs.iter().sum();
                    assert!((s - 1.0).abs() < 1e-9, "α {alpha} d {d} k {k}: {s}");
                }
            }
        }
    }

    #[test]
    fn no_loss_means_no_parity_and_miss_rate_falls_with_opportunities_and_parity() {
        let b = Binomials::new();
        let chain = solve_chain(&Transitions::new(0.0, &b), 25, 1e-4);
        assert!(chain.parity.iter().flatten().all(|&k| k == 0));
        let t = Transitions::new(0.2, &b);
        let chain = solve_chain(&t, 25, 1e-4);
        // The optimum can only improve with another opportunity.
        for l in 1..=MAX_LAYERS {
            for d in 1..=MAX_PACKETS {
                assert!(chain.score[l][d] >= chain.score[l - 1][d], "l {l} d {d}");
            }
        }
        // For a fixed policy (here: 20 % parity every round) the miss probability does not
        // rise with opportunities, nor with more parity.
        let fixed = |beta: f64| Chain {
            parity: vec![
                (0..=MAX_PACKETS).map(|d| (beta * d as f64).round() as u8).collect();
                MAX_LAYERS + 1
            ],
            score: Vec::new(),
        };
        let mut last = 1.0;
        for l in 1..=MAX_LAYERS {
            let (miss, _) = evaluate(&t, &fixed(0.2), 25, 25, l);
            assert!(miss <= last, "layer {l}: {miss} > {last}");
            last = miss;
        }
        for l in 1..=4 {
            assert!(
                evaluate(&t, &fixed(0.4), 25, 25, l).0 <= evaluate(&t, &fixed(0.2), 25, 25, l).0
            );
        }
        // More parity in a round never raises the miss probability of that round.
        for (_, probs) in t.of(25).windows(2).map(|w| (w[0].0, (&w[0].1, &w[1].1))) {
            assert!(probs.1[0] >= probs.0[0]);
        }
    }
}
