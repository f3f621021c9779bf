//! Bindings of the pre-tokenizer stage: one Python class, built from typed arguments (no JSON
//! crosses), with HF's `pre_tokenize_str`. The Python classes of
//! `subword.tokenizers.pre_tokenizers` wrap it.

use super::custom::{with_method, PyPreTokenizeFn};
use super::strings::PyPreTokenizedString;
use super::to_py;
use crate::pre_tokenizers::{
    Behavior, ByteLevelOptions, CustomPreTokenizer, PreTokenizer, PrependScheme, Split,
};
use pyo3::prelude::*;
use std::sync::Arc;

#[pyclass(module = "subword._core", name = "CorePreTokenizer", frozen)]
#[derive(Clone)]
pub struct PyPreTokenizer {
    pub inner: PreTokenizer,
}

fn wrap(inner: PreTokenizer) -> PyPreTokenizer {
    PyPreTokenizer { inner }
}

fn behavior(name: &str) -> PyResult<Behavior> {
    Behavior::parse(name).map_err(to_py)
}

#[pymethods]
impl PyPreTokenizer {
    #[staticmethod]
    fn whitespace() -> Self {
        wrap(PreTokenizer::Whitespace)
    }

    #[staticmethod]
    fn whitespace_split() -> Self {
        wrap(PreTokenizer::WhitespaceSplit)
    }

    #[staticmethod]
    fn bert() -> Self {
        wrap(PreTokenizer::Bert)
    }

    #[staticmethod]
    fn unicode_scripts() -> Self {
        wrap(PreTokenizer::UnicodeScripts)
    }

    #[staticmethod]
    fn fixed_length(length: usize) -> PyResult<Self> {
        if length == 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "FixedLength needs a length of at least 1",
            ));
        }
        Ok(wrap(PreTokenizer::FixedLength(length)))
    }

    #[staticmethod]
    fn punctuation(behavior_name: &str) -> PyResult<Self> {
        Ok(wrap(PreTokenizer::Punctuation(behavior(behavior_name)?)))
    }

    #[staticmethod]
    fn digits(individual_digits: bool) -> Self {
        wrap(PreTokenizer::Digits {
            individual: individual_digits,
        })
    }

    #[staticmethod]
    fn char_delimiter_split(delimiter: char) -> Self {
        wrap(PreTokenizer::CharDelimiterSplit(delimiter))
    }

    #[staticmethod]
    fn split(pattern: String, regex: bool, behavior_name: &str, invert: bool) -> PyResult<Self> {
        let b = behavior(behavior_name)?;
        Ok(wrap(PreTokenizer::Split(Box::new(
            Split::new(pattern, regex, b, invert).map_err(to_py)?,
        ))))
    }

    #[staticmethod]
    fn sequence(parts: Vec<PyRef<'_, PyPreTokenizer>>) -> Self {
        wrap(PreTokenizer::Sequence(
            parts.iter().map(|p| p.inner.clone()).collect(),
        ))
    }

    /// A Python object's `pre_tokenize(pretok)` as a pre-tokenizer (HF's
    /// `PreTokenizer.custom`).
    #[staticmethod]
    fn custom(obj: Bound<'_, PyAny>) -> PyResult<Self> {
        let obj = with_method(obj, "PreTokenizer.custom", "pre_tokenize(pretok)")?;
        Ok(wrap(PreTokenizer::Custom(CustomPreTokenizer(Arc::new(
            PyPreTokenizeFn(obj),
        )))))
    }

    /// HF's `pre_tokenize`: the splits of `pretok` not yet tokenized cut in place.
    fn pre_tokenize(&self, mut pretok: PyRefMut<'_, PyPreTokenizedString>) -> PyResult<()> {
        pretok.pre_tokenize_with(&self.inner)
    }

    /// HF's `pre_tokenize_str`: each piece and its (start, end) character offsets.
    fn pre_tokenize_str(
        &self,
        py: Python<'_>,
        text: &str,
    ) -> PyResult<Vec<(String, (usize, usize))>> {
        let pieces = py
            .allow_threads(|| self.inner.pre_tokenize_str(text))
            .map_err(to_py)?;
        // `chars[b]`: how many chars start before byte b.
        let mut chars = Vec::with_capacity(text.len() + 1);
        let mut n = 0;
        for &byte in text.as_bytes() {
            chars.push(n);
            n += usize::from(byte & 0xC0 != 0x80);
        }
        chars.push(n);
        Ok(pieces
            .into_iter()
            .map(|(piece, (s, e))| (piece, (chars[s], chars[e])))
            .collect())
    }

    #[staticmethod]
    fn byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        wrap(PreTokenizer::ByteLevel(ByteLevelOptions {
            add_prefix_space,
            trim_offsets,
            use_regex,
        }))
    }

    #[staticmethod]
    fn metaspace(replacement: char, prepend_scheme: &str, split: bool) -> PyResult<Self> {
        Ok(wrap(PreTokenizer::Metaspace {
            replacement,
            prepend_scheme: PrependScheme::parse(prepend_scheme).map_err(to_py)?,
            split,
        }))
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
