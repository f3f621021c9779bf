//! The second level of the piece cache: one table per encoder, shared by every thread.
//!
//! Idea: the first level (`hot.rs`) is private to a thread and mostly in L2 or L3; what it
//! evicts, and what other threads have already encoded, waits here, in one table per encoder
//! instead of one per thread. Threads then warm each other up (the second core of a long text
//! or a batch no longer starts from an empty cache), and memory does not grow with the thread
//! count.
//!
//! Each slot is a sequence lock over eight atomic words: the piece's key (four words), seven
//! ids, and a version in the top half of the last word. A writer takes the slot by moving the
//! version from even to odd (a compare-and-swap: a slot being written is skipped, never waited
//! on), writes the words and publishes with the next even version. A reader copies the words
//! between two reads of the version and keeps the copy only if the version was even and did not
//! change, so it never sees half of one piece and half of another. All accesses are atomic, so
//! there is no data race for the compiler to exploit; on x86 they compile to plain moves.
//!
//! Two choices: a key may sit in either of two slots picked by independent bits of its hash; a
//! store takes an empty one of the two or else the one written longer ago (the lower version:
//! first in, first out). Direct-mapped, en_docs' 60 K distinct pieces in 128 K slots evicted
//! each other often enough to miss 1.6% of lookups; with two neighbouring slots, 0.6%.
//!
//! It grows with the text's vocabulary. It starts using the first 128 K slots (8 MB) of one
//! allocation of 512 K (32 MB) whose pages the OS hands out zeroed on first touch, so a small
//! job costs only the pages it touched. Once its stores have evicted as many entries as half
//! its slots (the pieces in use no longer fit), it uses all of them. A dictionary has
//! more distinct words than 128 K slots keep: re-merging the evicted ones halved en_webster's
//! throughput, and o200k on Chinese/Russian/German ran at 0.4 of what 512 K slots give.
//! Growing moves nothing: entries carry their keys, so one left where the wider mask no longer
//! looks is never returned for another piece; it is overwritten like any other.
//!
//! Invariants: a stored entry is exactly what its writer's encoder gave for its key (as in the
//! first level); a slot whose key words are 0 is empty (no piece's key is 0).
//!
//! Downside: the version is 32 bits, so a reader stalled while a single slot is rewritten 2³¹
//! times could accept a torn copy; a slot shared by two hot pieces ping-pongs between writers
//! and its line between cores; a long-running process that once met a large vocabulary keeps
//! its 32 MB per encoder.

use super::pages::ZeroedPages;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Slots at most: 512 K × 64 B = 32 MB. Callers pass `2 * MAX_BITS` bits of hash.
pub const MAX_BITS: u32 = 19;
/// Slots used until the table grows: 128 K × 64 B = 8 MB.
const START_BITS: u32 = 17;

/// A key's two slots, from the `2 * MAX_BITS` bits of hash `s`, among the first `1 << bits`.
#[inline(always)]
fn ways(s: usize, bits: u32) -> (usize, usize) {
    let mask = (1 << bits) - 1;
    ((s >> MAX_BITS) & mask, s & mask)
}

/// A slot's eight words, as stored.
pub type Words = [u64; 8];

/// A slot's words: 64 bytes, one cache line once the table is aligned.
type Slot = [AtomicU64; 8];
const SLOT_WORDS: usize = 8;

/// A counter on its own cache line: `bits` is read on every lookup and must not share a line
/// with a counter every eviction writes.
#[repr(align(128))]
#[derive(Default)]
struct Line<T>(T);

pub struct SharedCache {
    /// The slots' words, from `base` on (the first 64-byte-aligned word).
    words: ZeroedPages<AtomicU64>,
    base: usize,
    /// How many slots are in use: the first `1 << bits`.
    bits: Line<AtomicU32>,
    /// Entries overwritten by another key since the table last grew.
    evictions: Line<AtomicU64>,
}

impl Default for SharedCache {
    fn default() -> Self {
        // Pages the OS zeroes on first touch (`pages.rs`): an untouched slot costs no memory.
        // One slot more than needed, to start the table on a cache line wherever the
        // allocation lands (on Linux it starts on one).
        let len = ((1 << MAX_BITS) + 1) * SLOT_WORDS;
        let words = ZeroedPages::new(len);
        let misalign = (words.as_ptr() as usize % 64) / 8;
        SharedCache {
            base: (SLOT_WORDS - misalign) % SLOT_WORDS,
            words,
            bits: Line(AtomicU32::new(START_BITS)),
            evictions: Line::default(),
        }
    }
}

/// Where the version lives: the top half of the last word.
const VERSION_SHIFT: u32 = 32;

