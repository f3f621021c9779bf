//! Bindings of the model stage and of the pipeline that composes the stages: typed arguments in,
//! plain lists out (no JSON crosses); encoding releases the GIL, batches run on the pool. The
//! Python classes `subword.tokenizers.models.WordLevel` and `subword.tokenizers.Tokenizer` wrap
//! them.

use super::args::type_name;
use super::core_bpe::PyCore;
use super::decoders::PyDecoder;
use super::normalizers::PyNormalizer;
use super::pre_tokenizers::PyPreTokenizer;
use super::{to_py, RELEASE_GIL_ABOVE};
use crate::added_tokens::{AddedToken, AddedVocabulary};
use crate::formats::hf_json;
use crate::models::{word_piece, Bpe, BpeOptions, Model, WordLevel};
use crate::pipeline::{DecodeStream, Encoded, Input, Pipeline, PAD_TEXT};
use crate::postprocess::{
    Encoding, Padding, Token, Truncation, TruncationStrategy, Windows, NO_WORD,
};
use crate::processors::{self, Processor, Template};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyList;
use pyo3::types::PyString;
use pyo3::IntoPyObjectExt;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A model token as HF's `Token` fields: id, string, byte range.
type ModelTokenTuple = (u32, String, (usize, usize));

#[pyclass(module = "subword._core", name = "CoreModel", frozen)]
#[derive(Clone)]
pub struct PyModel {
    pub inner: Model,
}

#[pymethods]
impl PyModel {
    #[staticmethod]
    fn word_level(vocab: HashMap<String, u32>, unk_token: String) -> PyResult<Self> {
        let m = WordLevel::new(vocab.into_iter().collect(), unk_token).map_err(to_py)?;
        Ok(PyModel {
            inner: Model::WordLevel(std::sync::Arc::new(m)),
        })
    }

    #[staticmethod]
    fn word_piece(
        vocab: HashMap<String, u32>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> PyResult<Self> {
        let vocab = vocab.into_iter().collect();
        let m = word_piece::from_vocab(
            &vocab,
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
        )
        .map_err(to_py)?;
        Ok(PyModel {
            inner: Model::WordPiece(m),
        })
    }

    /// HF's BPE: the vocabulary, the merge list in rank order and its options.
    #[staticmethod]
    #[pyo3(signature = (vocab, merges, dropout, unk_token, continuing_subword_prefix,
        end_of_word_suffix, fuse_unk, byte_fallback, ignore_merges, cache_capacity, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn bpe(
        vocab: HashMap<String, u32>,
        merges: Vec<(String, String)>,
        dropout: Option<f32>,
        unk_token: Option<String>,
        continuing_subword_prefix: Option<String>,
        end_of_word_suffix: Option<String>,
        fuse_unk: bool,
        byte_fallback: bool,
        ignore_merges: bool,
        cache_capacity: usize,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let options = BpeOptions {
            dropout,
            unk_token,
            continuing_subword_prefix,
            end_of_word_suffix,
            fuse_unk,
            byte_fallback,
            ignore_merges,
        };
        let m = Bpe::new(
            vocab.into_iter().collect(),
            merges,
            options,
            seed,
            cache_capacity,
        )
        .map_err(to_py)?;
        Ok(PyModel {
            inner: Model::Bpe(std::sync::Arc::new(m)),
        })
    }

    /// Forget the cached words (HF's `BPE.clear_cache`); other models have no cache.
    fn clear_cache(&self) {
        if let Model::Bpe(m) = &self.inner {
            m.clear_cache();
        }
    }

    /// HF's `Model.tokenize` of one pre-token: (id, token, (start, end)) per token, the range
    /// in bytes of `sequence`, as HF's model tokens have.
    fn tokenize(&self, sequence: &str) -> PyResult<Vec<ModelTokenTuple>> {
        let mut out = Vec::new();
        self.inner.tokenize(sequence, &mut out).map_err(to_py)?;
        Ok(out
            .into_iter()
            .map(|t| {
                let token = self.inner.id_to_token(t.id).unwrap_or_default().to_string();
                (t.id, token, (t.start, t.end))
            })
            .collect())
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_string)
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        match &self.inner {
            Model::Bpe(m) => m.vocab().iter().map(|(t, &i)| (t.clone(), i)).collect(),
            Model::WordLevel(m) => m.vocab().iter().map(|(t, &i)| (t.clone(), i)).collect(),
            Model::WordPiece(m) => (0u32..)
                .zip(m.tokens())
                .map(|(i, t)| (t.clone(), i))
                .collect(),
        }
    }

