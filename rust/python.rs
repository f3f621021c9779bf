//! PyO3 bindings: type conversion, GIL release and error mapping only; no tokenizer logic here.

mod decoders;
mod files;
mod id_lists;
mod normalizers;
mod pipeline;
mod pre_tokenizers;
mod values;

use crate::encode::{par_map, Encoder, FlatBatch, Stream};
use crate::error::Error;
use crate::formats::{byte_unicode, gpt2, hf_json, hf_wordpiece, tekken, tiktoken};
use crate::pool;
use crate::postprocess::{Batch, Encoding, Padding, Token, NO_WORD};
use crate::pretokenize::Pattern;
use crate::specials::Selection;
use crate::train::{self, PreTokenCounter, Splitter, TieBreak, TrainOptions};
use crate::vocab::{Rank, Vocab};
use crate::wordpiece::pipeline::WordPieceTokenizer;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyKeyError, PyOSError,
    PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

fn to_py(err: Error) -> PyErr {
    Python::with_gil(|py| match err {
        Error::DisallowedSpecial(token) => {
            let r = PyString::new(py, &token)
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| format!("{token:?}"));
            PyValueError::new_err(format!(
                "Encountered text corresponding to disallowed special token {r}.\n\
                 If you want this text to be encoded as a special token, pass it to `allowed_special`, \
                 e.g. `allowed_special={{{r}, ...}}`.\n\
                 If you want this text to be encoded as normal text, disable the check for this token \
                 by passing `disallowed_special=(enc.special_tokens_set - {{{r}}})`.\n\
                 To disable this check for all special tokens, pass `disallowed_special=()`.\n"
            ))
        }
        Error::UnknownId(_) => PyKeyError::new_err(err.to_string()),
        Error::NotAToken(bytes) => PyKeyError::new_err(PyBytes::new(py, &bytes).unbind()),
        Error::Io { ref source, .. } => {
            let msg = err.to_string();
            match source.kind() {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
                std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(msg),
                std::io::ErrorKind::AlreadyExists => PyFileExistsError::new_err(msg),
                _ => PyOSError::new_err(msg),
            }
        }
        Error::Pattern(_) | Error::Invalid(_) | Error::Format { .. } => {
            PyValueError::new_err(err.to_string())
        }
        // The exception the signal handler raised (KeyboardInterrupt for Ctrl-C), kept by
        // `interrupted` on this thread.
        Error::Interrupted => PENDING_SIGNAL
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
    })
}

thread_local! {
    static PENDING_SIGNAL: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// The core's interrupt check: runs Python's signal handlers (taking the GIL for a moment) and
/// keeps the exception one raised, to be re-raised when the interrupted call returns.
fn interrupted() -> bool {
    Python::with_gil(|py| match py.check_signals() {
        Ok(()) => false,
        Err(e) => {
            PENDING_SIGNAL.with(|p| *p.borrow_mut() = Some(e));
            true
        }
    })
}

/// `"all"` or any iterable of str.
fn selection(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Selection> {
    if let Ok(s) = obj.downcast::<PyString>() {
        if s.to_str()? == "all" {
            return Ok(Selection::All);
        }
        return Err(PyTypeError::new_err(format!(
            "{what} must be \"all\" or a set of strings, not the string {}",
            s.repr()?
        )));
    }
    let mut v = Vec::new();
    for item in obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be \"all\" or a set of strings")))?
    {
        let item = item?;
        v.push(item.extract::<String>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what} must contain only strings, got {}",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?);
    }
    Ok(Selection::Only(v))
}

/// The str objects of a sequence, kept alive so that their UTF-8 can be borrowed without copying.
/// tiktoken's `allowed_special` and `disallowed_special` arguments.
fn selections(
    allowed: &Bound<'_, PyAny>,
    disallowed: &Bound<'_, PyAny>,
) -> PyResult<(Selection, Selection)> {
    Ok((
        selection(allowed, "allowed_special")?,
        selection(disallowed, "disallowed_special")?,
    ))
}

fn texts<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "expected a list of strings, got a single string (wrap it in a list)",
        ));
    }
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            item.downcast_into::<PyString>().map_err(|e| {
                PyTypeError::new_err(format!(
                    "expected a list of strings, found {}",
                    e.into_inner()
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })
        })
        .collect()
}

/// A `num_threads` argument, checked before any thread starts: 0 (every core) up to
/// [`pool::max_threads`]; negative or larger values are a ValueError naming the limit.
struct Threads(usize);

impl<'py> FromPyObject<'py> for Threads {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let n: i64 = match ob.extract() {
            Ok(n) => n,
            // An int too large for i64 is too many threads; anything else is the wrong type.
            Err(_) if ob.is_instance_of::<pyo3::types::PyInt>() => {
                if ob.lt(0)? {
                    i64::MIN
                } else {
                    i64::MAX
                }
            }
            Err(e) => return Err(e),
        };
        if n < 0 {
            return Err(PyValueError::new_err(format!(
                "num_threads must be 0 (every core) or a positive number of threads, not {}",
                ob.repr()?
            )));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        pool::resolve(n).map_err(to_py)?;
        Ok(Threads(n))
    }
}

