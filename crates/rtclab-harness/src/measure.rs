//! Measurement pieces both engines share: column-oriented time series, Jain's index, and the
//! JSON shapes of summary values (percentiles, drops by reason, queue limits).

use rtclab_core::LogHistogram;
use rtclab_net::{DropReason, QueueLimit};
use serde_json::{json, Map, Value};

/// Column-oriented time series: names and equally long f64 columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    pub names: Vec<&'static str>,
    pub data: Vec<Vec<f64>>,
}

impl Columns {
    pub fn new(names: &[&'static str]) -> Self {
        Columns { names: names.to_vec(), data: vec![Vec::new(); names.len()] }
    }
    pub fn push_row(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.data.len());
        for (c, v) in self.data.iter_mut().zip(row) {
            c.push(*v);
        }
    }
    pub fn rows(&self) -> usize {
        self.data.first().map_or(0, Vec::len)
    }
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.names.iter().position(|n| *n == name).map(|i| self.data[i].as_slice())
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe 1984): (sum x)^2 / (n sum x^2), in [1/n, 1].
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return None;
    }
    Some(s * s / (xs.len() as f64 * s2))
}

const QUANTILES: [(&str, f64); 6] =
    [("p5", 0.05), ("p25", 0.25), ("p50", 0.50), ("p75", 0.75), ("p95", 0.95), ("p99", 0.99)];

/// A finite number, or null (JSON has no NaN).
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// `{p5, p25, p50, p75, p95, p99, mean}` in ms of a histogram of nanoseconds.
pub fn percentiles_ms(h: &LogHistogram) -> Value {
    let mut m = Map::new();
    for (name, q) in QUANTILES {
        m.insert(name.into(), h.quantile(q).map_or(Value::Null, |ns| num(ns as f64 / 1e6)));
    }
    m.insert("mean".into(), h.mean().map_or(Value::Null, |ns| num(ns / 1e6)));
    Value::Object(m)
}

/// Drop counts by reason (`queue_overflow`, `random_loss`, `burst_loss`, `aqm`).
pub fn drops_json(d: &[u64]) -> Value {
    let mut m = Map::new();
    for r in DropReason::ALL {
        m.insert(r.as_str().into(), json!(d[r.index()]));
    }
    Value::Object(m)
}

pub fn queue_limit_json(q: QueueLimit) -> Value {
    match q {
        QueueLimit::Packets(n) => json!({ "packets": n }),
        QueueLimit::Bytes(b) => json!({ "bytes": b }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_known_values() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        // k equal flows and n-k starved flows give k/n.
        assert!((jain(&[5.0, 5.0, 0.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