impl SharedCache {
    #[inline(always)]
    fn slot(&self, i: usize) -> &Slot {
        let at = self.base + i * SLOT_WORDS;
        self.words[at..at + SLOT_WORDS]
            .try_into()
            .expect("a slot is eight words")
    }

    /// Ask for the cache lines of the two slots of hash bits `s` ahead of their use.
    #[inline(always)]
    pub fn prefetch(&self, s: usize) {
        let (i, j) = ways(s, self.bits());
        super::hot::prefetch_line(self.slot(i));
        super::hot::prefetch_line(self.slot(j));
    }

    /// A consistent copy of the entry for `key` in either slot of hash bits `s`, else None. The
    /// version half of the last word is cleared in the copy.
    #[inline(always)]
    pub fn load(&self, s: usize, key: [u64; 4]) -> Option<Words> {
        let (i, j) = ways(s, self.bits());
        self.load_slot(i, key).or_else(|| self.load_slot(j, key))
    }

    /// How many slots are in use, as bits. Relaxed: a stale value only picks other slots, and
    /// every slot's key is checked.
    #[inline(always)]
    fn bits(&self) -> u32 {
        self.bits.0.load(Ordering::Relaxed)
    }

    /// How many of the slots are in use.
    #[cfg(test)]
    fn slots_in_use(&self) -> usize {
        1 << self.bits()
    }

    #[inline(always)]
    fn load_slot(&self, i: usize, key: [u64; 4]) -> Option<Words> {
        let w = self.slot(i);
        let last = w[7].load(Ordering::Acquire);
        if (last >> VERSION_SHIFT) & 1 == 1 || w[0].load(Ordering::Relaxed) != key[0] {
            return None;
        }
        let mut copy = [0u64; 8];
        for (c, a) in copy.iter_mut().zip(w).take(7) {
            *c = a.load(Ordering::Relaxed);
        }
        fence(Ordering::Acquire);
        if w[7].load(Ordering::Relaxed) != last || copy[..4] != key {
            return None;
        }
        copy[7] = last & ((1 << VERSION_SHIFT) - 1);
        Some(copy)
    }

    /// Store `words` (the version half of the last word is ignored) in a slot of hash bits `s`
    /// (see the module doc), unless another thread is writing the chosen one right now.
    #[inline(always)]
    pub fn store(&self, s: usize, words: &Words) {
        let bits = self.bits();
        let (i, j) = ways(s, bits);
        let (a, b) = (self.slot(i), self.slot(j));
        let taken = |w: &[AtomicU64; 8]| w[0].load(Ordering::Relaxed) != 0;
        let version = |w: &[AtomicU64; 8]| w[7].load(Ordering::Relaxed) >> VERSION_SHIFT;
        let (way, evicts) = if !taken(a) || key_of(a) == words[..4] {
            (i, false)
        } else if !taken(b) || key_of(b) == words[..4] {
            (j, false)
        } else {
            (if version(b) < version(a) { j } else { i }, true)
        };
        self.store_slot(way, words);
        if evicts && bits < MAX_BITS {
            self.count_eviction(bits);
        }
    }

    /// Grow once the evictions since the last growth reach a sixteenth of the slots in use.
    /// At half, cl100k on Chinese/Russian/German text (115 K distinct short pieces) still
    /// merged 21–41 K pieces per call on the third to fifth calls of 8.7 MB, the level not yet
    /// grown; at a sixteenth, 2 K from the third call on.
    #[cold]
    fn count_eviction(&self, bits: u32) {
        let n = self.evictions.0.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= 1 << (bits - 4)
            && self
                .bits
                .0
                .compare_exchange(bits, MAX_BITS, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.evictions.0.store(0, Ordering::Relaxed);
        }
    }

