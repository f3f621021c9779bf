//! Binding of the dataset job (`crate::files`): the tokenizer's core object becomes a
//! per-document encode function, Python arguments become [`Options`], the job runs with the GIL
//! released, and its report comes back as plain Python values.

use super::args::selection;
use super::classic::PyClassic;
use super::core_bpe::PyCore;
use super::pipeline::PyPipeline;
use super::to_py;
use super::wordpiece::{PyWordPiece, WordPieceShared};
use crate::encode::Encoder;
use crate::error::{Error, Result};
use crate::files::documents::Format;
use crate::files::{Dtype, Job, Options, Report, TokenizerInfo, BATCH_BYTES};
use crate::pipeline::Pipeline;
use crate::specials::{Rules, Selection};
use crate::vocab::Rank;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

fn refuse_windows(truncated: bool, padded: bool) -> Result<()> {
    if truncated || padded {
        return Err(Error::invalid(
            "this tokenizer truncates or pads, which would cut or fill documents in the shards: \
             call no_truncation() and no_padding() on it first",
        ));
    }
    Ok(())
}

/// A tokenizer's core as a per-document encode function, owning what it needs so that a
/// [`PyShardJob`] can keep it between calls.
enum DocEncoder {
    /// Byte-level BPE: tiktoken's `encode_ordinary` or `encode` under `rules`.
    Bpe {
        encoder: Arc<Encoder>,
        rules: Option<Rules>,
    },
    WordPiece {
        tok: Arc<WordPieceShared>,
        add_special: bool,
    },
    Pipeline {
        pipeline: Box<Pipeline>,
        add_special: bool,
    },
    Classic(Arc<crate::classic::ClassicBpe>),
}

impl DocEncoder {
    fn new(
        core: &Bound<'_, PyAny>,
        allowed_special: &Bound<'_, PyAny>,
        add_special: bool,
    ) -> PyResult<Self> {
        if let Ok(c) = core.downcast::<PyCore>() {
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
            return Ok(DocEncoder::Bpe { encoder, rules });
        }
        if let Ok(w) = core.downcast::<PyWordPiece>() {
            let tok = w.get().shared.clone();
            refuse_windows(tok.tok.truncation.is_some(), tok.tok.padding.is_some())
                .map_err(to_py)?;
            return Ok(DocEncoder::WordPiece { tok, add_special });
        }
        if let Ok(p) = core.downcast::<PyPipeline>() {
            let pipeline = p.get().pipeline();
            refuse_windows(pipeline.truncation.is_some(), pipeline.padding.is_some())
                .map_err(to_py)?;
            return Ok(DocEncoder::Pipeline {
                pipeline: Box::new(pipeline.clone()),
                add_special,
            });
        }
        if let Ok(c) = core.downcast::<PyClassic>() {
            return Ok(DocEncoder::Classic(c.get().inner.clone()));
        }
        Err(PyTypeError::new_err(format!(
            "encode_files: no tokenizer core in a {}",
            core.get_type().name()?
        )))
    }

    /// A run of documents as [`crate::files::EncodeRunFn`] says: byte-level BPE looks their
    /// pieces up together; the rest go one document at a time.
    fn encode_run(
        &self,
        docs: &[&str],
        eot: Option<Rank>,
        ids: &mut Vec<Rank>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        if let DocEncoder::Bpe { encoder, rules } = self {
            return encoder.append_run(docs, rules.as_ref(), eot, ids, ends);
        }
        for doc in docs {
            self.encode(doc, ids)?;
            ids.extend(eot);
            ends.push(ids.len());
        }
        Ok(())
    }

    fn encode(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        match self {
            DocEncoder::Bpe {
                encoder,
                rules: Some(r),
                ..
            } => encoder.append_with_rules(text, r, out),
            DocEncoder::Bpe { encoder, .. } => encoder.append_ordinary(text, out),
            DocEncoder::WordPiece { tok, add_special } => {
                let batch = tok.tok.encode(text, None, *add_special)?;
                out.extend(batch.cols.toks.iter().map(|t| t.id));
                Ok(())
            }
            DocEncoder::Pipeline {
                pipeline,
                add_special,
            } => {
                let e = pipeline.encode(text, None, *add_special)?;
                out.extend(e.toks.iter().map(|t| t.id));
                Ok(())
            }
            DocEncoder::Classic(model) => {
                out.extend(model.encode(text)?);
                Ok(())
            }
        }
    }
}

