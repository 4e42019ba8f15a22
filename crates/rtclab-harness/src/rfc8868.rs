//! The RMCAT evaluation metrics of RFC 8868 §3 that go beyond per-flow totals, computed the
//! same way for both engines from each flow's delivered bytes per time-series bin:
//!
//! - **fairness as throughput ratios** over windows of 1 s, 5 s and 20 s (§3: "the ratio of
//!   average throughput ... measured over 1 s, 5 s and 20 s"), with the guideline that flows
//!   of similar RTT stay within 0.333–3 of each other: per window, the ratio of the largest to
//!   the smallest average throughput among the flows active for the whole window (within the
//!   guideline ⇔ ratio ≤ 3); a window where a flow delivered nothing is *starved*;
//! - **convergence time** per flow: from the flow's start (before the measurement window too)
//!   until its 1 s average throughput first reaches 80 % of its steady rate, the mean over the
//!   second half of its active time in the window (so at least 1 s, in steps of one bin);
//! - **instability / oscillation** per flow: watermark crossings (§3's example: 500 kbit/s and
//!   2 Mbit/s within 500 ms), with the watermarks at 0.5× and 1.5× the steady rate: a bin at or
//!   below the low one followed within 500 ms by one at or above the high one, or the reverse;
//!   and the coefficient of variation of the 1 s average throughput.
//!
//! Source: RFC 8868, "Evaluating Congestion Control for Interactive Real-Time Media" §3
//! (draft-ietf-rmcat-eval-criteria-14); the percentages and watermark factors are ours, since
//! the RFC gives an example, not a rule.

use rtclab_core::{Time, TimeDelta};
use rtclab_scenario::Scenario;
use serde::Serialize;

/// The window lengths of the fairness ratios (RFC 8868 §3).
pub const FAIRNESS_SCALES_S: [u64; 3] = [1, 5, 20];
/// The guideline's largest acceptable throughput ratio between similar flows.
pub const GUIDELINE_RATIO: f64 = 3.0;
/// Share of the steady rate a flow must reach to count as converged.
pub const CONVERGED_SHARE: f64 = 0.8;
/// Watermarks of the oscillation count, as multiples of the steady rate, and the time within
/// which a swing between them counts.
pub const LOW_WATERMARK: f64 = 0.5;
pub const HIGH_WATERMARK: f64 = 1.5;
pub const SWING_WITHIN: TimeDelta = TimeDelta::from_millis(500);

/// Fairness ratios at one time scale.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct ScaleFairness {
    pub window_s: u64,
    /// Windows with at least two flows active for the whole window.
    pub windows: u64,
    /// Median and largest max/min throughput ratio over the windows no flow was starved in.
    pub ratio_median: Option<f64>,
    pub ratio_max: Option<f64>,
    /// Share of the windows within the guideline (ratio ≤ 3); starved windows count as outside.
    pub within_guideline: Option<f64>,
    /// Windows in which some active flow delivered nothing.
    pub starved_windows: u64,
}

/// The run's RFC 8868 fairness figures.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Rfc8868Summary {
    pub fairness_ratios: Vec<ScaleFairness>,
}

/// One flow's RFC 8868 stability figures.
#[derive(Clone, Copy, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct FlowRfc8868 {
    /// Mean throughput over the second half of the flow's active time in the window, Mbit/s.
    pub steady_mbps: Option<f64>,
    pub convergence_s: Option<f64>,
    pub oscillations: u64,
    /// Coefficient of variation of the 1 s average throughput in the window.
    pub throughput_cv: Option<f64>,
}