/// A non-negative integer argument up to `max`: negative or larger values are a ValueError
/// naming the argument and the limit (pyo3 alone would raise OverflowError, or accept 10¹²).
fn bounded(ob: &Bound<'_, PyAny>, name: &str, max: u64) -> PyResult<u64> {
    let too = |how: &str| {
        Ok::<_, PyErr>(PyValueError::new_err(format!(
            "{name} must be an integer in 0..={max}, not {} ({how})",
            ob.repr()?
        )))
    };
    match ob.extract::<u64>() {
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(too("too large")?),
        Err(_) if ob.is_instance_of::<pyo3::types::PyInt>() => {
            Err(too(if ob.lt(0)? { "negative" } else { "too large" })?)
        }
        Err(e) => Err(e),
    }
}

/// `vocab_size` of a trainer: at most one more than the largest id a vocabulary may hold.
struct VocabSize(usize);

impl<'py> FromPyObject<'py> for VocabSize {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let n = bounded(ob, "vocab_size", crate::vocab::MAX_ID as u64 + 1)?;
        Ok(VocabSize(n as usize))
    }
}

/// `min_frequency` of a trainer.
struct Frequency(u64);

impl<'py> FromPyObject<'py> for Frequency {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        bounded(ob, "min_frequency", u64::MAX).map(Frequency)
    }
}

fn borrow_all<'a>(strings: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    strings.iter().map(|s| s.to_str()).collect()
}

/// The Rust encoder behind `subword.Encoding`.
#[pyclass(module = "subword._core", name = "CoreBPE", frozen)]
struct PyCore {
    inner: Arc<Encoder>,
    /// Learned merges, for encoders that came out of training.
    merges: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    /// One Python int per id, made once: building a result list then costs an incref per id
    /// instead of an int allocation per id, which otherwise dominates `encode` on English text.
    ints: Vec<Py<PyAny>>,
}

/// One Python int per id below `n`, made once: building a result list then costs an incref per
/// id instead of an int allocation per id.
fn py_ints(n: u32) -> Vec<Py<PyAny>> {
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

fn wrap(encoder: Encoder, merges: Option<Vec<(Vec<u8>, Vec<u8>)>>) -> PyResult<PyCore> {
    let inner = Arc::new(encoder);
    let ints = py_ints(inner.vocab().max_token_value() + 1);
    Ok(PyCore {
        inner,
        merges,
        ints,
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

/// ids, tokens in byte-level form, character offsets.
type DetailedPy<'py> = (Bound<'py, PyList>, Vec<String>, Vec<(usize, usize)>);

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
                    k.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
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

    /// HF-style encoding: (ids, tokens in byte-level form, character offsets); every special is
    /// split out.
    fn encode_detailed<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        prefix_space: bool,
    ) -> PyResult<DetailedPy<'py>> {
        let d = py
            .allow_threads(|| self.inner.encode_detailed(text, prefix_space))
            .map_err(to_py)?;
        let tokens = d.ids.iter().map(|&id| self.token_text(id)).collect();
        Ok((self.id_list(py, &d.ids)?, tokens, d.offsets))
    }

    fn encode_detailed_batch<'py>(
        &self,
        py: Python<'py>,
        texts_: &Bound<'py, PyAny>,
        prefix_space: bool,
        num_threads: Threads,
    ) -> PyResult<Vec<DetailedPy<'py>>> {
        let owners = texts(texts_)?;
        let t = borrow_all(&owners)?;
        let all = py
            .allow_threads(|| {
                par_map(&t, num_threads.0, |s| {
                    self.inner.encode_detailed(s, prefix_space)
                })
            })
            .map_err(to_py)?;
        all.into_iter()
            .map(|d| {
                let tokens = d.ids.iter().map(|&id| self.token_text(id)).collect();
                Ok((self.id_list(py, &d.ids)?, tokens, d.offsets))
            })
            .collect()
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
        self.id_list(py, &ids)
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_ids(py, text, allowed_special, disallowed_special)?;
        self.id_list(py, &ids)
    }

    /// Ids as native-endian u32 bytes, for `numpy.frombuffer`.
    fn encode_to_bytes<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = self.encode_ids(py, text, allowed_special, disallowed_special)?;
        // Filled in place: one pass over the ids, no intermediate byte vector.
        PyBytes::new_with(py, ids.len() * 4, |buf| {
            for (dst, id) in buf.chunks_exact_mut(4).zip(&ids) {
                dst.copy_from_slice(&id.to_ne_bytes());
            }
            Ok(())
        })
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
struct PyStream {
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

#[pyclass(module = "subword._core", name = "Trainer")]
struct PyTrainer {
    counter: Option<PreTokenCounter>,
    specials: Vec<String>,
    num_threads: usize,
}

/// Token strings in id order, and the merges (made into Python strings only when asked for).
type Learned = (Vec<String>, PyMerges);

/// Learned merges kept in Rust until read: a trainer's caller often never looks at them.
#[pyclass(module = "subword._core", name = "MergeList", frozen)]
struct PyMerges {
    merges: Vec<(String, String)>,
}

#[pymethods]
impl PyMerges {
    fn __len__(&self) -> usize {
        self.merges.len()
    }

    fn to_list(&self) -> Vec<(String, String)> {
        self.merges.clone()
    }
}

fn tie_break_of(name: &str) -> PyResult<TieBreak> {
    match name {
        "lexicographic" => Ok(TieBreak::Lexicographic),
        "first" => Ok(TieBreak::First),
        other => Err(PyValueError::new_err(format!(
            "tie_break must be \"lexicographic\" or \"first\", not {other:?}"
        ))),
    }
}

impl PyTrainer {
    fn take_counts(&mut self) -> PyResult<train::Counts> {
        let counter = self.counter.take().ok_or_else(|| {
            PyValueError::new_err("this trainer has already finished; make a new one")
        })?;
        Ok(counter.into_counts())
    }