    fn get_vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn unk_token(&self) -> Option<String> {
        match &self.inner {
            Model::Bpe(m) => m.options().unk_token.clone(),
            Model::WordLevel(m) => Some(m.unk_token().to_string()),
            Model::WordPiece(m) => Some(m.unk_token().to_string()),
        }
    }

    fn to_json_str(&self) -> String {
        self.inner.to_json().to_string()
    }

    /// The tokenizer.json form as Python values.
    fn state(&self, py: Python<'_>) -> PyResult<PyObject> {
        super::values::to_py(py, &self.inner.to_json())
    }

    /// [`Self::state`] without the vocabulary and merges, which the Python model reads only
    /// when asked for (`vocab_items`, `merges`): as Python objects a Llama 3 model's took
    /// ~100 MB.
    fn settings(&self, py: Python<'_>) -> PyResult<PyObject> {
        super::values::to_py(py, &self.inner.settings_json())
    }

    /// (token, id) in id order.
    fn vocab_items(&self) -> Vec<(String, u32)> {
        let mut items = self.get_vocab().into_iter().collect::<Vec<_>>();
        items.sort_by_key(|&(_, id)| id);
        items
    }

    /// A BPE model's merge list, as pairs of tokens; empty for the other models.
    fn merges(&self) -> Vec<(String, String)> {
        match &self.inner {
            Model::Bpe(m) => m
                .merge_list()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[pyclass(module = "subword._core", name = "CoreProcessor", frozen)]
#[derive(Clone)]
pub struct PyProcessor {
    pub inner: Processor,
}

#[pymethods]
impl PyProcessor {
    #[staticmethod]
    fn bert(sep: (String, u32), cls: (String, u32)) -> Self {
        PyProcessor {
            inner: Processor::Template(Template::bert(cls, sep)),
        }
    }

    /// HF's template strings (items split on whitespace) and each special token's ids.
    #[staticmethod]
    fn template(
        single: Vec<String>,
        pair: Vec<String>,
        special_tokens: Vec<(String, Vec<u32>, Vec<String>)>,
    ) -> PyResult<Self> {
        let t = processors::template(&single, &pair, special_tokens).map_err(to_py)?;
        Ok(PyProcessor {
            inner: Processor::Template(t),
        })
    }

    #[staticmethod]
    fn byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        PyProcessor {
            inner: Processor::ByteLevel {
                add_prefix_space,
                trim_offsets,
                use_regex,
            },
        }
    }

    #[staticmethod]
    fn roberta(
        sep: (String, u32),
        cls: (String, u32),
        trim_offsets: bool,
        add_prefix_space: bool,
    ) -> Self {
        PyProcessor {
            inner: Processor::Roberta {
                sep,
                cls,
                trim_offsets,
                add_prefix_space,
            },
        }
    }

    #[staticmethod]
    fn sequence(processors: Vec<PyRef<'_, PyProcessor>>) -> Self {
        PyProcessor {
            inner: Processor::Sequence(processors.iter().map(|p| p.inner.clone()).collect()),
        }
    }

    fn num_special_tokens_to_add(&self, is_pair: bool) -> usize {
        self.inner.added(is_pair)
    }

    fn to_json_str(&self) -> String {
        self.inner.to_json().to_string()
    }

    /// The tokenizer.json form as Python values.
    fn state(&self, py: Python<'_>) -> PyResult<PyObject> {
        super::values::to_py(py, &self.inner.to_json())
    }
}

/// One result (or overflowing window) as the pipeline made it: HF's `Encoding`, the class
/// `subword.tokenizers` results are (Python's `Encoding` takes it as a virtual subclass, and
/// holds results made from lists: unpickled ones). Its columns are made into Python lists only
/// when read: most callers read `ids` alone, and building every column's lists (8 a text, a
/// str per token, a tuple per offset) took most of a call's time (`encode_batch` of BERT
/// paragraphs, reading `.ids`, became 10 times faster without it). Column `k` is, in order:
/// ids, tokens, type ids, (start, end) character offsets, word indexes and sequence indexes
/// (None for the template's and padding tokens), the special-tokens mask and the attention
/// mask. Being a Rust object with Rust getters, a result costs one allocation and a read of
/// `ids` no Python call.
#[pyclass(module = "subword._core", name = "EncodingColumns", frozen)]
pub struct PyColumns {
    enc: Encoding,
    /// The result's token strings (shared by its windows), as `Pipeline::token_string` reads.
    strings: Arc<Vec<String>>,
    pipeline: Arc<Pipeline>,
    /// Made from a sequence and a pair.
    pair: bool,
    /// Each column's list, made when first read and kept here rather than in a Python list
    /// per result: in a batch of short texts every tracked object a result holds is walked by
    /// each of the collector's passes.
    lists: [GILOnceCell<Py<PyAny>>; 8],
    /// The windows truncation cut off, until `overflowing` first makes them Python objects
    /// (kept in `overflowing`, so the same list each time, as the Python class has it).
    windows: std::sync::Mutex<Vec<PyColumns>>,
    overflowing: GILOnceCell<Py<PyList>>,
}

impl PyColumns {
    fn new(enc: Encoding, strings: Arc<Vec<String>>, pipeline: Arc<Pipeline>, pair: bool) -> Self {
        PyColumns {
            enc,
            strings,
            pipeline,
            pair,
            lists: Default::default(),
            windows: Default::default(),
            overflowing: GILOnceCell::new(),
        }
    }

    /// Token `index`, None past the end (or before the start), as HF answers.
    fn token(&self, index: i64) -> Option<&Token> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.enc.toks.get(i))
    }

