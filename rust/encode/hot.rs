//! The piece cache of the hot path: pieces of up to 31 bytes → their ids, per thread.
//!
//! Idea: almost every piece of real text is short and one of a few thousand frequent ones. A
//! direct-mapped table of 64-byte entries (a 32-byte key holding the piece's bytes and length,
//! and up to seven ids inline: one cache line each) answers them in one hash and one compare,
//! before the vocabulary's much larger hash maps (megabytes, mostly L3) are touched. Pieces are
//! looked up a batch at a time, every slot of the batch prefetched first, so the batch's memory
//! latencies overlap. Each thread owns its tables: no lock, nothing shared between cores.
//!
//! 31 bytes and 7 ids because non-Latin text needs them: in Chinese/Russian/German text 12% of
//! cl100k pieces are longer than 15 bytes and 6% of the shorter ones give more than four ids
//! (Korean: 11%); a cache of 15-byte, four-id pieces sent all of those to the merge.
//!
//! Invariants: a key is [`cache_key`] of its piece, whose first word is never 0 for a cacheable
//! piece (its length is in the top byte of one of the words and the first word is 0 only for
//! the empty piece), so a zeroed entry is empty; an entry's ids are exactly what encoding its
//! piece with its owner's encoder gives (entries are only written from that result). Tables are
//! per encoder (`owner`), at most [`OWNERS`] per thread, least recently used dropped first.
//!
//! A second level (`shared_cache.rs`, one table of 8–32 MB per encoder shared by all threads) keeps
//! what the first evicts and what other threads encoded: a piece coming back then costs one L3
//! read instead of a merge, whose pair-table lookups miss the cache too.
//!
//! A piece with more than seven ids keeps them in a per-thread map (`Table::big`); its entry
//! points at them there.
//!
//! Downside: a piece longer than 31 bytes is never cached here; a thread that alternates
//! between more than four encoders keeps rebuilding tables; each encoder costs up to 4 MB per
//! thread that ran it (pages are touched as entries are written), plus its big-piece map, plus
//! its shared 8–32 MB.

use super::shared_cache::{self, SharedCache, Words};
use crate::error::Result;
use crate::pretokenize::{Span, SPAN_BATCH};
use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// Entries of the first level: 64 K × 64 B = 4 MB, mostly in L3. Measured one core, r50k, on
/// en_docs / code_py / en_webster (MB/s): 16 K entries (1 MB, a Zen 4 core's whole L2) 260 /
/// 234 / 170; 32 K 277 / 250 / 184; 64 K 283 / 255 / 188; 128 K 288 / 257 / 188. The batch's
/// prefetches hide most of L3's latency, while each first-level miss costs a second-level
/// lookup and a refill; past 64 K entries the gain no longer pays for the memory.
const BITS: u32 = 16;
const ENTRIES: usize = 1 << BITS;
/// Most ids an entry holds (the eighth slot of the shared level's entry holds its version).
pub const MAX_IDS: usize = 7;
/// Longest piece (in bytes) an entry holds.
pub const MAX_LEN: usize = 31;
/// Encoders per thread with a table of their own.
const OWNERS: usize = 4;
/// Ids are below 2²⁶ (`vocab::MAX_ID`), so the count fits in the top bits of the first.
const COUNT_SHIFT: u32 = 28;
const ID_MASK: u32 = (1 << COUNT_SHIFT) - 1;

/// A piece of up to 31 bytes as two words: bytes 0..16 and 16..31, zero-padded, with the length
/// in the top byte of the first word when it is at most 15 (then the second word is 0; the
/// first word is `vocab::pack_short`, the key of the vocabulary's short map) and in the top
/// byte of the second otherwise. Distinct pieces get distinct keys. `[0, 0]` for a piece that
/// is empty or too long.
pub type Key = [u128; 2];

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Entry {
    key: Key,
    /// Ids, the count in the top bits of the first; the eighth is always 0.
    ids: [Rank; MAX_IDS + 1],
}

impl Entry {
    /// The first-level entry of a piece whose `n` (> `MAX_IDS`) ids are at `at` in the table's
    /// `spilled`: count 0, then where and how many. Never stored in the shared level, whose
    /// entries cannot point into one thread's `spilled`.
    #[inline(always)]
    fn spilled(key: &Key, at: u32, n: u32) -> Self {
        let mut ids = [0; MAX_IDS + 1];
        (ids[1], ids[2]) = (at, n);
        Entry { key: *key, ids }
    }

