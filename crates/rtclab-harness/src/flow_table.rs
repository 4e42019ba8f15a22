//! The `flows` table built as a run goes: each bin's rows are written when the bin closes, so
//! what is left when the run ends is the controller-series columns and the columns that held
//! one value throughout.
//!
//! [`flow_meter::flow_columns`] builds the same table from the meters after the run (the
//! emulator, whose meters are joined only then, still does). With 1,000 flows for a minute
//! (300,000 rows) that was the largest piece of the simulator's work after its loop: reading
//! five per-flow vectors per row, by then long out of the cache, and writing 80 MB of fresh
//! columns. When a bin closes its values have just been written (the controller samples a
//! moment before) and each column grows at its end. A column whose rows so far are all one
//! value is not written at all until a row differs: a TCP run's media and controller columns
//! never are, and end as one shared vector per value.
//!
//! Same table, value for value and bit for bit, as `flow_columns` (tested against it).

use std::sync::Arc;

use rtclab_core::{Time, TimeDelta};

use crate::flow_meter::{self, FlowMeter};
use crate::measure::{Columns, OneValueColumns, FLOW_COLUMNS};

/// The `flows` table of the bins closed so far.
#[derive(Clone, Debug)]
pub struct FlowTable {
    /// Per flow: when it runs, `[start, stop)`; it has a row in every bin that overlaps it.
    spans: Vec<(Time, Time)>,
    bin: TimeDelta,
    /// The [`FLOW_COLUMNS`], as far as built.
    columns: Vec<Built>,
    /// Rows so far.
    rows: usize,
    /// Rows a column is given room for when it is first written (the whole run's, at most).
    expected_rows: usize,
    /// The closing bin's rows, row-major (reused).
    scratch: Vec<f64>,
}

/// Rows a column is given room for at most when first written (128 MB; a longer table grows as
/// a `Vec` does): a forced run beyond the cost limits should not ask for its whole table at once.
const RESERVE_ROWS: usize = 1 << 24;

/// A column of the table so far.
#[derive(Clone, Debug)]
enum Built {
    /// Every row so far holds the value with these bits (None: no row yet).
    Same(Option<u64>),
    Values(Arc<Vec<f64>>),
}

impl FlowTable {
    /// A table for flows running over `spans`, binned by `bin`, expecting about `expected_rows`
    /// rows in all.
    pub fn new(spans: Vec<(Time, Time)>, bin: TimeDelta, expected_rows: usize) -> Self {
        FlowTable {
            spans,
            bin,
            columns: vec![Built::Same(None); FLOW_COLUMNS.len()],
            rows: 0,
            expected_rows,
            scratch: Vec::new(),
        }
    }

    fn active(&self, i: usize, b: usize) -> bool {
        let t0 = Time::ZERO + TimeDelta::from_nanos(self.bin.as_nanos() * b as i64);
        let (start, stop) = self.spans[i];
        start < t0 + self.bin && stop > t0
    }

    /// Adds bin `b`'s rows (the next bin, closed: its meters and controller samples final).
    pub fn close_bin(&mut self, b: usize, meters: &[FlowMeter]) {
        let k = FLOW_COLUMNS.len();
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        for (i, f) in meters.iter().enumerate() {
            if self.active(i, b) {
                let at = scratch.len();
                scratch.resize(at + k, 0.0);
                flow_meter::base_row(f, i, b, &mut scratch[at..]);
            }
        }
        let n = scratch.len() / k;
        for (j, col) in self.columns.iter_mut().enumerate() {
            let values = || scratch.iter().skip(j).step_by(k).copied();
            match col {
                Built::Same(bits) => {
                    let first = bits.or_else(|| values().next().map(f64::to_bits));
                    if values().all(|v| Some(v.to_bits()) == first) {
                        *bits = first;
                        continue;
                    }
                    let room = self.expected_rows.min(RESERVE_ROWS).max(self.rows + n);
                    let mut v = Vec::with_capacity(room);
                    v.resize(self.rows, first.map_or(0.0, f64::from_bits));
                    v.extend(values());
                    *col = Built::Values(Arc::new(v));
                }
                Built::Values(v) => Arc::make_mut(v).extend(values()),
            }
        }
        self.rows += n;
        self.scratch = scratch;
    }

    /// The table of the `closed` bins closed so far: [`FLOW_COLUMNS`] then the controller
    /// series ([`flow_meter::cc_series_names`]), as [`flow_meter::flow_columns`] writes it.
    pub fn columns(&self, meters: &[FlowMeter], closed: usize) -> Columns {
        let names = flow_meter::cc_series_names(meters);
        let series = flow_meter::series_of(meters, &names);
        let rows = self.rows;
        // One vector per value among the columns that hold one value throughout.
        let mut one = OneValueColumns::new(rows);
        let mut c = Columns::new(&FLOW_COLUMNS);
        for (slot, col) in c.data.iter_mut().zip(&self.columns) {
            *slot = match col {
                Built::Same(Some(bits)) => one.of(f64::from_bits(*bits)),
                Built::Same(None) => Arc::default(),
                Built::Values(v) => v.clone(),
            };
        }
        // The controller series, row by row (a column no flow reports is NaN throughout).
        for (k, name) in names.iter().enumerate() {
            c.names.push(name);
            if series.iter().all(|s| s[k].is_none()) {
                c.data.push(one.of(f64::NAN));
                continue;
            }
            let mut v = Vec::with_capacity(rows);
            for b in 0..closed {
                for (i, s) in series.iter().enumerate() {
                    if self.active(i, b) {
                        v.push(flow_meter::series_value(s[k], b));
                    }
                }
            }
            c.data.push(Arc::new(v));
        }
        c
    }
}