    /// A single text has one sequence whatever index is asked for (as in HF); an index no
    /// sequence has never names the tokens of none (`NO_WORD`).
    fn sequence_asked(&self, sequence_index: u32) -> Option<u32> {
        match (self.pair, sequence_index) {
            (false, _) => Some(0),
            (true, NO_WORD) => None,
            (true, k) => Some(k),
        }
    }
}

/// The result's columns by name, in `column(k)`'s order (Python reads them as
/// `_core.ENCODING_COLUMNS`).
pub(super) const COLUMN_NAMES: [&str; 8] = [
    "ids",
    "tokens",
    "type_ids",
    "offsets",
    "word_ids",
    "sequence_ids",
    "special_tokens_mask",
    "attention_mask",
];

#[pymethods]
impl PyColumns {
    fn __len__(&self) -> usize {
        self.enc.toks.len()
    }

    /// Column `k` (ids, tokens, type ids, offsets, word ids, sequence ids, special-tokens
    /// mask, attention mask), the same list each time.
    fn column<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        let Some(cell) = self.lists.get(k) else {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "column {k}: there are 8 (0..=7)"
            )));
        };
        let list = cell.get_or_try_init(py, || self.make_column(py, k).map(Bound::unbind))?;
        Ok(list.bind(py).clone())
    }

    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 0)
    }

    #[getter]
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 1)
    }

    #[getter]
    fn type_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 2)
    }

    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 3)
    }

    #[getter]
    fn word_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 4)
    }

    #[getter]
    fn sequence_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 5)
    }

    #[getter]
    fn special_tokens_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 6)
    }

    #[getter]
    fn attention_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.column(py, 7)
    }

    /// Deprecated in HF too: `word_ids`.
    #[getter]
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
        let message = c"Encoding.words is deprecated (as in HF tokenizers): use word_ids";
        PyErr::warn(py, &category, message, 1)?;
        self.column(py, 4)
    }

    /// 2 for a pair, else 1.
    #[getter]
    fn n_sequences(&self) -> usize {
        1 + self.pair as usize
    }

    /// The windows truncation cut off (each `stride` tokens overlapping the one before).
    #[getter]
    fn overflowing<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = self.overflowing.get_or_try_init(py, || {
            let windows =
                std::mem::take(&mut *self.windows.lock().unwrap_or_else(|e| e.into_inner()));
            let made = windows
                .into_iter()
                .map(|w| Py::new(py, w))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, made).map(Bound::unbind)
        })?;
        Ok(list.bind(py).clone())
    }

    /// The word of token `token_index`; None for a token no word made, or past the end.
    fn token_to_word(&self, token_index: i64) -> Option<u32> {
        self.token(token_index)
            .and_then(|t| (t.word != NO_WORD).then_some(t.word))
    }

    /// Which sequence (0 or 1) token `token_index` comes from; None for a post-processor's
    /// and padding tokens, and past the end.
    fn token_to_sequence(&self, token_index: i64) -> Option<u32> {
        self.token(token_index)
            .and_then(|t| (t.sequence != NO_WORD).then_some(t.sequence))
    }

    /// A token's character range in its sequence; None for a token of no sequence (a
    /// post-processor's special, padding) and past the end, as HF.
    fn token_to_chars(&self, token_index: i64) -> Option<(u32, u32)> {
        self.token(token_index)
            .and_then(|t| (t.sequence != NO_WORD).then_some(t.offsets))
    }

    /// The first token of sequence `sequence_index` whose characters include `char_pos`.
    #[pyo3(signature = (char_pos, sequence_index=0))]
    fn char_to_token(&self, char_pos: i64, sequence_index: u32) -> Option<usize> {
        let sequence = self.sequence_asked(sequence_index)?;
        self.enc.toks.iter().position(|t| {
            let (s, e) = (i64::from(t.offsets.0), i64::from(t.offsets.1));
            t.sequence == sequence && s <= char_pos && char_pos < e
        })
    }

    /// The word of sequence `sequence_index` that character `char_pos` belongs to.
    #[pyo3(signature = (char_pos, sequence_index=0))]
    fn char_to_word(&self, char_pos: i64, sequence_index: u32) -> Option<u32> {
        let token = self.char_to_token(char_pos, sequence_index)?;
        self.token_to_word(token as i64)
    }

    /// The (first, last + 1) token range of word `word_index` of sequence `sequence_index`;
    /// None if no token has it.
    #[pyo3(signature = (word_index, sequence_index=0))]
    fn word_to_tokens(&self, word_index: i64, sequence_index: u32) -> Option<(usize, usize)> {
        let sequence = self.sequence_asked(sequence_index)?;
        let word = u32::try_from(word_index).ok().filter(|&w| w != NO_WORD)?;
        let mut span: Option<(usize, usize)> = None;
        for (i, t) in self.enc.toks.iter().enumerate() {
            if t.word == word && t.sequence == sequence {
                span = Some(span.map_or((i, i + 1), |(a, _)| (a, i + 1)));
            }
        }
        span
    }

    /// Equal to a result (this class or Python's `Encoding`) with the same columns, number of
    /// sequences and windows.
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let mut names = COLUMN_NAMES.to_vec();
        names.extend(["n_sequences", "overflowing"]);
        for name in names {
            let Ok(theirs) = other.getattr(name) else {
                return Ok(py.NotImplemented());
            };
            if !slf.getattr(name)?.eq(theirs)? {
                return false.into_py_any(py);
            }
        }
        true.into_py_any(py)
    }

    /// Mutable, as HF's: no hash.
    #[classattr]
    fn __hash__(py: Python<'_>) -> PyObject {
        py.None()
    }

    fn __repr__(&self) -> String {
        let n = self.enc.toks.len();
        let head: Vec<String> = self
            .enc
            .toks
            .iter()
            .take(8)
            .map(|t| t.id.to_string())
            .collect();
        let more = if n > 8 { "…" } else { "" };
        format!("Encoding(num_tokens={n}, ids=[{}]{more})", head.join(", "))
    }
}