    fn counter(&mut self) -> PyResult<&mut PreTokenCounter> {
        self.counter.as_mut().ok_or_else(|| {
            PyValueError::new_err("this trainer has already finished; make a new one")
        })
    }
}

#[pymethods]
impl PyTrainer {
    /// `pattern`: a built-in name, a regex, or None for no pre-tokenization.
    #[new]
    #[pyo3(signature = (pattern, special_tokens, num_threads=Threads(0), prefix_space=false))]
    fn new(
        pattern: Option<&str>,
        special_tokens: Vec<String>,
        num_threads: Threads,
        prefix_space: bool,
    ) -> PyResult<Self> {
        let pattern = match pattern {
            Some(p) => Pattern::new(p).map_err(to_py)?,
            None => Pattern::whole(),
        };
        Ok(PyTrainer {
            counter: Some(
                PreTokenCounter::new(pattern, &special_tokens)
                    .map_err(to_py)?
                    .with_prefix_space(prefix_space),
            ),
            specials: special_tokens,
            num_threads: num_threads.0,
        })
    }

    /// A trainer that counts BERT words (normalizer given as tokenizer.json text, or "null").
    #[staticmethod]
    #[pyo3(signature = (normalizer_json, special_tokens, num_threads=Threads(0)))]
    fn for_wordpiece(
        normalizer_json: &str,
        special_tokens: Vec<String>,
        num_threads: Threads,
    ) -> PyResult<Self> {
        let normalizer = hf_wordpiece::parse_normalizer(normalizer_json).map_err(to_py)?;
        Ok(PyTrainer {
            counter: Some(
                PreTokenCounter::with_splitter(Splitter::Bert(normalizer), &special_tokens)
                    .map_err(to_py)?,
            ),
            specials: special_tokens,
            num_threads: num_threads.0,
        })
    }

    /// A trainer that counts what a tokenizer's pipeline hands its model (HF's trainers).
    #[staticmethod]
    #[pyo3(signature = (pipeline, special_tokens, num_threads=Threads(0)))]
    fn for_pipeline(
        pipeline: PyRef<'_, pipeline::PyPipeline>,
        special_tokens: Vec<String>,
        num_threads: Threads,
    ) -> PyResult<Self> {
        let splitter = Splitter::Pipeline(Box::new(pipeline.pipeline().clone()));
        Ok(PyTrainer {
            counter: Some(
                PreTokenCounter::with_splitter(splitter, &special_tokens).map_err(to_py)?,
            ),
            specials: special_tokens,
            num_threads: num_threads.0,
        })
    }

    /// A trainer that counts whitespace-separated words (classic `</w>` BPE).
    #[staticmethod]
    #[pyo3(signature = (num_threads=Threads(0)))]
    fn for_classic(num_threads: Threads) -> PyResult<Self> {
        Ok(PyTrainer {
            counter: Some(
                PreTokenCounter::with_splitter(Splitter::Whitespace, &[]).map_err(to_py)?,
            ),
            specials: Vec::new(),
            num_threads: num_threads.0,
        })
    }

    fn feed(&mut self, py: Python<'_>, texts_: &Bound<'_, PyAny>) -> PyResult<()> {
        let owners = texts(texts_)?;
        let t = borrow_all(&owners)?;
        let n = self.num_threads;
        let counter = self.counter()?;
        py.allow_threads(|| pool::install(n, || counter.feed_many(&t))?)
            .map_err(to_py)
    }

    fn feed_file(&mut self, py: Python<'_>, path: PathBuf, show_progress: bool) -> PyResult<()> {
        let n = self.num_threads;
        let counter = self.counter()?;
        py.allow_threads(|| train::feed_file(counter, &path, show_progress, n))
            .map_err(to_py)
    }

    /// The counts so far as a `{pre-token: count}` dict in order of first appearance (the trainer
    /// is used up): what a map task returns, to be summed with the others' and given to
    /// `train_from_counts`.
    fn take_pretoken_counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let counts = self.take_counts()?;
        let mut items: Vec<_> = counts.into_iter().collect();
        items.sort_unstable_by_key(|(_, (_, first)): &(Box<[u8]>, (u64, u64))| *first);
        let d = PyDict::new(py);
        for (piece, (count, _)) in items {
            // Pieces are cut from str text, so they are whole UTF-8; bytes if ever not.
            match std::str::from_utf8(&piece) {
                Ok(s) => d.set_item(s, count)?,
                Err(_) => d.set_item(PyBytes::new(py, &piece), count)?,
            }
        }
        Ok(d)
    }

