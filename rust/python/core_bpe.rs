//! The rank-based byte-level BPE encoder (`subword.Encoding`'s core) and its streaming state:
//! texts in, ids as ready-made Python ints out, the GIL released while encoding.

use super::args::{borrow_all, selections, texts, type_name, Threads};
use super::id_buffer::IdBuffer;
use super::{id_lists, to_py};
use crate::encode::{recycled, Encoder, FlatBatch, Stream};
use crate::formats::{byte_unicode, gpt2, hf_json, tekken, tiktoken};
use crate::pool;
use crate::pretokenize::Pattern;
use crate::vocab::{Rank, Vocab};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The Rust encoder behind `subword.Encoding`.
#[pyclass(module = "subword._core", name = "CoreBPE", frozen)]
pub(super) struct PyCore {
    pub(super) inner: Arc<Encoder>,
    /// Learned merges, for encoders that came out of training.
    merges: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    /// One Python int per id, made once: building a result list then costs an incref per id
    /// instead of an int allocation per id, which otherwise dominates `encode` on English text.
    ints: Vec<Py<PyAny>>,
    /// The pipeline over this encoder's tokenizer.json form, without and with the space put
    /// first, made on first use (`CorePipeline.of_core_bpe`): every `subword.Tokenizer` sharing
    /// the encoder shares it and its piece caches, rather than building the merge list again
    /// (cl100k's: 0.3 s and a few hundred MB while it is built).
    pub(super) pipelines: [std::sync::OnceLock<Arc<crate::pipeline::Pipeline>>; 2],
}

/// One Python int per id below `n`, made once: building a result list then costs an incref per
/// id instead of an int allocation per id.
pub(super) fn py_ints(n: u32) -> Vec<Py<PyAny>> {
    Python::with_gil(|py| {
        (0..n)
            .map(|id| match id.into_pyobject(py) {
                Ok(i) => i.into_any().unbind(),
                Err(never) => match never {},
            })
            .collect()
    })
}

/// A pattern as Python gives it: one regex (or built-in name), or a sequence of regexes that
/// isolate their matches in turn (`Pattern::isolated_splits`).
#[derive(FromPyObject)]
enum PatternArg {
    One(String),
    Chain(Vec<String>),
}

impl PatternArg {
    fn compile(&self) -> PyResult<Pattern> {
        match self {
            PatternArg::One(p) => Pattern::new(p),
            PatternArg::Chain(parts) => Pattern::isolated_splits(parts),
        }
        .map_err(to_py)
    }
}

fn build(
    ranks: Vec<(Vec<u8>, Rank)>,
    specials: Vec<(String, Rank)>,
    pattern: &PatternArg,
    normalize: Option<&str>,
) -> PyResult<PyCore> {
    let pattern = pattern.compile()?;
    let vocab = Vocab::new(ranks, specials).map_err(to_py)?;
    let encoder = Encoder::new(vocab, pattern).map_err(to_py)?;
    let encoder = match normalize {
        None => encoder,
        Some("NFC") => encoder.with_nfc(),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "normalize={other:?} is not supported: give None or \"NFC\""
            )))
        }
    };
    wrap(encoder, None)
}

/// The core for a parsed byte-level BPE tokenizer.json, and its `add_prefix_space`.
fn from_hf(hf: hf_json::HfBpe) -> PyResult<(PyCore, bool)> {
    let pattern = Pattern::isolated_splits(&hf.patterns).map_err(to_py)?;
    let merges = hf.merges.clone();
    let vocab = Vocab::with_merges(hf.ranks, hf.specials, &hf.merges).map_err(to_py)?;
    let mut encoder = Encoder::new(vocab, pattern).map_err(to_py)?;
    if !hf.whole_lookup {
        encoder = encoder.without_whole_lookup();
    }
    if hf.nfc {
        encoder = encoder.with_nfc();
    }
    Ok((wrap(encoder, Some(merges))?, hf.prefix_space))
}

pub(super) fn wrap(encoder: Encoder, merges: Option<Vec<(Vec<u8>, Vec<u8>)>>) -> PyResult<PyCore> {
    let inner = Arc::new(encoder);
    let ints = py_ints(inner.vocab().max_token_value() + 1);
    Ok(PyCore {
        inner,
        merges,
        ints,
        pipelines: Default::default(),
    })
}

/// Python's cyclic garbage collector kept off while a batch's result lists are made, and put
/// back as it was. Each new list is a tracked container, so tens of thousands of them set off
/// collections that walk every list made so far (a third of a batch call's time on 33 K
/// paragraphs of code). The GIL is held from start to end, so no other Python code runs while
/// the collector is off; counts are kept, so a collection that is due runs after the call.
struct GcPause<'py> {
    gc: Option<Bound<'py, pyo3::types::PyModule>>,
}

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        if gc.call_method0("isenabled")?.is_truthy()? {
            gc.call_method0("disable")?;
            Ok(GcPause { gc: Some(gc) })
        } else {
            Ok(GcPause { gc: None })
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.gc {
            // Re-enabling cannot fail short of a broken interpreter; nothing to report it to.
            let _ = gc.call_method0("enable");
        }
    }
}

