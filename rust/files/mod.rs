//! Files → token shards: the dataset job. Inputs are read as a stream and cut into documents,
//! the documents encoded on the pool, and their ids written as `.npy` shards with a document
//! index and a `manifest.json` (see [`shards`] for the layout).
//!
//! Idea: reading and encoding overlap. A reader thread decompresses the inputs and cuts them into
//! batches of about [`BATCH_BYTES`] of text, handing each over a channel that holds one; the
//! calling thread encodes a batch on the pool while the next is read, and appends the ids to
//! the shard writer in input order. So:
//! - memory is bounded by a few batches of text and their ids, whatever the input size or the
//!   shard size (shards are streamed to disk);
//! - the output is deterministic: documents are encoded one by one and written in order, so the
//!   bytes are the same for any thread count and wherever the batches fall;
//! - the manifest is written last: a folder with a manifest is complete. A failed job removes
//!   what it wrote.
//!
//! Downside: one reader thread. Decompressing and parsing one input is not parallel, which caps a
//! single gzip/jsonl input at one core's rate of doing that.

pub mod documents;
pub mod input;
pub mod npy;
pub mod shards;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::vocab::Rank;
use documents::{Docs, Format, Splitter};
use input::{Fingerprint, Input};
pub use npy::Dtype;
use shards::{Shard, ShardWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

/// Text per batch: enough for every thread to have many documents, small enough that a few
/// batches in flight stay far below the memory of the input, and that the reader soon fills
/// recycled batches instead of new memory (which costs about 1 ms per MB on this VM). File job,
/// 2 threads, cl100k, median of 8 alternating fresh processes, 4 MB → 1 MB: code_py 111 → 123
/// MB/s, en_docs 116 → 123, en_webster 90 → 95; 512 KB was no better than 1 MB.
pub const BATCH_BYTES: usize = 1 << 20;

/// The job's first batch is this small, and each next one twice the last up to the batch size:
/// the pool waits only for a first batch read, not a full one (on en_docs, 11 MB, a first
/// batch of 4 MB took 8 ms of an 80 ms job to read before anything was encoded).
const FIRST_BATCH_BYTES: usize = 256 << 10;

pub const MANIFEST_FILE: &str = "manifest.json";

/// What the manifest records about the tokenizer (the caller knows it; the encoder does not).
#[derive(Clone, Debug)]
pub struct TokenizerInfo {
    pub name: String,
    pub kind: String,
    pub n_vocab: u64,
    /// The sha256 of the tokenizer's saved form (its tokenizer.json), for tokenizers that a
    /// name does not identify.
    pub sha256: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub format: Format,
    /// Invalid UTF-8 becomes U+FFFD instead of an error.
    pub lossy: bool,
    pub dtype: Dtype,
    pub shard_tokens: u64,
    /// Appended after every document.
    pub eot: Option<Rank>,
    pub num_threads: usize,
    pub show_progress: bool,
    pub batch_bytes: usize,
    /// Replace shards already in the folder (else finding some there is an error).
    pub overwrite: bool,
    pub tokenizer: TokenizerInfo,
}

#[derive(Clone, Debug)]
pub struct InputReport {
    pub path: PathBuf,
    pub fingerprint: Fingerprint,
    pub documents: u64,
    pub tokens: u64,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub inputs: Vec<InputReport>,
    pub shards: Vec<Shard>,
    pub documents: u64,
    pub tokens: u64,
}

/// What the reader thread sends.
enum Msg {
    Batch(usize, Docs),
    /// Input `k` is read to its end.
    End(usize, Fingerprint),
}

/// Encodes a run of documents: appends each one's ids, then the end-of-text id if one is
/// given, to `ids`, and after each document `ids.len()` to `ends`. A run, not one document,
/// so that the encoder can look pieces up across documents (`encode/runs.rs`).
pub type EncodeRunFn<'a> =
    dyn Fn(&[&str], Option<Rank>, &mut Vec<Rank>, &mut Vec<usize>) -> Result<()> + Sync + 'a;

/// One shard job: batches of documents in, shards out. [`encode_files`] drives it from a
/// reader thread; a caller with its own documents (a parquet column) drives it batch by batch.
/// Dropped before [`Job::finish`], it removes the shards it published.
pub struct Job {
    out_dir: PathBuf,
    opts: Options,
    threads: usize,
    writer: Option<ShardWriter>,
    reports: Vec<InputReport>,
    /// Encoded and not yet written: (input, ids).
    pending: Option<(usize, crate::encode::FlatBatch)>,
    progress: Progress,
    interrupts: crate::train::Interrupts,
}

/// Append a batch's documents to the stream and count them for their input.
fn write_batch(
    writer: &mut Option<ShardWriter>,
    report: &mut InputReport,
    batch: &crate::encode::FlatBatch,
) -> Result<()> {
    let writer = writer.as_mut().expect("open until finish");
    for (ids, ends) in &batch.parts {
        writer.push_documents(ids, ends)?;
        report.documents += ends.len() as u64;
        report.tokens += ids.len() as u64;
    }
    Ok(())
}

impl Job {
    /// Check the options, prepare `out_dir` and open the index. `total` is the bytes the
    /// progress line counts toward (0: unknown), `read` the counter it reads.
    pub fn start(
        inputs: &[PathBuf],
        out_dir: &Path,
        opts: &Options,
        total: u64,
        read: Arc<AtomicU64>,
    ) -> Result<Job> {
        if opts.shard_tokens == 0 {
            return Err(Error::invalid("shard_tokens must be at least 1"));
        }
        if let Some(eot) = opts.eot {
            check_fits(eot as u64, opts.dtype)?;
        }
        let threads = crate::pool::resolve(opts.num_threads)?;
        prepare_folder(out_dir, opts.overwrite)?;
        let writer = ShardWriter::new(out_dir, opts.dtype, opts.shard_tokens)?;
        Ok(Job {
            out_dir: out_dir.to_path_buf(),
            opts: opts.clone(),
            threads,
            writer: Some(writer),
            reports: inputs
                .iter()
                .map(|p| InputReport {
                    path: p.clone(),
                    fingerprint: Fingerprint::default(),
                    documents: 0,
                    tokens: 0,
                })
                .collect(),
            pending: None,
            progress: Progress::new(opts.show_progress, total, read),
            interrupts: crate::train::Interrupts::new(),
        })
    }

    /// Encode documents of input `k` on the pool and append them to the stream, in order.
    /// The ids of one call are written during the next one (or by `finish`), so that writing,
    /// which is serial, overlaps encoding instead of leaving the pool idle.
    pub fn encode(&mut self, k: usize, docs: &[&str], encode: &EncodeRunFn<'_>) -> Result<()> {
        let eot = self.opts.eot;
        let threads = self.threads;
        let pending = self.pending.take();
        let (writer, reports) = (&mut self.writer, &mut self.reports);
        let (written, encoded) = crate::pool::install(threads, || {
            rayon::join(
                || match pending {
                    Some((k, batch)) => write_batch(writer, &mut reports[k], &batch),
                    None => Ok(()),
                },
                || {
                    crate::encode::batch::par_map_runs(docs, threads, |run, ids, ends| {
                        encode(run, eot, ids, ends)
                    })
                },
            )
        })?;
        written?;
        self.pending = Some((k, encoded?));
        self.progress
            .show(self.reports.iter().map(|r| r.tokens).sum());
        self.interrupts.poll()
    }

    /// Input `k` is read to its end.
    pub fn end_input(&mut self, k: usize, fingerprint: Fingerprint) {
        self.reports[k].fingerprint = fingerprint;
    }

    /// Publish the last shard, the index and then the manifest.
    pub fn finish(mut self) -> Result<Report> {
        if let Some((k, batch)) = self.pending.take() {
            write_batch(&mut self.writer, &mut self.reports[k], &batch)?;
        }
        let writer = self.writer.take().expect("finished once");
        let (shards, documents, tokens) = writer.finish()?;
        self.progress.finish(tokens);
        let report = Report {
            inputs: std::mem::take(&mut self.reports),
            shards,
            documents,
            tokens,
        };
        let written = crate::formats::write_atomic(
            &self.out_dir.join(MANIFEST_FILE),
            manifest(&report, &self.opts).as_bytes(),
        );
        if let Err(e) = written {
            self.remove_shards(&report.shards);
            return Err(e);
        }
        Ok(report)
    }

    fn remove_shards(&self, shards: &[Shard]) {
        for shard in shards {
            let _ = std::fs::remove_file(self.out_dir.join(&shard.file));
        }
        let _ = std::fs::remove_file(self.out_dir.join(shards::INDEX_FILE));
    }
}

impl Drop for Job {
    /// A job that did not finish leaves no shards (the unfinished ones remove themselves).
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            let published = writer.published().to_vec();
            drop(writer);
            self.remove_shards(&published);
        }
    }
}