    /// Pre-tokens counted elsewhere, as (str or bytes, count) pairs in order of first appearance.
    fn add_counts(&mut self, items: &Bound<'_, PyAny>) -> PyResult<()> {
        let counter = self.counter()?;
        for item in items.try_iter()? {
            let (piece, count): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            let count: u64 = match count.extract() {
                Ok(c) => c,
                Err(_) if count.is_instance_of::<pyo3::types::PyInt>() => {
                    return Err(PyValueError::new_err(format!(
                        "count of {} must be in 0..2**64, not {}",
                        piece.repr()?,
                        count.repr()?
                    )))
                }
                Err(e) => return Err(e),
            };
            if let Ok(s) = piece.downcast::<PyString>() {
                counter.add_counts(s.to_str()?.as_bytes(), count);
            } else if let Ok(b) = piece.downcast::<PyBytes>() {
                counter.add_counts(b.as_bytes(), count);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "pre-tokens must be str or bytes, got {}",
                    piece.get_type().name()?
                )));
            }
        }
        Ok(())
    }

    fn skipped_bytes(&mut self) -> PyResult<Option<(u64, u64)>> {
        Ok(self.counter()?.skipped_bytes())
    }

    fn n_distinct(&mut self) -> PyResult<usize> {
        Ok(self.counter()?.n_distinct())
    }

    /// HF-style BPE over characters (`train::char_bpe`): tokens in id order and merges.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (vocab_size, min_frequency, limit_alphabet, initial_alphabet, prefix, suffix, max_token_length, show_progress))]
    fn finish_char_bpe(
        &mut self,
        py: Python<'_>,
        vocab_size: VocabSize,
        min_frequency: Frequency,
        limit_alphabet: Option<u32>,
        initial_alphabet: Vec<char>,
        prefix: String,
        suffix: String,
        max_token_length: Option<u32>,
        show_progress: bool,
    ) -> PyResult<Learned> {
        let opts = train::char_bpe::CharBpeOptions {
            vocab_size: vocab_size.0,
            min_frequency: min_frequency.0,
            specials: self.specials.clone(),
            limit_alphabet: limit_alphabet.map(|n| n as usize),
            initial_alphabet,
            prefix,
            suffix,
            max_token_length: max_token_length.map(|n| n as usize),
            show_progress,
        };
        let counts = self.take_counts()?;
        let learned = py
            .allow_threads(|| train::char_bpe::train(counts, &opts))
            .map_err(to_py)?;
        Ok((
            learned.tokens,
            PyMerges {
                merges: learned.merges,
            },
        ))
    }

    /// WordLevel vocabulary (tokens in id order).
    fn finish_word_level(
        &mut self,
        py: Python<'_>,
        vocab_size: VocabSize,
        min_frequency: Frequency,
    ) -> PyResult<Vec<String>> {
        let counts = self.take_counts()?;
        let specials = self.specials.clone();
        Ok(py.allow_threads(|| {
            train::word_level::train(counts, &specials, vocab_size.0, min_frequency.0)
        }))
    }

    /// WordPiece vocabulary (tokens in id order) and merges.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (vocab_size, min_frequency, limit_alphabet, prefix, tie_break, show_progress))]
    fn finish_wordpiece(
        &mut self,
        py: Python<'_>,
        vocab_size: VocabSize,
        min_frequency: Frequency,
        limit_alphabet: Option<u32>,
        prefix: String,
        tie_break: &str,
        show_progress: bool,
    ) -> PyResult<Learned> {
        let (vocab_size, min_frequency) = (vocab_size.0, min_frequency.0);
        let opts = train::wordpiece::WordPieceOptions {
            vocab_size,
            specials: self.specials.clone(),
            min_frequency,
            limit_alphabet: limit_alphabet.map(|n| n as usize),
            prefix,
            tie_break: tie_break_of(tie_break)?,
            show_progress,
        };
        let counts = self.take_counts()?;
        let learned = py
            .allow_threads(|| train::wordpiece::train(counts, &opts))
            .map_err(to_py)?;
        Ok((
            learned.tokens,
            PyMerges {
                merges: learned.merges,
            },
        ))
    }

    /// Classic BPE vocabulary (tokens in id order) and merges.
    #[pyo3(signature = (vocab_size, unk_token, suffix, merge_end_of_word, min_frequency, tie_break, show_progress))]
    #[allow(clippy::too_many_arguments)]
    fn finish_classic(
        &mut self,
        py: Python<'_>,
        vocab_size: VocabSize,
        unk_token: Option<String>,
        suffix: String,
        merge_end_of_word: bool,
        min_frequency: Frequency,
        tie_break: &str,
        show_progress: bool,
    ) -> PyResult<Learned> {
        let (vocab_size, min_frequency) = (vocab_size.0, min_frequency.0);
        let opts = train::classic::ClassicOptions {
            vocab_size,
            unk_token,
            suffix,
            merge_end_of_word,
            min_frequency,
            tie_break: tie_break_of(tie_break)?,
            show_progress,
        };
        let counts = self.take_counts()?;
        let learned = py
            .allow_threads(|| train::classic::train(counts, &opts))
            .map_err(to_py)?;
        Ok((
            learned.tokens,
            PyMerges {
                merges: learned.merges,
            },
        ))
    }

    #[pyo3(signature = (vocab_size, min_frequency, tie_break, show_progress))]
    fn finish(
        &mut self,
        py: Python<'_>,
        vocab_size: VocabSize,
        min_frequency: Frequency,
        tie_break: &str,
        show_progress: bool,
    ) -> PyResult<PyCore> {
        let (vocab_size, min_frequency) = (vocab_size.0, min_frequency.0);
        let tie_break = tie_break_of(tie_break)?;
        let opts = TrainOptions {
            vocab_size,
            specials: self.specials.clone(),
            min_frequency,
            tie_break,
            show_progress,
        };
        if vocab_size < opts.min_vocab_size() {
            return Err(to_py(crate::Error::invalid(format!(
                "vocab_size={vocab_size} is too small: the minimum is {} (256 byte tokens + {} special tokens)",
                opts.min_vocab_size(),
                opts.specials.len()
            ))));
        }
        let counter = self.counter.take().ok_or_else(|| {
            PyValueError::new_err("this trainer has already finished; make a new one")
        })?;
        // All skipped is an error (`into_parts`); some skipped, a warning.
        if let Some((skipped, total)) = counter.skipped_bytes().filter(|&(s, t)| s > 0 && s < t) {
            let msg = format!(
                "the pattern skipped {skipped} of the {total} bytes of training text ({:.1}%); \
                 merges are learned only from the text it matches",
                100.0 * skipped as f64 / total as f64
            );
            let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(
                py,
                &cat,
                &std::ffi::CString::new(msg).unwrap_or_default(),
                2,
            )?;
        }
        let (counts, pattern) = counter.into_parts().map_err(to_py)?;
        let trained = py
            .allow_threads(|| train::finish(counts, pattern, &opts))
            .map_err(to_py)?;
        wrap(trained.encoder, Some(trained.merges))
    }
}