impl PyColumns {
    fn make_column<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        let some = |x: u32| (x != NO_WORD).then_some(x);
        let toks = &self.enc.toks;
        match k {
            0 => id_column(py, toks),
            1 => list_of(py, toks, |t| self.pipeline.token_string(t, &self.strings)),
            2 => list_of(py, toks, |t| t.type_id),
            3 => list_of(py, toks, |t| t.offsets),
            4 => list_of(py, toks, |t| some(t.word)),
            5 => list_of(py, toks, |t| some(t.sequence)),
            6 => list_of(py, toks, |t| (t.word == NO_WORD) as u32),
            7 => list_of(py, toks, |t| (t.text != PAD_TEXT) as u32),
            _ => Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "column {k}: there are 8 (0..=7)"
            ))),
        }
    }
}

/// Python ints for ids `0..n`, made as larger ids first appear and kept: an id column then
/// costs an incref per token instead of an int made (and later freed) per token, which took as
/// long as the encode itself (Llama 3's file, 1 MB of en_docs, 237 K ids: ~4.7 ms).
/// Taken only with the GIL held, so the lock never waits on a thread that wants the GIL.
static INTS: std::sync::Mutex<Vec<Py<PyAny>>> = std::sync::Mutex::new(Vec::new());

/// The ids above which ints are made per use, not kept (a pad id may be any u32).
const INTS_MAX: u32 = 1 << 20;

/// The id column of `toks` as a Python list of ints from [`INTS`].
fn id_column<'py>(py: Python<'py>, toks: &[Token]) -> PyResult<Bound<'py, PyAny>> {
    let top = toks.iter().map(|t| t.id).filter(|&id| id < INTS_MAX).max();
    let mut ints = INTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(top) = top {
        for id in ints.len() as u32..=top {
            ints.push(id.into_pyobject(py)?.into_any().unbind());
        }
    }
    let ints = &*ints;
    let item = |t: &Token| -> Bound<'py, PyAny> {
        match ints.get(t.id as usize) {
            Some(i) => i.bind(py).clone(),
            None => match t.id.into_pyobject(py) {
                Ok(i) => i.into_any(),
                Err(never) => match never {},
            },
        }
    };
    // Straight into the list (an exact-size iterator): no vector of references first.
    Ok(PyList::new(py, toks.iter().map(item))?.into_any())
}

