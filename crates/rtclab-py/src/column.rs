//! `rtclab._core.Column`: one result-table column handed to Python without a copy.
//!
//! The engines build their tables as `Vec<f64>` columns; copying each into a `bytes` object
//! cost a 1,000-flow run ~55 ms of its work after the loop (80 MB written into fresh memory).
//! A `Column` holds the engine's vector (one vector may serve several columns of the same
//! values) and lends it through the buffer protocol (PEP 3118) as read-only little-endian
//! float64 bytes — format `B`, like `bytes` — so `numpy.frombuffer`, `memoryview`,
//! `array.frombytes`, `bytes(...)` and `_core.write_parquet` read it in place.
//! Pickled, it becomes the `bytes` it holds.

#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A table column: little-endian float64 values, read through the buffer protocol.
#[pyclass(module = "rtclab._core", frozen)]
pub struct Column {
    /// The values, stored little-endian whatever the host's order (so the bytes lent are the
    /// documented `<f8`); shared with the engine's other columns of the same values.
    data: Arc<Vec<f64>>,
}

impl Column {
    /// A column lending the engine's vector, which it may share among several of a table's
    /// columns (one Python object then serves them all).
    pub fn shared(mut data: Arc<Vec<f64>>) -> Self {
        if cfg!(target_endian = "big") {
            for x in Arc::make_mut(&mut data).iter_mut() {
                *x = f64::from_bits(x.to_bits().to_le());
            }
        }
        Column { data }
    }

    /// The column's bytes (`8 × len`, little-endian float64).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: f64 has no padding and any byte is a valid u8; the length is in bytes.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u8>(), self.data.len() * 8) }
    }
}

#[pymethods]
impl Column {
    /// Lends the bytes read-only (a request to write raises BufferError, as `bytes` does).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("a result column is read-only"));
        }
        let bytes = slf.get().bytes();
        let (ptr, len) = (bytes.as_ptr(), bytes.len());
        // SAFETY: `view` is the caller's to fill; `obj` keeps the column (and so its vector,
        // which a frozen class never changes) alive until the view is released.
        unsafe {
            (*view).obj = slf.into_any().into_ptr();
            (*view).buf = ptr as *mut c_void;
            (*view).len = len as ffi::Py_ssize_t;
            (*view).readonly = 1;
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                c"B".as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}

    /// Its length in bytes, as `len(bytes(column))`.
    fn __len__(&self) -> usize {
        self.data.len() * 8
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.bytes())
    }

    /// Equal to another column or bytes-like object with the same bytes.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(c) = other.cast::<Column>() {
            return c.get().bytes() == self.bytes();
        }
        match pyo3::buffer::PyBuffer::<u8>::get(other) {
            Ok(b) => b.to_vec(other.py()).is_ok_and(|v| v == self.bytes()),
            Err(_) => false,
        }
    }

    /// Pickled (a result sent to another process) as the `bytes` it holds.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let bytes_type = py.get_type::<PyBytes>().into_any();
        Ok((bytes_type, (PyBytes::new(py, self.bytes()),)))
    }

    fn __repr__(&self) -> String {
        format!("<rtclab._core.Column of {} float64 values>", self.data.len())
    }
}
