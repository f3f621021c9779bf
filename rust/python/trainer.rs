//! The BPE trainer: pre-token counting fed from Python, merges learned with the GIL released.

use super::args::{borrow_all, texts, Frequency, Threads, VocabSize};
use super::core_bpe::{wrap, PyCore};
use super::{pipeline, to_py};
use crate::formats::hf_wordpiece;
use crate::pool;
use crate::pretokenize::Pattern;
use crate::train::{self, PreTokenCounter, Splitter, TieBreak, TrainOptions};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::path::PathBuf;

#[pyclass(module = "subword._core", name = "Trainer")]
pub(super) struct PyTrainer {
    counter: Option<PreTokenCounter>,
    specials: Vec<String>,
    num_threads: usize,
}

/// Token strings in id order, and the merges (made into Python strings only when asked for).
pub(super) type Learned = (Vec<String>, PyMerges);

/// Learned merges kept in Rust until read: a trainer's caller often never looks at them.
#[pyclass(module = "subword._core", name = "MergeList", frozen)]
pub(super) struct PyMerges {
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
