//! Turning arrays into what is drawn: finite runs, step expansion, clipping to the axes.

/// Index ranges [start, end) over which every given array is finite.
pub fn finite_runs(arrays: &[&[f64]]) -> Vec<(usize, usize)> {
    let n = arrays.iter().map(|a| a.len()).min().unwrap_or(0);
    let mut runs = Vec::new();
    let mut start = None;
    for i in 0..n {
        let ok = arrays.iter().all(|a| a[i].is_finite());
        match (ok, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, n));
    }
    runs
}

/// The vertices of a run: straight, or as steps that hold each y over the interval ending at
/// its x (the first value at its own x only).
pub fn vertices(x: &[f64], y: &[f64], (s, e): (usize, usize), step: bool) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(if step { 2 * (e - s) } else { e - s });
    for i in s..e {
        if step && i > s {
            v.push((x[i - 1], y[i]));
        }
        v.push((x[i], y[i]));
    }
    v
}

/// A segment clipped to the rectangle [x0, x1] × [y0, y1] (Liang-Barsky); None if outside.
pub fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    r: (f64, f64, f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    let (x0, x1, y0, y1) = r;
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - x0), (dx, x1 - a.0), (-dy, a.1 - y0), (dy, y1 - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return None;
            }
        }
    }
    Some(((a.0 + t0 * dx, a.1 + t0 * dy), (a.0 + t1 * dx, a.1 + t1 * dy)))
}

/// A polyline cut to the rectangle: the pieces that lie inside it.
pub fn clip_polyline(points: &[(f64, f64)], r: (f64, f64, f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    if points.len() == 1 {
        let p = points[0];
        if p.0 >= r.0 && p.0 <= r.1 && p.1 >= r.2 && p.1 <= r.3 {
            out.push(vec![p]);
        }
        return out;
    }
    let mut current: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        match clip_segment(w[0], w[1], r) {
            Some((a, b)) => {
                if current.last() != Some(&a) {
                    if current.len() > 1 {
                        out.push(std::mem::take(&mut current));
                    }
                    current.clear();
                    current.push(a);
                }
                current.push(b);
            }
            None => {
                if current.len() > 1 {
                    out.push(std::mem::take(&mut current));
                }
                current.clear();
            }
        }
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_break_at_missing_values() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        let y = [1.0, f64::NAN, 2.0, 3.0, f64::INFINITY];
        assert_eq!(finite_runs(&[&x, &y]), vec![(0, 1), (2, 4)]);
    }

    #[test]
    fn steps_hold_each_value_over_the_interval_before_it() {
        let v = vertices(&[0.0, 1.0, 2.0], &[5.0, 6.0, 7.0], (0, 3), true);
        assert_eq!(v, vec![(0.0, 5.0), (0.0, 6.0), (1.0, 6.0), (1.0, 7.0), (2.0, 7.0)]);
    }

    #[test]
    fn clipping_keeps_the_inside_and_splits_at_excursions() {
        let r = (0.0, 10.0, 0.0, 1.0);
        let pieces =
            clip_polyline(&[(0.0, 0.5), (2.0, 0.5), (4.0, 3.0), (6.0, 0.5), (8.0, 0.5)], r);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0][0], (0.0, 0.5));
        assert!((pieces[0].last().unwrap().1 - 1.0).abs() < 1e-12);
        assert_eq!(*pieces[1].last().unwrap(), (8.0, 0.5));
        assert!(clip_segment((-2.0, 5.0), (-1.0, 6.0), r).is_none());
    }
}