/// One value per token, as a Python list.
fn list_of<'py, T>(
    py: Python<'py>,
    toks: &[Token],
    f: impl Fn(&Token) -> T,
) -> PyResult<Bound<'py, PyAny>>
where
    Vec<T>: IntoPyObject<'py>,
{
    toks.iter().map(f).collect::<Vec<T>>().into_bound_py_any(py)
}

/// A result's columns as Python gives them back to `post_process`: ids, tokens, type ids,
/// offsets, word ids (None for a token a post-processor added) and the attention mask (0 for
/// padding).
type Columns = (
    Vec<u32>,
    Vec<String>,
    Vec<u32>,
    Vec<(u32, u32)>,
    Vec<Option<u32>>,
    Vec<u8>,
);

/// A result's columns and its overflowing windows' (one level, as HF's results have them).
type Sequence = (Columns, Vec<Columns>);

/// A result and its windows as `post_process` takes them, their token strings in `strings`.
fn windows_of((main, overflow): Sequence, strings: &mut Vec<String>) -> PyResult<Windows> {
    let mut w = Windows::new(encoding_of(main, strings)?);
    for o in overflow {
        w.overflow.push(Windows::new(encoding_of(o, strings)?));
    }
    Ok(w)
}

/// The tokens of `columns`, each one's string kept in `strings` (padding keeps its mark, so
/// it stays padding).
fn encoding_of(
    (ids, tokens, type_ids, offsets, words, attention): Columns,
    strings: &mut Vec<String>,
) -> PyResult<Encoding> {
    let n = ids.len();
    let lengths = [
        tokens.len(),
        type_ids.len(),
        offsets.len(),
        words.len(),
        attention.len(),
    ];
    if lengths != [n; 5] {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "post_process: the encoding's ids, tokens, type_ids, offsets, word_ids and \
             attention_mask differ in length",
        ));
    }
    let mut e = Encoding::default();
    let columns = ids
        .into_iter()
        .zip(tokens)
        .zip(type_ids)
        .zip(offsets)
        .zip(words);
    for (((((id, token), type_id), offsets), word), attends) in columns.zip(attention) {
        e.push(id, offsets, word.unwrap_or(NO_WORD));
        e.set_type_id(type_id);
        if attends == 0 {
            e.set_text(PAD_TEXT);
        } else {
            e.set_text(strings.len() as u32);
            strings.push(token);
        }
    }
    Ok(e)
}

/// The result `e` for Python, its windows (which may have their own) inside it.
fn result(p: &Arc<Pipeline>, e: Encoded, pair: bool) -> PyColumns {
    fn made(p: &Arc<Pipeline>, w: Windows, strings: &Arc<Vec<String>>, pair: bool) -> PyColumns {
        let Windows { enc, overflow } = w;
        let mut columns = PyColumns::new(enc, strings.clone(), p.clone(), pair);
        let windows = overflow.into_iter().map(|o| made(p, o, strings, pair));
        *columns.windows.get_mut().unwrap_or_else(|e| e.into_inner()) = windows.collect();
        columns
    }
    made(p, e.main, &Arc::new(e.strings), pair)
}

/// Truncation as Python passes it: max_length, stride, strategy, direction.
type TruncationArgs = (usize, usize, String, String);
/// Padding as Python passes it: length, pad_to_multiple_of, direction, pad_id, pad_type_id,
/// pad_token.
type PaddingArgs = (Option<usize>, Option<usize>, String, u32, u32, String);

fn left(direction: &str) -> PyResult<bool> {
    match direction {
        "left" => Ok(true),
        "right" => Ok(false),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "direction must be \"left\" or \"right\", got {other:?}"
        ))),
    }
}

fn truncation_of(
    (max_length, stride, strategy, direction): TruncationArgs,
) -> PyResult<Truncation> {
    let strategy = match strategy.as_str() {
        "longest_first" => TruncationStrategy::LongestFirst,
        "only_first" => TruncationStrategy::OnlyFirst,
        "only_second" => TruncationStrategy::OnlySecond,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "strategy must be longest_first, only_first or only_second, got {other:?}"
            )))
        }
    };
    Ok(Truncation {
        max_length,
        strategy,
        stride,
        left: left(&direction)?,
    })
}