    #[inline(always)]
    fn is_spilled(&self) -> bool {
        self.key[0] != 0 && self.ids[0] >> COUNT_SHIFT == 0
    }

    /// How many ids the entry's piece has.
    #[inline(always)]
    fn id_count(&self) -> usize {
        match (self.ids[0] >> COUNT_SHIFT) as usize {
            0 => self.ids[2] as usize,
            n => n,
        }
    }

    /// The entry as the shared level's words: key, then the ids two per word.
    #[inline(always)]
    fn words(&self) -> Words {
        let k = |w: u128, hi: bool| (if hi { w >> 64 } else { w }) as u64;
        let pair = |j: usize| self.ids[j] as u64 | (self.ids[j + 1] as u64) << 32;
        [
            k(self.key[0], false),
            k(self.key[0], true),
            k(self.key[1], false),
            k(self.key[1], true),
            pair(0),
            pair(2),
            pair(4),
            pair(6),
        ]
    }

    #[inline(always)]
    fn from_words(w: &Words) -> Self {
        let mut ids = [0; MAX_IDS + 1];
        for (j, &word) in w[4..].iter().enumerate() {
            ids[2 * j] = word as Rank;
            ids[2 * j + 1] = (word >> 32) as Rank;
        }
        Entry {
            key: [
                w[0] as u128 | (w[1] as u128) << 64,
                w[2] as u128 | (w[3] as u128) << 64,
            ],
            ids,
        }
    }

    #[inline(always)]
    fn key_words(key: &Key) -> [u64; 4] {
        [
            key[0] as u64,
            (key[0] >> 64) as u64,
            key[1] as u64,
            (key[1] >> 64) as u64,
        ]
    }
}

/// [`Key`] of `text[start..end]`: two 16-byte loads and masks when 32 bytes from `start` are
/// in `text`, with no branch on the length, whose mispredictions cost more than the lookup.
#[inline(always)]
pub fn cache_key(text: &[u8], start: usize, end: usize) -> Key {
    let n = end - start;
    if n.wrapping_sub(1) >= MAX_LEN {
        return [0, 0];
    }
    let mut copy = [0u8; 32];
    let window = match text.get(start..start + 32) {
        Some(w) => w,
        None => {
            copy[..n].copy_from_slice(&text[start..end]);
            &copy
        }
    };
    let w0 = u128::from_le_bytes(window[..16].try_into().expect("16 bytes"));
    let w1 = u128::from_le_bytes(window[16..].try_into().expect("16 bytes"));
    let (keep, len) = &KEY_MASKS[n];
    [w0 & keep[0] | len[0], w1 & keep[1] | len[1]]
}

/// The bits of bytes 0..k of a word, k ≤ 15 (k = 0 keeps nothing).
const fn keep_bytes(k: usize) -> u128 {
    (1u128 << (8 * k)) - 1
}

/// Per length n ≤ 31: which bits of the two words a key keeps, and its length bits. A table
/// (1 KB, always in L1) instead of variable 128-bit shifts, which compile to a dozen
/// instructions with branches.
static KEY_MASKS: [(Key, Key); 32] = key_masks();

const fn key_masks() -> [(Key, Key); 32] {
    let mut t = [([0u128; 2], [0u128; 2]); 32];
    let mut n = 1;
    while n < 32 {
        t[n] = if n <= 15 {
            ([keep_bytes(n), 0], [(n as u128) << 120, 0])
        } else {
            ([u128::MAX, keep_bytes(n - 16)], [0, (n as u128) << 120])
        };
        n += 1;
    }
    t
}

/// A product's high bits depend on all of its input's bits, its low bits only on the low
/// ones; the shift folds high into low, so the second level's bits (below the first's) are
/// as mixed as the first's. Without it, pieces sharing their first four bytes and length
/// shared a second-level way, and en_webster ran 10% slower.
#[inline(always)]
fn hash(key: &Key) -> u64 {
    let x = (key[0] as u64) ^ ((key[0] >> 64) as u64).rotate_left(29);
    let y = (key[1] as u64).rotate_left(13) ^ ((key[1] >> 64) as u64).rotate_left(47);
    let h = (x ^ y).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 32)
}

