//! Bindings of HF's `NormalizedString` and `PreTokenizedString`: the strings a custom
//! normalizer or pre-tokenizer (`custom.rs`) is handed, and that Python code can build and
//! cut itself. Both wrap the core's [`Normalized`]; every edit is a core method.
//!
//! Invariant: every string cut from another (by `slice`, `[...]`, `split`) shares its
//! `original`, and its alignments point into it, so offsets stay exact through any number of
//! cuts. A string lent to a custom component for one call (HF's "RefMut") is taken back when
//! the call returns; any later use is an error, never a use of a stale string.

use super::to_py;
use crate::normalizers::{uppercase, Normalized, Normalizer, Replace, ReplacePattern, UnicodeForm};
use crate::pre_tokenizers::{Behavior, PreTokenizer, Split};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyString};
use std::sync::Arc;

/// A pattern argument: a str is matched literally, a `tokenizers.Regex` as a regex.
fn pattern(obj: &Bound<'_, PyAny>) -> PyResult<(String, bool)> {
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok((s.to_str()?.to_string(), false));
    }
    let regex = obj.py().import("subword.tokenizers")?.getattr("Regex")?;
    if obj.is_instance(&regex)? {
        return Ok((obj.getattr("pattern")?.extract()?, true));
    }
    Err(PyTypeError::new_err(format!(
        "expected a str or a tokenizers.Regex pattern, got {}",
        obj.get_type().name()?
    )))
}

/// HF's range argument (an int, a (start, end) pair or a slice) as chars `start..end`, with
/// negative indices and slices resolved against `len`.
fn char_range(range: &Bound<'_, PyAny>, len: usize) -> PyResult<(usize, usize)> {
    if let Ok(s) = range.downcast::<PySlice>() {
        let r = s.indices(len as isize)?;
        if r.step != 1 {
            return Err(PyValueError::new_err(
                "a NormalizedString slice takes no step: use [start:end]",
            ));
        }
        // A reversed slice stays reversed: `Normalized::char_range` reads it as HF does.
        return Ok((r.start as usize, r.stop.max(0) as usize));
    }
    if let Ok(i) = range.extract::<isize>() {
        let i = if i < 0 {
            len.checked_sub(i.unsigned_abs()).ok_or_else(|| {
                PyValueError::new_err(format!("{} is bigger than max len", i.unsigned_abs()))
            })?
        } else {
            i as usize
        };
        return Ok((i, i + 1));
    }
    if let Ok((s, e)) = range.extract::<(usize, usize)>() {
        return Ok((s, e));
    }
    Err(PyTypeError::new_err(format!(
        "expected an int, a (start, end) tuple or a slice, got {}",
        range.get_type().name()?
    )))
}

/// Whether `value`, an option named `what`, is `yes` (true) or `no` (false); anything else is
/// an error that names both.
fn one_of(value: &str, what: &str, yes: &str, no: &str) -> PyResult<bool> {
    match value {
        v if v == yes => Ok(true),
        v if v == no => Ok(false),
        other => Err(PyValueError::new_err(format!(
            "unknown {what} {other:?}: use {yes:?} or {no:?}"
        ))),
    }
}

fn check_callable(func: &Bound<'_, PyAny>, signature: &str) -> PyResult<()> {
    if func.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "expected a callable with the signature: `{signature}`, got {}",
            func.get_type().name()?
        )))
    }
}

#[pyclass(module = "subword._core", name = "NormalizedString")]
pub struct PyNormalizedString {
    pub(crate) original: Arc<str>,
    /// None once a lent string was taken back.
    inner: Option<Normalized>,
    /// The call a lent string belongs to, for the error on a later use.
    lent_to: Option<&'static str>,
}

impl PyNormalizedString {
    /// `n` (aligned into `original`) lent to a custom component for the call named `to`.
    pub(crate) fn lent(original: Arc<str>, n: Normalized, to: &'static str) -> Self {
        let mut s = Self::owned(original, n);
        s.lent_to = Some(to);
        s
    }

    pub(crate) fn owned(original: Arc<str>, n: Normalized) -> Self {
        PyNormalizedString {
            original,
            inner: Some(n),
            lent_to: None,
        }
    }

    /// The string back from a lent one; it is unusable from Python afterwards.
    pub(crate) fn take(&mut self) -> Option<Normalized> {
        self.inner.take()
    }

