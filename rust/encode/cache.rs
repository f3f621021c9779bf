//! A bounded word cache that does not serialize threads.
//!
//! tiktoken removed its cache because one RwLock-guarded LRU made threads queue on every piece.
//! Here each thread is pinned to its own shard (by a per-thread index), so a lock is taken but never
//! contended below 64 threads; a full shard is simply cleared, which bounds memory with O(1)
//! bookkeeping and keeps the hot words of the current text, since they are re-added at once.

use crate::vocab::Rank;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const SHARDS: usize = 64;
/// Entries per shard before it is cleared.
const SHARD_CAPACITY: usize = 16_384;
/// Longer pieces are rare and cheap to re-merge relative to their length; not worth the memory.
pub const MAX_CACHED_LEN: usize = 48;

pub struct WordCache {
    shards: Box<[Mutex<FxHashMap<Box<[u8]>, Box<[Rank]>>>]>,
}

fn shard_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

impl Default for WordCache {
    fn default() -> Self {
        WordCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl WordCache {
    /// Append the cached ids of `piece` to `out`; false if not cached.
    #[inline]
    pub fn get_into(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let shard = self.shards[shard_of_this_thread()].lock();
        let Ok(shard) = shard else { return false };
        match shard.get(piece) {
            Some(ids) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    #[inline]
    pub fn insert(&self, piece: &[u8], ids: &[Rank]) {
        if let Ok(mut shard) = self.shards[shard_of_this_thread()].lock() {
            if shard.len() >= SHARD_CAPACITY {
                shard.clear();
            }
            shard.insert(piece.into(), ids.into());
        }
    }
}
