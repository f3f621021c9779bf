//! Binding of the dataset job (`crate::files`): the tokenizer's core object becomes a
//! per-document encode function, Python arguments become [`Options`], the job runs with the GIL
//! released, and its report comes back as plain Python values.

use super::pipeline::PyPipeline;
use super::{selection, to_py, PyCore, PyWordPiece};
use crate::error::{Error, Result};
use crate::files::documents::Format;
use crate::files::{Dtype, Options, Report, TokenizerInfo, BATCH_BYTES};
use crate::specials::Selection;
use crate::vocab::Rank;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

fn refuse_windows(truncated: bool, padded: bool) -> Result<()> {
    if truncated || padded {
        return Err(Error::invalid(
            "this tokenizer truncates or pads, which would cut or fill documents in the shards: \
             call no_truncation() and no_padding() on it first",
        ));
    }
    Ok(())
}

/// The arguments `subword.encode_files` passes on, already checked and resolved there.
#[pyfunction]
#[pyo3(signature = (core, inputs, out_dir, *, format, separator, field, errors, dtype, shard_tokens, eot, num_threads, show_progress, overwrite, name, kind, n_vocab, allowed_special, add_special_tokens, hf_byte_level=None, batch_bytes=BATCH_BYTES))]
#[allow(clippy::too_many_arguments)]
pub fn encode_files<'py>(
    py: Python<'py>,
    core: &Bound<'py, PyAny>,
    inputs: Vec<PathBuf>,
    out_dir: PathBuf,
    format: &str,
    separator: Option<String>,
    field: String,
    errors: &str,
    dtype: &str,
    shard_tokens: u64,
    eot: Option<Rank>,
    num_threads: usize,
    show_progress: bool,
    overwrite: bool,
    name: String,
    kind: String,
    n_vocab: u64,
    allowed_special: &Bound<'py, PyAny>,
    add_special_tokens: bool,
    hf_byte_level: Option<bool>,
    batch_bytes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let format = match (format, separator) {
        ("text", None) => Format::Lines,
        ("text", Some(s)) if s.is_empty() => {
            return Err(PyValueError::new_err(
                "separator is empty: give the text between documents, or None for one per line",
            ))
        }
        ("text", Some(s)) => Format::Separated(s),
        ("jsonl", _) => Format::Jsonl(field),
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "format={other:?}: expected \"text\" or \"jsonl\""
            )))
        }
    };
    let dtype = match dtype {
        "uint16" => Dtype::U16,
        "uint32" => Dtype::U32,
        other => {
            return Err(PyValueError::new_err(format!(
                "dtype={other:?}: expected \"uint16\", \"uint32\" or \"auto\""
            )))
        }
    };
    let opts = Options {
        format,
        lossy: errors == "replace",
        dtype,
        shard_tokens,
        eot,
        num_threads,
        show_progress,
        batch_bytes: batch_bytes.max(1),
        overwrite,
        tokenizer: TokenizerInfo {
            name,
            kind,
            n_vocab,
        },
    };
    let report = if let Ok(c) = core.downcast::<PyCore>() {
        let encoder = c.get().inner.clone();
        let rules = match selection(allowed_special, "allowed_special")? {
            Selection::Only(v) if v.is_empty() => None,
            allowed => Some(
                encoder
                    .specials()
                    .rules(&allowed, &Selection::none())
                    .map_err(to_py)?,
            ),
        };
        py.allow_threads(|| {
            let run = |text: &str, out: &mut Vec<Rank>| match (hf_byte_level, &rules) {
                // `subword.Tokenizer`: its added tokens always split out, its prefix space.
                (Some(prefix_space), _) => {
                    out.extend(encoder.encode_detailed(text, prefix_space)?.ids);
                    Ok(())
                }
                (None, Some(r)) => encoder.append_with_rules(text, r, out),
                (None, None) => encoder.append_ordinary(text, out),
            };
            crate::files::encode_files(&inputs, &out_dir, &opts, &run)
        })
    } else if let Ok(w) = core.downcast::<PyWordPiece>() {
        let tok = &w.get().shared.tok;
        refuse_windows(tok.truncation.is_some(), tok.padding.is_some()).map_err(to_py)?;
        py.allow_threads(|| {
            let run = |text: &str, out: &mut Vec<Rank>| {
                let batch = tok.encode(text, None, add_special_tokens)?;
                out.extend(batch.cols.toks.iter().map(|t| t.id));
                Ok(())
            };
            crate::files::encode_files(&inputs, &out_dir, &opts, &run)
        })
    } else if let Ok(p) = core.downcast::<PyPipeline>() {
        let pipeline = p.get().pipeline();
        refuse_windows(pipeline.truncation.is_some(), pipeline.padding.is_some()).map_err(to_py)?;
        py.allow_threads(|| {
            let run = |text: &str, out: &mut Vec<Rank>| {
                let e = pipeline.encode(text, None, add_special_tokens)?;
                out.extend(e.toks.iter().map(|t| t.id));
                Ok(())
            };
            crate::files::encode_files(&inputs, &out_dir, &opts, &run)
        })
    } else {
        return Err(PyTypeError::new_err(format!(
            "encode_files: no tokenizer core in a {}",
            core.get_type().name()?
        )));
    }
    .map_err(to_py)?;
    report_dict(py, &report)
}

fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("documents", r.documents)?;
    d.set_item("tokens", r.tokens)?;
    let shards = PyList::empty(py);
    for s in &r.shards {
        shards.append((s.file.as_str(), s.tokens))?;
    }
    d.set_item("shards", shards)?;
    let inputs = PyList::empty(py);
    for i in &r.inputs {
        let x = PyDict::new(py);
        x.set_item("path", &i.path)?;
        x.set_item("bytes", i.fingerprint.bytes)?;
        x.set_item("sha256", &i.fingerprint.sha256)?;
        x.set_item("documents", i.documents)?;
        x.set_item("tokens", i.tokens)?;
        inputs.append(x)?;
    }
    d.set_item("inputs", inputs)?;
    Ok(d)
}