/// Encode `inputs` into shards in `out_dir`.
pub fn encode_files(
    inputs: &[PathBuf],
    out_dir: &Path,
    opts: &Options,
    encode: &EncodeRunFn<'_>,
) -> Result<Report> {
    let total: u64 = inputs
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).map_err(io(p)))
        .sum::<Result<u64>>()?;
    let read = Arc::new(AtomicU64::new(0));
    let mut job = Job::start(inputs, out_dir, opts, total, read.clone())?;
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = mpsc::sync_channel::<Result<Msg>>(1);
        // Encoded batches go back to the reader to be filled again.
        let (give_back, recycled) = mpsc::channel::<Docs>();
        scope.spawn(move || read_inputs(inputs, opts, read, tx, recycled));
        for msg in rx {
            match msg? {
                Msg::Batch(k, docs) => {
                    job.encode(k, &docs.strs(), encode)?;
                    let _ = give_back.send(docs);
                }
                Msg::End(k, fingerprint) => job.end_input(k, fingerprint),
            }
        }
        Ok(())
    })?;
    job.finish()
}

fn check_fits(id: u64, dtype: Dtype) -> Result<()> {
    if id > dtype.max() {
        return Err(Error::invalid(format!(
            "token id {id} does not fit {}: pass dtype=\"uint32\" (or \"auto\")",
            dtype.name()
        )));
    }
    Ok(())
}

