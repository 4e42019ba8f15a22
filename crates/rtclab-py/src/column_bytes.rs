//! A result column as Python hands it back to the core: a table's `_core.Column` or `bytes`
//! (little-endian float64), borrowed, never copied; and its values decoded.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::column::Column;

/// A column's values: `bytes` or a table's `Column`, borrowed.
pub enum ColumnBytes<'py> {
    Bytes(Bound<'py, PyBytes>),
    Column(Bound<'py, Column>),
}

impl<'py> ColumnBytes<'py> {
    pub fn of(v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(c) = v.cast::<Column>() {
            return Ok(Self::Column(c.clone()));
        }
        match v.cast::<PyBytes>() {
            Ok(b) => Ok(Self::Bytes(b.clone())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "expected a result column (_core.Column or bytes), got {}",
                v.get_type().name()?
            ))),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Bytes(b) => b.as_bytes(),
            Self::Column(c) => c.get().bytes(),
        }
    }
}

/// Little-endian float64 bytes as values; ValueError when not a whole number of them.
pub fn f64s(raw: &[u8]) -> PyResult<Vec<f64>> {
    if !raw.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!(
            "{} bytes are not a whole number of float64 values",
            raw.len()
        )));
    }
    Ok(raw.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}
