//! A bounded cache of long pieces (32 to 512 bytes) that neither serializes threads nor
//! allocates per hit.
//!
//! tiktoken removed its cache because one RwLock-guarded LRU made threads queue on every piece.
//! Here each thread is pinned to its own shard (by a per-thread index), so the lock is taken but
//! not contended below 64 threads. A shard is a direct-mapped table allocated on first use:
//! lookup is one hash and one compare; a miss overwrites its slot. Shorter pieces are the piece
//! cache's (`hot.rs`).

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
const LONG_SLOTS: usize = 1 << 13;

/// Pieces of `hot::MAX_LEN + 1 ..= MAX_LONG_LEN` bytes: table rules, `=====` lines, runs of
/// spaces in code, sentences of Chinese between punctuation. They are few (0.2% of en_docs'
/// pieces, 0.5% of Chinese/Russian/German text's) but repeat, and each costs a merge of dozens
/// of bytes, which made them 16% of en_docs' time. One shard per thread; a slot owns its bytes
/// and ids (an allocation per miss, none per hit). 8 K slots: that text has 4.5 K distinct
/// long pieces, and with 512 slots they evicted each other (cl100k, one core: 150 → 162 MB/s).
/// A shard holds at most `LONG_SLOTS` × (`MAX_LONG_LEN` bytes + as many ids) = 20 MB; typical
/// long pieces are under 100 bytes, a megabyte or two for a full shard.
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

fn long_slot_of(piece: &[u8]) -> usize {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(piece);
    (h.finish() >> 17) as usize & (LONG_SLOTS - 1)
}

impl LongCache {
    /// Append the cached ids of `piece` to `out`; false if absent.
    pub fn get_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let Ok(shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return false;
        };
        match shard.as_ref().and_then(|s| s[long_slot_of(piece)].as_ref()) {
            Some((key, ids)) if **key == *piece => {
                out.extend_from_slice(ids);
                true
            }
            _ => false,
        }
    }

    pub fn insert(&self, piece: &[u8], ids: &[Rank]) {
        if piece.len() > MAX_LONG_LEN {
            return;
        }
        let Ok(mut shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return;
        };
        let slots = shard.get_or_insert_with(|| vec![None; LONG_SLOTS].into_boxed_slice());
        slots[long_slot_of(piece)] = Some((piece.into(), ids.into()));
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
}