impl PyCore {
    /// `encode` with tiktoken's special-token arguments, the GIL released.
    fn encode_ids(
        &self,
        py: Python<'_>,
        text: &str,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Rank>> {
        let (a, d) = selections(allowed_special, disallowed_special)?;
        py.allow_threads(|| self.inner.encode(text, &a, &d).map(|e| e.ids))
            .map_err(to_py)
    }

    fn token_text(&self, id: Rank) -> String {
        let v = self.inner.vocab();
        match v.token_bytes(id) {
            Some(b) if v.is_special(id) => String::from_utf8_lossy(b).into_owned(),
            Some(b) => byte_unicode::encode(b),
            None => String::new(),
        }
    }

    /// `ids` as a Python list, filled on the process-wide number of threads when long.
    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        // Every id comes from the vocabulary, so it indexes `ints`.
        if ids.len() < id_lists::PARALLEL_MIN_IDS {
            return PyList::new(py, ids.iter().map(|&id| self.ints[id as usize].bind(py)));
        }
        let threads = crate::pool::parallelism();
        let mut lists = id_lists::lists_of(py, &self.ints, &[ids], threads)?;
        Ok(lists.pop().expect("one list per input"))
    }

    /// A list of id lists, filled on `threads` threads.
    fn id_lists<'py>(
        &self,
        py: Python<'py>,
        batch: &FlatBatch,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let _pause = GcPause::new(py)?;
        let slices: Vec<&[Rank]> = batch.texts().collect();
        let threads = crate::pool::resolve(threads).map_err(to_py)?;
        PyList::new(py, id_lists::lists_of(py, &self.ints, &slices, threads)?)
    }
}