/// The reader thread: every input in order, cut into batches. Stops early when the receiver is
/// gone (the encoding side failed).
fn read_inputs(
    inputs: &[PathBuf],
    opts: &Options,
    read: Arc<AtomicU64>,
    tx: mpsc::SyncSender<Result<Msg>>,
    recycled: mpsc::Receiver<Docs>,
) {
    let mut batch_bytes = opts.batch_bytes.min(FIRST_BATCH_BYTES);
    for (k, path) in inputs.iter().enumerate() {
        let sent = (|| -> Result<bool> {
            let mut input = Input::open(path, read.clone())?;
            let mut splitter = Splitter::new(path, &opts.format, opts.lossy);
            loop {
                // A batch the encoder is done with, or a new one. Either way the room for a
                // whole batch is reserved up front, so the text is never copied as it grows,
                // and recycled memory costs no page faults. (New memory is dear on a VM: about
                // 1 ms per MB first touched, measured on this machine; without recycling, the
                // reader thread spent a third of its time on it.) The slack covers the line
                // that crosses the batch's end.
                let mut room = recycled.try_recv().unwrap_or_default();
                room.recycle(batch_bytes.saturating_add(1 << 16));
                let docs = splitter.next_batch_into(input.reader(), batch_bytes, room)?;
                batch_bytes = (2 * batch_bytes).min(opts.batch_bytes);
                if docs.is_empty() {
                    break;
                }
                if tx.send(Ok(Msg::Batch(k, docs))).is_err() {
                    return Ok(false);
                }
            }
            let fingerprint = match input.fingerprint() {
                Some(f) => f,
                // The decoder stopped before the raw end (trailing bytes): hash the file again.
                None => input::fingerprint_of(path)?,
            };
            Ok(tx.send(Ok(Msg::End(k, fingerprint))).is_ok())
        })();
        match sent {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// Make `dir`, refusing (or with `overwrite`, removing) shards a previous job left there. The
/// manifest goes first, so that a half-cleaned folder never looks complete.
fn prepare_folder(dir: &Path, overwrite: bool) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let ours = |name: &str| {
        name == MANIFEST_FILE
            || name == shards::INDEX_FILE
            || (name.starts_with("shard_") && name.ends_with(".npy"))
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok())
        .filter(|e| ours(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    if !overwrite {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "already holds shards: pick an empty folder or pass overwrite=True",
            ),
        });
    }
    found.sort_by_key(|p| p.file_name().map(|n| n != MANIFEST_FILE));
    for path in found {
        std::fs::remove_file(&path).map_err(io(&path))?;
    }
    Ok(())
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The manifest: what was encoded with what, and where the ids are.
fn manifest(report: &Report, opts: &Options) -> String {
    use serde_json::json;
    let (format, option) = match &opts.format {
        Format::Lines => ("text", json!({"separator": null})),
        Format::Separated(s) => ("text", json!({"separator": s})),
        Format::Jsonl(f) => ("jsonl", json!({"field": f})),
        Format::Parquet(f) => ("parquet", json!({"field": f})),
    };
    let mut options = json!({
        "format": format,
        "shard_tokens": opts.shard_tokens,
        "errors": if opts.lossy { "replace" } else { "strict" },
    });
    if let (Some(o), Some(extra)) = (options.as_object_mut(), option.as_object()) {
        o.extend(extra.clone());
    }
    let doc = json!({
        "format": "subword-shards",
        "version": 1,
        "tokenizer": {
            "name": opts.tokenizer.name,
            "kind": opts.tokenizer.kind,
            "n_vocab": opts.tokenizer.n_vocab,
            "sha256": opts.tokenizer.sha256,
        },
        "dtype": opts.dtype.name(),
        "eot": opts.eot,
        "documents": report.documents,
        "tokens": report.tokens,
        "index": shards::INDEX_FILE,
        "shards": report.shards.iter().map(|s| json!({"file": s.file, "tokens": s.tokens})).collect::<Vec<_>>(),
        "inputs": report.inputs.iter().map(|i| json!({
            "path": i.path.to_string_lossy(),
            "bytes": i.fingerprint.bytes,
            "sha256": i.fingerprint.sha256,
            "documents": i.documents,
            "tokens": i.tokens,
        })).collect::<Vec<_>>(),
        "options": options,
    });
    serde_json::to_string_pretty(&doc).expect("a JSON value always renders") + "\n"
}

/// A progress line on stderr: bytes read of the total, tokens written, rate, time left.
struct Progress {
    show: bool,
    total: u64,
    read: Arc<AtomicU64>,
    start: Instant,
    last: Instant,
}

impl Progress {
    fn new(show: bool, total: u64, read: Arc<AtomicU64>) -> Self {
        let now = Instant::now();
        Progress {
            show,
            total,
            read,
            start: now,
            last: now,
        }
    }

    fn line(&self, tokens: u64) -> String {
        let read = self.read.load(Ordering::Relaxed);
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = read as f64 / secs;
        let left = if rate > 0.0 && self.total > read {
            format!(", ETA {:.0} s", (self.total - read) as f64 / rate)
        } else {
            String::new()
        };
        let of = if self.total > 0 {
            format!("/{:.1}", self.total as f64 / 1e6)
        } else {
            String::new()
        };
        format!(
            "\rtokenize: {:.1}{of} MB read, {tokens} tokens, {:.1} MB/s{left}   ",
            read as f64 / 1e6,
            rate / 1e6
        )
    }

    fn show(&mut self, tokens: u64) {
        if self.show && self.last.elapsed().as_millis() >= 200 {
            self.last = Instant::now();
            eprint!("{}", self.line(tokens));
        }
    }

    fn finish(&self, tokens: u64) {
        if self.show {
            eprintln!("{}", self.line(tokens));
        }
    }
}
