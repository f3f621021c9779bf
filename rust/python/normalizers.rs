//! Bindings of the normalizer stage: one Python class, built from typed arguments (no JSON
//! crosses), with HF's `normalize_str`. The Python classes of `subword.tokenizers.normalizers`
//! wrap it.

use super::custom::{with_method, PyNormalizeFn};
use super::strings::PyNormalizedString;
use super::to_py;
use crate::normalizers::{
    CustomNormalizer, Normalized, Normalizer, Precompiled, Replace, ReplacePattern, UnicodeForm,
};
use pyo3::prelude::*;
use std::sync::Arc;

#[pyclass(module = "subword._core", name = "CoreNormalizer", frozen)]
#[derive(Clone)]
pub struct PyNormalizer {
    pub inner: Normalizer,
}

fn wrap(inner: Normalizer) -> PyNormalizer {
    PyNormalizer { inner }
}

#[pymethods]
impl PyNormalizer {
    /// `form`: "NFC", "NFD", "NFKC" or "NFKD".
    #[staticmethod]
    fn unicode(form: &str) -> PyResult<Self> {
        let f = match form {
            "NFC" => UnicodeForm::Nfc,
            "NFD" => UnicodeForm::Nfd,
            "NFKC" => UnicodeForm::Nfkc,
            "NFKD" => UnicodeForm::Nfkd,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown Unicode form {other:?}: use NFC, NFD, NFKC or NFKD"
                )))
            }
        };
        Ok(wrap(Normalizer::Unicode(f)))
    }

    #[staticmethod]
    fn lowercase() -> Self {
        wrap(Normalizer::Lowercase)
    }

    #[staticmethod]
    fn strip_accents() -> Self {
        wrap(Normalizer::StripAccents)
    }

    #[staticmethod]
    fn byte_level() -> Self {
        wrap(Normalizer::ByteLevel)
    }

    #[staticmethod]
    fn nmt() -> Self {
        wrap(Normalizer::Nmt)
    }

    #[staticmethod]
    fn strip(left: bool, right: bool) -> Self {
        wrap(Normalizer::Strip { left, right })
    }

    #[staticmethod]
    fn prepend(prepend: String) -> Self {
        wrap(Normalizer::Prepend(prepend))
    }

    /// `charsmap`: a SentencePiece model's `precompiled_charsmap` bytes.
    #[staticmethod]
    fn precompiled(charsmap: Vec<u8>) -> PyResult<Self> {
        Ok(wrap(Normalizer::Precompiled(
            Precompiled::new(charsmap).map_err(to_py)?,
        )))
    }

    /// `pattern` is matched literally unless `regex`.
    #[staticmethod]
    fn replace(pattern: String, content: String, regex: bool) -> PyResult<Self> {
        let p = ReplacePattern::new(pattern, regex);
        Ok(wrap(Normalizer::Replace(
            Replace::new(p, content).map_err(to_py)?,
        )))
    }

    #[staticmethod]
    fn bert(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
    ) -> Self {
        wrap(Normalizer::Bert {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
        })
    }

    #[staticmethod]
    fn sequence(parts: Vec<PyRef<'_, PyNormalizer>>) -> Self {
        wrap(Normalizer::Sequence(
            parts.iter().map(|p| p.inner.clone()).collect(),
        ))
    }

    /// A Python object's `normalize(normalized)` as a normalizer (HF's `Normalizer.custom`).
    #[staticmethod]
    fn custom(obj: Bound<'_, PyAny>) -> PyResult<Self> {
        let obj = with_method(obj, "Normalizer.custom", "normalize(normalized)")?;
        Ok(wrap(Normalizer::Custom(CustomNormalizer(Arc::new(
            PyNormalizeFn(obj),
        )))))
    }

    fn normalize_str(&self, py: Python<'_>, text: &str) -> PyResult<String> {
        py.allow_threads(|| self.inner.normalize_str(text))
            .map_err(to_py)
    }

    /// HF's `normalize`: `normalized` edited in place.
    fn normalize(&self, mut normalized: PyRefMut<'_, PyNormalizedString>) -> PyResult<()> {
        normalized.normalize_with(&self.inner)
    }

    /// (normalized text, per normalized byte the original byte range).
    fn normalize_aligned(
        &self,
        py: Python<'_>,
        text: &str,
    ) -> PyResult<(String, Vec<(usize, usize)>)> {
        py.allow_threads(|| {
            let mut n = Normalized::new(text);
            self.inner.normalize(text, &mut n)?;
            let align = n.alignments().to_vec();
            Ok((n.into_normalized(), align))
        })
        .map_err(to_py)
    }

    /// HF's tokenizer.json form of the component, as text (what HF's `__getstate__` returns).
    fn to_json_str(&self) -> PyResult<String> {
        Ok(self.inner.to_json().map_err(to_py)?.to_string())
    }

    /// The tokenizer.json form as Python values.
    fn state(&self, py: Python<'_>) -> PyResult<PyObject> {
        super::values::to_py(py, &self.inner.to_json().map_err(to_py)?)
    }
}