    #[inline(always)]
    fn store_slot(&self, i: usize, words: &Words) {
        let w = self.slot(i);
        let last = w[7].load(Ordering::Relaxed);
        let version = last >> VERSION_SHIFT;
        if version & 1 == 1 {
            return;
        }
        let odd = (version + 1) << VERSION_SHIFT | (last & ((1 << VERSION_SHIFT) - 1));
        if w[7]
            .compare_exchange(last, odd, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        // Readers that see any of the words below also see the odd version.
        fence(Ordering::Release);
        for (a, &v) in w.iter().zip(words).take(7) {
            a.store(v, Ordering::Relaxed);
        }
        let even = ((version + 2) & 0xFFFF_FFFF) << VERSION_SHIFT;
        w[7].store(
            even | (words[7] & ((1 << VERSION_SHIFT) - 1)),
            Ordering::Release,
        );
    }
}

/// A slot's key words as they are now (maybe mid-write: only used to choose a way).
#[inline(always)]
fn key_of(w: &[AtomicU64; 8]) -> [u64; 4] {
    [0, 1, 2, 3].map(|k| w[k].load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words that are a function of their key, so a torn copy shows.
    fn words_of(k: u64) -> Words {
        let mut w = [0u64; 8];
        w[0] = k;
        for (j, x) in w.iter_mut().enumerate().skip(1) {
            *x = k
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(j as u32 * 7)
                & 0xFFFF_FFFF;
        }
        w[1] = k ^ 1;
        w[2] = k ^ 2;
        w[3] = k ^ 3;
        w
    }

    #[test]
    fn store_then_load_and_a_key_mismatch() {
        let c = SharedCache::default();
        let w = words_of(42);
        let s = 5 << MAX_BITS | 9;
        c.store(s, &w);
        assert_eq!(c.load(s, [42, 43, 40, 41]), Some(w));
        assert_eq!(c.load(s, [42, 43, 40, 0]), None);
        assert_eq!(c.load(6 << MAX_BITS | 7, [42, 43, 40, 41]), None);
        // Either slot finds it: another key's pair that shares one of them.
        assert_eq!(c.load(5 << MAX_BITS | 100, [42, 43, 40, 41]), Some(w));
    }

    #[test]
    fn two_keys_of_one_slot_both_stay_and_the_older_goes_for_a_third() {
        let c = SharedCache::default();
        let key = |w: &Words| [w[0], w[1], w[2], w[3]];
        let (x, y, z) = (words_of(7), words_of(8), words_of(9));
        let s = 10 << MAX_BITS | 20;
        c.store(s, &x);
        c.store(s, &y);
        assert_eq!(c.load(s, key(&x)), Some(x));
        assert_eq!(c.load(s, key(&y)), Some(y));
        c.store(s, &x); // rewriting x makes y the older
        c.store(s, &z);
        assert_eq!(c.load(s, key(&x)), Some(x));
        assert_eq!(c.load(s, key(&y)), None);
        assert_eq!(c.load(s, key(&z)), Some(z));
    }

    #[test]
    fn it_grows_once_evictions_reach_a_sixteenth_of_its_slots_and_never_answers_wrong() {
        let c = SharedCache::default();
        let key = |w: &Words| [w[0], w[1], w[2], w[3]];
        // A key's hash bits: spread over all MAX_BITS of both ways.
        let hash = |k: u64| (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize;
        let start = c.slots_in_use();
        assert_eq!(start, 1 << START_BITS);
        // Half as many keys as slots in use: evictions stay under a sixteenth of them.
        for k in 1..=start as u64 / 2 {
            c.store(hash(k), &words_of(k));
        }
        assert_eq!(c.slots_in_use(), start, "grew while the keys fit");
        let mut k = start as u64 / 2;
        while c.slots_in_use() == start {
            k += 1;
            c.store(hash(k), &words_of(k));
            assert!(k < 8 * start as u64, "never grew");
        }
        // Before as many keys as slots: a level that waits longer merges pieces it could keep.
        assert!(k <= start as u64, "grew only at key {k}");
        assert_eq!(c.slots_in_use(), 1 << MAX_BITS);
        // Every earlier key is either found with its own words or absent.
        for j in 1..=k {
            if let Some(got) = c.load(hash(j), key(&words_of(j))) {
                assert_eq!(got, words_of(j));
            }
        }
        // After growing, as many keys as before fit with few losses.
        let fresh = (1..=start as u64)
            .map(|j| j + (1 << 40))
            .collect::<Vec<_>>();
        for &j in &fresh {
            c.store(hash(j), &words_of(j));
        }
        let kept = fresh
            .iter()
            .filter(|&&j| c.load(hash(j), key(&words_of(j))) == Some(words_of(j)))
            .count();
        assert!(kept > start * 9 / 10, "kept {kept} of {start}");
    }

    #[test]
    fn concurrent_writers_never_show_a_torn_slot() {
        let c = SharedCache::default();
        let hits = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (c, hits) = (&c, &hits);
                s.spawn(move || {
                    for n in 0..200_000u64 {
                        // Four slots, 64 keys: constant overwrites, reads racing writes.
                        let k = 1 + (n * 7 + t * 13) % 64;
                        let ways_of =
                            |k: u64| ((k % 4) as usize) << MAX_BITS | ((k / 4) % 4) as usize;
                        c.store(ways_of(k), &words_of(k));
                        for probe in [k, 1 + (k * 5 + n) % 64] {
                            let w = words_of(probe);
                            if let Some(got) = c.load(ways_of(probe), [w[0], w[1], w[2], w[3]]) {
                                assert_eq!(got, w, "torn copy of key {probe}");
                                hits.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert!(hits.into_inner() > 1000);
    }
}