/// The slots of a key's hash in the two levels: the top bits for the first, the bits below
/// them for the second (independent, so pieces that share a first-level slot are spread over
/// the second).
#[inline(always)]
fn slots(key: &Key) -> (usize, usize) {
    const SECOND: u32 = 2 * shared_cache::MAX_BITS;
    const _: () = assert!(BITS + SECOND <= 64);
    let h = hash(key);
    (
        (h >> (64 - BITS)) as usize,
        ((h >> (64 - BITS - SECOND)) & ((1 << SECOND) - 1)) as usize,
    )
}

/// `ENTRIES` empty entries, from a zeroed allocation: the OS hands its pages out zeroed on
/// first touch, so a short job pays only for the pages its pieces land on (`vec!` of a struct
/// writes every entry, 4 MB, up front).
fn zeroed_entries() -> Box<[Entry]> {
    let layout = std::alloc::Layout::array::<Entry>(ENTRIES).expect("a 4 MB layout");
    // SAFETY: the layout is non-zero-sized; an all-zero `Entry` is valid (integers only) and
    // is the empty entry; the pointer came from the global allocator with the layout of
    // `[Entry; ENTRIES]`, which is what `Box<[Entry]>` frees it with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Entry>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, ENTRIES))
    }
}

/// Most pieces the big-piece map keeps; it is emptied when it would hold more.
const BIG_PIECES: usize = 1 << 17;

/// One encoder's table on this thread.
pub struct Table {
    entries: Box<[Entry]>,
    /// Pieces (of up to `MAX_LEN` bytes) with more than `MAX_IDS` ids, more than an entry
    /// holds inline: their key → where their ids are in `spilled` (an entry may point there). In Chinese/Russian/German text with r50k
    /// one piece in nine is such (a run of Han characters is one piece and gives an id per
    /// byte or two), half of them repeats; merging each again, behind a locked cache, was
    /// a third of that file's time. At most `BIG_PIECES` pieces (so at most 31 × as many ids);
    /// emptied when full, so a text with more distinct big pieces merges some again.
    big: FxHashMap<Key, (u32, u32)>,
    spilled: Vec<Rank>,
    lookups: u64,
    hits: u64,
}

impl Table {
    fn new() -> Self {
        Table {
            entries: zeroed_entries(),
            big: FxHashMap::default(),
            spilled: Vec::new(),
            lookups: 0,
            hits: 0,
        }
    }

    /// Append the ids of each piece `spans` cut from `text` to `out`, in order, from the table
    /// where it has them and from `miss(piece, short_key, out)` where not (`short_key` is
    /// `vocab::pack_short` of the piece, 0 for a piece over 15 bytes); what `miss` gives for a
    /// cacheable piece is remembered. Returns how many ids the last piece gave.
    ///
    /// Three passes over the batch: keys, hashes and a prefetch of each first-level slot; a
    /// prefetch of the second-level slot of each first-level miss; then the ids. A lookup one
    /// piece at a time waits out an L2 (or, on a first-level miss, L3) latency per piece; here
    /// the batch's loads are in flight together.
    #[inline(always)]
    pub fn encode_batch(
        &mut self,
        second: &SharedCache,
        text: &[u8],
        spans: &[Span],
        out: &mut Vec<Rank>,
        mut miss: impl FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>,
    ) -> Result<usize> {
        let mut keys = [[0u128; 2]; SPAN_BATCH];
        let mut at = [(0u32, 0usize); SPAN_BATCH];
        for ((key, slot), &(start, end)) in keys.iter_mut().zip(&mut at).zip(spans) {
            *key = cache_key(text, start, end);
            let (first, shared) = slots(key);
            *slot = (first as u32, shared);
            prefetch_line(&self.entries[first]);
        }
        let n = spans.len();
        if n == 0 {
            return Ok(0);
        }
        // Which pieces the first level lacks (or cannot hold); their second-level slots are
        // asked for now, so the loads overlap.
        // Empty spans (marks, see `runs.rs`) have no ids of their own: they go to `miss`, but
        // need not send the batch down the slow path.
        let mut missed = 0u64;
        let mut marks = 0u64;
        for (k, (key, &(first, shared))) in keys[..n].iter().zip(&at[..n]).enumerate() {
            if key[0] == 0 {
                if spans[k].0 == spans[k].1 {
                    marks |= 1 << k;
                } else {
                    missed |= 1 << k;
                }
            } else if self.entries[first as usize].key != *key {
                missed |= 1 << k;
                second.prefetch(shared);
            }
        }
        let cacheable = keys[..n].iter().filter(|k| k[0] != 0).count() as u64;
        self.lookups += cacheable;
        self.hits += cacheable;
        if missed == 0 {
            // Every piece is in the first level (the common case): no compare, no branch per
            // piece but the vector's room (and, in a batch with marks, the mark test).
            if marks == 0 {
                for &(first, _) in &at[..n] {
                    emit(&self.entries[first as usize], &self.spilled, out);
                }
                return Ok(self.entries[at[n - 1].0 as usize].id_count());
            }
            for (k, &(first, _)) in at[..n].iter().enumerate() {
                if marks >> k & 1 != 0 {
                    let (s, _) = spans[k];
                    miss(&text[s..s], 0, out)?;
                } else {
                    emit(&self.entries[first as usize], &self.spilled, out);
                }
            }
            return Ok(if marks >> (n - 1) & 1 != 0 {
                0
            } else {
                self.entries[at[n - 1].0 as usize].id_count()
            });
        }
        // Some piece missed: an earlier piece's insert may take the slot a later one hit in
        // the check above (two pieces of a batch can share a slot), so every key is compared
        // again here.
        let mut last = 0;
        for ((key, &(first, shared)), &(start, end)) in keys.iter().zip(&at).zip(spans) {
            let before = out.len();
            let first = first as usize;
            if key[0] == 0 {
                miss(&text[start..end], 0, out)?;
            } else if self.entries[first].key == *key {
                emit(&self.entries[first], &self.spilled, out);
            } else {
                let short_key = if key[1] == 0 { key[0] } else { 0 };
                if let Some(w) = second.load(shared, Entry::key_words(key)) {
                    self.entries[first] = Entry::from_words(&w);
                    emit(&self.entries[first], &self.spilled, out);
                } else if let Some(&(at, n)) = self.big.get(key) {
                    self.entries[first] = Entry::spilled(key, at, n);
                    emit_spilled(&self.spilled, at as usize, n as usize, out);
                } else {
                    self.hits -= 1;
                    miss(&text[start..end], short_key, out)?;
                    self.insert_at(second, first, shared, key, &out[before..]);
                }
            }
            last = out.len() - before;
        }
        Ok(last)
    }

