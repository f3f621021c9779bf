//! The WordPiece tokenizer (BERT family) and its results (`Encoded`, HF's `Encoding`), whose
//! columns become Python lists only when read.

use super::core_bpe::py_ints;
use super::{to_py, RELEASE_GIL_ABOVE};
use crate::formats::hf_wordpiece;
use crate::postprocess::{Batch, Encoding, Padding, Token, NO_WORD};
use crate::wordpiece::pipeline::WordPieceTokenizer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// tokens it shows; columns become Python lists on access.
#[pyclass(module = "subword._core", name = "Encoded", frozen)]
pub(super) struct PyEncoded {
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
pub(super) struct WordPieceShared {
    pub(super) tok: WordPieceTokenizer,
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
pub(super) struct PyWordPiece {
    pub(super) shared: Arc<WordPieceShared>,
}

fn no_pretokenized(on: bool) -> PyResult<()> {
    if on {
        return Err(PyValueError::new_err(
            "is_pretokenized=True is not supported; pass the text itself",
        ));
    }
    Ok(())
}

/// A text and its optional pair, as Python strings.
pub(super) type Item<'py> = (Bound<'py, PyString>, Option<Bound<'py, PyString>>);

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