fn padding_of(
    (length, multiple_of, direction, pad_id, pad_type_id, pad_token): PaddingArgs,
) -> PyResult<Padding> {
    for (what, n) in [("length", length), ("pad_to_multiple_of", multiple_of)] {
        if n.is_some_and(|n| n > Padding::MAX_LENGTH) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "padding {what} {} is more than the limit of {} tokens",
                n.unwrap_or_default(),
                Padding::MAX_LENGTH
            )));
        }
    }
    Ok(Padding {
        length,
        multiple_of,
        left: left(&direction)?,
        pad_id,
        pad_type_id,
        pad_token,
    })
}

/// An added token as Python passes it: id, content, single_word, lstrip, rstrip, normalized,
/// special.
type AddedTuple = (u32, String, bool, bool, bool, bool, bool);

fn added_of(
    (id, content, single_word, lstrip, rstrip, normalized, special): AddedTuple,
) -> (u32, AddedToken) {
    (
        id,
        AddedToken {
            content,
            single_word,
            lstrip,
            rstrip,
            normalized,
            special,
        },
    )
}

fn tuple_of((id, t): &(u32, AddedToken)) -> AddedTuple {
    (
        *id,
        t.content.clone(),
        t.single_word,
        t.lstrip,
        t.rstrip,
        t.normalized,
        t.special,
    )
}

/// A sequence as Python gives it: a text (borrowed from the str), or words already cut
/// (`is_pretokenized`).
pub enum PyInput<'a> {
    Text(&'a str),
    Words(Vec<String>),
}

impl<'a> PyInput<'a> {
    fn of(ob: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(text) = ob.downcast::<PyString>() {
            return utf8(text).map(PyInput::Text);
        }
        let words: Vec<Bound<'_, PyString>> = ob.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "a sequence is a str, or with is_pretokenized=True a list of str, not {}",
                type_name(ob)
            ))
        })?;
        words
            .iter()
            .map(|w| utf8(w).map(str::to_owned))
            .collect::<PyResult<_>>()
            .map(PyInput::Words)
    }

    fn len(&self) -> usize {
        match self {
            PyInput::Text(t) => t.len(),
            PyInput::Words(w) => w.iter().map(String::len).sum(),
        }
    }
}

/// A str as UTF-8; one holding a lone surrogate (which UTF-8 cannot encode) is a ValueError
/// (Python's UnicodeEncodeError, kept as the cause) saying how to clean the text.
fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    text.to_str().map_err(|e| {
        let err = PyValueError::new_err(format!(
            "the text holds a lone surrogate, which UTF-8 cannot encode ({}): clean it first, \
             e.g. text.encode('utf-8', 'replace').decode('utf-8')",
            e.value(text.py())
        ));
        err.set_cause(text.py(), Some(e));
        err
    })
}

impl PyInput<'_> {
    fn as_input(&self) -> Input<'_> {
        match self {
            PyInput::Text(t) => Input::Text(t),
            PyInput::Words(w) => Input::Words(w),
        }
    }
}

#[pyclass(module = "subword._core", name = "CorePipeline", frozen)]
pub struct PyPipeline {
    /// Shared with the results, which read token strings from it when asked.
    inner: Arc<Pipeline>,
}

impl PyPipeline {
    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.inner
    }
}

#[pymethods]
impl PyPipeline {
    /// The padding settings checked as the constructor checks them, so that
    /// `enable_padding` refuses a bad one when it is set rather than at the next encode.
    #[staticmethod]
    fn check_padding(padding: PaddingArgs) -> PyResult<()> {
        padding_of(padding).map(|_| ())
    }

