//! Python objects as pipeline stages (HF's `Normalizer.custom`, `PreTokenizer.custom`,
//! `Decoder.custom`): each core trait implemented by calling the object's method under the
//! interpreter's lock, with the strings of `strings.rs` lent for the call.
//!
//! A Python exception comes back whole (`Error::External`), raised again as the same class
//! with HF's `"TypeError: ..."` form in its message (code written for HF matches on it) and
//! the original as its `__cause__`.
//!
//! Downside: the text is copied once per call (the lent strings own their original), and
//! threads encoding a batch take turns at the lock while in Python.

use super::strings::{PyNormalizedString, PyPreTokenizedString};
use crate::decoders::DecodeFn;
use crate::error::{Error, Result};
use crate::normalizers::{NormalizeFn, Normalized};
use crate::pre_tokenizers::PreTokenizeFn;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::sync::Arc;

/// `obj` if it has the method a stage calls; else HF's kind of TypeError naming `maker` (the
/// constructor) and the `method` it wants.
pub fn with_method<'py>(obj: Bound<'py, PyAny>, maker: &str, method: &str) -> PyResult<Py<PyAny>> {
    let name = method.split('(').next().unwrap_or(method);
    if obj.hasattr(name)? {
        return Ok(obj.unbind());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{maker} expects an object with a {method} method, got {}",
        obj.get_type().name()?
    )))
}

/// `err`, raised by `what`, as the crate's error (see the module doc).
fn external(py: Python<'_>, err: PyErr, what: &str) -> Error {
    if !err.is_instance_of::<PyException>(py) {
        // KeyboardInterrupt and the like pass through untouched.
        return Error::External(Box::new(err));
    }
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let msg = format!("{what}: {kind}: {}", err.value(py));
    let wrapped = err
        .get_type(py)
        .call1((msg.clone(),))
        .ok()
        .filter(|v| v.is_instance_of::<PyException>())
        .map(PyErr::from_value)
        .unwrap_or_else(|| PyException::new_err(msg));
    wrapped.set_cause(py, Some(err));
    Error::External(Box::new(wrapped))
}

pub struct PyNormalizeFn(pub Py<PyAny>);

impl NormalizeFn for PyNormalizeFn {
    fn normalize(&self, original: &str, n: &mut Normalized) -> Result<()> {
        Python::with_gil(|py| {
            let what = "custom normalizer";
            let taken = std::mem::replace(n, Normalized::new(""));
            let lent = PyNormalizedString::lent(Arc::from(original), taken, "normalize");
            let lent = Py::new(py, lent).map_err(|e| external(py, e, what))?;
            let called = self.0.call_method1(py, "normalize", (lent.clone_ref(py),));
            if let Some(back) = lent.borrow_mut(py).take() {
                *n = back;
            }
            called.map(drop).map_err(|e| external(py, e, what))
        })
    }
}

pub struct PyPreTokenizeFn(pub Py<PyAny>);

impl PreTokenizeFn for PyPreTokenizeFn {
    fn pre_tokenize(&self, original: &str, pieces: Vec<Normalized>) -> Result<Vec<Normalized>> {
        Python::with_gil(|py| {
            let what = "custom pre-tokenizer";
            let lent = PyPreTokenizedString::lent(Arc::from(original), pieces, "pre_tokenize");
            let lent = Py::new(py, lent).map_err(|e| external(py, e, what))?;
            let called = self
                .0
                .call_method1(py, "pre_tokenize", (lent.clone_ref(py),));
            let back = lent.borrow_mut(py).take().unwrap_or_default();
            called.map_err(|e| external(py, e, what))?;
            if back.iter().any(|p| p.tokens.is_some()) {
                return Err(Error::invalid(
                    "a custom pre-tokenizer tokenized its splits; the pipeline's model \
                     tokenizes them: only split (and normalize) them in pre_tokenize",
                ));
            }
            Ok(back.into_iter().map(|p| p.normalized).collect())
        })
    }
}

pub struct PyDecodeFn(pub Py<PyAny>);

impl DecodeFn for PyDecodeFn {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Python::with_gil(|py| {
            self.0
                .call_method1(py, "decode_chain", (tokens,))
                .and_then(|r| r.extract(py))
                .map_err(|e| external(py, e, "custom decoder"))
        })
    }
}