/// Classic `</w>` BPE behind `subword.ClassicBPE`.
#[pyclass(module = "subword._core", name = "ClassicCore", frozen)]
struct PyClassic {
    inner: Arc<crate::classic::ClassicBpe>,
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

/// Threads for work without a `num_threads` argument (one long text): 0 = every core, 1 = never
/// parallel. Checked like any `num_threads`.
#[pyfunction]
fn set_num_threads(num_threads: Threads) -> PyResult<()> {
    pool::set_default_threads(num_threads.0).map_err(to_py)
}

/// `.tiktoken` contents as `{token bytes: rank}` (`subword.tiktoken.load.load_tiktoken_bpe`).
#[pyfunction]
fn parse_tiktoken_ranks<'py>(
    py: Python<'py>,
    data: &[u8],
    origin: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let pairs = py
        .allow_threads(|| tiktoken::parse(data, origin))
        .map_err(to_py)?;
    let d = PyDict::new(py);
    for (b, r) in pairs {
        d.set_item(PyBytes::new(py, &b), r)?;
    }
    Ok(d)
}

/// `{token bytes: rank}` as `.tiktoken` contents, by rank.
#[pyfunction]
fn render_tiktoken_ranks<'py>(
    py: Python<'py>,
    ranks: HashMap<Vec<u8>, Rank>,
) -> Bound<'py, PyBytes> {
    let mut pairs: Vec<(&[u8], Rank)> = ranks.iter().map(|(b, &r)| (&b[..], r)).collect();
    pairs.sort_unstable_by_key(|&(_, r)| r);
    PyBytes::new(py, &tiktoken::render_pairs(pairs))
}

/// The process-wide thread count as set (0 = every core).
#[pyfunction]
fn get_num_threads() -> usize {
    pool::default_threads()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    train::set_interrupt_check(interrupted);
    m.add_class::<PyCore>()?;
    m.add_class::<normalizers::PyNormalizer>()?;
    m.add_class::<decoders::PyDecoder>()?;
    m.add_class::<pre_tokenizers::PyPreTokenizer>()?;
    m.add_class::<pipeline::PyModel>()?;
    m.add_class::<pipeline::PyPipeline>()?;
    m.add_class::<pipeline::PyDecodeStream>()?;
    m.add_class::<pipeline::PyProcessor>()?;
    m.add_class::<PyStream>()?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(files::encode_files, m)?)?;
    m.add_class::<files::PyShardJob>()?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(parse_tiktoken_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(render_tiktoken_ranks, m)?)?;
    m.add_class::<PyTrainer>()?;
    m.add_class::<PyWordPiece>()?;
    m.add_class::<PyEncoded>()?;
    m.add_class::<PyClassic>()?;
    m.add_class::<PyMerges>()?;
    m.add("GPT2_PATTERN", crate::pretokenize::GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", crate::pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", crate::pretokenize::O200K_PATTERN)?;
    m.add("LLAMA3_PATTERN", crate::pretokenize::LLAMA3_PATTERN)?;
    m.add("QWEN2_PATTERN", crate::pretokenize::QWEN2_PATTERN)?;
    m.add("TEKKEN_PATTERN", crate::pretokenize::TEKKEN_PATTERN)?;
    Ok(())
}

// ----- WordPiece (BERT family) -----

/// One encode result (HF calls it `Encoding`): a slice of a shared [`Batch`], plus how many pad
/// tokens it shows; columns become Python lists on access.
#[pyclass(module = "subword._core", name = "Encoded", frozen)]
struct PyEncoded {
    batch: Arc<Batch>,
    /// The batch slot holding this encoding.
    slot: usize,
    pad: usize,
    /// The length padding brings results of this call to (0 without padding).
    target: usize,
    /// Whether it encodes a pair (HF's `n_sequences` is 2 even when the pair is empty).
    pair: bool,
    owner: Arc<WordPieceShared>,
}

/// What results need from their tokenizer: token strings, padding and ready-made Python ints.
struct WordPieceShared {
    tok: WordPieceTokenizer,
    ints: Arc<Vec<Py<PyAny>>>,
}