    /// Remember `ids` (at least one) for the piece keyed `key`.
    #[cfg(test)]
    fn insert(&mut self, second: &SharedCache, key: &Key, ids: &[Rank]) {
        let (first, shared) = slots(key);
        self.insert_at(second, first, shared, key, ids);
    }

    /// [`Self::insert`] into the slots of `key`'s hash.
    #[inline(always)]
    fn insert_at(
        &mut self,
        second: &SharedCache,
        first: usize,
        shared: usize,
        key: &Key,
        ids: &[Rank],
    ) {
        if ids.len() > MAX_IDS {
            let at = self.spill(key, ids);
            self.entries[first] = Entry::spilled(key, at, ids.len() as u32);
            return;
        }
        if ids.is_empty() {
            return;
        }
        let mut e = Entry {
            key: *key,
            ids: [0; MAX_IDS + 1],
        };
        e.ids[..ids.len()].copy_from_slice(ids);
        e.ids[0] = (ids[0] & ID_MASK) | ((ids.len() as u32) << COUNT_SHIFT);
        self.entries[first] = e;
        second.store(shared, &e.words());
    }

    /// Remember the ids of a piece with more than `MAX_IDS` of them in the big-piece map;
    /// returns where they start in `spilled`.
    #[cold]
    fn spill(&mut self, key: &Key, ids: &[Rank]) -> u32 {
        if self.big.len() >= BIG_PIECES {
            self.big.clear();
            self.spilled.clear();
            // Entries pointing into `spilled` would now give other pieces' ids.
            for e in self.entries.iter_mut().filter(|e| e.is_spilled()) {
                *e = Entry::default();
            }
        }
        // `spilled` ends in `SPILL_PAD` zeros (for `emit_spilled`): the new ids go before them.
        let at = self.spilled.len().saturating_sub(SPILL_PAD);
        self.spilled.truncate(at);
        self.spilled.extend_from_slice(ids);
        self.spilled.extend_from_slice(&[0; SPILL_PAD]);
        self.big.insert(*key, (at as u32, ids.len() as u32));
        at as u32
    }
}

/// Ids `emit_spilled` copies per step; `Table::spilled` ends in as many zeros.
const SPILL_PAD: usize = 8;