    fn gone(&self) -> PyErr {
        PyRuntimeError::new_err(format!(
            "Cannot use a NormalizedStringRefMut outside `{}`: the string was lent for that \
             call only; copy what you need (str(normalized)) while inside it",
            self.lent_to.unwrap_or("the call it was lent to")
        ))
    }

    pub(crate) fn get(&self) -> PyResult<&Normalized> {
        self.inner.as_ref().ok_or_else(|| self.gone())
    }

    fn get_mut(&mut self) -> PyResult<&mut Normalized> {
        if self.inner.is_none() {
            return Err(self.gone());
        }
        Ok(self.inner.as_mut().expect("checked just above"))
    }

    fn edit(&mut self, f: impl FnOnce(&mut Normalized)) -> PyResult<()> {
        f(self.get_mut()?);
        Ok(())
    }

    pub(crate) fn normalize_with(&mut self, n: &Normalizer) -> PyResult<()> {
        let original = self.original.clone();
        n.normalize(&original, self.get_mut()?).map_err(to_py)
    }

    fn cut(&self, start: usize, end: usize) -> PyResult<Self> {
        Ok(Self::owned(
            self.original.clone(),
            self.get()?.slice(start, end),
        ))
    }

    /// Each char through `func` (called from Python, in order), before the edit.
    fn each_char<T>(
        &self,
        func: &Bound<'_, PyAny>,
        mut f: impl FnMut(Bound<'_, PyAny>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let chars: Vec<char> = self.get()?.normalized().chars().collect();
        chars
            .into_iter()
            .map(|c| f(func.call1((c.to_string(),))?))
            .collect()
    }
}

#[pymethods]
impl PyNormalizedString {
    #[new]
    fn new(sequence: &str) -> Self {
        Self::owned(Arc::from(sequence), Normalized::new(sequence))
    }

    #[getter]
    fn normalized(&self) -> PyResult<String> {
        Ok(self.get()?.normalized().to_string())
    }

    #[getter]
    fn original(&self) -> PyResult<String> {
        // HF's `original` is the text of the bytes this string stands for.
        let (s, e) = self.get()?.original_span();
        Ok(self.original[s..e].to_string())
    }

    fn nfd(&mut self) -> PyResult<()> {
        self.normalize_with(&Normalizer::Unicode(UnicodeForm::Nfd))
    }

    fn nfkd(&mut self) -> PyResult<()> {
        self.normalize_with(&Normalizer::Unicode(UnicodeForm::Nfkd))
    }

    fn nfc(&mut self) -> PyResult<()> {
        self.normalize_with(&Normalizer::Unicode(UnicodeForm::Nfc))
    }

    fn nfkc(&mut self) -> PyResult<()> {
        self.normalize_with(&Normalizer::Unicode(UnicodeForm::Nfkc))
    }

    fn lowercase(&mut self) -> PyResult<()> {
        self.normalize_with(&Normalizer::Lowercase)
    }

    fn uppercase(&mut self) -> PyResult<()> {
        self.edit(uppercase)
    }

    fn prepend(&mut self, s: &str) -> PyResult<()> {
        self.edit(|n| n.prepend(s))
    }

    fn append(&mut self, s: &str) -> PyResult<()> {
        self.edit(|n| n.append(s))
    }

    fn lstrip(&mut self) -> PyResult<()> {
        self.edit(|n| n.strip(true, false))
    }

    fn rstrip(&mut self) -> PyResult<()> {
        self.edit(|n| n.strip(false, true))
    }

    fn strip(&mut self) -> PyResult<()> {
        self.edit(|n| n.strip(true, true))
    }

    fn clear(&mut self) -> PyResult<()> {
        self.edit(Normalized::clear)
    }

    /// The chars `range` of the normalized text, aligned to the same original; None when the
    /// range runs past the end.
    fn slice(&self, range: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        let n = self.get()?;
        // HF resolves negative indices and slices against the length in bytes, then reads the
        // result as chars; ASCII text cannot tell the two apart, and other text gets HF's ids.
        let (s, e) = char_range(range, n.normalized().len())?;
        match n.char_range(s, e) {
            Some((s, e)) => Ok(Some(self.cut(s, e)?)),
            None => Ok(None),
        }
    }

    fn __getitem__(&self, range: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        self.slice(range)
    }

