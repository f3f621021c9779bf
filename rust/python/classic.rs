//! Classic `</w>` BPE (`subword.ClassicBPE`'s core).

use super::to_py;
use pyo3::prelude::*;
use std::sync::Arc;

/// Classic `</w>` BPE behind `subword.ClassicBPE`.
#[pyclass(module = "subword._core", name = "ClassicCore", frozen)]
pub(super) struct PyClassic {
    pub(super) inner: Arc<crate::classic::ClassicBpe>,
}

#[pymethods]
impl PyClassic {
    #[new]
    #[pyo3(signature = (tokens, merges, suffix, unk_token))]
    fn new(
        tokens: Vec<String>,
        merges: Vec<(String, String)>,
        suffix: &str,
        unk_token: Option<&str>,
    ) -> PyResult<Self> {
        Ok(PyClassic {
            inner: Arc::new(
                crate::classic::ClassicBpe::new(tokens, merges, suffix, unk_token)
                    .map_err(to_py)?,
            ),
        })
    }

    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        py.allow_threads(|| self.inner.encode(text)).map_err(to_py)
    }

    fn decode(&self, ids: Vec<u32>) -> PyResult<String> {
        self.inner.decode(&ids).map_err(to_py)
    }

    fn tokens(&self) -> Vec<String> {
        self.inner.tokens().to_vec()
    }

    fn merges(&self) -> Vec<(String, String)> {
        self.inner.merges().to_vec()
    }

    fn suffix(&self) -> String {
        self.inner.suffix().to_string()
    }

    fn unk_token(&self) -> Option<String> {
        self.inner.unk_token().map(str::to_string)
    }
}