#[pymethods]
impl PyCore {
    #[new]
    #[pyo3(signature = (mergeable_ranks, special_tokens, pattern, normalize=None))]
    fn new(
        mergeable_ranks: &Bound<'_, PyDict>,
        special_tokens: &Bound<'_, PyDict>,
        pattern: PatternArg,
        normalize: Option<&str>,
    ) -> PyResult<Self> {
        let mut ranks = Vec::with_capacity(mergeable_ranks.len());
        for (k, v) in mergeable_ranks.iter() {
            let bytes = k.downcast::<PyBytes>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "mergeable_ranks keys must be bytes, got {}",
                    type_name(&k)
                ))
            })?;
            let rank: Rank = v.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "rank of {} must be an integer in 0..2**32, got {}",
                    k.repr().map(|r| r.to_string()).unwrap_or_default(),
                    v.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            ranks.push((bytes.as_bytes().to_vec(), rank));
        }
        let specials: Vec<(String, Rank)> = special_tokens
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<Rank>()?)))
            .collect::<PyResult<_>>()?;
        build(ranks, specials, &pattern, normalize)
    }

    #[staticmethod]
    #[pyo3(signature = (path, special_tokens, pattern, normalize=None))]
    fn from_tiktoken_file(
        py: Python<'_>,
        path: PathBuf,
        special_tokens: Vec<(String, Rank)>,
        pattern: PatternArg,
        normalize: Option<&str>,
    ) -> PyResult<Self> {
        let ranks = py.allow_threads(|| tiktoken::load(&path)).map_err(to_py)?;
        build(ranks, special_tokens, &pattern, normalize)
    }

    /// Mistral's `tekken.json`; also returns its pattern.
    #[staticmethod]
    fn from_tekken_file(py: Python<'_>, path: PathBuf) -> PyResult<(Self, String)> {
        let t = py.allow_threads(|| tekken::load(&path)).map_err(to_py)?;
        let core = build(
            t.ranks,
            t.specials,
            &PatternArg::One(t.pattern.clone()),
            None,
        )?;
        Ok((core, t.pattern))
    }

    /// `"NFC"` if texts are put in NFC first, else None.
    fn normalize(&self) -> Option<&'static str> {
        self.inner.normalizes_nfc().then_some("NFC")
    }

    /// Returns the core and the special tokens found in encoder.json.
    #[staticmethod]
    fn from_gpt2_files(
        py: Python<'_>,
        encoder_json: PathBuf,
        vocab_bpe: PathBuf,
        pattern: &str,
    ) -> PyResult<(Self, Vec<(String, Rank)>)> {
        let files = py
            .allow_threads(|| gpt2::load(&encoder_json, &vocab_bpe))
            .map_err(to_py)?;
        let specials = files.specials.clone();
        let pattern = PatternArg::One(pattern.to_string());
        Ok((
            build(files.ranks, files.specials, &pattern, None)?,
            specials,
        ))
    }

    /// A byte-level BPE `tokenizer.json` of HF tokenizers, given as text; also returns its
    /// `add_prefix_space`.
    #[staticmethod]
    fn from_hf_json(py: Python<'_>, text: &str, origin: &str) -> PyResult<(Self, bool)> {
        let hf = py
            .allow_threads(|| hf_json::parse(text, origin))
            .map_err(to_py)?;
        from_hf(hf)
    }

    /// [`Self::from_hf_json`] reading the file here, so its text never passes through Python.
    #[staticmethod]
    fn from_hf_file(py: Python<'_>, path: PathBuf) -> PyResult<(Self, bool)> {
        let hf = py.allow_threads(|| hf_json::load(&path)).map_err(to_py)?;
        from_hf(hf)
    }

    #[pyo3(signature = (prefix_space=false))]
    fn to_hf_json(&self, prefix_space: bool) -> String {
        hf_json::render(&self.inner, prefix_space)
    }

    /// A token in HF's byte-level form (specials as their text); None for an unknown id.
    fn id_to_token(&self, id: Rank) -> Option<String> {
        self.inner.token_bytes(id).ok().map(|_| self.token_text(id))
    }

    fn token_to_id(&self, token: &str) -> Option<Rank> {
        if let Some(id) = self.inner.vocab().special_id(token) {
            return Some(id);
        }
        byte_unicode::decode(token).and_then(|b| self.inner.vocab().rank(&b))
    }

    /// {token in byte-level form: id}, specials included.
    fn get_vocab(&self) -> HashMap<String, Rank> {
        let v = self.inner.vocab();
        v.mergeable()
            .into_iter()
            .map(|(b, r)| (byte_unicode::encode(b), r))
            .chain(v.specials().into_iter().map(|(t, r)| (t.to_string(), r)))
            .collect()
    }

    fn dump_tiktoken(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.allow_threads(|| tiktoken::dump(self.inner.vocab(), &path))
            .map_err(to_py)
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| self.inner.encode_ordinary(text))
            .map_err(to_py)?;
        let list = self.id_list(py, &ids);
        recycled::give(ids);
        list
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_ids(py, text, allowed_special, disallowed_special)?;
        let list = self.id_list(py, &ids);
        recycled::give(ids);
        list
    }

    /// Ids as a read-only buffer of native-endian u32, for `numpy.frombuffer` (no copy).
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<IdBuffer> {
        let ids = self.encode_ids(py, text, allowed_special, disallowed_special)?;
        Ok(IdBuffer::new(ids))
    }

    fn count(
        &self,
        py: Python<'_>,
        text: &str,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let (a, d) = selections(allowed_special, disallowed_special)?;
        py.allow_threads(|| self.inner.count(text, &a, &d))
            .map_err(to_py)
    }

    fn encode_with_unstable(
        &self,
        py: Python<'_>,
        text: &str,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<Rank>, Vec<Vec<Rank>>)> {
        let (a, d) = selections(allowed_special, disallowed_special)?;
        let (ids, completions) = py
            .allow_threads(|| self.inner.encode_with_unstable(text, &a, &d))
            .map_err(to_py)?;
        Ok((ids, completions.into_iter().collect()))
    }

    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts_: &Bound<'py, PyAny>,
        num_threads: Threads,
    ) -> PyResult<Bound<'py, PyList>> {
        let owners = texts(texts_)?;
        let t = borrow_all(&owners)?;
        let batch = py
            .allow_threads(|| self.inner.encode_ordinary_batch(&t, num_threads.0))
            .map_err(to_py)?;
        self.id_lists(py, &batch, num_threads.0)
    }

    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts_: &Bound<'py, PyAny>,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
        num_threads: Threads,
    ) -> PyResult<Bound<'py, PyList>> {
        let owners = texts(texts_)?;
        let t = borrow_all(&owners)?;
        let (a, d) = selections(allowed_special, disallowed_special)?;
        let batch = py
            .allow_threads(|| self.inner.encode_batch(&t, &a, &d, num_threads.0))
            .map_err(to_py)?;
        self.id_lists(py, &batch, num_threads.0)
    }

    fn count_batch(
        &self,
        py: Python<'_>,
        texts_: &Bound<'_, PyAny>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        num_threads: Threads,
    ) -> PyResult<Vec<usize>> {
        let owners = texts(texts_)?;
        let t = borrow_all(&owners)?;
        let (a, d) = selections(allowed_special, disallowed_special)?;
        py.allow_threads(|| self.inner.count_batch(&t, &a, &d, num_threads.0))
            .map_err(to_py)
    }

    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| self.inner.encode_bytes(data))
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    fn encode_single_piece<'py>(
        &self,
        py: Python<'py>,
        piece: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| self.inner.encode_single_piece(piece))
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    /// A streaming encoder over this one (`Encoding.encode_iterable`).
    #[pyo3(signature = (allowed_special, disallowed_special, min_try=None))]
    fn stream(
        slf: &Bound<'_, Self>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        min_try: Option<usize>,
    ) -> PyResult<PyStream> {
        let (a, d) = selections(allowed_special, disallowed_special)?;
        let state = slf.get().inner.stream(&a, &d, min_try).map_err(to_py)?;
        Ok(PyStream {
            core: slf.clone().unbind(),
            state,
        })
    }

    fn encode_single_token(&self, piece: &[u8]) -> PyResult<Rank> {
        self.inner.encode_single_token(piece).map_err(to_py)
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .allow_threads(|| self.inner.decode_bytes(&tokens))
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn decode_single_token_bytes<'py>(
        &self,
        py: Python<'py>,
        token: Rank,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            self.inner.token_bytes(token).map_err(to_py)?,
        ))
    }

    fn decode_tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyList>> {
        let pieces = tokens
            .iter()
            .map(|&t| self.inner.token_bytes(t).map(|b| PyBytes::new(py, b)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_py)?;
        PyList::new(py, pieces)
    }

    fn decode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<Rank>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<usize>)> {
        let (bytes, offsets) = self.inner.decode_with_offsets(&tokens).map_err(to_py)?;
        Ok((PyBytes::new(py, &bytes), offsets))
    }

    fn decode_bytes_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Vec<Rank>>,
        num_threads: Threads,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = py
            .allow_threads(|| self.inner.decode_bytes_batch(&batch, num_threads.0))
            .map_err(to_py)?;
        PyList::new(py, out.iter().map(|b| PyBytes::new(py, b)))
    }

    fn token_byte_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.inner
                .sorted_token_bytes()
                .iter()
                .map(|b| PyBytes::new(py, b)),
        )
    }

    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (b, r) in self.inner.vocab().mergeable() {
            d.set_item(PyBytes::new(py, b), r)?;
        }
        Ok(d)
    }

    fn special_tokens(&self) -> Vec<(String, Rank)> {
        self.inner
            .vocab()
            .specials()
            .into_iter()
            .map(|(t, r)| (t.to_string(), r))
            .collect()
    }

    fn pattern(&self) -> String {
        self.inner.pattern().as_str().to_string()
    }

    /// The regexes of a chain of isolating splits (DeepSeek-V3), None for one pattern.
    fn pattern_chain(&self) -> Option<Vec<String>> {
        self.inner.pattern().chain().map(<[String]>::to_vec)
    }

    fn max_token_value(&self) -> Rank {
        self.inner.vocab().max_token_value()
    }

    fn n_mergeable(&self) -> usize {
        self.inner.vocab().n_mergeable()
    }

    /// Learned merges as (bytes, bytes), or None if this encoder was not trained here.
    fn merges<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(m) = &self.merges else {
            return Ok(None);
        };
        PyList::new(
            py,
            m.iter()
                .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b))),
        )
        .map(Some)
    }

    fn is_special(&self, token: Rank) -> bool {
        self.inner.vocab().is_special(token)
    }

    /// `encode_ordinary` with the text cut into parts of about `part_len` bytes at safe points,
    /// encoded in parallel (tests use small parts to check that any cut gives the same ids).
    fn _encode_ordinary_in_parts<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        part_len: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| {
                pool::run_parallel(|| {
                    let mut out = Vec::new();
                    self.inner
                        .encode_in_parts(text, part_len, &mut out)
                        .map(|_| out)
                })?
            })
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    /// (lookups, hits) of the piece cache on the calling thread, for benchmarks.
    fn cache_stats(&self) -> (u64, u64) {
        self.inner.cache_stats()
    }
}

/// Streaming pre-token counter; `finish` learns the merges and returns a `CoreBPE`.
/// Chunks in, final ids out (see `encode::stream`).
#[pyclass(module = "subword._core", name = "CoreStream")]
pub(super) struct PyStream {
    core: Py<PyCore>,
    state: Stream,
}

#[pymethods]
impl PyStream {
    fn feed<'py>(&mut self, py: Python<'py>, chunk: &str) -> PyResult<Bound<'py, PyList>> {
        let core = self.core.get();
        let state = &mut self.state;
        let mut out = Vec::new();
        py.allow_threads(|| core.inner.stream_feed(state, chunk, &mut out))
            .map_err(to_py)?;
        core.id_list(py, &out)
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let core = self.core.get();
        let state = &mut self.state;
        let mut out = Vec::new();
        py.allow_threads(|| core.inner.stream_finish(state, &mut out))
            .map_err(to_py)?;
        core.id_list(py, &out)
    }
}
