//! The run plots' two passes over the `flows` table that are too slow in Python at 1,000 flows
//! (300,000 rows) now that the plots do without numpy (issue 45, point 3): the time × flow
//! pivot of a column, and the spread across flows per bin. Both compute what the numpy code
//! they replace computed, value for value: `np.unique` of the bin times and flow ids with the
//! last row winning in a cell, and `np.nanpercentile`'s linear method (numpy's `_lerp`, step
//! for step; NaN where no flow has a value).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::column_bytes::{f64s, ColumnBytes};

/// (bin end times, flow ids, one series per flow), each as little-endian float64 bytes.
type FlowSeries = (Py<PyBytes>, Vec<i64>, Vec<Py<PyBytes>>);

fn to_bytes(py: Python<'_>, v: &[f64]) -> Py<PyBytes> {
    let raw: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    PyBytes::new(py, &raw).unbind()
}

/// The flows table's `value` column as one series per flow over the table's sorted distinct
/// bin times (NaN where a flow has no row): (times, flow ids, series), the flows in id order,
/// only those in `ids` when given. `time`, `flow` and `value` are the table's columns (a
/// `_core.Column` or little-endian float64 bytes).
#[pyfunction]
#[pyo3(signature = (time, flow, value, ids=None))]
pub fn flow_series(
    py: Python<'_>,
    time: &Bound<'_, PyAny>,
    flow: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    ids: Option<Vec<i64>>,
) -> PyResult<FlowSeries> {
    let (t, f, v) = (ColumnBytes::of(time)?, ColumnBytes::of(flow)?, ColumnBytes::of(value)?);
    let (t, f, v) = (f64s(t.as_bytes())?, f64s(f.as_bytes())?, f64s(v.as_bytes())?);
    if t.len() != f.len() || t.len() != v.len() {
        return Err(PyValueError::new_err(format!(
            "flow_series: columns of {}, {} and {} rows",
            t.len(),
            f.len(),
            v.len()
        )));
    }
    let mut times = t.clone();
    times.sort_by(f64::total_cmp);
    times.dedup_by(|a, b| a == b);
    let mut all: Vec<i64> = f.iter().map(|&x| x as i64).collect();
    all.sort_unstable();
    all.dedup();
    if let Some(wanted) = ids {
        all.retain(|id| wanted.contains(id));
    }
    let mut series = vec![vec![f64::NAN; times.len()]; all.len()];
    for ((&tr, &fr), &vr) in t.iter().zip(&f).zip(&v) {
        let Ok(k) = all.binary_search(&(fr as i64)) else { continue };
        if let Ok(i) = times.binary_search_by(|x| x.total_cmp(&tr)) {
            series[k][i] = vr;
        }
    }
    let out = series.iter().map(|s| to_bytes(py, s)).collect();
    Ok((to_bytes(py, &times), all, out))
}

/// numpy's `_lerp`: `a + (b - a) * t`, or `b - (b - a) * (1 - t)` from t = 0.5 on.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// `np.nanpercentile(values, percents)` (method "linear") of one set of values, sorted in
/// place; NaN for each percent when no value is present.
pub fn nan_percentiles(values: &mut Vec<f64>, percents: &[f64]) -> Vec<f64> {
    values.retain(|x| !x.is_nan());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    percents
        .iter()
        .map(|&p| {
            if n == 0 {
                return f64::NAN;
            }
            let index = (n - 1) as f64 * (p / 100.0);
            if index >= (n - 1) as f64 {
                // numpy points both neighbours at the last value, with gamma = index + 1.
                let last = values[n - 1];
                return lerp(last, last, index + 1.0);
            }
            let below = index.floor();
            let lo = below as usize;
            lerp(values[lo], values[lo + 1], index - below)
        })
        .collect()
}

/// A series' values: a result column (`_core.Column`, bytes) or any buffer of float64 (a
/// memoryview of format "d", an `array("d")`).
fn values_of(py: Python<'_>, s: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    if let Ok(raw) = ColumnBytes::of(s) {
        return f64s(raw.as_bytes());
    }
    let buf = pyo3::buffer::PyBuffer::<f64>::get(s)?;
    buf.to_vec(py)
}

/// Per bin, the `percents` of the values the `series` (equally long) have there, ignoring NaN:
/// one series per percent (`np.nanpercentile(matrix, percents, axis=1)`).
#[pyfunction]
pub fn spread(
    py: Python<'_>,
    series: Vec<Bound<'_, PyAny>>,
    percents: Vec<f64>,
) -> PyResult<Vec<Py<PyBytes>>> {
    let cols: Vec<Vec<f64>> = series.iter().map(|s| values_of(py, s)).collect::<PyResult<_>>()?;
    let bins = cols.first().map_or(0, Vec::len);
    if let Some(c) = cols.iter().find(|c| c.len() != bins) {
        return Err(PyValueError::new_err(format!(
            "spread: series of {} and {} values",
            bins,
            c.len()
        )));
    }
    let mut out = vec![Vec::with_capacity(bins); percents.len()];
    let mut across = Vec::with_capacity(cols.len());
    for i in 0..bins {
        across.clear();
        across.extend(cols.iter().map(|c| c[i]));
        for (k, q) in nan_percentiles(&mut across, &percents).into_iter().enumerate() {
            out[k].push(q);
        }
    }
    Ok(out.iter().map(|s| to_bytes(py, s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_as_numpy_does() {
        // np.nanpercentile([3, nan, 1, 2, 10], [0, 10, 50, 90, 100]) = [1, 1.3, 2.5, 7.9, 10]
        let mut v = vec![3.0, f64::NAN, 1.0, 2.0, 10.0];
        let got = nan_percentiles(&mut v, &[0.0, 10.0, 50.0, 90.0, 100.0]);
        assert_eq!(got[0], 1.0);
        assert!((got[1] - 1.3).abs() < 1e-12 && (got[2] - 2.5).abs() < 1e-12);
        assert!((got[3] - 7.9).abs() < 1e-12 && got[4] == 10.0);
        assert!(nan_percentiles(&mut vec![f64::NAN], &[50.0])[0].is_nan());
        assert_eq!(nan_percentiles(&mut vec![4.0], &[10.0, 90.0]), vec![4.0, 4.0]);
    }
}