/// Append `n` ids of `spilled` from `at` to `out`, in steps of `SPILL_PAD` (copies of a fixed
/// size, inline, where `extend_from_slice` calls `memcpy`, which cost 7% of Chinese text's time).
#[inline(always)]
fn emit_spilled(spilled: &[Rank], at: usize, n: usize, out: &mut Vec<Rank>) {
    let steps = n.div_ceil(SPILL_PAD);
    // The last step reads up to `SPILL_PAD - 1` ids past the piece's: the padding, or the next
    // piece's ids. Checked (a step past the end would read out of bounds).
    let src = &spilled[at..at + steps * SPILL_PAD];
    out.reserve(steps * SPILL_PAD);
    let len = out.len();
    // SAFETY: `reserve` made room for `steps * SPILL_PAD` more ids after `len`, and `src` holds
    // exactly that many (a checked slice), so every copy stays within both; `src` is another
    // buffer than `out`. Only the first `n` copied ids, all initialized, come under the length.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        for k in 0..steps {
            std::ptr::copy_nonoverlapping(
                src.as_ptr().add(k * SPILL_PAD),
                dst.add(k * SPILL_PAD),
                SPILL_PAD,
            );
        }
        out.set_len(len + n);
    }
}

/// Append an entry's ids to `out`: all eight slots are written (no branch on the count, which
/// varies piece to piece and mispredicts), then the length moves by the count. A spilled
/// entry's come from `spilled`.
#[inline(always)]
fn emit(e: &Entry, spilled: &[Rank], out: &mut Vec<Rank>) {
    let n = (e.ids[0] >> COUNT_SHIFT) as usize;
    if n == 0 {
        return emit_spilled(spilled, e.ids[1] as usize, e.ids[2] as usize, out);
    }
    debug_assert!((1..=MAX_IDS).contains(&n));
    // The first four ids with the count masked off, in registers: masking the id after the
    // copy (a byte read-modify-write of memory just written by a vector store) stalled on it.
    let mut head: [Rank; 4] = e.ids[..4].try_into().expect("four ids");
    head[0] &= ID_MASK;
    let tail: [Rank; 4] = e.ids[4..].try_into().expect("four ids");
    out.reserve(MAX_IDS + 1);
    let len = out.len();
    // SAFETY: `reserve` made room for MAX_IDS + 1 = 8 more ids, so the eight slots after `len`
    // are allocated and both copies (from locals) stay in bounds; they are written before the
    // length covers them. The count is 1..=MAX_IDS here (0 is a spilled entry, handled above;
    // `insert_at` stores no other); `min` keeps the bound even if that broke.
    unsafe {
        let at = out.as_mut_ptr().add(len);
        std::ptr::copy_nonoverlapping(head.as_ptr(), at, 4);
        std::ptr::copy_nonoverlapping(tail.as_ptr(), at.add(4), 4);
        out.set_len(len + n.min(MAX_IDS));
    }
}

/// Ask for the cache line that holds `*x` ahead of its use.
#[inline(always)]
pub fn prefetch_line<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, reads nothing into the program and writes
    // nothing; SSE, which provides it, is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// This thread's tables, most recently used first.
#[derive(Default)]
pub struct Tables {
    by_owner: Vec<(u64, Table)>,
}

impl Tables {
    /// The table of encoder `owner`, made (or taken over from the least recently used) if needed.
    #[inline]
    pub fn of(&mut self, owner: u64) -> &mut Table {
        match self.by_owner.iter().position(|(o, _)| *o == owner) {
            Some(0) => {}
            Some(k) => self.by_owner[..=k].rotate_right(1),
            None => {
                if self.by_owner.len() == OWNERS {
                    self.by_owner.pop();
                }
                self.by_owner.insert(0, (owner, Table::new()));
            }
        }
        &mut self.by_owner[0].1
    }

