//! The hot path's piece cache (`hot.rs`, `shared_cache.rs`) for a model other than the rank
//! encoder: raw pieces → the ids the model gives them, asked of the model only on a miss.
//!
//! Idea: a pipeline whose pre-tokenizer maps bytes (byte-level BPE from a tokenizer.json) hands
//! its model pieces that repeat as much as tiktoken's do, so the same caches that make the rank
//! encoder fast answer ~99% of them in one hash and one compare, with no string made, no lock
//! and no merge: the two-level piece cache up to 31 bytes, and the long-piece cache (`cache.rs`)
//! up to 512 (runs of Han chars, long Cyrillic words: without it, Chinese/Russian/German text
//! spent a third of its time merging them again). The model stays the one that decides every
//! id: the caches only replay what `miss` gave for the same bytes.
//!
//! Invariant: the model's ids for a piece are a function of the piece's bytes alone (no dropout,
//! no state), and a cache lives exactly as long as the model it caches (its owner id is never
//! reused), so a hit is what a miss would give.
//!
//! Downside: up to 8 MB of tables per thread that ran the model, a shared 8–32 MB and the long
//! pieces' shards, touched as entries are written; a thread alternating among more than four
//! cached models (or encoders) rebuilds their tables.

use super::cache::{LongCache, MAX_LONG_LEN};
use super::hot::{Tables, MAX_LEN};
use super::shared_cache::SharedCache;
use super::{next_encoder_id, with_scratch};
use crate::error::Result;
use crate::pretokenize::{Span, SPAN_BATCH};
use crate::vocab::Rank;
use std::sync::OnceLock;

pub struct PieceCache {
    /// Names this cache's tables on every thread; distinct from every encoder's and cache's.
    id: u64,
    shared: OnceLock<SharedCache>,
    long: LongCache,
}

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            id: next_encoder_id(),
            shared: OnceLock::new(),
            long: LongCache::default(),
        }
    }
}

impl std::fmt::Debug for PieceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PieceCache").field("id", &self.id).finish()
    }
}

impl PieceCache {
    /// The ids of the pieces `spans` of `text` (non-empty, in order) onto `out`: from the cache,
    /// else from `miss(piece, out)`, whose ids are then kept for the piece.
    pub fn encode_spans(
        &self,
        text: &[u8],
        spans: &[Span],
        out: &mut Vec<Rank>,
        mut miss: impl FnMut(&[u8], &mut Vec<Rank>) -> Result<()>,
    ) -> Result<()> {
        let shared = self.shared.get_or_init(Default::default);
        let long = &self.long;
        // The piece tables pass on what they cannot keep (over `MAX_LEN` bytes).
        let mut uncached = |piece: &[u8], _: u128, out: &mut Vec<Rank>| {
            if piece.len() <= MAX_LEN || piece.len() > MAX_LONG_LEN {
                return miss(piece, out);
            }
            if long.get_into(piece, out) {
                return Ok(());
            }
            let from = out.len();
            miss(piece, out)?;
            long.insert(piece, &out[from..]);
            Ok(())
        };
        let mut run = |tables: &mut Tables| {
            let table = tables.of(self.id);
            for batch in spans.chunks(SPAN_BATCH) {
                table.encode_batch(shared, text, batch, out, &mut uncached)?;
            }
            Ok(())
        };
        with_scratch(|state| run(&mut state.hot))
    }
}
