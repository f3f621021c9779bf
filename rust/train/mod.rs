//! Byte-level BPE training: count pre-tokens (`count`), then learn merges (`queue`), then build an
//! [`Encoder`] of the same engine the tiktoken-compatible encodings use.
//!
//! Vocabulary layout: ids 0..256 are the single bytes (id = byte value), then one id per learned
//! token in learned order, then the special tokens.

pub mod char_bpe;
pub mod classic;
pub mod count;
pub mod queue;
pub mod symbols;
pub mod word_level;
pub mod wordpiece;

use crate::encode::Encoder;
use crate::error::{Error, Result};
use crate::pretokenize::Pattern;
use crate::vocab::{Rank, Vocab};
pub use count::{Counts, PreTokenCounter, Splitter};
pub use queue::{Handles, Score, TieBreak};
use std::io::Read;
use std::path::Path;
use std::rc::Rc;

pub struct TrainOptions {
    pub vocab_size: usize,
    pub specials: Vec<String>,
    pub min_frequency: u64,
    pub tie_break: TieBreak,
    pub show_progress: bool,
}

pub struct Trained {
    pub encoder: Encoder,
    /// Learned merges, in order, as the bytes of the two parts.
    pub merges: Vec<(Vec<u8>, Vec<u8>)>,
    /// Distinct pre-tokens the merges were learned from.
    pub n_words: usize,
}

impl TrainOptions {
    pub fn min_vocab_size(&self) -> usize {
        256 + self.specials.len()
    }
}

/// Learn merges from counted pre-tokens and build the encoder.
pub fn finish(counts: Counts, pattern: Pattern, opts: &TrainOptions) -> Result<Trained> {
    if opts.vocab_size < opts.min_vocab_size() {
        return Err(Error::invalid(format!(
            "vocab_size={} is too small: the minimum is {} (256 byte tokens + {} special tokens)",
            opts.vocab_size,
            opts.min_vocab_size(),
            opts.specials.len()
        )));
    }
    let n_tokens = opts.vocab_size - opts.min_vocab_size();
    let n_words = counts.len();
    let words: Vec<(Vec<Rank>, u64)> = ordered_words(counts)
        .into_iter()
        .map(|(w, c)| (w.iter().map(|&b| b as Rank).collect(), c))
        .collect();
    let bytes: Vec<Rc<[u8]>> = (0..=255u8).map(|b| Rc::from(&[b][..])).collect();
    let result = learn_with_progress(
        bytes,
        words,
        n_tokens,
        opts.min_frequency,
        opts.tie_break,
        &Handles::bpe(),
        opts.show_progress,
    )?;
    let mut ranks: Vec<(Vec<u8>, Rank)> = result
        .tokens
        .iter()
        .enumerate()
        .map(|(id, t)| (t.to_vec(), id as Rank))
        .collect();
    ranks.shrink_to_fit();
    let first_special = result.tokens.len() as Rank;
    let specials: Vec<(String, Rank)> = opts
        .specials
        .iter()
        .enumerate()
        .map(|(k, s)| (s.clone(), first_special + k as Rank))
        .collect();
    let merges = result
        .merges
        .iter()
        .map(|&(a, b)| {
            (
                result.tokens[a as usize].to_vec(),
                result.tokens[b as usize].to_vec(),
            )
        })
        .collect();
    let encoder = Encoder::new(Vocab::new(ranks, specials)?, pattern)?;
    Ok(Trained {
        encoder,
        merges,
        n_words,
    })
}

/// Asked between merges and between file blocks whether to stop; true means stop (the caller
/// keeps the reason, e.g. the pending Python exception). Set once by the bindings, which answer
/// from Python's signal handlers, so Ctrl-C stops a long training within milliseconds.
static INTERRUPT_CHECK: std::sync::OnceLock<fn() -> bool> = std::sync::OnceLock::new();

/// Install the check (the first one set stays).
pub fn set_interrupt_check(check: fn() -> bool) {
    let _ = INTERRUPT_CHECK.set(check);
}

/// How often the check runs at most: acquiring what it needs (the GIL) costs microseconds.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// `Err(Interrupted)` once the check says stop; otherwise cheap enough to call per merge.
pub(crate) struct Interrupts {
    last: std::time::Instant,
}

impl Interrupts {
    pub(crate) fn new() -> Self {
        Interrupts {
            last: std::time::Instant::now(),
        }
    }

