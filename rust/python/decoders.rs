//! Bindings of the decoder stage: one Python class, built from typed arguments (no JSON
//! crosses), with HF's `decode`. The Python classes of `subword.tokenizers.decoders` wrap it.

use super::custom::{with_method, PyDecodeFn};
use super::to_py;
use crate::decoders::{ByteLevelOptions, CustomDecoder, Decoder, PrependScheme};
use crate::normalizers::{Replace, ReplacePattern};
use pyo3::prelude::*;

#[pyclass(module = "subword._core", name = "CoreDecoder", frozen)]
#[derive(Clone)]
pub struct PyDecoder {
    pub inner: Decoder,
}

fn wrap(inner: Decoder) -> PyDecoder {
    PyDecoder { inner }
}

#[pymethods]
impl PyDecoder {
    #[staticmethod]
    fn byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        wrap(Decoder::ByteLevel(ByteLevelOptions {
            add_prefix_space,
            trim_offsets,
            use_regex,
        }))
    }

    #[staticmethod]
    fn byte_fallback() -> Self {
        wrap(Decoder::ByteFallback)
    }

    #[staticmethod]
    fn fuse() -> Self {
        wrap(Decoder::Fuse)
    }

    #[staticmethod]
    fn wordpiece(prefix: String, cleanup: bool) -> Self {
        wrap(Decoder::WordPiece { prefix, cleanup })
    }

    #[staticmethod]
    fn metaspace(replacement: char, prepend_scheme: &str, split: bool) -> PyResult<Self> {
        Ok(wrap(Decoder::Metaspace {
            replacement,
            prepend_scheme: PrependScheme::parse(prepend_scheme).map_err(to_py)?,
            split,
        }))
    }

    #[staticmethod]
    fn bpe(suffix: String) -> Self {
        wrap(Decoder::Bpe { suffix })
    }

    #[staticmethod]
    fn ctc(pad_token: String, word_delimiter_token: String, cleanup: bool) -> Self {
        wrap(Decoder::Ctc {
            pad_token,
            word_delimiter_token,
            cleanup,
        })
    }

    #[staticmethod]
    fn strip(content: char, left: usize, right: usize) -> Self {
        wrap(Decoder::Strip {
            content,
            start: left,
            stop: right,
        })
    }

    #[staticmethod]
    fn replace(pattern: String, content: String, regex: bool) -> PyResult<Self> {
        let p = ReplacePattern::new(pattern, regex);
        Ok(wrap(Decoder::Replace(
            Replace::new(p, content).map_err(to_py)?,
        )))
    }

    #[staticmethod]
    fn sequence(parts: Vec<PyRef<'_, PyDecoder>>) -> Self {
        wrap(Decoder::Sequence(
            parts.iter().map(|p| p.inner.clone()).collect(),
        ))
    }

    /// A Python object's `decode_chain` as a decoder (HF's `Decoder.custom`).
    #[staticmethod]
    fn custom(obj: Bound<'_, PyAny>) -> PyResult<Self> {
        let obj = with_method(obj, "Decoder.custom", "decode_chain(tokens) -> list[str]")?;
        Ok(wrap(Decoder::Custom(CustomDecoder(std::sync::Arc::new(
            PyDecodeFn(obj),
        )))))
    }

    fn decode(&self, py: Python<'_>, tokens: Vec<String>) -> PyResult<String> {
        py.allow_threads(|| self.inner.decode(tokens))
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