impl WordPieceShared {
    fn new(tok: WordPieceTokenizer) -> Arc<Self> {
        let n = tok.vocab_size().max(
            tok.added()
                .iter()
                .map(|a| a.id as usize + 1)
                .max()
                .unwrap_or(0),
        );
        let ints = py_ints(n as u32);
        Arc::new(WordPieceShared {
            tok,
            ints: Arc::new(ints),
        })
    }

    fn int<'py>(&self, py: Python<'py>, id: u32) -> Bound<'py, PyAny> {
        match self.ints.get(id as usize) {
            Some(i) => i.bind(py).clone(),
            None => match id.into_pyobject(py) {
                Ok(i) => i.into_any(),
                Err(never) => match never {},
            },
        }
    }
}

impl PyEncoded {
    fn cols(&self) -> (&Encoding, std::ops::Range<usize>) {
        (&self.batch.cols, self.batch.slot(self.slot))
    }

    /// The tokens of the text (not padding), with their indices in the padded result.
    fn real_tokens(&self) -> impl Iterator<Item = (usize, &Token)> {
        let (c, r) = self.cols();
        let shift = if self.pad_left() { self.pad } else { 0 };
        c.toks[r]
            .iter()
            .enumerate()
            .map(move |(i, t)| (i + shift, t))
    }

    /// Token `index` of the padded result; None for padding or past the end.
    fn token_at(&self, index: usize) -> Option<&Token> {
        let (c, r) = self.cols();
        let shift = if self.pad_left() { self.pad } else { 0 };
        c.toks[r].get(index.checked_sub(shift)?)
    }

    fn pad_left(&self) -> bool {
        self.owner.tok.padding.as_ref().is_some_and(|p| p.left)
    }

    /// The column `real` with `pad` copies of `fill` on the padding side.
    fn padded<T: Clone>(&self, real: impl ExactSizeIterator<Item = T>, fill: T) -> Vec<T> {
        let mut out = Vec::with_capacity(real.len() + self.pad);
        if self.pad_left() {
            out.extend(std::iter::repeat_n(fill.clone(), self.pad));
            out.extend(real);
        } else {
            out.extend(real);
            out.extend(std::iter::repeat_n(fill, self.pad));
        }
        out
    }

    fn pad_value<T>(&self, f: impl Fn(&Padding) -> T, default: T) -> T {
        self.owner.tok.padding.as_ref().map_or(default, f)
    }
}

