//! PyO3 bindings: type conversion, GIL release and error mapping only; no tokenizer logic here.

mod args;
mod classic;
mod core_bpe;
mod custom;
mod decoders;
mod files;
mod id_buffer;
mod id_lists;
mod normalizers;
mod pipeline;
mod pre_tokenizers;
mod strings;
mod trainer;
mod values;
mod wordpiece;

use crate::error::Error;
use crate::formats::tiktoken;
use crate::pool;
use crate::train::{self};
use crate::vocab::Rank;
use args::Threads;
use classic::PyClassic;
use core_bpe::{PyCore, PyStream};
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyKeyError, PyOSError,
    PyPermissionError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::collections::HashMap;
use trainer::{PyMerges, PyTrainer};
use wordpiece::{PyEncoded, PyWordPiece};

/// Texts shorter than this (bytes) are encoded without releasing the GIL: releasing and taking
/// it back costs more than encoding them.
const RELEASE_GIL_ABOVE: usize = 2048;

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
        // A Python component's own exception, raised again as it was.
        Error::External(e) => match e.downcast::<PyErr>() {
            Ok(e) => *e,
            Err(e) => PyValueError::new_err(e.to_string()),
        },
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
    m.add_class::<id_buffer::IdBuffer>()?;
    m.add_class::<normalizers::PyNormalizer>()?;
    m.add_class::<decoders::PyDecoder>()?;
    m.add_class::<pre_tokenizers::PyPreTokenizer>()?;
    m.add_class::<strings::PyNormalizedString>()?;
    m.add_class::<strings::PyPreTokenizedString>()?;
    m.add_class::<pipeline::PyModel>()?;
    m.add_class::<pipeline::PyPipeline>()?;
    m.add_class::<pipeline::PyDecodeStream>()?;
    m.add_class::<pipeline::PyProcessor>()?;
    m.add_class::<pipeline::PyColumns>()?;
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
    // A result's columns, in the order `EncodingColumns.column(k)` reads them.
    m.add("ENCODING_COLUMNS", pipeline::COLUMN_NAMES)?;
    m.add("GPT2_PATTERN", crate::pretokenize::GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", crate::pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", crate::pretokenize::O200K_PATTERN)?;
    m.add("LLAMA3_PATTERN", crate::pretokenize::LLAMA3_PATTERN)?;
    m.add("DEEPSEEK_V3_SPLITS", crate::pretokenize::DEEPSEEK_V3_SPLITS)?;
    m.add("QWEN2_PATTERN", crate::pretokenize::QWEN2_PATTERN)?;
    m.add("TEKKEN_PATTERN", crate::pretokenize::TEKKEN_PATTERN)?;
    Ok(())
}