/// The job's settings as `subword.encode_files` passes them, checked and resolved there.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct JobArgs {
    format: String,
    separator: Option<String>,
    field: String,
    errors: String,
    dtype: String,
    shard_tokens: u64,
    eot: Option<Rank>,
    num_threads: usize,
    show_progress: bool,
    overwrite: bool,
    name: String,
    kind: String,
    n_vocab: u64,
    tokenizer_sha256: Option<String>,
    batch_bytes: Option<usize>,
}

impl JobArgs {
    fn options(self) -> PyResult<Options> {
        let format =
            match (self.format.as_str(), self.separator) {
                ("text", None) => Format::Lines,
                ("text", Some(s)) if s.is_empty() => return Err(PyValueError::new_err(
                    "separator is empty: give the text between documents, or None for one per line",
                )),
                ("text", Some(s)) => Format::Separated(s),
                ("jsonl", _) => Format::Jsonl(self.field),
                ("parquet", _) => Format::Parquet(self.field),
                (other, _) => {
                    return Err(PyValueError::new_err(format!(
                        "format={other:?}: expected \"text\", \"jsonl\" or \"parquet\""
                    )))
                }
            };
        let dtype = match self.dtype.as_str() {
            "uint16" => Dtype::U16,
            "uint32" => Dtype::U32,
            other => {
                return Err(PyValueError::new_err(format!(
                    "dtype={other:?}: expected \"uint16\", \"uint32\" or \"auto\""
                )))
            }
        };
        Ok(Options {
            format,
            lossy: self.errors == "replace",
            dtype,
            shard_tokens: self.shard_tokens,
            eot: self.eot,
            num_threads: self.num_threads,
            show_progress: self.show_progress,
            batch_bytes: self.batch_bytes.unwrap_or(BATCH_BYTES).max(1),
            overwrite: self.overwrite,
            tokenizer: TokenizerInfo {
                name: self.name,
                kind: self.kind,
                n_vocab: self.n_vocab,
                sha256: self.tokenizer_sha256,
            },
        })
    }
}

/// How each document is encoded, as `subword.encode_files` passes it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct EncodeArgs<'py> {
    allowed_special: Bound<'py, PyAny>,
    add_special_tokens: bool,
}

impl DocEncoder {
    fn from_args(core: &Bound<'_, PyAny>, e: &EncodeArgs<'_>) -> PyResult<Self> {
        DocEncoder::new(core, &e.allowed_special, e.add_special_tokens)
    }
}

/// Text and jsonl files, read in Rust: the whole job in one call, the GIL released.
#[pyfunction]
pub fn encode_files<'py>(
    py: Python<'py>,
    core: &Bound<'py, PyAny>,
    inputs: Vec<PathBuf>,
    out_dir: PathBuf,
    args: JobArgs,
    encoding: EncodeArgs<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let encoder = DocEncoder::from_args(core, &encoding)?;
    let opts = args.options()?;
    let report = py
        .allow_threads(|| {
            crate::files::encode_files(&inputs, &out_dir, &opts, &|docs, eot, ids, ends| {
                encoder.encode_run(docs, eot, ids, ends)
            })
        })
        .map_err(to_py)?;
    report_dict(py, &report)
}

/// A job whose documents come from Python in batches (a parquet column read by pyarrow): each
/// batch is an Arrow string array's offsets and data, encoded with the GIL released.
#[pyclass(module = "subword._core", name = "ShardJob")]
pub struct PyShardJob {
    job: Option<Job>,
    encoder: DocEncoder,
    paths: Vec<PathBuf>,
}