    pub(crate) fn poll(&mut self) -> Result<()> {
        let Some(check) = INTERRUPT_CHECK.get() else {
            return Ok(());
        };
        if self.last.elapsed() < CHECK_EVERY {
            return Ok(());
        }
        self.last = std::time::Instant::now();
        if check() {
            return Err(Error::Interrupted);
        }
        Ok(())
    }
}

/// [`queue::learn`] with a progress line on stderr, stopping when interrupted.
pub(crate) fn learn_with_progress(
    alphabet: Vec<Rc<[u8]>>,
    words: Vec<(Vec<Rank>, u64)>,
    n_tokens: usize,
    min_frequency: u64,
    tie: TieBreak,
    handles: &Handles,
    show: bool,
) -> Result<queue::MergeResult> {
    let step = (n_tokens / 100).max(1);
    let mut interrupts = Interrupts::new();
    let result = queue::learn(
        alphabet,
        words,
        n_tokens,
        min_frequency,
        tie,
        handles,
        |done| {
            if show && (done % step == 0 || done == n_tokens) {
                eprint!("\rmerging: {done}/{n_tokens} tokens");
            }
            interrupts.poll()
        },
    );
    if show {
        eprintln!();
    }
    result
}

/// Words in order of first appearance (what `tie_break="first"` means, and a fixed order
/// otherwise), with their counts.
pub(crate) fn ordered_words(counts: Counts) -> Vec<(Box<[u8]>, u64)> {
    let mut words: Vec<(Box<[u8]>, u64, u64)> = counts
        .into_iter()
        .map(|(w, (c, first))| (w, c, first))
        .collect();
    words.sort_unstable_by(|a, b| a.2.cmp(&b.2).then_with(|| a.0.cmp(&b.0)));
    words.into_iter().map(|(w, c, _)| (w, c)).collect()
}

/// Block size for streaming files: large enough to keep both cores busy, small enough to bound
/// memory to a few blocks however big the file.
const BLOCK: usize = 8 << 20;

/// Feed a file to `counter`: in blocks cut at safe points for the built-in patterns (memory bounded
/// by the block size), whole otherwise (a custom pattern's pieces may span any cut). Invalid UTF-8 is
/// an error naming the file and byte offset.
///
/// Blocks are counted on a pool of `num_threads`; the reading loop stays on the calling thread,
/// so the interrupt check (which must run there, for Python's signal handlers) sees Ctrl-C.
pub fn feed_file(
    counter: &mut PreTokenCounter,
    path: &Path,
    show_progress: bool,
    num_threads: usize,
) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let block = if counter.splitter().has_safe_cuts() {
        BLOCK as u64
    } else {
        u64::MAX
    };
    let mut reader = std::io::BufReader::new(file);
    let mut buf: Vec<u8> = Vec::new();
    let mut consumed: u64 = 0;
    let mut interrupts = Interrupts::new();
    loop {
        interrupts.poll()?;
        let want = block.saturating_sub(buf.len() as u64).max(1 << 16);
        let n = (&mut reader).take(want).read_to_end(&mut buf).map_err(io)?;
        let eof = n == 0 || block == u64::MAX;
        let cut = if eof {
            buf.len()
        } else {
            match last_safe_cut(&buf) {
                Some(c) => counter.respect_specials(&buf, c),
                None => continue, // no safe point yet: read more
            }
        };
        let text = std::str::from_utf8(&buf[..cut]).map_err(|e| {
            Error::invalid(format!(
                "{}: invalid UTF-8 at byte offset {}; convert the file to UTF-8 (or clean it) first",
                path.display(),
                consumed + e.valid_up_to() as u64
            ))
        })?;
        crate::pool::install(num_threads, || counter.feed(text))??;
        consumed += cut as u64;
        buf.drain(..cut);
        if show_progress {
            eprint!(
                "\rcounting {}: {:.0}%",
                path.display(),
                100.0 * consumed as f64 / total.max(1) as f64
            );
        }
        if eof && buf.is_empty() {
            break;
        }
    }
    if show_progress {
        eprintln!();
    }
    Ok(())
}

fn last_safe_cut(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while end > 2 {
        let nl = b[..end - 1].iter().rposition(|&x| x == b'\n')?;
        if count::is_safe_cut(b, nl + 1) {
            return Some(nl + 1);
        }
        end = nl + 1;
    }
    None
}

#[cfg(test)]
mod tests;

/// Counts of `words` (each given once, in order of first appearance), for the trainers' tests.
#[cfg(test)]
pub(crate) fn counts_of(words: &[(&str, u64)]) -> Counts {
    words
        .iter()
        .enumerate()
        .map(|(i, (w, c))| (w.as_bytes().into(), (*c, i as u64)))
        .collect()
}
