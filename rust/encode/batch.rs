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

/// Runs per thread: enough that the last run to finish leaves the other threads idle briefly.
const RUNS_PER_THREAD: usize = 8;

/// Bytes that make a run worth a task of its own however few texts they are in.
const RUN_MIN_BYTES: usize = 64 << 10;

/// Where the runs of `items` end: about equal in bytes (`RUNS_PER_THREAD` per thread), each of
/// at least `MIN_BATCH_SPLIT` texts or `RUN_MIN_BYTES` bytes but the last. Cut by bytes, not by
/// count: lines of a file differ in length by orders of magnitude, and runs of equal count left
/// one thread working alone at the end of every batch of a file job. The floor in bytes is for
/// batches of a few long texts (74 of 150 KB were one run, on one core, with the floor in
/// texts alone).
fn run_ends<I: AsRef<str>>(items: &[I], threads: usize) -> Vec<usize> {
    let total: usize = items.iter().map(|t| t.as_ref().len() + 1).sum();
    let target = total.div_ceil(RUNS_PER_THREAD * threads).max(1);
    let mut ends = Vec::new();
    let (mut bytes, mut start) = (0, 0);
    for (i, t) in items.iter().enumerate() {
        bytes += t.as_ref().len() + 1;
        if bytes >= target && (i + 1 - start >= MIN_BATCH_SPLIT || bytes >= RUN_MIN_BYTES) {
            ends.push(i + 1);
            (bytes, start) = (0, i + 1);
        }
    }
    if start < items.len() || ends.is_empty() {
        ends.push(items.len());
    }
    ends
}

/// `f(run)` for runs of the texts, on `num_threads` threads; the results in the runs' order.
fn par_runs<I: Sync + AsRef<str>, T: Send>(
    items: &[I],
    num_threads: usize,
    f: impl Fn(&[I]) -> Result<T> + Sync + Send,
) -> Result<Vec<T>> {
    let threads = crate::pool::resolve(num_threads)?;
    let ends = run_ends(items, threads);
    crate::pool::install(threads, || {
        (0..ends.len())
            .into_par_iter()
            .with_max_len(1)
            .map(|k| f(&items[if k == 0 { 0 } else { ends[k - 1] }..ends[k]]))
            .collect::<Result<Vec<_>>>()
    })?
}

/// `f(run, ids, ends)` for runs of the texts, on `num_threads` threads: `f` appends each text's
/// ids to `ids` and, after each, `ids.len()` to `ends`.
pub fn par_map_runs<I: Sync + AsRef<str>>(
    items: &[I],
    num_threads: usize,
    f: impl Fn(&[I], &mut Vec<Rank>, &mut Vec<usize>) -> Result<()> + Sync + Send,
) -> Result<FlatBatch> {
    let parts = par_runs(items, num_threads, |chunk| {
        let bytes: usize = chunk.iter().map(|t| t.as_ref().len()).sum();
        // About as many as English takes; grows if a run needs more.
        let mut ids = Vec::with_capacity(bytes / 3 + 16);
        let mut ends = Vec::with_capacity(chunk.len());
        f(chunk, &mut ids, &mut ends)?;
        debug_assert_eq!(ends.len(), chunk.len());
        Ok((ids, ends))
    })?;
    Ok(FlatBatch { parts })
}

/// `f(run, values)` for runs of the texts, on `num_threads` threads: `f` appends one value per
/// text to `values`; all the values in the texts' order.
pub fn par_map_runs_to<I: Sync + AsRef<str>, V: Send>(
    items: &[I],
    num_threads: usize,
    f: impl Fn(&[I], &mut Vec<V>) -> Result<()> + Sync + Send,
) -> Result<Vec<V>> {
    let parts = par_runs(items, num_threads, |chunk| {
        let mut values = Vec::with_capacity(chunk.len());
        f(chunk, &mut values)?;
        debug_assert_eq!(values.len(), chunk.len());
        Ok(values)
    })?;
    Ok(parts.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_text_in_order_and_balance_bytes() {
        // One long text among many short ones, and batches smaller than a run.
        let mut texts: Vec<String> = (0..5000).map(|k| "x".repeat(30 * (k % 7))).collect();
        texts[100] = "y".repeat(200_000);
        for (items, threads) in [
            (&texts[..], 2),
            (&texts[..10], 2),
            (&texts[..0], 1),
            (&texts[..], 1),
        ] {
            let ends = run_ends(items, threads);
            assert_eq!(ends.last().copied(), Some(items.len()));
            assert!(ends.windows(2).all(|w| w[0] < w[1]));
            let starts = std::iter::once(0).chain(ends.iter().copied());
            for (k, (s, e)) in starts.zip(ends.iter().copied()).enumerate() {
                let bytes: usize = items[s..e].iter().map(|t| t.len() + 1).sum();
                assert!(
                    e - s >= MIN_BATCH_SPLIT.min(items.len())
                        || bytes >= RUN_MIN_BYTES
                        || k + 1 == ends.len()
                );
            }
        }
        // The long text ends its run: the runs after it are cut by bytes again.
        let ends = run_ends(&texts, 2);
        assert!(ends.len() > 8, "{ends:?}");
        let ids = par_map_runs(&texts, 2, |run, ids, ends| {
            for t in run {
                ids.push(t.len() as Rank);
                ends.push(ids.len());
            }
            Ok(())
        })
        .unwrap();
        let lens: Vec<Rank> = ids.texts().flatten().copied().collect();
        assert_eq!(
            lens,
            texts.iter().map(|t| t.len() as Rank).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_few_long_texts_are_cut_into_runs_for_every_thread() {
        let texts: Vec<String> = (0..74).map(|_| "z".repeat(150_000)).collect();
        let ends = run_ends(&texts, 2);
        assert!(ends.len() >= 2 * RUNS_PER_THREAD - 1, "{ends:?}");
        let lens = par_map_runs_to(&texts, 2, |run, lens| {
            lens.extend(run.iter().map(|t| t.len()));
            Ok(())
        })
        .unwrap();
        assert_eq!(lens, vec![150_000; 74]);
    }
}
