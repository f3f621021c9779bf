//! Batches of texts on the pool, their ids end to end in a few vectors.
//!
//! A vector per text means, for a batch of 100 K paragraphs, 100 K allocations that each grow
//! and are freed again; here the texts are taken in runs (a few per thread, so that a slow run
//! does not leave the others idle), and each run's ids go into one vector with the ends of its
//! texts beside them.
//!
//! Tried and dropped: handing each run to the calling thread as it finished, so that the
//! bindings could allocate its Python lists (which needs the GIL) while the pool encoded the
//! rest. On 2 cores the allocating thread only took CPU from the encoding ones (100 K paragraphs
//! of en_webster, r50k: 112 MB/s against 119 without the overlap).

use super::MIN_BATCH_SPLIT;
use crate::error::Result;
use crate::vocab::Rank;
use rayon::prelude::*;

pub struct FlatBatch {
    /// Per run: (ids, where each text's ids end in them).
    pub parts: Vec<(Vec<Rank>, Vec<usize>)>,
}

impl FlatBatch {
    /// Each text's ids, in order.
    pub fn texts(&self) -> impl Iterator<Item = &[Rank]> {
        self.parts
            .iter()
            .flat_map(|(ids, ends)| texts_of(ids, ends))
    }
}

/// The texts of one run.
fn texts_of<'a>(ids: &'a [Rank], ends: &'a [usize]) -> impl Iterator<Item = &'a [Rank]> {
    ends.iter().scan(0, move |start, &end| {
        Some(&ids[std::mem::replace(start, end)..end])
    })
}

/// How many texts a run takes.
fn run_len(items: usize, threads: usize) -> usize {
    items.div_ceil(4 * threads).max(MIN_BATCH_SPLIT)
}

/// `f(run, ids, ends)` for runs of the texts, on `num_threads` threads: `f` appends each text's
/// ids to `ids` and, after each, `ids.len()` to `ends`.
pub fn par_map_runs<I: Sync + AsRef<str>>(
    items: &[I],
    num_threads: usize,
    f: impl Fn(&[I], &mut Vec<Rank>, &mut Vec<usize>) -> Result<()> + Sync + Send,
) -> Result<FlatBatch> {
    let threads = crate::pool::resolve(num_threads)?;
    let run = run_len(items.len(), threads);
    let parts = crate::pool::install(threads, || {
        items
            .par_chunks(run)
            .map(|chunk| {
                let bytes: usize = chunk.iter().map(|t| t.as_ref().len()).sum();
                // About as many as English takes; grows if a run needs more.
                let mut ids = Vec::with_capacity(bytes / 3 + 16);
                let mut ends = Vec::with_capacity(chunk.len());
                f(chunk, &mut ids, &mut ends)?;
                debug_assert_eq!(ends.len(), chunk.len());
                Ok((ids, ends))
            })
            .collect::<Result<Vec<_>>>()
    })??;
    Ok(FlatBatch { parts })
}