/// The run's and every flow's figures from the flows' delivered bytes per bin
/// (`bytes(flow id)`, one entry per bin of `s.metrics.bin`, `n_bins` of them), over the
/// measurement window `[w0, w1)`.
pub fn compute<'a>(
    s: &Scenario,
    n_bins: usize,
    w: (Time, Time),
    bytes: impl Fn(usize) -> &'a [u64],
) -> (Rfc8868Summary, Vec<FlowRfc8868>) {
    let bin = s.metrics.bin;
    let bin_ns = bin.as_nanos().max(1);
    let bin_of = |t: Time| ((t - Time::ZERO).as_nanos().max(0) / bin_ns) as usize;
    let (b0, b1) = (bin_of(w.0).min(n_bins), bin_of(w.1).min(n_bins));
    let at = |f: usize, b: usize| bytes(f).get(b).copied().unwrap_or(0) as f64;
    let mut ratios = Vec::new();
    for scale in FAIRNESS_SCALES_S {
        let per = (TimeDelta::from_secs(scale as i64).as_nanos() / bin_ns).max(1) as usize;
        let mut found = ScaleFairness { window_s: scale, ..Default::default() };
        let mut rs = Vec::new();
        let mut within = 0u64;
        let mut k = b0;
        while k + per <= b1 {
            let t0 = Time::ZERO + TimeDelta::from_nanos(k as i64 * bin_ns);
            let t1 = t0 + TimeDelta::from_nanos(per as i64 * bin_ns);
            let sums: Vec<f64> = s
                .flows
                .iter()
                .filter(|f| f.start <= t0 && f.stop >= t1)
                .map(|f| (k..k + per).map(|b| at(f.id as usize, b)).sum())
                .collect();
            if sums.len() >= 2 {
                found.windows += 1;
                let (lo, hi) =
                    sums.iter().fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
                if lo <= 0.0 {
                    found.starved_windows += 1;
                } else {
                    let r = hi / lo;
                    within += u64::from(r <= GUIDELINE_RATIO);
                    rs.push(r);
                }
            }
            k += per;
        }
        if found.windows > 0 {
            found.within_guideline = Some(within as f64 / found.windows as f64);
        }
        rs.sort_by(f64::total_cmp);
        found.ratio_median = (!rs.is_empty()).then(|| rs[rs.len() / 2]);
        found.ratio_max = rs.last().copied();
        ratios.push(found);
    }
    let mbps = |x: f64, bins: usize| x * 8.0 / (bins as f64 * bin.as_secs_f64()) / 1e6;
    let per_s = (1_000_000_000 / bin_ns).max(1) as usize;
    let swing = (SWING_WITHIN.as_nanos() / bin_ns).max(1) as usize;
    let flows = s
        .flows
        .iter()
        .map(|f| {
            let id = f.id as usize;
            let (a, z) = (bin_of(f.start.max(w.0)).max(b0), bin_of(f.stop.min(w.1)).min(b1));
            if z <= a + 1 {
                return FlowRfc8868::default();
            }
            let half = a + (z - a) / 2;
            let steady = mbps((half..z).map(|b| at(id, b)).sum(), z - half);
            let mut out = FlowRfc8868 { steady_mbps: Some(steady), ..Default::default() };
            if steady > 0.0 {
                // Convergence, from the flow's start even before the window: the end of the first
                // 1 s average that reaches 80 % of the steady rate.
                let s0 = bin_of(f.start).min(z);
                out.convergence_s = (s0 + per_s.min(z - s0)..=z).find_map(|end| {
                    let from = end.saturating_sub(per_s).max(s0);
                    let avg = mbps((from..end).map(|b| at(id, b)).sum(), end - from);
                    (avg >= CONVERGED_SHARE * steady).then(|| (end - s0) as f64 * bin.as_secs_f64())
                });
                let (low, high) = (LOW_WATERMARK * steady, HIGH_WATERMARK * steady);
                let rate: Vec<f64> = (a..z).map(|b| mbps(at(id, b), 1)).collect();
                let mut last_low: Option<usize> = None;
                let mut last_high: Option<usize> = None;
                for (k, &r) in rate.iter().enumerate() {
                    if r >= high {
                        if last_low.is_some_and(|l| k - l <= swing) {
                            out.oscillations += 1;
                            last_low = None;
                        }
                        last_high = Some(k);
                    } else if r <= low {
                        if last_high.is_some_and(|h| k - h <= swing) {
                            out.oscillations += 1;
                            last_high = None;
                        }
                        last_low = Some(k);
                    }
                }
                let secs: Vec<f64> = rate
                    .chunks_exact(per_s)
                    .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                    .collect();
                if secs.len() >= 2 {
                    let mean = secs.iter().sum::<f64>() / secs.len() as f64;
                    let var = secs.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                        / (secs.len() - 1) as f64;
                    out.throughput_cv = (mean > 0.0).then(|| var.sqrt() / mean);
                }
            }
            out
        })
        .collect();
    (Rfc8868Summary { fairness_ratios: ratios }, flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(flows: &str, duration: &str) -> Scenario {
        let text = format!("duration = \"{duration}\"\n[link]\ncapacity = \"10Mbps\"\n{flows}");
        rtclab_scenario::from_toml_str(&text, Path::new(".")).unwrap()
    }

    const TWO: &str = "[[flows]]\nkind = \"tcp\"\nrtt = \"40ms\"\ncount = 2\n";

    fn window(s: &Scenario) -> (Time, Time) {
        (Time::ZERO + s.metrics.warmup, Time::ZERO + s.duration)
    }

    #[test]
    fn equal_flows_are_within_the_guideline_and_a_3_to_1_split_is_at_its_edge() {
        let s = scenario(TWO, "40s");
        let n = 200; // 40 s of 200 ms bins
        let a = vec![25_000u64; n];
        let b = vec![25_000u64; n];
        let (r, _) = compute(&s, n, window(&s), |i| if i == 0 { &a } else { &b });
        let one = &r.fairness_ratios[0];
        assert_eq!((one.window_s, one.windows), (1, 40));
        assert_eq!((one.ratio_median, one.within_guideline), (Some(1.0), Some(1.0)));
        assert_eq!(r.fairness_ratios[2].windows, 2);
        let c = vec![75_000u64; n];
        let (r, _) = compute(&s, n, window(&s), |i| if i == 0 { &a } else { &c });
        assert_eq!(r.fairness_ratios[1].ratio_max, Some(3.0));
        assert_eq!(r.fairness_ratios[1].within_guideline, Some(1.0));
        let zero = vec![0u64; n];
        let (r, _) = compute(&s, n, window(&s), |i| if i == 0 { &a } else { &zero });
        assert_eq!(
            (r.fairness_ratios[0].starved_windows, r.fairness_ratios[0].within_guideline),
            (40, Some(0.0))
        );
    }

    #[test]
    fn convergence_and_oscillation_follow_the_rate() {
        let s = scenario("[[flows]]\nkind = \"tcp\"\nrtt = \"40ms\"\n", "20s");
        // Ramp over 2 s to 25 kB per bin (1 Mbit/s), then steady: converges after about 1.5 s.
        let mut b: Vec<u64> = (0..10).map(|k| 2_500 * k).collect();
        b.extend(std::iter::repeat_n(25_000, 90));
        let (_, f) = compute(&s, 100, window(&s), |_| &b);
        let c = f[0].convergence_s.unwrap();
        assert!((1.0..=2.2).contains(&c), "{c}");
        assert_eq!(f[0].oscillations, 0);
        assert!((f[0].steady_mbps.unwrap() - 1.0).abs() < 1e-9);
        // Alternating 0.2x / 1.8x of the rate every bin: a swing each bin.
        let osc: Vec<u64> = (0..100).map(|k| if k % 2 == 0 { 5_000 } else { 45_000 }).collect();
        let (_, f) = compute(&s, 100, window(&s), |_| &osc);
        assert!(f[0].oscillations >= 90, "{}", f[0].oscillations);
        // 1 s (5-bin) averages alternate between 21 and 29 kB per bin: CV about 0.16, far below
        // the bins' own.
        let cv = f[0].throughput_cv.unwrap();
        assert!((0.1..0.25).contains(&cv), "{cv}");
    }
}
