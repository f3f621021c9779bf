//! The second level of the piece cache: one table per encoder, shared by every thread.
//!
//! Idea: the first level (`hot.rs`) is private to a thread and small enough for L2; what it
//! evicts, and what other threads have already encoded, waits here, in one 8 MB table per
//! encoder instead of one per thread. Threads then warm each other up (the second core of a
//! long text or a batch no longer starts from an empty cache), and memory does not grow with
//! the thread count.
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
//! Invariants: a stored entry is exactly what its writer's encoder gave for its key (as in the
//! first level); a slot whose key words are 0 is empty (no piece's key is 0).
//!
//! Downside: the version is 32 bits, so a reader stalled while a single slot is rewritten 2³¹
//! times could accept a torn copy; a slot shared by two hot pieces ping-pongs between writers
//! and its line between cores.

use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Slots: 128 K × 64 B = 8 MB.
pub const BITS: u32 = 17;
const MASK: usize = (1 << BITS) - 1;

/// A key's two slots, from the `2 * BITS` bits of hash the caller passes.
#[inline(always)]
fn ways(s: usize) -> (usize, usize) {
    ((s >> BITS) & MASK, s & MASK)
}

/// A slot's eight words, as stored.
pub type Words = [u64; 8];

#[repr(C, align(64))]
#[derive(Default)]
struct Slot([AtomicU64; 8]);

pub struct SharedCache {
    slots: Box<[Slot]>,
}

impl Default for SharedCache {
    fn default() -> Self {
        SharedCache {
            slots: (0..1usize << BITS).map(|_| Slot::default()).collect(),
        }
    }
}

/// Where the version lives: the top half of the last word.
const VERSION_SHIFT: u32 = 32;

impl SharedCache {
    /// Ask for the cache lines of the two slots of hash bits `s` ahead of their use.
    #[inline(always)]
    pub fn prefetch(&self, s: usize) {
        let (i, j) = ways(s);
        super::hot::prefetch_line(&self.slots[i]);
        super::hot::prefetch_line(&self.slots[j]);
    }

    /// A consistent copy of the entry for `key` in either slot of hash bits `s`, else None. The
    /// version half of the last word is cleared in the copy.
    #[inline(always)]
    pub fn load(&self, s: usize, key: [u64; 4]) -> Option<Words> {
        let (i, j) = ways(s);
        self.load_slot(i, key).or_else(|| self.load_slot(j, key))
    }

    #[inline(always)]
    fn load_slot(&self, i: usize, key: [u64; 4]) -> Option<Words> {
        let w = &self.slots[i].0;
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
        let (i, j) = ways(s);
        let (a, b) = (&self.slots[i].0, &self.slots[j].0);
        let taken = |w: &[AtomicU64; 8]| w[0].load(Ordering::Relaxed) != 0;
        let version = |w: &[AtomicU64; 8]| w[7].load(Ordering::Relaxed) >> VERSION_SHIFT;
        let way = if !taken(a) || key_of(a) == words[..4] {
            i
        } else if !taken(b) || key_of(b) == words[..4] || version(b) < version(a) {
            j
        } else {
            i
        };
        self.store_slot(way, words);
    }

    #[inline(always)]
    fn store_slot(&self, i: usize, words: &Words) {
        let w = &self.slots[i].0;
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
        let s = 5 << BITS | 9;
        c.store(s, &w);
        assert_eq!(c.load(s, [42, 43, 40, 41]), Some(w));
        assert_eq!(c.load(s, [42, 43, 40, 0]), None);
        assert_eq!(c.load(6 << BITS | 7, [42, 43, 40, 41]), None);
        // Either slot finds it: another key's pair that shares one of them.
        assert_eq!(c.load(5 << BITS | 100, [42, 43, 40, 41]), Some(w));
    }

    #[test]
    fn two_keys_of_one_slot_both_stay_and_the_older_goes_for_a_third() {
        let c = SharedCache::default();
        let key = |w: &Words| [w[0], w[1], w[2], w[3]];
        let (x, y, z) = (words_of(7), words_of(8), words_of(9));
        let s = 10 << BITS | 20;
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
                        let ways_of = |k: u64| ((k % 4) as usize) << BITS | ((k / 4) % 4) as usize;
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
