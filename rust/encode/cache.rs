//! A bounded cache of long pieces (32 to 512 bytes) that neither serializes threads nor
//! allocates per hit.
//!
//! tiktoken removed its cache because one RwLock-guarded LRU made threads queue on every piece.
//! Here each thread is pinned to its own shard (by a per-thread index), so the lock is taken but
//! not contended below 64 threads. A shard is a table of two-slot sets allocated on first use:
//! lookup is one hash and at most two compares; a new piece takes its set's first slot and moves
//! the one there to the second (so of three pieces that share a set, the two written last stay).
//! Shorter pieces are the piece cache's (`hot.rs`).

use crate::vocab::Rank;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const SHARDS: usize = 64;

fn shard_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

/// Longest piece the long-piece cache keeps, in bytes.
pub const MAX_LONG_LEN: usize = 512;
const LONG_SLOTS: usize = 1 << 14;

/// Pieces of `hot::MAX_LEN + 1 ..= MAX_LONG_LEN` bytes: table rules, `=====` lines, runs of
/// spaces in code, sentences of Chinese between punctuation. They are few (0.2% of en_docs'
/// pieces, 0.5% of Chinese/Russian/German text's) but repeat, and each costs a merge of dozens
/// of bytes, which made them 16% of en_docs' time. One shard per thread; a slot owns its bytes
/// and ids (an allocation per miss, none per hit). That text has 4.5 K distinct long pieces
/// (o200k): with 512 slots they evicted each other (cl100k, one core: 150 → 162 MB/s with 8 K),
/// and in 8 K direct-mapped slots a third of them still shared a slot with another, so every
/// call merged about 2,000 long pieces again (14% of a warm call's time, o200k). 8 K sets of
/// two slots keep them all. A shard holds at most `LONG_SLOTS` × (`MAX_LONG_LEN` bytes + as many
/// ids) = 40 MB; typical long pieces are under 100 bytes, a few megabytes for a full shard.
type LongSlot = Option<(Box<[u8]>, Box<[Rank]>)>;

#[repr(align(128))]
struct PaddedLong(Mutex<Option<Box<[LongSlot]>>>);

pub struct LongCache {
    shards: Box<[PaddedLong]>,
}

impl Default for LongCache {
    fn default() -> Self {
        LongCache {
            shards: (0..SHARDS).map(|_| PaddedLong(Mutex::new(None))).collect(),
        }
    }
}

/// The first slot of `piece`'s set; the second is the next one.
fn long_set_of(piece: &[u8]) -> usize {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(piece);
    2 * ((h.finish() >> 17) as usize & (LONG_SLOTS / 2 - 1))
}

impl LongCache {
    /// Append the cached ids of `piece` to `out`; false if absent.
    pub fn get_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let Ok(shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return false;
        };
        let Some(slots) = shard.as_ref() else {
            return false;
        };
        let set = long_set_of(piece);
        for (key, ids) in slots[set..set + 2].iter().flatten() {
            if **key == *piece {
                out.extend_from_slice(ids);
                return true;
            }
        }
        false
    }

    pub fn insert(&self, piece: &[u8], ids: &[Rank]) {
        if piece.len() > MAX_LONG_LEN {
            return;
        }
        let Ok(mut shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return;
        };
        let slots = shard.get_or_insert_with(|| vec![None; LONG_SLOTS].into_boxed_slice());
        let set = long_set_of(piece);
        let (first, second) = slots[set..set + 2].split_at_mut(1);
        let entry = Some((piece.into(), ids.into()));
        if first[0].as_ref().is_some_and(|(key, _)| **key == *piece) {
            first[0] = entry;
        } else {
            second[0] = std::mem::replace(&mut first[0], entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pieces_hit_miss_and_overwrite() {
        let c = LongCache::default();
        let piece = vec![b'='; 100];
        let mut out = Vec::new();
        assert!(!c.get_into(&piece, &mut out));
        c.insert(&piece, &[5, 6]);
        assert!(c.get_into(&piece, &mut out));
        assert_eq!(out, vec![5, 6]);
        assert!(!c.get_into(&piece[1..], &mut out));
        c.insert(&piece, &[9]);
        out.clear();
        assert!(c.get_into(&piece, &mut out));
        assert_eq!(out, vec![9]);
        c.insert(&vec![b'-'; MAX_LONG_LEN + 1], &[1]);
        assert!(!c.get_into(&vec![b'-'; MAX_LONG_LEN + 1], &mut out));
    }

    /// Of three pieces in one set, the two written last stay, whichever of them was written
    /// again; a piece written again is not kept twice.
    #[test]
    fn a_set_keeps_the_two_pieces_written_last() {
        let pieces: Vec<Vec<u8>> = (0..200_000u32)
            .map(|k| format!("{k:040}").into_bytes())
            .collect();
        let set = long_set_of(&pieces[0]);
        let same: Vec<&Vec<u8>> = pieces.iter().filter(|p| long_set_of(p) == set).collect();
        assert!(same.len() >= 3);
        let (a, b, d) = (same[0], same[1], same[2]);
        let c = LongCache::default();
        let hit = |p: &[u8]| c.get_into(p, &mut Vec::new());
        c.insert(a, &[1]);
        c.insert(b, &[2]);
        c.insert(b, &[3]);
        assert!(hit(a) && hit(b), "a rewrite of b must not push a out");
        let mut out = Vec::new();
        assert!(c.get_into(b, &mut out));
        assert_eq!(out, vec![3]);
        c.insert(d, &[4]);
        assert!(hit(b) && hit(d) && !hit(a));
        c.insert(b, &[5]);
        c.insert(a, &[6]);
        assert!(hit(a) && hit(b) && !hit(d));
    }
}
