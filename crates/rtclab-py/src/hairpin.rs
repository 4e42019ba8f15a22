//! Hairpin's offline table for Python (`rtclab hairpin`, `rtclab repro hairpin`): solving a
//! whole table with the GIL released, and strict cell lookups whose errors name what is off
//! the solved grid.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rtclab_transport::hairpin::Table;

/// The whole table for weight `lambda_` in the released byte layout (462,825 cells),
/// solved on `threads` threads (0 = every core).
#[pyfunction]
#[pyo3(signature = (lambda_, threads = 0))]
pub fn hairpin_table<'py>(
    py: Python<'py>,
    lambda_: f64,
    threads: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let t = py
        .detach(move || Table::solve(lambda_, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, t.as_bytes()))
}

/// The parity count of one cell of `table` (bytes in the released layout): loss rate on the
/// 0.01 grid in [0, 0.5], frame size 5..55 (multiple of 5), opportunities 1..15, packets 1..55.
#[pyfunction]
pub fn hairpin_cell(
    table: &[u8],
    loss: f64,
    frame: usize,
    layers: usize,
    packets: usize,
) -> PyResult<u8> {
    let t =
        Table::from_bytes(0.0, table.to_vec()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    t.get(loss, frame, layers, packets).map_err(|e| PyValueError::new_err(e.to_string()))
}