    /// Keeps the chars for which `func(char)` is true.
    fn filter(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(func, "fn(char) -> bool")?;
        let keep = self.each_char(func, |r| r.is_truthy())?;
        let k = std::cell::Cell::new(0);
        self.edit(|n| {
            n.filter(|_| {
                k.set(k.get() + 1);
                keep[k.get() - 1]
            })
        })
    }

    fn for_each(&self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(func, "fn(char)")?;
        self.each_char(func, |_| Ok(())).map(drop)
    }

    /// Each char becomes `func(char)`, which must be one char.
    fn map(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(func, "fn(char) -> char")?;
        let new = self.each_char(func, |r| {
            let s: String = r.extract()?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(PyTypeError::new_err(format!(
                    "`map` expects its function to return one char, got {s:?}"
                ))),
            }
        })?;
        let k = std::cell::Cell::new(0);
        self.edit(|n| {
            n.flat_map(|_| {
                k.set(k.get() + 1);
                std::iter::once(new[k.get() - 1])
            })
        })
    }

    /// The pieces `pattern` cuts the string into under `behavior` (HF's five).
    fn split(&self, pattern: &Bound<'_, PyAny>, behavior: &str) -> PyResult<Vec<Self>> {
        let (text, regex) = self::pattern(pattern)?;
        let b = Behavior::parse(behavior).map_err(to_py)?;
        let split = Split::new(text, regex, b, false).map_err(to_py)?;
        let n = self.get()?;
        let ranges = split
            .split(n.normalized(), (0, n.normalized().len()))
            .map_err(to_py)?;
        ranges.into_iter().map(|(s, e)| self.cut(s, e)).collect()
    }

    fn replace(&mut self, pattern: &Bound<'_, PyAny>, content: String) -> PyResult<()> {
        let (text, regex) = self::pattern(pattern)?;
        let r = Replace::new(ReplacePattern::new(text, regex), content).map_err(to_py)?;
        self.edit(|n| r.apply(n))
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            r#"NormalizedString(original="{}", normalized="{}")"#,
            self.original()?,
            self.normalized()?
        ))
    }

    fn __str__(&self) -> PyResult<String> {
        self.normalized()
    }
}

/// A token a Python `tokenize` callback gave a split: id, value, byte range in the split's text.
pub(crate) type SplitToken = (u32, String, (usize, usize));

/// One split of a [`PyPreTokenizedString`]: its string and, once tokenized, its tokens (id,
/// value, byte range in the split's normalized text).
#[derive(Clone)]
pub(crate) struct Piece {
    pub(crate) normalized: Normalized,
    pub(crate) tokens: Option<Vec<SplitToken>>,
}

#[pyclass(module = "subword._core", name = "PreTokenizedString")]
pub struct PyPreTokenizedString {
    original: Arc<str>,
    /// None once a lent string was taken back.
    splits: Option<Vec<Piece>>,
    lent_to: Option<&'static str>,
}

impl PyPreTokenizedString {
    pub(crate) fn lent(original: Arc<str>, pieces: Vec<Normalized>, to: &'static str) -> Self {
        PyPreTokenizedString {
            original,
            splits: Some(
                pieces
                    .into_iter()
                    .map(|normalized| Piece {
                        normalized,
                        tokens: None,
                    })
                    .collect(),
            ),
            lent_to: Some(to),
        }
    }

    pub(crate) fn take(&mut self) -> Option<Vec<Piece>> {
        self.splits.take()
    }

    fn gone(&self) -> PyErr {
        PyRuntimeError::new_err(format!(
            "Cannot use a PreTokenizedStringRefMut outside `{}`: the string was lent for that \
             call only",
            self.lent_to.unwrap_or("the call it was lent to")
        ))
    }

    fn get(&self) -> PyResult<&Vec<Piece>> {
        self.splits.as_ref().ok_or_else(|| self.gone())
    }

    fn get_mut(&mut self) -> PyResult<&mut Vec<Piece>> {
        if self.splits.is_none() {
            return Err(self.gone());
        }
        Ok(self.splits.as_mut().expect("checked just above"))
    }