#[pymethods]
impl PyEncoded {
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (c, r) = self.cols();
        if self.pad == 0 {
            return PyList::new(py, c.toks[r].iter().map(|t| self.owner.int(py, t.id)));
        }
        let pad_id = self.pad_value(|p| p.pad_id, 0);
        PyList::new(
            py,
            self.padded(c.toks[r].iter().map(|t| t.id), pad_id)
                .into_iter()
                .map(|id| self.owner.int(py, id)),
        )
    }

    #[getter]
    fn type_ids(&self) -> Vec<u32> {
        let (c, r) = self.cols();
        let fill = self.pad_value(|p| p.pad_type_id, 0);
        self.padded(c.toks[r].iter().map(|t| t.type_id), fill)
    }

    #[getter]
    fn attention_mask(&self) -> Vec<u32> {
        let (_, r) = self.cols();
        self.padded(std::iter::repeat_n(1, r.len()), 0)
    }

    /// 1 for tokens the template or padding added (HF's rule), 0 for tokens of the text.
    #[getter]
    fn special_tokens_mask(&self) -> Vec<u32> {
        let (c, r) = self.cols();
        self.padded(c.toks[r].iter().map(|t| (t.word == NO_WORD) as u32), 1)
    }

    #[getter]
    fn offsets(&self) -> Vec<(u32, u32)> {
        let (c, r) = self.cols();
        self.padded(c.toks[r].iter().map(|t| t.offsets), (0, 0))
    }

    #[getter]
    fn tokens(&self) -> Vec<String> {
        let (c, r) = self.cols();
        let tok = &self.owner.tok;
        let fill = self.pad_value(|p| p.pad_token.clone(), String::new());
        self.padded(
            c.toks[r]
                .iter()
                .map(|t| tok.token(t.id).unwrap_or_default().to_string()),
            fill,
        )
    }

    /// Index of the word (pre-token) of each token; None for tokens the template or padding added.
    #[getter]
    fn word_ids(&self) -> Vec<Option<u32>> {
        let (c, r) = self.cols();
        self.padded(
            c.toks[r]
                .iter()
                .map(|t| (t.word != NO_WORD).then_some(t.word)),
            None,
        )
    }

    /// 0 or 1: which input each token comes from; None for added tokens.
    #[getter]
    fn sequence_ids(&self) -> Vec<Option<u32>> {
        let (c, r) = self.cols();
        self.padded(
            c.toks[r]
                .iter()
                .map(|t| (t.sequence != NO_WORD).then_some(t.sequence)),
            None,
        )
    }

    fn __len__(&self) -> usize {
        self.batch.slot(self.slot).len() + self.pad
    }

    /// 2 for a pair, else 1.
    #[getter]
    fn n_sequences(&self) -> usize {
        1 + self.pair as usize
    }

    /// Character offsets of token `index` in its input; None for added and pad tokens.
    fn token_to_chars(&self, index: usize) -> Option<(u32, u32)> {
        let t = self.token_at(index)?;
        (t.word != NO_WORD).then_some(t.offsets)
    }

    /// The word (pre-token) index of token `index`; None for added and pad tokens.
    fn token_to_word(&self, index: usize) -> Option<u32> {
        let t = self.token_at(index)?;
        (t.word != NO_WORD).then_some(t.word)
    }

    /// Which input (0 or 1) token `index` comes from; None for added and pad tokens.
    fn token_to_sequence(&self, index: usize) -> Option<u32> {
        let t = self.token_at(index)?;
        (t.sequence != NO_WORD).then_some(t.sequence)
    }

    /// The first token of input `sequence_index` whose characters include `pos`.
    #[pyo3(signature = (pos, sequence_index=0))]
    fn char_to_token(&self, pos: u32, sequence_index: u32) -> Option<usize> {
        // As in HF, a single text has one sequence whatever index is asked for.
        let sequence_index = if self.pair { sequence_index } else { 0 };
        self.real_tokens()
            .find(|(_, t)| t.sequence == sequence_index && t.offsets.0 <= pos && pos < t.offsets.1)
            .map(|(i, _)| i)
    }

    /// The word of input `sequence_index` that character `pos` belongs to.
    #[pyo3(signature = (pos, sequence_index=0))]
    fn char_to_word(&self, pos: u32, sequence_index: u32) -> Option<u32> {
        self.char_to_token(pos, sequence_index)
            .and_then(|i| self.token_to_word(i))
    }

    /// (first, last + 1) token indices of word `word_index` of input `sequence_index`.
    #[pyo3(signature = (word_index, sequence_index=0))]
    fn word_to_tokens(&self, word_index: u32, sequence_index: u32) -> Option<(usize, usize)> {
        let sequence_index = if self.pair { sequence_index } else { 0 };
        let mut span: Option<(usize, usize)> = None;
        for (i, t) in self.real_tokens() {
            if t.word == word_index && t.sequence == sequence_index {
                span = Some(span.map_or((i, i + 1), |(a, _)| (a, i + 1)));
            }
        }
        span
    }

    /// The windows truncation cut off (with a stride, each overlapping the one before).
    #[getter]
    fn overflowing(&self) -> Vec<PyEncoded> {
        self.batch
            .overflow(self.slot)
            .iter()
            .map(|&slot| {
                let slot = slot as usize;
                PyEncoded {
                    batch: self.batch.clone(),
                    slot,
                    // Padded like every result of the call, as in HF.
                    pad: self.target.saturating_sub(self.batch.slot(slot).len()),
                    target: self.target,
                    pair: self.pair,
                    owner: self.owner.clone(),
                }
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let (c, r) = self.cols();
        let n = r.len() + self.pad;
        let head: Vec<String> = c.toks[r].iter().take(8).map(|t| t.id.to_string()).collect();
        format!(
            "Encoded(num_tokens={n}, ids=[{}{}])",
            head.join(", "),
            if n > 8 { ", …" } else { "" }
        )
    }
}

/// The Rust WordPiece tokenizer behind `subword.Tokenizer` with a WordPiece model.
#[pyclass(module = "subword._core", name = "WordPieceCore", frozen)]
struct PyWordPiece {
    shared: Arc<WordPieceShared>,
}

/// Texts shorter than this (bytes) are encoded without releasing the GIL.
const RELEASE_GIL_ABOVE: usize = 2048;

fn no_pretokenized(on: bool) -> PyResult<()> {
    if on {
        return Err(PyValueError::new_err(
            "is_pretokenized=True is not supported; pass the text itself",
        ));
    }
    Ok(())
}

/// A text and its optional pair, as Python strings.
type Item<'py> = (Bound<'py, PyString>, Option<Bound<'py, PyString>>);

/// A batch item: a str or a (str, str) pair.
fn batch_items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Item<'py>>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "encode_batch expects a list of inputs, got a single string (wrap it in a list)",
        ));
    }
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            if let Ok(s) = item.downcast::<PyString>() {
                return Ok((s.clone(), None));
            }
            let pair: Result<(Bound<'py, PyString>, Bound<'py, PyString>), _> = item.extract();
            match pair {
                Ok((a, b)) => Ok((a, Some(b))),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "each input must be a str or a (str, str) pair, found {}",
                    item.get_type().name()?
                ))),
            }
        })
        .collect()
}

impl PyWordPiece {
    /// Results for `batches` (in order), padded as the tokenizer says (overflowing windows to
    /// the same length as their main encoding).
    fn results(&self, batches: Vec<Batch>, pairs: &[bool]) -> Vec<PyEncoded> {
        let longest = batches
            .iter()
            .flat_map(|b| (0..b.len()).map(|i| b.slot(b.item(i)).len()))
            .max()
            .unwrap_or(0);
        let target = self.shared.tok.pad_target(longest);
        let mut out = Vec::with_capacity(batches.iter().map(|b| b.len()).sum());
        for b in batches {
            let b = Arc::new(b);
            for i in 0..b.len() {
                let slot = b.item(i);
                out.push(PyEncoded {
                    batch: b.clone(),
                    slot,
                    pad: target.saturating_sub(b.slot(slot).len()),
                    target,
                    pair: pairs[out.len()],
                    owner: self.shared.clone(),
                });
            }
        }
        out
    }
}

