//! Ids handed to numpy without a copy: a read-only buffer (PEP 3118) over the encoder's own
//! result, which `numpy.frombuffer` wraps and keeps alive.
//!
//! Before, the ids were copied into a `bytes` object: a zero-filled allocation as large as the
//! result, then a pass writing it, each page faulted in afresh: a tenth of `encode_to_numpy`'s
//! time on English text. Here the array's memory is the vector the encoder wrote.
//!
//! Invariants: the ids never change after the object is made (`frozen`, no method mutates),
//! so a view may point into them for as long as it holds a reference to the object, which
//! CPython's `PyBuffer_Release` drops; `len` and `stride` live in the object for the same time,
//! so `shape` and `strides` may point at them.

use crate::encode::recycled;
use crate::vocab::Rank;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::{c_int, c_void};

/// A read-only, one-dimensional buffer of native-endian `u32` ids.
#[pyclass(module = "subword._core", frozen)]
pub struct IdBuffer {
    /// The encoder's result as it wrote it: shrinking it would move it (a copy); its spare
    /// room is at most the encoder's reserve of one id per two bytes of text.
    ids: Vec<Rank>,
    /// Number of ids, where `shape` points.
    len: ffi::Py_ssize_t,
    /// Bytes per id, where `strides` points.
    stride: ffi::Py_ssize_t,
}

impl IdBuffer {
    pub fn new(ids: Vec<Rank>) -> Self {
        IdBuffer {
            len: ids.len() as ffi::Py_ssize_t,
            stride: std::mem::size_of::<Rank>() as ffi::Py_ssize_t,
            ids,
        }
    }
}

/// The array is gone: its memory goes to the next result (see `encode::recycled`).
impl Drop for IdBuffer {
    fn drop(&mut self) {
        recycled::give(std::mem::take(&mut self.ids));
    }
}

#[pymethods]
impl IdBuffer {
    fn __len__(&self) -> usize {
        self.ids.len()
    }

    /// # Safety
    /// Called by CPython with a view to fill (see the module doc for why what it points at
    /// outlives the view).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err(
                "the ids are read-only; copy them (numpy: .copy()) to change them",
            ));
        }
        let this = slf.get();
        // SAFETY: `view` is non-null and CPython hands it over for us to fill; every pointer
        // stored points into `this`, which the view's `obj` reference keeps alive and unchanged.
        unsafe {
            let v = &mut *view;
            v.buf = this.ids.as_ptr() as *mut c_void;
            v.len = this.len * this.stride;
            v.readonly = 1;
            v.itemsize = this.stride;
            v.format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                c"I".as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            v.ndim = 1;
            v.shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &this.len as *const _ as *mut _
            } else {
                std::ptr::null_mut()
            };
            v.strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &this.stride as *const _ as *mut _
            } else {
                std::ptr::null_mut()
            };
            v.suboffsets = std::ptr::null_mut();
            v.internal = std::ptr::null_mut();
            v.obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    /// Nothing to free: the view's reference to this object is dropped by CPython.
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}