    /// Each split not yet tokenized becomes the pieces `cut(index, split)` gives; after an
    /// error the splits not reached, and the one that failed, stay as they were.
    fn recut(
        &mut self,
        mut cut: impl FnMut(usize, &Normalized) -> PyResult<Vec<Normalized>>,
    ) -> PyResult<()> {
        let splits = std::mem::take(self.get_mut()?);
        let mut out = Vec::with_capacity(splits.len());
        let mut result = Ok(());
        for (k, piece) in splits.into_iter().enumerate() {
            if piece.tokens.is_some() || result.is_err() {
                out.push(piece);
                continue;
            }
            match cut(k, &piece.normalized) {
                Ok(made) => out.extend(made.into_iter().map(|normalized| Piece {
                    normalized,
                    tokens: None,
                })),
                Err(e) => {
                    out.push(piece);
                    result = Err(e);
                }
            }
        }
        self.splits = Some(out);
        result
    }

    /// `p` on each split not yet tokenized, in place.
    pub(crate) fn pre_tokenize_with(&mut self, p: &PreTokenizer) -> PyResult<()> {
        let original = self.original.clone();
        self.recut(|_, n| p.pre_tokenize(&original, vec![n.clone()]).map_err(to_py))
    }

    /// Each split's (normalized text, range in `referential`'s bytes).
    fn ranges(&self, original: bool) -> PyResult<Vec<(&str, (usize, usize))>> {
        let mut at = 0;
        Ok(self
            .get()?
            .iter()
            .map(|p| {
                let text = p.normalized.normalized();
                let range = if original {
                    p.normalized.original_span()
                } else {
                    at += text.len();
                    (at - text.len(), at)
                };
                (text, range)
            })
            .collect())
    }
}

/// A string a `split` callback returned, checked to be cut from `original`.
fn own(original: &Arc<str>, item: &Bound<'_, PyAny>) -> PyResult<Normalized> {
    let s = item.downcast::<PyNormalizedString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "`split` must return a list of NormalizedString, got a {} in it",
            item.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let s = s.borrow();
    if !Arc::ptr_eq(&s.original, original) {
        return Err(PyValueError::new_err(
            "`split` returned a NormalizedString that was not cut from the one it was \
             given: return pieces of it (normalized[i:j], .slice or .split) so offsets stay exact",
        ));
    }
    Ok(s.get()?.clone())
}

/// What `get_splits` gives for a split: its text, its range, its tokens (a list, or None).
type SplitView = (String, (usize, usize), PyObject);

/// Byte ranges of one text as char ranges, by HF's rule (its converter is always built on the
/// original text, in either referential): a start inside the text gives the char it falls in;
/// an end past the text is one char after the char before it (or after the start's); a start
/// past the text leaves the range in bytes.
struct CharOffsets(Vec<usize>);

impl CharOffsets {
    fn new(text: &str) -> Self {
        let mut of_byte = Vec::with_capacity(text.len());
        for (i, c) in text.chars().enumerate() {
            of_byte.extend(std::iter::repeat_n(i, c.len_utf8()));
        }
        CharOffsets(of_byte)
    }

    fn convert(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let Some(&start) = self.0.get(s) else {
            return (s, e);
        };
        let end = match self.0.get(e) {
            Some(&end) => end,
            None => {
                let before = e.checked_sub(1).and_then(|b| self.0.get(b));
                before.map_or(start + 1, |&c| c) + 1
            }
        };
        (start, end)
    }
}

#[pymethods]
impl PyPreTokenizedString {
    #[new]
    fn new(s: &str) -> Self {
        let mut p = Self::lent(Arc::from(s), vec![Normalized::new(s)], "");
        p.lent_to = None;
        p
    }

    /// Each split not yet tokenized becomes the pieces `func(index, normalized)` returns (empty
    /// ones dropped, as in HF).
    fn split(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(
            func,
            "fn(index: int, normalized: NormalizedString) -> List[NormalizedString]",
        )?;
        let original = self.original.clone();
        let made = |k: usize, n: &Normalized| -> PyResult<Vec<Normalized>> {
            let arg = PyNormalizedString::owned(original.clone(), n.clone());
            let mut made = Vec::new();
            for item in func.call1((k, arg))?.try_iter()? {
                let n = own(&original, &item?)?;
                // HF's split drops the empty pieces.
                if !n.normalized().is_empty() {
                    made.push(n);
                }
            }
            Ok(made)
        };
        self.recut(made)
    }