    /// (lookups, hits) of `owner`'s table on this thread since it was made.
    pub fn stats(&self, owner: u64) -> (u64, u64) {
        self.by_owner
            .iter()
            .find(|(o, _)| *o == owner)
            .map_or((0, 0), |(_, t)| (t.lookups, t.hits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::pack_short;

    /// Encode `text` cut into `spans` through `t` and `shared`, misses answered by `ids_of`;
    /// returns the ids and the pieces that missed.
    fn run(
        t: &mut Table,
        shared: &SharedCache,
        text: &[u8],
        spans: &[Span],
        ids_of: impl Fn(&[u8]) -> Vec<Rank>,
    ) -> (Vec<Rank>, Vec<Vec<u8>>) {
        let (mut out, mut missed) = (Vec::new(), Vec::new());
        for batch in spans.chunks(SPAN_BATCH) {
            t.encode_batch(shared, text, batch, &mut out, |piece, short_key, out| {
                assert_eq!(short_key, pack_short(piece).unwrap_or(0));
                missed.push(piece.to_vec());
                out.extend(ids_of(piece));
                Ok(())
            })
            .unwrap();
        }
        (out, missed)
    }

    fn whole(p: &[u8]) -> [Span; 1] {
        [(0, p.len())]
    }

    #[test]
    fn keys_are_bytes_and_length_with_or_without_32_bytes_of_room() {
        let text: Vec<u8> = (0..80u8).map(|k| 0x5A ^ k.wrapping_mul(91)).collect();
        for start in 0..text.len() {
            for end in start..=text.len() {
                let (piece, n) = (&text[start..end], end - start);
                let mut want = [0u8; 32];
                if (1..=MAX_LEN).contains(&n) {
                    want[..n].copy_from_slice(piece);
                    want[if n <= 15 { 15 } else { 31 }] = n as u8;
                }
                let want = [
                    u128::from_le_bytes(want[..16].try_into().unwrap()),
                    u128::from_le_bytes(want[16..].try_into().unwrap()),
                ];
                assert_eq!(cache_key(&text, start, end), want, "{start}..{end}");
                if n <= 15 {
                    assert_eq!(want[0], pack_short(piece).unwrap_or(0));
                }
            }
        }
    }

    #[test]
    fn entries_survive_the_round_trip_through_shared_words() {
        let key = cache_key(b"an example piece of 29 bytes!", 0, 29);
        let mut e = Entry {
            key,
            ids: [0; MAX_IDS + 1],
        };
        for (j, id) in e.ids[..MAX_IDS].iter_mut().enumerate() {
            *id = (1 << 26) - 1 - j as Rank;
        }
        let back = Entry::from_words(&e.words());
        assert_eq!((back.key, back.ids), (e.key, e.ids));
        assert_eq!(Entry::key_words(&key), e.words()[..4]);
    }

    #[test]
    fn misses_of_up_to_31_bytes_are_remembered_whatever_their_ids() {
        // Pieces of 1..=40 bytes giving 1..=10 ids, each twice, the second time in one batch.
        let text: Vec<u8> = (0..400u32).map(|k| b'a' + (k * 7 % 26) as u8).collect();
        let ids_of = |p: &[u8]| -> Vec<Rank> {
            (0..p.len() % 10 + 1)
                .map(|k| p[0] as Rank * 1000 + k as Rank + (1 << 25))
                .collect()
        };
        let mut spans = Vec::new();
        let mut i = 0;
        for n in 1..=40 {
            if i + n > text.len() {
                break;
            }
            spans.push((i, i + n));
            spans.push((i, i + n));
            i += n;
        }
        let want: Vec<Rank> = spans
            .iter()
            .flat_map(|&(s, e)| ids_of(&text[s..e]))
            .collect();
        let shared = SharedCache::default();
        let mut t = Table::new();
        for pass in 0..3 {
            let (got, missed) = run(&mut t, &shared, &text, &spans, ids_of);
            assert_eq!(got, want, "pass {pass}");
            // Once warm, only pieces over 31 bytes miss; those of more than seven ids come
            // from the big-piece map.
            if pass > 0 {
                assert!(missed.iter().all(|p| p.len() > MAX_LEN), "pass {pass}");
                assert!(missed.len() == spans.iter().filter(|(s, e)| e - s > MAX_LEN).count());
            }
        }
    }

    #[test]
    fn the_big_piece_map_is_emptied_when_full_and_stays_exact() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let ids_of = |p: &[u8]| -> Vec<Rank> { p.iter().map(|&b| b as Rank + 7).collect() };
        // Distinct 12-byte pieces of 12 ids each, more than the map keeps.
        let piece = |k: usize| format!("{k:012}").into_bytes();
        for k in 0..BIG_PIECES + 10 {
            let p = piece(k);
            let (got, missed) = run(&mut t, &shared, &p, &whole(&p), ids_of);
            assert_eq!((got, missed.len()), (ids_of(&p), 1));
            assert!(t.big.len() <= BIG_PIECES);
        }
        assert!(t.spilled.len() <= BIG_PIECES * MAX_LEN + SPILL_PAD);
        // The last ones are there (exact); the first were dropped and merge again, including
        // the one spilled just before the map was emptied, whose first-level entry pointed
        // at ids since overwritten.
        for k in [BIG_PIECES + 9, 0, BIG_PIECES - 1] {
            let p = piece(k);
            let (got, missed) = run(&mut t, &shared, &p, &whole(&p), ids_of);
            assert_eq!(
                (got, missed.len()),
                (ids_of(&p), usize::from(k < BIG_PIECES))
            );
        }
    }

    /// Two pieces in one first-level slot but different shared slots.
    fn sharing_a_first_slot() -> (Vec<u8>, Vec<u8>) {
        let key = |p: &[u8]| cache_key(p, 0, p.len());
        let a = b"alpha".to_vec();
        let b = (0u32..)
            .map(|i| format!("w{i}").into_bytes())
            .find(|p| {
                let (s, t) = (slots(&key(p)), slots(&key(&a)));
                s.0 == t.0 && s.1 != t.1
            })
            .unwrap();
        (a, b)
    }

    #[test]
    fn the_shared_level_keeps_what_the_first_evicts_and_serves_other_threads() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let key = |p: &[u8]| cache_key(p, 0, p.len());
        let (a, b) = sharing_a_first_slot();
        t.insert(&shared, &key(&a), &[1, 2]);
        t.insert(&shared, &key(&b), &[3]);
        let never = |_: &[u8]| -> Vec<Rank> { panic!("cached") };
        assert_eq!(run(&mut t, &shared, &a, &whole(&a), never).0, [1, 2]); // from the shared level
        assert_eq!(run(&mut t, &shared, &b, &whole(&b), never).0, [3]);
        assert_eq!((t.lookups, t.hits), (2, 2));
        // Another thread's empty first level finds both in the shared level.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut other = Table::new();
                assert_eq!(run(&mut other, &shared, &a, &whole(&a), never).0, [1, 2]);
                assert_eq!(run(&mut other, &shared, &b, &whole(&b), never).0, [3]);
            });
        });
    }

    /// A batch where a piece that misses takes the first-level slot of a later piece that was
    /// there: the later one must still get its own ids (from the shared level), not the new
    /// entry's.
    #[test]
    fn a_miss_that_takes_a_later_pieces_slot_leaves_it_its_ids() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let key = |p: &[u8]| cache_key(p, 0, p.len());
        let (a, b) = sharing_a_first_slot();
        t.insert(&shared, &key(&b), &[3]);
        let text = [a.as_slice(), &b].concat();
        let spans = [(0, a.len()), (a.len(), text.len())];
        let ids_of = |p: &[u8]| -> Vec<Rank> {
            assert_eq!(p, a.as_slice(), "only alpha misses");
            vec![1, 2]
        };
        let (ids, missed) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!((ids, missed), (vec![1, 2, 3], vec![a.clone()]));
    }

    #[test]
    fn hit_miss_overwrite_and_owners() {
        let mut tables = Tables::default();
        let (one, two) = (SharedCache::default(), SharedCache::default());
        let p = b"hello";
        let k = cache_key(p, 0, p.len());
        let span = whole(p);
        let five = |_: &[u8]| vec![9; 5];
        assert_eq!(run(tables.of(1), &one, p, &span, five).1.len(), 1);
        tables.of(1).insert(&one, &k, &[7, (1 << 26) - 1, 3]);
        assert_eq!(
            run(tables.of(1), &one, p, &span, five),
            (vec![7, (1 << 26) - 1, 3], vec![])
        );
        // Another encoder has its own tables.
        assert_eq!(run(tables.of(2), &two, p, &span, five).1.len(), 1);
        // More ids than an entry holds: the entry points at them in the big-piece map.
        let many: Vec<Rank> = (1..=MAX_IDS as Rank + 5).collect();
        tables.of(1).insert(&one, &k, &many);
        assert_eq!(run(tables.of(1), &one, p, &span, five), (many, vec![]));
        // More owners than kept: the least recently used goes, the others stay.
        for owner in 3..=5 {
            tables.of(owner);
        }
        assert!(tables.by_owner.len() == OWNERS);
        assert_eq!(tables.stats(2), (0, 0)); // 2 was dropped and forgotten
        assert_eq!(tables.stats(1).0, 3);
    }
}
