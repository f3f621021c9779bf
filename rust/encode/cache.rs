//! A bounded word cache that neither serializes threads nor allocates.
//!
//! tiktoken removed its cache because one RwLock-guarded LRU made threads queue on every piece.
//! Here each thread is pinned to its own shard (by a per-thread index), so the lock is taken but not
//! contended below 64 threads. A shard is a direct-mapped table of fixed-size slots allocated on
//! first use: lookup is one hash, one 32-byte compare; a miss overwrites its slot. No allocation per
//! word, O(1) bookkeeping, and memory bounded by `SLOTS` × slot size per active thread.

use crate::vocab::Rank;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const SHARDS: usize = 64;
const SLOTS: usize = 1 << 13;
/// Longest piece cached, in bytes.
pub const MAX_CACHED_LEN: usize = 32;
/// Most ids a cached piece may have.
const MAX_IDS: usize = 12;

#[derive(Clone, Copy)]
struct Slot {
    key: [u8; MAX_CACHED_LEN],
    key_len: u8,
    n_ids: u8,
    ids: [Rank; MAX_IDS],
}

const EMPTY: Slot = Slot {
    key: [0; MAX_CACHED_LEN],
    key_len: u8::MAX,
    n_ids: 0,
    ids: [0; MAX_IDS],
};

type Shard = Option<Box<[Slot]>>;

/// One shard per cache line pair: without the padding, four shards' locks share a line and every
/// lock by one thread invalidates the line for the others (false sharing), which cost batch
/// encoding nearly all of its parallel speed-up.
#[repr(align(128))]
struct Padded(Mutex<Shard>);

pub struct WordCache {
    shards: Box<[Padded]>,
}

fn shard_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

#[inline(always)]
fn padded(piece: &[u8]) -> [u8; MAX_CACHED_LEN] {
    let mut key = [0u8; MAX_CACHED_LEN];
    key[..piece.len()].copy_from_slice(piece);
    key
}

#[inline(always)]
fn slot_of(key: &[u8; MAX_CACHED_LEN], len: usize) -> usize {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(key);
    h.write_usize(len);
    (h.finish() >> 17) as usize & (SLOTS - 1)
}

impl Default for WordCache {
    fn default() -> Self {
        WordCache {
            shards: (0..SHARDS).map(|_| Padded(Mutex::new(None))).collect(),
        }
    }
}

impl WordCache {
    /// Append the cached ids of `piece` (at most `MAX_CACHED_LEN` bytes) to `out`; false if absent.
    #[inline]
    pub fn get_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let key = padded(piece);
        let Ok(shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return false;
        };
        let Some(slots) = shard.as_ref() else {
            return false;
        };
        let slot = &slots[slot_of(&key, piece.len())];
        if slot.key_len as usize == piece.len() && slot.key == key {
            out.extend_from_slice(&slot.ids[..slot.n_ids as usize]);
            true
        } else {
            false
        }
    }

    #[inline]
    pub fn insert(&self, piece: &[u8], ids: &[Rank]) {
        if ids.len() > MAX_IDS {
            return;
        }
        let key = padded(piece);
        let Ok(mut shard) = self.shards[shard_of_this_thread()].0.lock() else {
            return;
        };
        let slots = shard.get_or_insert_with(|| vec![EMPTY; SLOTS].into_boxed_slice());
        let slot = &mut slots[slot_of(&key, piece.len())];
        slot.key = key;
        slot.key_len = piece.len() as u8;
        slot.n_ids = ids.len() as u8;
        slot.ids[..ids.len()].copy_from_slice(ids);
    }
}

/// Longest piece the long-piece cache keeps, in bytes.
pub const MAX_LONG_LEN: usize = 512;
const LONG_SLOTS: usize = 1 << 9;

/// Pieces of `MAX_CACHED_LEN + 1 ..= MAX_LONG_LEN` bytes: table rules, `=====` lines, runs of
/// spaces in code. They are few (0.2% of en_docs' pieces) but repeat, and each costs a merge of
/// dozens of bytes, which made them 16% of that file's time. Same sharding as [`WordCache`]; a
/// slot owns its bytes and ids (an allocation per miss, none per hit), so a shard holds at most
/// `LONG_SLOTS` × (`MAX_LONG_LEN` bytes + as many ids) = 1.25 MB.
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

    #[test]
    fn hit_miss_and_overwrite() {
        let c = WordCache::default();
        let mut out = Vec::new();
        assert!(!c.get_into(b"abc", &mut out));
        c.insert(b"abc", &[1, 2]);
        assert!(c.get_into(b"abc", &mut out));
        assert_eq!(out, vec![1, 2]);
        // Same bytes zero-padded but a different length is a different key.
        assert!(!c.get_into(b"abc\0", &mut out));
        c.insert(b"abc", &[7]);
        out.clear();
        assert!(c.get_into(b"abc", &mut out));
        assert_eq!(out, vec![7]);
    }
}