    /// `func(normalized)` edits each split not yet tokenized in place.
    fn normalize(&mut self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(func, "fn(normalized: NormalizedString)")?;
        let original = self.original.clone();
        for piece in self.get_mut()?.iter_mut().filter(|p| p.tokens.is_none()) {
            let n = std::mem::replace(&mut piece.normalized, Normalized::new(""));
            let lent = Py::new(
                py,
                PyNormalizedString::lent(original.clone(), n, "normalize"),
            )?;
            let called = func.call1((lent.clone_ref(py),));
            piece.normalized = lent
                .borrow_mut(py)
                .take()
                .unwrap_or_else(|| Normalized::new(""));
            called?;
        }
        Ok(())
    }

    /// `func(text)` gives each split not yet tokenized its tokens (`tokenizers.Token`s, offsets
    /// in bytes of the split's text).
    fn tokenize(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        check_callable(func, "fn(str) -> List[Token]")?;
        for piece in self.get_mut()?.iter_mut().filter(|p| p.tokens.is_none()) {
            let text = piece.normalized.normalized();
            let mut tokens = Vec::new();
            for t in func.call1((text,))?.try_iter()? {
                let t = t?;
                let (start, end): (usize, usize) = t.getattr("offsets")?.extract()?;
                if start > end || end > text.len() {
                    return Err(PyValueError::new_err(format!(
                        "token offsets ({start}, {end}) are outside the {}-byte split {text:?}",
                        text.len()
                    )));
                }
                tokens.push((
                    t.getattr("id")?.extract()?,
                    t.getattr("value")?.extract()?,
                    (start, end),
                ));
            }
            piece.tokens = Some(tokens);
        }
        Ok(())
    }

    /// Each split's (text, (start, end), tokens or None), offsets in the original or in the
    /// splits' normalized texts put end to end, as chars or bytes.
    #[pyo3(signature = (offset_referential="original", offset_type="char"))]
    fn get_splits(
        &self,
        py: Python<'_>,
        offset_referential: &str,
        offset_type: &str,
    ) -> PyResult<Vec<SplitView>> {
        let original = one_of(
            offset_referential,
            "offset_referential",
            "original",
            "normalized",
        )?;
        let chars = one_of(offset_type, "offset_type", "char", "byte")?;
        let ranges = self.ranges(original)?;
        let to_chars = CharOffsets::new(&self.original);
        let token = py.import("subword.tokenizers")?.getattr("Token")?;
        ranges
            .iter()
            .zip(self.get()?)
            .map(|(&(s, (a, b)), piece)| {
                let range = if chars {
                    to_chars.convert((a, b))
                } else {
                    (a, b)
                };
                let tokens = match &piece.tokens {
                    None => py.None(),
                    Some(ts) => ts
                        .iter()
                        .map(|(id, value, offsets)| token.call1((*id, value, *offsets)))
                        .collect::<PyResult<Vec<_>>>()?
                        .into_pyobject(py)?
                        .into_any()
                        .unbind(),
                };
                Ok((s.to_string(), range, tokens))
            })
            .collect()
    }

    /// The tokens as an `Encoding` (every split must be tokenized): offsets as chars of the
    /// original, each token's word its split's index (or `word_idx`).
    #[pyo3(signature = (type_id=0, word_idx=None))]
    fn to_encoding(
        &self,
        py: Python<'_>,
        type_id: u32,
        word_idx: Option<u32>,
    ) -> PyResult<PyObject> {
        let to_chars = CharOffsets::new(&self.original);
        let (mut ids, mut tokens, mut offsets, mut words) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (k, piece) in self.get()?.iter().enumerate() {
            let Some(ts) = &piece.tokens else {
                return Err(PyValueError::new_err(
                    "Split has not been tokenized, call `PreTokenizedString.tokenize` first",
                ));
            };
            for (id, value, (s, e)) in ts {
                let (a, b) = piece.normalized.original_range(*s, *e);
                ids.push(*id);
                tokens.push(value.clone());
                offsets.push(to_chars.convert((a, b)));
                words.push(Some(word_idx.unwrap_or(k as u32)));
            }
        }
        let n = ids.len();
        let encoding = py.import("subword.tokenizers")?.getattr("Encoding")?;
        let made = encoding.call1((
            ids,
            tokens,
            vec![type_id; n],
            offsets,
            words,
            vec![Some(0u32); n],
            vec![0u32; n],
            vec![1u32; n],
            false,
        ))?;
        Ok(made.unbind())
    }
}
