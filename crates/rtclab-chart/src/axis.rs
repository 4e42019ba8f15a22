//! Axis arithmetic: data ranges with margins, "nice" tick positions (1, 2, 2.5, 5 × 10^k, as
//! matplotlib's `MaxNLocator` picks them), tick labels, and the symlog transform.

use crate::spec::Scale;

/// The symlog transform with a linear threshold of 1: x within ±1 stays, beyond it
/// sign(x)·(1 + log10|x|).
pub fn symlog(x: f64) -> f64 {
    if x.abs() <= 1.0 {
        x
    } else {
        x.signum() * (1.0 + x.abs().log10())
    }
}

/// The inverse of [`symlog`].
pub fn symlog_inv(t: f64) -> f64 {
    if t.abs() <= 1.0 {
        t
    } else {
        t.signum() * 10f64.powf(t.abs() - 1.0)
    }
}

pub fn transform(scale: Scale, x: f64) -> f64 {
    match scale {
        Scale::Linear => x,
        Scale::Symlog => symlog(x),
    }
}

/// The axis range: the given limits, else the data's extent with a 5 % margin on each side
/// that the data sets; a degenerate range is widened so that it can be drawn.
pub fn resolve_range(lim: [Option<f64>; 2], data: Option<(f64, f64)>) -> (f64, f64) {
    let (dlo, dhi) = data.unwrap_or((0.0, 1.0));
    let pad = 0.05 * (dhi - dlo);
    let mut lo = lim[0].unwrap_or(dlo - pad);
    let mut hi = lim[1].unwrap_or(dhi + pad);
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if hi <= lo {
        // A constant series (or a limit beyond the data): open it up around what is fixed.
        let width = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        if lim[1].is_none() {
            hi = lo + width;
        } else {
            lo = hi - width;
        }
    }
    (lo, hi)
}

/// Tick positions inside [lo, hi] at the smallest nice step that gives at most `target` + 1
/// of them (as matplotlib's `MaxNLocator`).
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, f64) {
    let span = hi - lo;
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor()) / 10.0;
    let count = |step: f64| (hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0;
    let step = (0..4)
        .flat_map(|e| [1.0, 2.0, 2.5, 5.0].into_iter().map(move |m| m * mag * 10f64.powi(e)))
        .find(|s| count(*s) <= target as f64 + 1.0)
        .unwrap_or(100.0 * mag);
    let first = (lo / step - 1e-9).ceil();
    let mut ticks = Vec::new();
    let mut k = first;
    while k * step <= hi + step * 1e-9 && ticks.len() < 100 {
        let v = k * step;
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        k += 1.0;
    }
    (ticks, step)
}

/// Ticks of a symlog axis, in transformed units: 0, ±1 and the powers of ten inside the range
/// (every other one when there are many).
pub fn symlog_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut t: Vec<f64> =
        (-8..=12).map(|k| k as f64).filter(|v| *v >= lo - 1e-9 && *v <= hi + 1e-9).collect();
    while t.len() > 8 {
        t = t.into_iter().step_by(2).collect();
    }
    if t.len() < 2 {
        return nice_ticks(lo, hi, 5).0;
    }
    t
}

/// A tick label with as many decimals as the step needs (no trailing zeros).
pub fn format_tick(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize + 1
    };
    let s = format!("{v:.decimals$}");
    let s =
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A symlog tick's label: the value it stands for.
pub fn format_symlog(t: f64) -> String {
    let v = symlog_inv(t);
    if v.abs() >= 1.0 {
        format!("{}", v.round())
    } else {
        format_tick(v, 0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice_and_inside() {
        let (t, step) = nice_ticks(0.0, 63.0, 6);
        assert_eq!(step, 10.0);
        assert_eq!(t, vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        let (t, step) = nice_ticks(0.0, 1.05, 5);
        assert_eq!(step, 0.2);
        assert_eq!(t.len(), 6);
        let (t, _) = nice_ticks(-3.2, 3.2, 6);
        assert!(t.contains(&0.0) && t.iter().all(|v| (-3.2..=3.2).contains(v)));
    }

    #[test]
    fn labels_carry_the_decimals_the_step_needs() {
        assert_eq!(format_tick(20.0, 10.0), "20");
        assert_eq!(format_tick(0.25, 0.25), "0.25");
        assert_eq!(format_tick(0.5, 0.25), "0.5");
        assert_eq!(format_tick(-0.0, 0.5), "0");
    }

    #[test]
    fn symlog_is_linear_inside_one_and_logarithmic_beyond() {
        assert_eq!(symlog(0.5), 0.5);
        assert_eq!(symlog(10.0), 2.0);
        assert_eq!(symlog(-100.0), -3.0);
        for x in [0.3, 1.0, 7.0, 250.0, -42.0] {
            assert!((symlog_inv(symlog(x)) - x).abs() < 1e-9 * x.abs().max(1.0));
        }
        assert_eq!(format_symlog(3.0), "100");
        assert_eq!(symlog_ticks(0.0, 3.4), vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn ranges_take_limits_then_data_with_a_margin() {
        assert_eq!(resolve_range([Some(0.0), Some(60.0)], Some((3.0, 4.0))), (0.0, 60.0));
        let (lo, hi) = resolve_range([Some(0.0), None], Some((0.0, 100.0)));
        assert_eq!((lo, hi), (0.0, 105.0));
        // A constant series at zero still gets an axis.
        assert_eq!(resolve_range([Some(0.0), None], Some((0.0, 0.0))), (0.0, 1.0));
        assert_eq!(resolve_range([None, None], None), (-0.05, 1.05));
    }
}
