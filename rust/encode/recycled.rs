//! Result vectors recycled: the memory of a result the caller is done with (a numpy array
//! freed, a Python list built) goes to the next encode instead of back to the allocator.
//!
//! Why: a result of megabytes is a fresh mapping each time, and its pages are faulted in and
//! zeroed by the kernel as the encoder writes them (glibc maps allocations this size and trims
//! them on free). Measured on a VM, one core: Korean text with r50k, 2 M ids (8 MB), spent 6 of
//! 16 ms per call in page faults; with the previous result's memory reused, 10 ms, which is what
//! `count` (no result vector) takes.
//!
//! Invariants: a vector taken is empty; at most `KEEP` vectors of at most `MAX_IDS` ids'
//! capacity each are kept, so the memory held after the caller has dropped everything is
//! bounded (2 × 64 MB).
//!
//! Downside: that memory stays resident until the process ends or a larger result replaces
//! it; a process that encodes one big text and then does something else keeps up to 128 MB it
//! no longer needs.

use crate::vocab::Rank;
use std::sync::Mutex;

/// Vectors kept: a result alive in the caller's hands and the one being written.
const KEEP: usize = 2;
/// Smallest capacity worth keeping (1 MB): below it the allocator reuses memory on its own.
const MIN_IDS: usize = 1 << 18;
/// Largest capacity kept (64 MB).
const MAX_IDS: usize = 1 << 24;

static KEPT: Mutex<Vec<Vec<Rank>>> = Mutex::new(Vec::new());

/// Most a kept vector's capacity may exceed what is asked, as a factor: a small result must not
/// pin a large vector (the result holds it until the caller drops it).
const MAX_SLACK: usize = 4;

/// An empty vector with room for at least `ids` ids: the smallest kept one that is large
/// enough but not more than [`MAX_SLACK`] times so, else a new one.
pub fn take(ids: usize) -> Vec<Rank> {
    if ids >= MIN_IDS / 2 {
        // A poisoned lock only means a thread panicked while holding it; the list is still
        // a list of empty-able vectors.
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let fits = |v: &Vec<Rank>| (ids..=ids.saturating_mul(MAX_SLACK)).contains(&v.capacity());
        let best = (0..kept.len())
            .filter(|&k| fits(&kept[k]))
            .min_by_key(|&k| kept[k].capacity());
        if let Some(k) = best {
            let mut v = kept.swap_remove(k);
            v.clear();
            return v;
        }
    }
    Vec::with_capacity(ids)
}

/// Keep `ids`'s memory for a later [`take`] (or free it, if it is too small or too large to be
/// worth keeping, or if the kept ones are larger).
pub fn give(ids: Vec<Rank>) {
    if !(MIN_IDS..=MAX_IDS).contains(&ids.capacity()) {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.push(ids);
    if kept.len() > KEEP {
        let smallest = (0..kept.len())
            .min_by_key(|&k| kept[k].capacity())
            .expect("more than KEEP vectors");
        kept.swap_remove(smallest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test for the pool, which is process-wide: tests run in parallel threads.
    #[test]
    fn a_given_vector_comes_back_empty_and_the_pool_stays_bounded() {
        let mut v = Vec::with_capacity(MIN_IDS * 2);
        v.extend([7, 8, 9]);
        let ptr = v.as_ptr();
        give(v);
        let back = take(MIN_IDS);
        assert!(back.is_empty());
        assert!(back.capacity() >= MIN_IDS);
        // Another test's encode may have taken it first; when it comes back, it is this one.
        if back.capacity() == MIN_IDS * 2 {
            assert_eq!(back.as_ptr(), ptr);
        }
        // Too small or too large to keep: freed.
        give(Vec::with_capacity(16));
        give(Vec::with_capacity(MAX_IDS + 1));
        for _ in 0..5 {
            give(Vec::with_capacity(MIN_IDS));
        }
        let kept = KEPT.lock().unwrap();
        assert!(kept.len() <= KEEP);
        assert!(kept
            .iter()
            .all(|v| (MIN_IDS..=MAX_IDS).contains(&v.capacity())));
    }

    #[test]
    fn a_small_request_does_not_take_a_much_larger_vector() {
        let big = Vec::with_capacity(MAX_IDS);
        let ptr = big.as_ptr();
        give(big);
        for _ in 0..3 {
            let v = take(MIN_IDS);
            assert!(v.capacity() <= MIN_IDS * MAX_SLACK);
            assert_ne!(v.as_ptr(), ptr);
        }
    }

    #[test]
    fn a_request_larger_than_every_kept_vector_gets_a_new_one() {
        let v = take(MAX_IDS + 5);
        assert!(v.capacity() >= MAX_IDS + 5);
        assert!(v.is_empty());
    }
}