#[pymethods]
impl PyWordPiece {
    #[staticmethod]
    fn from_hf_json(py: Python<'_>, text: &str, origin: &str) -> PyResult<Self> {
        let tok = py
            .allow_threads(|| hf_wordpiece::parse(text, origin))
            .map_err(to_py)?;
        Ok(PyWordPiece {
            shared: WordPieceShared::new(tok),
        })
    }

    /// Tokens of a `vocab.txt`, in id order.
    #[staticmethod]
    fn read_vocab_txt(path: PathBuf) -> PyResult<Vec<String>> {
        let bytes = crate::formats::read(&path).map_err(to_py)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            PyValueError::new_err(format!(
                "{}: invalid UTF-8 at byte offset {}",
                path.display(),
                e.utf8_error().valid_up_to()
            ))
        })?;
        hf_wordpiece::parse_vocab_txt(&text, &path.display().to_string()).map_err(to_py)
    }

    /// Write tokens one per line, atomically.
    #[staticmethod]
    fn write_vocab_txt(path: PathBuf, tokens: Vec<String>) -> PyResult<()> {
        let mut text = tokens.join("\n");
        text.push('\n');
        crate::formats::write_atomic(&path, text.as_bytes()).map_err(to_py)
    }

    fn to_hf_json(&self) -> String {
        hf_wordpiece::render(&self.shared.tok)
    }

    /// The same tokenizer with other truncation and padding (tokenizer.json values, "null" for
    /// off); the model is shared, not rebuilt.
    fn with_settings(&self, truncation: &str, padding: &str) -> PyResult<Self> {
        let (t, p) = hf_wordpiece::parse_settings(truncation, padding).map_err(to_py)?;
        let mut tok = self.shared.tok.clone();
        tok.truncation = t;
        tok.padding = p;
        Ok(PyWordPiece {
            shared: Arc::new(WordPieceShared {
                tok,
                ints: self.shared.ints.clone(),
            }),
        })
    }

    /// The same tokenizer with these added tokens (content, id, special) instead of its own; the
    /// model is shared and only the added-token matcher is built.
    fn with_added(&self, added: Vec<(String, u32, bool)>) -> PyResult<Self> {
        let mut tok = self.shared.tok.clone();
        tok.set_added(
            added
                .into_iter()
                .map(
                    |(content, id, special)| crate::wordpiece::pipeline::AddedToken {
                        content,
                        id,
                        special,
                    },
                )
                .collect(),
        )
        .map_err(to_py)?;
        Ok(PyWordPiece {
            shared: Arc::new(WordPieceShared {
                tok,
                ints: self.shared.ints.clone(),
            }),
        })
    }

    /// HF's signature; `is_pretokenized` must stay False.
    #[pyo3(signature = (sequence, pair=None, is_pretokenized=false, add_special_tokens=true))]
    fn encode(
        &self,
        py: Python<'_>,
        sequence: &str,
        pair: Option<&str>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoded> {
        no_pretokenized(is_pretokenized)?;
        let tok = &self.shared.tok;
        let run = || tok.encode(sequence, pair, add_special_tokens);
        // Releasing the GIL costs more than encoding a short text; long ones let other threads run.
        let batch = if sequence.len() + pair.map_or(0, str::len) < RELEASE_GIL_ABOVE {
            run()
        } else {
            py.allow_threads(run)
        }
        .map_err(to_py)?;
        let slot = batch.item(0);
        let n = batch.slot(slot).len();
        let target = tok.pad_target(n);
        Ok(PyEncoded {
            batch: Arc::new(batch),
            slot,
            pad: target.saturating_sub(n),
            target,
            pair: pair.is_some(),
            owner: self.shared.clone(),
        })
    }

    #[pyo3(signature = (inputs, is_pretokenized=false, add_special_tokens=true))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Vec<PyEncoded>> {
        no_pretokenized(is_pretokenized)?;
        let owners = batch_items(inputs)?;
        let items = owners
            .iter()
            .map(|(a, b)| Ok((a.to_str()?, b.as_ref().map(|b| b.to_str()).transpose()?)))
            .collect::<PyResult<Vec<_>>>()?;
        let all = py
            .allow_threads(|| self.shared.tok.encode_batch(&items, add_special_tokens))
            .map_err(to_py)?;
        let pairs: Vec<bool> = items.iter().map(|(_, b)| b.is_some()).collect();
        Ok(self.results(all, &pairs))
    }

    #[pyo3(signature = (ids, skip_special_tokens=true))]
    fn decode(&self, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<String> {
        self.shared
            .tok
            .decode(&ids, skip_special_tokens)
            .map_err(to_py)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.shared.tok.token(id).map(str::to_string)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.shared.tok.token_to_id(token)
    }

    fn get_vocab(&self, with_added_tokens: bool) -> HashMap<String, u32> {
        let tok = &self.shared.tok;
        let mut v: HashMap<String, u32> = tok
            .model
            .tokens()
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        if with_added_tokens {
            for a in tok.added() {
                v.insert(a.content.clone(), a.id);
            }
        }
        v
    }

    fn model_tokens(&self) -> Vec<String> {
        self.shared.tok.model.tokens().to_vec()
    }

    fn is_special(&self, id: u32) -> bool {
        self.shared.tok.is_special(id)
    }

    fn num_special_tokens_to_add(&self, is_pair: bool) -> usize {
        self.shared
            .tok
            .template
            .as_ref()
            .map_or(0, |t| t.added(is_pair))
    }
}