#[pymethods]
impl PyShardJob {
    #[new]
    fn new(
        py: Python<'_>,
        core: &Bound<'_, PyAny>,
        inputs: Vec<PathBuf>,
        out_dir: PathBuf,
        args: JobArgs,
        encoding: EncodeArgs<'_>,
    ) -> PyResult<Self> {
        let encoder = DocEncoder::from_args(core, &encoding)?;
        let opts = args.options()?;
        let read = Arc::new(AtomicU64::new(0));
        let job = py
            .allow_threads(|| Job::start(&inputs, &out_dir, &opts, 0, read))
            .map_err(to_py)?;
        Ok(PyShardJob {
            job: Some(job),
            encoder,
            paths: inputs,
        })
    }

    /// Documents of input `k`: an Arrow string array of `length` values from `offset`, its
    /// offsets buffer (i32, or i64 when `large`) and its data buffer. Nulls are refused before.
    #[pyo3(signature = (k, offsets, data, offset, length, large))]
    #[allow(clippy::too_many_arguments)]
    fn add_arrow(
        &mut self,
        py: Python<'_>,
        k: usize,
        offsets: &[u8],
        data: &[u8],
        offset: usize,
        length: usize,
        large: bool,
    ) -> PyResult<()> {
        let path = self.path(k)?.clone();
        let docs = arrow_strings(offsets, data, offset, length, large)
            .map_err(|msg| PyValueError::new_err(format!("{}: {msg}", path.display())))?;
        let encoder = &self.encoder;
        let job = self
            .job
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("this job has already finished"))?;
        py.allow_threads(|| {
            job.encode(k, &docs, &|docs, eot, ids, ends| {
                encoder.encode_run(docs, eot, ids, ends)
            })
        })
        .map_err(to_py)
    }

    /// Input `k` is done: its raw file is hashed for the manifest.
    fn end_input(&mut self, py: Python<'_>, k: usize) -> PyResult<()> {
        let path = self.path(k)?.clone();
        let f = py
            .allow_threads(|| crate::files::input::fingerprint_of(&path))
            .map_err(to_py)?;
        self.job()?.end_input(k, f);
        Ok(())
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let job = self
            .job
            .take()
            .ok_or_else(|| PyValueError::new_err("this job has already finished"))?;
        let report = py.allow_threads(|| job.finish()).map_err(to_py)?;
        report_dict(py, &report)
    }

    /// Stop without publishing: the shards written so far are removed.
    fn abandon(&mut self) {
        self.job = None;
    }
}

impl PyShardJob {
    fn job(&mut self) -> PyResult<&mut Job> {
        self.job
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("this job has already finished"))
    }

    fn path(&self, k: usize) -> PyResult<&PathBuf> {
        self.paths
            .get(k)
            .ok_or_else(|| PyValueError::new_err(format!("input {k} out of range")))
    }
}

/// The `length` strings of an Arrow string array from `offset`: its offsets (little-endian i32,
/// or i64 when `large`) delimit them in `data`.
fn arrow_strings<'a>(
    offsets: &[u8],
    data: &'a [u8],
    offset: usize,
    length: usize,
    large: bool,
) -> std::result::Result<Vec<&'a str>, String> {
    let width = if large { 8 } else { 4 };
    let at = |i: usize| -> std::result::Result<usize, String> {
        let b = offsets
            .get(i * width..(i + 1) * width)
            .ok_or("the offsets buffer is shorter than the array")?;
        let v = if large {
            i64::from_le_bytes(b.try_into().expect("8 bytes"))
        } else {
            i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64
        };
        usize::try_from(v).map_err(|_| "a negative offset".to_string())
    };
    let mut out = Vec::with_capacity(length);
    let mut start = at(offset)?;
    for i in offset + 1..=offset + length {
        let end = at(i)?;
        let bytes = data
            .get(start..end)
            .ok_or("an offset past the end of the data buffer")?;
        out.push(
            std::str::from_utf8(bytes)
                .map_err(|e| format!("row {} is not UTF-8 ({e})", i - offset - 1))?,
        );
        start = end;
    }
    Ok(out)
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