    #[new]
    #[pyo3(signature = (model, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None, added_tokens=Vec::new(), truncation=None, padding=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        model: PyRef<'_, PyModel>,
        normalizer: Option<PyRef<'_, PyNormalizer>>,
        pre_tokenizer: Option<PyRef<'_, PyPreTokenizer>>,
        post_processor: Option<PyRef<'_, PyProcessor>>,
        decoder: Option<PyRef<'_, PyDecoder>>,
        added_tokens: Vec<AddedTuple>,
        truncation: Option<TruncationArgs>,
        padding: Option<PaddingArgs>,
    ) -> PyResult<Self> {
        let inner = Pipeline {
            added: Default::default(),
            normalizer: normalizer.map(|n| n.inner.clone()),
            pre_tokenizer: pre_tokenizer.map(|p| p.inner.clone()),
            model: model.inner.clone(),
            post_processor: post_processor.map(|p| p.inner.clone()),
            decoder: decoder.map(|d| d.inner.clone()),
            truncation: truncation.map(truncation_of).transpose()?,
            padding: padding.map(padding_of).transpose()?,
        }
        .with_added(added_tokens.into_iter().map(added_of).collect())
        .map_err(to_py)?;
        Ok(PyPipeline {
            inner: Arc::new(inner),
        })
    }

    /// HF's `add_tokens` on `existing`: the new list and how many were added.
    #[staticmethod]
    fn assign_added_ids(
        model: PyRef<'_, PyModel>,
        existing: Vec<AddedTuple>,
        new: Vec<AddedTuple>,
    ) -> (Vec<AddedTuple>, usize) {
        let existing: Vec<_> = existing.into_iter().map(added_of).collect();
        let new = new.into_iter().map(|t| added_of(t).1).collect();
        let m = &model.inner;
        let (all, n) =
            AddedVocabulary::assign_ids(&existing, new, |t| m.token_to_id(t), m.vocab_size());
        (all.iter().map(tuple_of).collect(), n)
    }

    fn truncation(&self) -> Option<TruncationArgs> {
        self.inner.truncation.as_ref().map(|t| {
            let strategy = match t.strategy {
                TruncationStrategy::LongestFirst => "longest_first",
                TruncationStrategy::OnlyFirst => "only_first",
                TruncationStrategy::OnlySecond => "only_second",
            };
            let direction = if t.left { "left" } else { "right" };
            (
                t.max_length,
                t.stride,
                strategy.to_string(),
                direction.to_string(),
            )
        })
    }

    fn padding(&self) -> Option<PaddingArgs> {
        self.inner.padding.as_ref().map(|p| {
            let direction = if p.left { "left" } else { "right" };
            (
                p.length,
                p.multiple_of,
                direction.to_string(),
                p.pad_id,
                p.pad_type_id,
                p.pad_token.clone(),
            )
        })
    }

    fn added_tokens(&self) -> Vec<AddedTuple> {
        self.inner.added.tokens().iter().map(tuple_of).collect()
    }

    #[pyo3(signature = (text, pair=None, add_special_tokens=true))]
    fn encode(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<PyColumns> {
        let p = &self.inner;
        let (a, b) = (PyInput::of(text)?, pair.map(PyInput::of).transpose()?);
        let run = || {
            let pair = b.as_ref().map(PyInput::as_input);
            let e = p.encode_full(a.as_input(), pair, add_special_tokens)?;
            Ok(result(p, e, b.is_some()))
        };
        // Releasing the GIL costs more than encoding a short text; long ones let other
        // threads run.
        if a.len() + b.as_ref().map_or(0, PyInput::len) < RELEASE_GIL_ABOVE {
            run()
        } else {
            py.allow_threads(run)
        }
        .map_err(to_py)
    }

    /// HF's `post_process` of results already made (their columns: ids, tokens, offsets,
    /// word ids): truncation, the post-processor and padding, as `encode` applies them after
    /// the model.
    #[pyo3(signature = (encoding, pair=None, add_special_tokens=true))]
    fn post_process(
        &self,
        py: Python<'_>,
        encoding: Sequence,
        pair: Option<Sequence>,
        add_special_tokens: bool,
    ) -> PyResult<PyColumns> {
        let p = &self.inner;
        let mut strings = Vec::new();
        let a = windows_of(encoding, &mut strings)?;
        let b = pair.map(|c| windows_of(c, &mut strings)).transpose()?;
        let is_pair = b.is_some();
        py.allow_threads(|| {
            let e = p.post_process(a, b, strings, add_special_tokens)?;
            Ok(result(p, e, is_pair))
        })
        .map_err(to_py)
    }

    /// Each input is a sequence, or a (sequence, pair) tuple whose pair may be None; padded to
    /// the batch's longest when padding is on. The texts are read in place (the list holds
    /// them while the core encodes), not copied.
    #[pyo3(signature = (inputs, add_special_tokens=true, num_threads=0))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyList>,
        add_special_tokens: bool,
        num_threads: usize,
    ) -> PyResult<Vec<PyColumns>> {
        let p = &self.inner;
        let mut held = Vec::with_capacity(inputs.len());
        for item in inputs.iter() {
            if item.is_instance_of::<PyString>() {
                held.push((item, None));
                continue;
            }
            let (a, b): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "encode_batch: an input is a sequence or a (sequence, pair) tuple, not {}",
                    type_name(&item)
                ))
            })?;
            held.push((a, (!b.is_none()).then_some(b)));
        }
        let inputs = held
            .iter()
            .map(|(a, b)| Ok((PyInput::of(a)?, b.as_ref().map(PyInput::of).transpose()?)))
            .collect::<PyResult<Vec<_>>>()?;
        let run = || -> crate::error::Result<Vec<PyColumns>> {
            crate::pool::install(num_threads, || {
                let mut all: Vec<Encoded> = inputs
                    .par_iter()
                    .map(|(t, b)| {
                        p.encode_full(
                            t.as_input(),
                            b.as_ref().map(PyInput::as_input),
                            add_special_tokens,
                        )
                    })
                    .collect::<crate::error::Result<_>>()?;
                if let Some(pad) = &p.padding {
                    let longest = all.iter().map(|e| e.main.enc.len()).max().unwrap_or(0);
                    let target = pad.target(longest);
                    all.par_iter_mut()
                        .for_each(|e| p.pad(&mut e.main, target, e.lone));
                }
                let pairs = inputs.iter().map(|(_, b)| b.is_some());
                Ok(all
                    .into_iter()
                    .zip(pairs)
                    .map(|(e, b)| result(p, e, b))
                    .collect())
            })?
        };
        py.allow_threads(run).map_err(to_py)
    }

    #[pyo3(signature = (ids, skip_special_tokens=true))]
    fn decode(&self, py: Python<'_>, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<String> {
        py.allow_threads(|| self.inner.decode(&ids, skip_special_tokens))
            .map_err(to_py)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_string)
    }

    fn vocab_size(&self, with_added_tokens: bool) -> usize {
        self.inner.vocab_size(with_added_tokens)
    }

    /// The pipeline of a byte-level rank encoder (`subword.Tokenizer`'s model): its
    /// tokenizer.json document (`formats::hf_json`), read here without leaving Rust; made once
    /// per encoder and space rule and kept by the encoder.
    #[staticmethod]
    fn of_core_bpe(py: Python<'_>, core: PyRef<'_, PyCore>, prefix_space: bool) -> PyResult<Self> {
        let cell = &core.pipelines[usize::from(prefix_space)];
        if let Some(made) = cell.get() {
            return Ok(PyPipeline {
                inner: made.clone(),
            });
        }
        let encoder = core.inner.clone();
        let made = py
            .allow_threads(|| Pipeline::from_json(&hf_json::document(&encoder, prefix_space)))
            .map_err(to_py)?;
        // Two threads may both have made one: the first kept is everyone's.
        let inner = cell.get_or_init(|| Arc::new(made)).clone();
        Ok(PyPipeline { inner })
    }

    /// A tokenizer.json document read in Rust; every part is checked.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py
            .allow_threads(|| Pipeline::from_json_str(json, "tokenizer.json"))
            .map_err(to_py)?;
        Ok(PyPipeline {
            inner: Arc::new(inner),
        })
    }

    /// HF's tokenizer.json of this pipeline.
    #[pyo3(signature = (pretty=false))]
    fn to_str(&self, pretty: bool) -> PyResult<String> {
        let doc = self.inner.to_json().map_err(to_py)?;
        let text = if pretty {
            serde_json::to_string_pretty(&doc)
        } else {
            serde_json::to_string(&doc)
        };
        text.map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// The stages, as core objects for the Python wrappers.
    fn stages(
        &self,
    ) -> (
        PyModel,
        Option<PyNormalizer>,
        Option<PyPreTokenizer>,
        Option<PyProcessor>,
        Option<PyDecoder>,
    ) {
        let p = &self.inner;
        (
            PyModel {
                inner: p.model.clone(),
            },
            p.normalizer.clone().map(|inner| PyNormalizer { inner }),
            p.pre_tokenizer
                .clone()
                .map(|inner| PyPreTokenizer { inner }),
            p.post_processor.clone().map(|inner| PyProcessor { inner }),
            p.decoder.clone().map(|inner| PyDecoder { inner }),
        )
    }
}

/// HF's `DecodeStream`: the stream's state, stepped against a pipeline (`rust/pipeline/`).
#[pyclass(module = "subword._core", name = "CoreDecodeStream")]
#[derive(Clone)]
pub struct PyDecodeStream {
    inner: DecodeStream,
}

#[pymethods]
impl PyDecodeStream {
    #[new]
    #[pyo3(signature = (ids, skip_special_tokens))]
    fn new(ids: Vec<u32>, skip_special_tokens: bool) -> Self {
        PyDecodeStream {
            inner: DecodeStream::new(ids, skip_special_tokens),
        }
    }

    fn step(&mut self, pipeline: &PyPipeline, ids: Vec<u32>) -> PyResult<Option<String>> {
        self.inner.step(&pipeline.inner, &ids).map_err(to_py)
    }

    fn copy(&self) -> Self {
        self.clone()
    }
}
