//! The piece cache of the hot path: pieces of up to 31 bytes → their ids, per thread.
//!
//! Idea: almost every piece of real text is short and one of a few thousand frequent ones. Two
//! tables answer them before the vocabulary's much larger hash maps (megabytes, mostly L3) are
//! touched, each in one hash and one compare:
//! - pieces of up to 15 bytes (99% of English pieces, 93% of Chinese/Russian/German ones) in
//!   32-byte entries, the piece's bytes and length as one `u128` and four ids inline, two
//!   entries per cache line; a piece may sit in either entry of its line, so two hot pieces
//!   that hash alike do not evict each other;
//! - pieces of 16 to 31 bytes in 64-byte entries: a 32-byte key and seven ids.
//!
//! Pieces are looked up a batch at a time, each piece's line prefetched as the scanner hands the
//! piece over ([`Feed`], [`Table::prepare`]), so the batch's memory latencies overlap the
//! scanning; when all hit (the common case) their ids are copied out with no branch per piece.
//! Each thread owns its tables: no lock, nothing shared between cores.
//!
//! Why two entry sizes: one table of 64-byte entries for every piece up to 31 bytes ran
//! en_docs at 0.65× of this (the wider key to load, mask, hash and compare, eight ids to copy,
//! twice the memory per piece), yet non-Latin text needs the long pieces cached: in
//! Chinese/Russian/German text 7% of cl100k pieces are longer than 15 bytes.
//!
//! Invariants: a key is [`cache_key`] of its piece (a short entry holds its first word, the
//! second being 0), never 0 for a cacheable piece (its length is in the top byte of one of the
//! words), so a zeroed entry is empty; an entry's ids are exactly what encoding its piece with
//! its owner's encoder gives (entries are only written from that result); a piece is in at most
//! one entry of a line. Tables are per encoder (`owner`), at most [`OWNERS`] per thread, least
//! recently used dropped first.
//!
//! A second level (`shared_cache.rs`, one table of 8–32 MB per encoder shared by all threads) keeps
//! what the first evicts and what other threads encoded: a piece coming back then costs one L3
//! read instead of a merge, whose pair-table lookups miss the cache too.
//!
//! A piece with more ids than its entry holds keeps them in a per-thread map (`Table::big`);
//! its entry points at them there.
//!
//! Downside: a piece longer than 31 bytes is never cached here; a short piece of five to seven
//! ids (11% of Korean's short pieces with cl100k) takes a branch and a second read on every
//! hit, its ids being in the table's `spilled` rather than inline; a
//! thread that alternates between more than four encoders keeps rebuilding tables; each
//! encoder costs up to 8 MB per thread that ran it (pages are touched as entries are written),
//! plus its big-piece map, plus its shared 8–32 MB.

use super::pages::{Zeroable, ZeroedPages};
use super::shared_cache::{self, SharedCache, Words};
use crate::error::Result;
use crate::pretokenize::{Span, SpanSink, SPAN_BATCH};
use crate::vocab::Rank;
use rustc_hash::FxHashMap;

/// Top bits of a key's hash that pick its first-level slots; the second level takes the bits
/// below them.
const FIRST_BITS: u32 = 16;
/// Lines of the short table: 64 K × 64 B = 4 MB, 128 K pieces. Timed by hand, r50k en_docs: 32 K
/// lines (2 MB) missed 1.3% of short pieces over nine calls, 64 K 0.6% (353 → 358 MB/s).
const SHORT_LINE_BITS: u32 = 16;
const SHORT_LINES: usize = 1 << SHORT_LINE_BITS;
/// Entries of the wide table: 64 K × 64 B = 4 MB. Timed by hand, r50k: 32 K entries ran
/// Chinese/Russian/German at 122 MB/s and Korean at 210, 64 K at 133 and 220, 128 K at 136
/// and 213.
const WIDE_BITS: u32 = 16;
/// Entries of the wide table at first: 1 K × 64 B = 64 KB, from the allocator. English text has a few hundred distinct pieces of 16–31 bytes (en_fortunes: 245),
/// so a table of the full size cost a fresh process two huge pages zeroed (4 MB, ~4 ms on this
/// VM) for a few KB of entries: en_fortunes as a file job, cl100k, one thread, median of 8
/// alternating runs: 55 → 67 MB/s with this start. Text that has them (Korean, Chinese) grows
/// the table after a quarter of its start's entries missed, or sooner (`WIDE_EARLY`) when
/// wide pieces are a sixteenth of the misses or more (Korean: a sixth), which costs one pass
/// over 64 KB. Growing soon matters in a job that starts with a short text (the benchmark's
/// warm-up, a first batch): the full table's pages are then zeroed there, as before.
const WIDE_START_BITS: u32 = 10;
/// When wide pieces are a small share of the misses, the wide table grows fourfold at a time
/// (1 K, 4 K, 16 K, 64 K entries), each time a quarter of its size missed, so it is about as
/// big as the text's distinct wide pieces need: en_docs has 2,099 of them, and its jump from
/// 1 K straight to 64 K entries zeroed 4 MB of huge pages, an eighth of a fresh process's time
/// encoding it (cpu-clock samples, cl100k, one thread). When they are common (`WIDE_EARLY`),
/// it goes to its full size at once: growing Korean's in steps cost a fresh process 9%.
const WIDE_GROWTH_BITS: u32 = 2;
/// Fewest wide-table misses before it may grow for wide pieces being common.
const WIDE_EARLY: u32 = 64;
const _: () = assert!(SHORT_LINE_BITS <= FIRST_BITS && WIDE_BITS <= FIRST_BITS);
/// Most ids a wide entry holds (the eighth slot of the shared level's entry holds its version).
pub const MAX_IDS: usize = 7;
/// Most ids a short entry holds.
const SHORT_IDS: usize = 4;
/// Longest piece (in bytes) a short entry holds: its bytes and length fill one `u128`.
const SHORT_LEN: usize = 15;
/// Longest piece (in bytes) a wide entry holds.
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

/// A wide piece's entry (and the shared level's): one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Entry {
    key: Key,
    /// Ids, the count in the top bits of the first; the eighth is always 0.
    ids: [Rank; MAX_IDS + 1],
}

impl Entry {
    /// The entry of `key` with `ids` (1..=`MAX_IDS` of them).
    #[inline(always)]
    fn inline(key: &Key, ids: &[Rank]) -> Self {
        debug_assert!((1..=MAX_IDS).contains(&ids.len()));
        Entry {
            key: *key,
            ids: packed(ids),
        }
    }

    /// The wide entry of a piece whose `n` (> `MAX_IDS`) ids are at `at` in the table's
    /// `spilled` (see [`spilled_at`]).
    #[inline(always)]
    fn spilled(key: &Key, at: u32, n: u32) -> Self {
        Entry {
            key: *key,
            ids: spilled_at(at, n),
        }
    }

    #[inline(always)]
    fn is_spilled(&self) -> bool {
        self.key[0] != 0 && count_in(&self.ids) == 0
    }

    /// How many ids the entry's piece has.
    #[inline(always)]
    fn id_count(&self) -> usize {
        id_count(&self.ids)
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

/// The slots of a key's hash in the two levels: the top `bits` (≤ `FIRST_BITS`) for the first,
/// the bits below `FIRST_BITS` for the second (independent, so pieces that share a first-level
/// slot are spread over the second).
#[inline(always)]
fn slots(key: &Key, bits: u32) -> (usize, usize) {
    const SECOND: u32 = 2 * shared_cache::MAX_BITS;
    const _: () = assert!(FIRST_BITS + SECOND <= 64);
    let h = hash(key);
    (
        (h >> (64 - bits)) as usize,
        ((h >> (64 - FIRST_BITS - SECOND)) & ((1 << SECOND) - 1)) as usize,
    )
}

/// The short-table line of a short piece's key (`slots`' first, for the short table).
#[inline(always)]
fn short_line(key: u128) -> usize {
    slots(&[key, 0], SHORT_LINE_BITS).0
}

/// The second-level slot of a short piece's key (`slots`' second).
#[inline(always)]
fn shared_slot(key: u128) -> usize {
    slots(&[key, 0], SHORT_LINE_BITS).1
}

/// The batch's key of a piece that is not short (empty or over 15 bytes): never a short
/// entry's key, whose top byte is its length (1..=15), nor an empty entry's (0), so such a
/// piece never matches and needs no test of its own in the compare loop.
const LONG: u128 = u128::MAX;

/// The first word of [`cache_key`] for a piece of 1..=15 bytes (its second word is 0), else
/// [`LONG`]: one 16-byte load and a mask.
#[inline(always)]
fn short_key(text: &[u8], start: usize, end: usize) -> u128 {
    let n = end - start;
    if n.wrapping_sub(1) >= SHORT_LEN {
        return LONG;
    }
    let word = match text.get(start..start + 16) {
        Some(w) => u128::from_le_bytes(w.try_into().expect("16 bytes")),
        None => {
            let mut copy = [0u8; 16];
            copy[..n].copy_from_slice(&text[start..end]);
            u128::from_le_bytes(copy)
        }
    };
    let (keep, len) = &KEY_MASKS[n];
    word & keep[0] | len[0]
}

/// `ids` (1..=N of them) as an entry holds them: the count in the top bits of the first, the
/// slots past them 0.
#[inline(always)]
fn packed<const N: usize>(ids: &[Rank]) -> [Rank; N] {
    debug_assert!((1..=N).contains(&ids.len()));
    let mut packed = [0; N];
    packed[..ids.len()].copy_from_slice(ids);
    packed[0] = (ids[0] & ID_MASK) | ((ids.len() as u32) << COUNT_SHIFT);
    packed
}

/// The ids of an entry whose `n` ids are at `at` in the table's `spilled`: count 0, then
/// where and how many. Never stored in the shared level, whose entries cannot point into one
/// thread's `spilled`.
#[inline(always)]
fn spilled_at<const N: usize>(at: u32, n: u32) -> [Rank; N] {
    let mut ids = [0; N];
    (ids[1], ids[2]) = (at, n);
    ids
}

/// The count an entry's ids carry (0: they are spilled).
#[inline(always)]
fn count_in(ids: &[Rank]) -> usize {
    (ids[0] >> COUNT_SHIFT) as usize
}

/// How many ids an entry's piece has, spilled or not.
#[inline(always)]
fn id_count(ids: &[Rank]) -> usize {
    match count_in(ids) {
        0 => ids[2] as usize,
        n => n,
    }
}

/// A short piece's entry: its key and up to four ids, the count in the top bits of the first;
/// count 0 points into the table's `spilled` (`ids[1]` where, `ids[2]` how many).
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Short {
    key: u128,
    ids: [Rank; SHORT_IDS],
}

/// Two short entries sharing a cache line; a piece may be in either.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([Short; 2]);
const _: () = assert!(std::mem::size_of::<Line>() == 2 * std::mem::size_of::<Short>());

impl Short {
    /// The entry of `key` with `ids` (1..=4 of them).
    #[inline(always)]
    fn inline(key: u128, ids: &[Rank]) -> Self {
        Short {
            key,
            ids: packed(ids),
        }
    }

    #[inline(always)]
    fn spilled(key: u128, at: u32, n: u32) -> Self {
        Short {
            key,
            ids: spilled_at(at, n),
        }
    }

    #[inline(always)]
    fn is_spilled(&self) -> bool {
        self.key != 0 && count_in(&self.ids) == 0
    }

    #[inline(always)]
    fn id_count(&self) -> usize {
        id_count(&self.ids)
    }
}

// SAFETY: `Entry` and `Line` are plain integers; all zeros is an empty entry (no key is 0).
unsafe impl Zeroable for Entry {}
unsafe impl Zeroable for Line {}

/// Most pieces the big-piece map keeps; it is emptied when it would hold more.
const BIG_PIECES: usize = 1 << 17;
/// Most ids `Table::spilled` holds (16 MB) before it is emptied with the map: as many as the
/// map's pieces can have, plus as many again for short pieces of five to seven ids, which
/// are appended anew each time their entry comes back from the second level.
const SPILLED_IDS: usize = 2 * BIG_PIECES * MAX_LEN;

/// A short entry to write once the batch's ids are out: (line, entry).
type Pending = (u32, Short);

// A batch's exceptions are bits of a u64, and its marks' positions are bytes.
const _: () = assert!(SPAN_BATCH <= 64);

/// Pieces on their way through [`Table::resolve`]: up to [`SPAN_BATCH`] spans with their short
/// keys and short-table lines, as [`Table::prepare`] computed them, and up to
/// [`SPAN_BATCH`] marks: positions in the batch (0 to `n`, in order, repeats allowed) where
/// `resolve` calls its `on_mark` between the pieces' ids (a run's text ends, `runs.rs`).
pub struct Batch {
    spans: [Span; SPAN_BATCH],
    keys: [u128; SPAN_BATCH],
    /// Each piece's line in the short table; the second-level slot, needed only on a miss, is
    /// worked out again then ([`shared_slot`]).
    lines: [u32; SPAN_BATCH],
    n: usize,
    marks: [u8; SPAN_BATCH],
    n_marks: usize,
}

impl Batch {
    pub fn new() -> Self {
        Batch {
            spans: [(0, 0); SPAN_BATCH],
            keys: [0; SPAN_BATCH],
            lines: [0; SPAN_BATCH],
            n: 0,
            marks: [0; SPAN_BATCH],
            n_marks: 0,
        }
    }

    /// No room for another piece.
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        self.n == SPAN_BATCH
    }

    /// No room for another mark.
    #[inline(always)]
    pub fn marks_full(&self) -> bool {
        self.n_marks == SPAN_BATCH
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0 && self.n_marks == 0
    }

    /// A mark after the pieces added so far. The caller makes room first
    /// ([`Batch::marks_full`]).
    #[inline(always)]
    pub fn mark(&mut self) {
        debug_assert!(
            self.n_marks < SPAN_BATCH,
            "a batch holds at most SPAN_BATCH marks"
        );
        // `n` is at most SPAN_BATCH = 64, so it fits a byte.
        self.marks[self.n_marks] = self.n as u8;
        self.n_marks += 1;
    }

    #[inline(always)]
    pub fn clear(&mut self) {
        self.n = 0;
        self.n_marks = 0;
    }
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

/// The scanner's pieces straight into a table: each piece's line is prefetched as the scanner
/// hands it over ([`Table::prepare`]), and every [`SPAN_BATCH`] pieces are resolved together.
///
/// Why in the scanner: a batch's prefetches issued back to back outran the core's miss
/// buffers, and the loop stalled on them (13% of English text's time); between the scanner's
/// steps they go out a few at a time.
pub struct Feed<'a, M> {
    table: &'a mut Table,
    second: &'a SharedCache,
    text: &'a [u8],
    out: &'a mut Vec<Rank>,
    miss: M,
    batch: Batch,
    last: usize,
    /// Counting only (`Some`): how many ids were taken off `out` after each batch, so that
    /// `out` holds one batch's ids at most, not the text's.
    dropped: Option<usize>,
}

impl<'a, M: FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>> Feed<'a, M> {
    /// A feed of `text`'s pieces through `table` (and `second`) onto `out`, misses answered by
    /// `miss` (as in [`Table::encode_batch`]).
    pub fn new(
        table: &'a mut Table,
        second: &'a SharedCache,
        text: &'a [u8],
        out: &'a mut Vec<Rank>,
        miss: M,
    ) -> Self {
        Feed {
            table,
            second,
            text,
            out,
            miss,
            batch: Batch::new(),
            last: 0,
            dropped: None,
        }
    }

    /// This feed, counting the ids only: `out` is emptied after each batch (see
    /// [`Feed::finish_count`]).
    pub fn counting(self) -> Self {
        Feed {
            dropped: Some(0),
            ..self
        }
    }

    /// Resolve the pieces gathered so far.
    fn flush(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            self.last = self.table.resolve(
                self.second,
                self.text,
                &self.batch,
                self.out,
                &mut self.miss,
                |_| {},
            )?;
            self.batch.clear();
            if let Some(dropped) = &mut self.dropped {
                *dropped += self.out.len();
                self.out.clear();
            }
        }
        Ok(())
    }

    /// Resolve the last pieces of a counting feed; returns how many ids the text gave.
    pub fn finish_count(mut self) -> Result<usize> {
        debug_assert!(self.dropped.is_some(), "a feed made by `Feed::counting`");
        self.flush()?;
        Ok(self.dropped.unwrap_or(0))
    }

    /// Resolve the last pieces; returns how many ids the text's last piece gave.
    pub fn finish(mut self) -> Result<usize> {
        self.flush()?;
        Ok(self.last)
    }
}

impl<M: FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>> SpanSink for Feed<'_, M> {
    #[inline(always)]
    fn push(&mut self, span: Span) -> Result<()> {
        self.table.prepare(self.text, span, &mut self.batch);
        if self.batch.is_full() {
            self.flush()?;
        }
        Ok(())
    }
}

/// One encoder's tables on this thread.
pub struct Table {
    short: ZeroedPages<Line>,
    wide: ZeroedPages<Entry>,
    /// `wide` has `1 << wide_bits` entries: `WIDE_START_BITS`, growing by `WIDE_GROWTH_BITS`
    /// up to `WIDE_BITS`.
    wide_bits: u32,
    /// Lookups the wide table missed since it last grew, while it can grow: it grows after a
    /// quarter of its size.
    wide_misses: u32,
    /// Lookups the table missed (both sizes) before the wide table last grew.
    misses_before: u64,
    /// Pieces (of up to `MAX_LEN` bytes) with more ids than their entry holds: their key →
    /// where their ids are in `spilled` (an entry may point there). In Chinese/Russian/German
    /// text with r50k one piece in nine is such (a run of Han characters is one piece and gives
    /// an id per byte or two), half of them repeats; merging each again, behind a locked cache,
    /// was a third of that file's time. At most `BIG_PIECES` pieces (so at most 31 × as many
    /// ids) after each batch; emptied when full, so a text with more distinct big pieces merges
    /// some again.
    big: FxHashMap<Key, (u32, u32)>,
    spilled: Vec<Rank>,
    /// The big-piece map is full: empty it once the batch's ids are out (entries the batch
    /// already found may point into it).
    clear_big: bool,
    lookups: u64,
    hits: u64,
}

impl Table {
    fn new() -> Self {
        Table {
            short: ZeroedPages::new(SHORT_LINES),
            wide: ZeroedPages::new(1 << WIDE_START_BITS),
            wide_bits: WIDE_START_BITS,
            wide_misses: 0,
            misses_before: 0,
            big: FxHashMap::default(),
            spilled: Vec::new(),
            clear_big: false,
            lookups: 0,
            hits: 0,
        }
    }

    /// The short table as an array: a line index masked to its size needs no bounds check.
    #[inline(always)]
    fn short_lines(&self) -> &[Line; SHORT_LINES] {
        self.short[..]
            .try_into()
            .expect("the short table has SHORT_LINES lines")
    }

    /// The short entry `at` (2 × line + way).
    #[inline(always)]
    fn short_entry(&self, at: u32) -> &Short {
        let lines = self.short_lines();
        // SAFETY: a `Line` is exactly two `Short`s (`repr(C)`, no padding: asserted at
        // `Line`), so the table's lines are 2 × SHORT_LINES entries in a row, entry 2 × line +
        // way being `lines[line].0[way]`; the view borrows `self` like the lines do. Measured
        // (cachegrind, warm 600 KB calls, each build twice): the pair index instead costs
        // en_fortunes r50k 19.6-19.8 -> 20.3-20.6 M instructions and en_docs cl100k ~18.5 ->
        // 19.3-19.4 M, about 5 of the ~135 instructions of a cached piece.
        let flat: &[Short; 2 * SHORT_LINES] = unsafe { &*lines.as_ptr().cast() };
        &flat[at as usize & (2 * SHORT_LINES - 1)]
    }

    /// Append the ids of each piece `spans` cut from `text` to `out`, in order, from the tables
    /// where they have them and from `miss(piece, short_key, out)` where not (`short_key` is
    /// `vocab::pack_short` of the piece, 0 for a piece over 15 bytes); what `miss` gives for a
    /// cacheable piece is remembered. Returns how many ids the last piece gave.
    #[inline(always)]
    pub fn encode_batch(
        &mut self,
        second: &SharedCache,
        text: &[u8],
        spans: &[Span],
        out: &mut Vec<Rank>,
        miss: impl FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>,
    ) -> Result<usize> {
        debug_assert!(
            spans.len() <= SPAN_BATCH,
            "a batch is at most SPAN_BATCH pieces"
        );
        let mut batch = Batch::new();
        for &span in spans {
            self.prepare(text, span, &mut batch);
        }
        self.resolve(second, text, &batch, out, miss, |_| {})
    }

    /// Add the piece `span` of `text` to `batch`: its short key and slots, and a prefetch of
    /// its line, so the line is on its way while the scanner finds the next pieces.
    #[inline(always)]
    pub fn prepare(&self, text: &[u8], (start, end): Span, batch: &mut Batch) {
        debug_assert!(!batch.is_full(), "the feed resolves a full batch first");
        // The mask is what the caller's check already ensures; it lets the three stores below
        // go without a bounds check each (SPAN_BATCH is a power of two).
        let k = batch.n & (SPAN_BATCH - 1);
        let key = short_key(text, start, end);
        let line = short_line(key);
        batch.spans[k] = (start, end);
        batch.keys[k] = key;
        batch.lines[k] = line as u32;
        prefetch_line(&self.short[line]);
        batch.n = k + 1;
    }

    /// The ids of `batch`'s pieces onto `out`, in order (see [`Table::encode_batch`]), with
    /// `on_mark(out)` called at each of the batch's marks.
    ///
    /// Two passes over the batch, whose lines [`Table::prepare`] prefetched: the compare of each
    /// piece with its line (and a prefetch of the second-level slots of those missing); then the
    /// ids. A lookup one piece at a time waits out an L2 (or L3) latency per piece; here the
    /// batch's loads are in flight together. The batch's new short entries are written after
    /// its last id, so an entry a piece found in the first pass is still there in the second.
    #[inline(always)]
    pub fn resolve(
        &mut self,
        second: &SharedCache,
        text: &[u8],
        batch: &Batch,
        out: &mut Vec<Rank>,
        mut miss: impl FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>,
        mut on_mark: impl FnMut(&mut Vec<Rank>),
    ) -> Result<usize> {
        let n = batch.n;
        let marks = &batch.marks[..batch.n_marks];
        if n == 0 {
            for _ in marks {
                on_mark(out);
            }
            return Ok(0);
        }
        let (spans, keys, lines) = (&batch.spans, &batch.keys, &batch.lines);
        // Which entry each short piece found; the others (missed, longer than 15 bytes) are
        // exceptions.
        let mut found = [0u32; SPAN_BATCH];
        let mut exceptions = 0u64;
        // No branch on which entry of the line matched: hits split between the two, and a
        // branch on it mispredicted.
        let short = self.short_lines();
        for (k, (&key, &line)) in keys[..n].iter().zip(&lines[..n]).enumerate() {
            let pair = &short[line as usize & (SHORT_LINES - 1)].0;
            let (first, second_way) = (pair[0].key == key, pair[1].key == key);
            found[k] = 2 * line + u32::from(second_way);
            exceptions |= u64::from(!(first | second_way)) << k;
        }
        // Every piece is a short lookup but those over 15 bytes (`LONG`), all exceptions.
        let mut shorts = n as u64;
        let mut rest = exceptions;
        while rest != 0 {
            let j = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if keys[j] != LONG {
                second.prefetch(shared_slot(keys[j]));
            } else {
                shorts -= 1;
                let (start, end) = spans[j];
                if (SHORT_LEN + 1..=MAX_LEN).contains(&(end - start)) {
                    let (first, _) = slots(&cache_key(text, start, end), self.wide_bits);
                    prefetch_line(&self.wide[first]);
                }
            }
        }
        self.lookups += shorts;
        self.hits += shorts;
        if exceptions == 0 && marks.is_empty() {
            // Every piece found (the common case).
            self.emit_shorts(&found[..n], out);
            return Ok(self.short_entry(found[n - 1]).id_count());
        }
        let mut pending = [(0u32, Short::default()); SPAN_BATCH];
        let mut queued = 0;
        let mut last = 0;
        let mut next = 0;
        let mut marks = marks.iter().peekable();
        let mut rest = exceptions;
        while rest != 0 {
            let j = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            self.emit_found(&found, next, j, &mut marks, out, &mut on_mark);
            let before = out.len();
            let (start, end) = spans[j];
            let piece = &text[start..end];
            if keys[j] != LONG {
                let shared = shared_slot(keys[j]);
                let entry = self.short_miss(second, keys[j], shared, piece, out, &mut miss)?;
                pending[queued] = (lines[j], entry);
                queued += 1;
            } else if (SHORT_LEN + 1..=MAX_LEN).contains(&piece.len()) {
                self.wide_lookup(second, text, (start, end), out, &mut miss)?;
            } else {
                miss(piece, 0, out)?;
            }
            last = out.len() - before;
            next = j + 1;
        }
        // Every mark is at most `n`, so this fires the rest.
        self.emit_found(&found, next, n, &mut marks, out, &mut on_mark);
        if exceptions >> (n - 1) & 1 == 0 {
            last = self.short_entry(found[n - 1]).id_count();
        }
        self.finish_batch(&pending[..queued]);
        Ok(last)
    }

    /// The ids of the found pieces `from..to` onto `out`, with `on_mark` called at each mark
    /// up to `to` on the way.
    #[inline(always)]
    fn emit_found<'m>(
        &self,
        found: &[u32; SPAN_BATCH],
        mut from: usize,
        to: usize,
        marks: &mut std::iter::Peekable<impl Iterator<Item = &'m u8>>,
        out: &mut Vec<Rank>,
        on_mark: &mut impl FnMut(&mut Vec<Rank>),
    ) {
        while let Some(&at) = marks.next_if(|&&at| at as usize <= to) {
            self.emit_shorts(&found[from..at as usize], out);
            from = at as usize;
            on_mark(out);
        }
        self.emit_shorts(&found[from..to], out);
    }

    /// The ids of the short entries `found` (each 2 × line + way) onto `out`. Room for all of
    /// them is reserved once and the length set once: per piece, one copy of its four slots
    /// and no branch but the rare spilled entry's (the count varies piece to piece and would
    /// mispredict).
    #[inline(always)]
    fn emit_shorts(&self, found: &[u32], out: &mut Vec<Rank>) {
        out.reserve(found.len() * SHORT_IDS);
        let mut len = out.len();
        for (i, &e) in found.iter().enumerate() {
            let ids = &self.short_entry(e).ids;
            if count_in(ids) == 0 {
                // SAFETY: the ids up to `len` were written by the copies below.
                unsafe { out.set_len(len) };
                emit_spilled(&self.spilled, ids[1] as usize, ids[2] as usize, out);
                out.reserve((found.len() - i - 1) * SHORT_IDS);
                len = out.len();
                continue;
            }
            // SAFETY: the last `reserve` left room for SHORT_IDS ids per entry from there on,
            // and each entry before this one since then moved `len` by at most SHORT_IDS (what
            // `put_inline` returns), so SHORT_IDS slots at `len` are in the room.
            len += unsafe { put_inline(ids, out, len) };
        }
        // SAFETY: every id up to `len` was written above.
        unsafe { out.set_len(len) };
    }

    /// The ids of a short piece its line lacks onto `out`, from the second level, the
    /// big-piece map or `miss`; returns the entry to write for it.
    #[inline(always)]
    fn short_miss(
        &mut self,
        second: &SharedCache,
        key: u128,
        shared: usize,
        piece: &[u8],
        out: &mut Vec<Rank>,
        miss: &mut impl FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>,
    ) -> Result<Short> {
        let wide_key = [key, 0];
        if let Some(w) = second.load(shared, Entry::key_words(&wide_key)) {
            let e = Entry::from_words(&w);
            emit_ids(&e.ids, &self.spilled, out);
            let ids = &out[out.len() - e.id_count()..];
            return Ok(self.short_entry_of(key, ids));
        }
        if let Some(&(at, n)) = self.big.get(&wide_key) {
            emit_spilled(&self.spilled, at as usize, n as usize, out);
            return Ok(Short::spilled(key, at, n));
        }
        self.hits -= 1;
        let before = out.len();
        miss(piece, key, out)?;
        let ids = &out[before..];
        if (1..=MAX_IDS).contains(&ids.len()) {
            second.store(shared, &Entry::inline(&wide_key, ids).words());
        }
        Ok(self.short_entry_of(key, ids))
    }

    /// The short entry for `key` with `ids`: inline, or pointing at them in the big-piece map
    /// (put there unless already there). An empty key for no ids (nothing to remember).
    #[inline(always)]
    fn short_entry_of(&mut self, key: u128, ids: &[Rank]) -> Short {
        match ids.len() {
            0 => Short::default(),
            1..=SHORT_IDS => Short::inline(key, ids),
            // Five to seven ids: the second level has them, so their entry's evictions need
            // no map to find them again; the ids are only appended for the entry to point at.
            n @ ..=MAX_IDS => Short::spilled(key, self.append_spilled(ids), n as u32),
            n => {
                let at = match self.big.get(&[key, 0]) {
                    Some(&(at, m)) if m as usize == n => at,
                    _ => self.spill(&[key, 0], ids),
                };
                Short::spilled(key, at, n as u32)
            }
        }
    }

    /// Write the batch's new short entries (after emptying the big-piece map if it filled up,
    /// when those that point into it are dropped too): the newest first in its line, the
    /// line's other entry going unless it was this piece's.
    fn finish_batch(&mut self, pending: &[Pending]) {
        let cleared = std::mem::take(&mut self.clear_big);
        if cleared {
            self.empty_big();
        }
        for &(line, e) in pending {
            if e.key == 0 || (cleared && e.is_spilled()) {
                continue;
            }
            let pair = &mut self.short[line as usize].0;
            if pair[0].key != e.key {
                pair[1] = pair[0];
            }
            pair[0] = e;
        }
    }

    /// A piece of 16..=31 bytes through the wide table, then the second level, the big-piece
    /// map and `miss`, remembered in the wide table.
    #[inline(always)]
    fn wide_lookup(
        &mut self,
        second: &SharedCache,
        text: &[u8],
        (start, end): Span,
        out: &mut Vec<Rank>,
        miss: &mut impl FnMut(&[u8], u128, &mut Vec<Rank>) -> Result<()>,
    ) -> Result<()> {
        let key = cache_key(text, start, end);
        let (first, shared) = slots(&key, self.wide_bits);
        self.lookups += 1;
        self.hits += 1;
        if self.wide[first].key == key {
            emit_ids(&self.wide[first].ids, &self.spilled, out);
            return Ok(());
        }
        if let Some(w) = second.load(shared, Entry::key_words(&key)) {
            self.wide[first] = Entry::from_words(&w);
            emit_ids(&self.wide[first].ids, &self.spilled, out);
        } else if let Some(&(at, n)) = self.big.get(&key) {
            self.wide[first] = Entry::spilled(&key, at, n);
            emit_spilled(&self.spilled, at as usize, n as usize, out);
        } else {
            self.hits -= 1;
            let before = out.len();
            miss(&text[start..end], 0, out)?;
            self.insert_wide(second, first, shared, &key, &out[before..]);
        }
        if self.wide_bits < WIDE_BITS {
            self.wide_misses += 1;
            let misses = self.lookups - self.hits - self.misses_before;
            if self.wide_misses >= WIDE_EARLY && 16 * self.wide_misses as u64 >= misses {
                self.grow_wide(WIDE_BITS);
            } else if self.wide_misses > 1 << (self.wide_bits - 2) {
                self.grow_wide(self.wide_bits + WIDE_GROWTH_BITS);
            }
        }
        Ok(())
    }

    /// The wide table at `1 << bits` entries (at most `WIDE_BITS`), its entries moved to their
    /// slots there.
    #[cold]
    fn grow_wide(&mut self, bits: u32) {
        let bits = bits.min(WIDE_BITS);
        let mut wide = ZeroedPages::<Entry>::new(1 << bits);
        for e in self.wide.iter().filter(|e| e.key != [0, 0]) {
            wide[slots(&e.key, bits).0] = *e;
        }
        self.wide = wide;
        self.wide_bits = bits;
        self.wide_misses = 0;
        self.misses_before = self.lookups - self.hits;
    }

    /// Remember `ids` (at least one) for the piece keyed `key`, in both levels.
    #[cfg(test)]
    fn insert(&mut self, second: &SharedCache, key: &Key, ids: &[Rank]) {
        if key[1] == 0 {
            let (line, shared) = slots(key, SHORT_LINE_BITS);
            if ids.len() <= MAX_IDS {
                second.store(shared, &Entry::inline(key, ids).words());
            }
            let e = self.short_entry_of(key[0], ids);
            self.finish_batch(&[(line as u32, e)]);
        } else {
            let (first, shared) = slots(key, self.wide_bits);
            self.insert_wide(second, first, shared, key, ids);
        }
    }

    /// Remember `ids` for the wide piece keyed `key` at `first` (and at `shared` in the second
    /// level).
    #[inline(always)]
    fn insert_wide(
        &mut self,
        second: &SharedCache,
        first: usize,
        shared: usize,
        key: &Key,
        ids: &[Rank],
    ) {
        if ids.len() > MAX_IDS {
            let at = self.spill(key, ids);
            self.wide[first] = Entry::spilled(key, at, ids.len() as u32);
            return;
        }
        if ids.is_empty() {
            return;
        }
        let e = Entry::inline(key, ids);
        self.wide[first] = e;
        second.store(shared, &e.words());
    }

    /// Remember the ids of a piece with more of them than its entry holds in the big-piece
    /// map; returns where they start in `spilled`. A full map is emptied after the batch.
    #[cold]
    fn spill(&mut self, key: &Key, ids: &[Rank]) -> u32 {
        if self.big.len() >= BIG_PIECES {
            self.clear_big = true;
        }
        let at = self.append_spilled(ids);
        self.big.insert(*key, (at, ids.len() as u32));
        at
    }

    /// Append `ids` to `spilled`; returns where they start. Once it holds more than
    /// `SPILLED_IDS`, it is emptied after the batch.
    #[inline(always)]
    fn append_spilled(&mut self, ids: &[Rank]) -> u32 {
        if self.spilled.len() >= SPILLED_IDS {
            self.clear_big = true;
        }
        // `spilled` ends in `SPILL_PAD` zeros (for `emit_spilled`): the new ids go before them.
        let at = self.spilled.len().saturating_sub(SPILL_PAD);
        self.spilled.truncate(at);
        self.spilled.extend_from_slice(ids);
        self.spilled.extend_from_slice(&[0; SPILL_PAD]);
        at as u32
    }

    /// Empty the big-piece map, and every entry pointing into it, which would now give other
    /// pieces' ids.
    #[cold]
    fn empty_big(&mut self) {
        self.big.clear();
        self.spilled.clear();
        for e in self.wide.iter_mut().filter(|e| e.is_spilled()) {
            *e = Entry::default();
        }
        for e in self.short.iter_mut().flat_map(|l| &mut l.0) {
            if e.is_spilled() {
                *e = Short::default();
            }
        }
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

/// Append an entry's ids (`N` slots, see [`packed`]) to `out`: all `N` slots are written (no
/// branch on the count, which varies piece to piece and mispredicts), then the length moves by
/// the count. A spilled entry's come from `spilled`.
#[inline(always)]
fn emit_ids<const N: usize>(ids: &[Rank; N], spilled: &[Rank], out: &mut Vec<Rank>) {
    if count_in(ids) == 0 {
        return emit_spilled(spilled, ids[1] as usize, ids[2] as usize, out);
    }
    out.reserve(N);
    let len = out.len();
    // SAFETY: `reserve` made room for N more ids after `len`.
    unsafe {
        let n = put_inline(ids, out, len);
        out.set_len(len + n);
    }
}

/// Write an inline entry's `N` id slots at `out[len..len + N]`, beyond its length, and return
/// its count (1..=N; `min` keeps that bound even if an entry broke `packed`'s rule). The count
/// is masked off in registers: masking the id after the copy (a byte read-modify-write of
/// memory just written by a vector store) stalled on it.
///
/// # Safety
/// `len + N <= out.capacity()`. The caller then sets the length to cover what was written.
#[inline(always)]
unsafe fn put_inline<const N: usize>(ids: &[Rank; N], out: &mut Vec<Rank>, len: usize) -> usize {
    let n = count_in(ids).min(N);
    let mut ids = *ids;
    ids[0] &= ID_MASK;
    // SAFETY: the room is the caller's promise; the source is a local, another buffer.
    unsafe { std::ptr::copy_nonoverlapping(ids.as_ptr(), out.as_mut_ptr().add(len), N) };
    n
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

    /// `pieces` end to end, and the span of each in the result.
    fn end_to_end(pieces: &[Vec<u8>]) -> (Vec<u8>, Vec<Span>) {
        let mut spans = Vec::with_capacity(pieces.len());
        let mut at = 0;
        for p in pieces {
            spans.push((at, at + p.len()));
            at += p.len();
        }
        (pieces.concat(), spans)
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
    fn batches_that_all_hit_copy_every_count_of_ids_inline_or_spilled() {
        // Only short pieces, so a warm batch takes the all-found path: 1..=4 ids inline, 5..=7
        // spilled beside the second level, 8 or more from the big-piece map, in every order
        // within a batch (the emit's room is reserved once per batch and again after each
        // spilled entry).
        let text: Vec<u8> = (0..600u32).map(|k| b'a' + (k * 11 % 26) as u8).collect();
        let ids_of = |p: &[u8]| -> Vec<Rank> {
            let n = (p[0] as usize + p.len()) % 11 + 1;
            (0..n).map(|k| p[0] as Rank * 100 + k as Rank).collect()
        };
        let spans: Vec<Span> = (0..text.len() - SHORT_LEN)
            .step_by(3)
            .map(|i| (i, i + 1 + i % SHORT_LEN))
            .collect();
        let want: Vec<Rank> = spans
            .iter()
            .flat_map(|&(s, e)| ids_of(&text[s..e]))
            .collect();
        let counts: std::collections::BTreeSet<usize> = spans
            .iter()
            .map(|&(s, e)| ids_of(&text[s..e]).len())
            .collect();
        assert_eq!(counts.len(), 11, "every count of ids from 1 to 11 occurs");
        let shared = SharedCache::default();
        let mut t = Table::new();
        for pass in 0..3 {
            let (got, missed) = run(&mut t, &shared, &text, &spans, ids_of);
            assert_eq!(got, want, "pass {pass}");
            assert!(pass == 0 || missed.is_empty(), "pass {pass}: all hit");
        }
    }

    #[test]
    fn the_wide_table_grows_keeping_its_entries() {
        // 600 distinct pieces of 16..=31 bytes: more misses than the small table takes.
        let pieces: Vec<Vec<u8>> = (0..600usize)
            .map(|k| format!("wide{k:06}{}", "x".repeat(6 + k % 16)).into_bytes())
            .collect();
        let (text, spans) = end_to_end(&pieces);
        let ids_of = |p: &[u8]| -> Vec<Rank> {
            (0..p.len() % 9 + 1)
                .map(|k| p[0] as Rank + k as Rank)
                .collect()
        };
        let want: Vec<Rank> = pieces.iter().flat_map(|p| ids_of(p)).collect();
        let mut t = Table::new();
        assert_eq!(t.wide_bits, WIDE_START_BITS);
        let (got, missed) = run(&mut t, &SharedCache::default(), &text, &spans, ids_of);
        assert!(got == want);
        assert_eq!(missed.len(), pieces.len());
        assert_eq!(t.wide_bits, WIDE_BITS);
        // With an empty second level, a piece misses only if another one took its slot, in
        // the small table before the growth or in the grown one: the entries there when it
        // grew were moved (else the pieces before the growth would all miss).
        let slot = |p: &[u8], bits| slots(&cache_key(p, 0, p.len()), bits).0;
        let shares = |p: &[u8], bits| {
            pieces
                .iter()
                .filter(|q| slot(q, bits) == slot(p, bits))
                .count()
                > 1
        };
        let (got, missed) = run(&mut t, &SharedCache::default(), &text, &spans, ids_of);
        assert!(got == want);
        for p in &missed {
            let sizes = (WIDE_START_BITS..=WIDE_BITS).step_by(WIDE_GROWTH_BITS as usize);
            assert!(sizes.into_iter().any(|bits| shares(p, bits)), "{p:?}");
        }
        assert!(missed.len() < 64, "{}", missed.len());
    }

    /// Text whose wide pieces are few among its misses grows the wide table to what they need,
    /// not to its largest size: 600 distinct wide pieces, each among 20 distinct short ones,
    /// take the 1 K table past a quarter missed, so it grows once, to 4 K entries, which the
    /// rest of them do not fill to the next quarter.
    #[test]
    fn the_wide_table_grows_a_step_at_a_time() {
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        for k in 0..600usize {
            pieces.push(format!("wide{k:06}{}", "x".repeat(6 + k % 16)).into_bytes());
            pieces.extend((0..20).map(|j| format!("s{k:05}{j:02}").into_bytes()));
        }
        let (text, spans) = end_to_end(&pieces);
        let ids_of = |p: &[u8]| vec![p[p.len() - 1] as Rank];
        let want: Vec<Rank> = pieces.iter().flat_map(|p| ids_of(p)).collect();
        let mut t = Table::new();
        let (got, missed) = run(&mut t, &SharedCache::default(), &text, &spans, ids_of);
        assert!(got == want);
        assert_eq!(missed.len(), pieces.len());
        assert_eq!(t.wide_bits, WIDE_START_BITS + WIDE_GROWTH_BITS);
        assert!(t.wide_bits < WIDE_BITS);
    }

    #[test]
    fn the_spilled_ids_are_emptied_when_over_their_cap_and_stay_exact() {
        // Short pieces of seven ids have no map entry, only ids in `spilled`: enough distinct
        // ones fill it past its cap, which must empty it (and the entries pointing into it).
        let shared = SharedCache::default();
        let mut t = Table::new();
        let ids_of = |p: &[u8]| -> Vec<Rank> { p[5..].iter().map(|&b| b as Rank + 7).collect() };
        let count = SPILLED_IDS / MAX_IDS + 1000;
        let text: Vec<u8> = (0..count)
            .flat_map(|k| format!("{k:012}").into_bytes())
            .collect();
        let spans: Vec<Span> = (0..count).map(|k| (12 * k, 12 * k + 12)).collect();
        let want: Vec<Rank> = spans
            .iter()
            .flat_map(|&(s, e)| ids_of(&text[s..e]))
            .collect();
        let (got, missed) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!((got, missed.len()), (want.clone(), count));
        assert!(
            t.spilled.len() <= (1000 + SPAN_BATCH) * MAX_IDS + SPILL_PAD,
            "emptied once, then refilled"
        );
        assert!(t.big.is_empty());
        // Entries that pointed into the emptied ids are gone; every piece still gets its own.
        let (got, _) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!(got, want);
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

    /// `count` short pieces in one line of the short table, each in another shared slot.
    fn sharing_a_line(count: usize) -> Vec<Vec<u8>> {
        let slots_of = |p: &[u8]| slots(&cache_key(p, 0, p.len()), SHORT_LINE_BITS);
        let first = b"alpha".to_vec();
        let mut found = vec![first.clone()];
        for i in 0u32.. {
            if found.len() == count {
                break;
            }
            let p = format!("w{i}").into_bytes();
            let (line, shared) = slots_of(&p);
            if line == slots_of(&first).0 && found.iter().all(|q| slots_of(q).1 != shared) {
                found.push(p);
            }
        }
        found
    }

    #[test]
    fn the_shared_level_keeps_what_the_first_evicts_and_serves_other_threads() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let key = |p: &[u8]| cache_key(p, 0, p.len());
        let pieces = sharing_a_line(3);
        // A line holds two pieces: the third insert evicts the first.
        for (k, p) in pieces.iter().enumerate() {
            t.insert(&shared, &key(p), &[k as Rank + 1, 9]);
        }
        let never = |_: &[u8]| -> Vec<Rank> { panic!("cached") };
        for (k, p) in pieces.iter().enumerate() {
            assert_eq!(
                run(&mut t, &shared, p, &whole(p), never).0,
                [k as Rank + 1, 9]
            );
        }
        assert_eq!((t.lookups, t.hits), (3, 3));
        // Another thread's empty first level finds them in the shared level.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut other = Table::new();
                for (k, p) in pieces.iter().enumerate() {
                    let got = run(&mut other, &shared, p, &whole(p), never).0;
                    assert_eq!(got, [k as Rank + 1, 9]);
                }
            });
        });
    }

    /// A batch where a piece that misses would, written at once, evict the entry a later piece
    /// of the batch was found in: the later one must still get its own ids, not the new
    /// entry's or the one moved into its place.
    #[test]
    fn a_miss_leaves_the_entries_later_pieces_found_until_the_batch_is_out() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let key = |p: &[u8]| cache_key(p, 0, p.len());
        let pieces = sharing_a_line(3);
        let (a, b, c) = (&pieces[0], &pieces[1], &pieces[2]);
        // The line holds c (newest) then b; a miss of `a` moves c into b's entry.
        t.insert(&shared, &key(b), &[3]);
        t.insert(&shared, &key(c), &[4, 5]);
        let text = [a.as_slice(), b, c, b].concat();
        let ends = [
            a.len(),
            a.len() + b.len(),
            a.len() + b.len() + c.len(),
            text.len(),
        ];
        let spans = [
            (0, ends[0]),
            (ends[0], ends[1]),
            (ends[1], ends[2]),
            (ends[2], ends[3]),
        ];
        let ids_of = |p: &[u8]| -> Vec<Rank> {
            assert_eq!(p, a.as_slice(), "only `a` misses");
            vec![1, 2]
        };
        let (ids, missed) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!((ids, missed), (vec![1, 2, 3, 4, 5, 3], vec![a.clone()]));
        // Now the line holds a and c; b comes from the shared level.
        let never = |_: &[u8]| -> Vec<Rank> { panic!("cached") };
        assert_eq!(
            run(&mut t, &shared, &text, &spans, never).0,
            [1, 2, 3, 4, 5, 3]
        );
    }

    /// The big-piece map fills up in the middle of a batch whose earlier pass found a piece
    /// pointing into it: that piece must still get its ids, the map being emptied only after.
    #[test]
    fn the_big_piece_map_is_emptied_after_the_batch_that_filled_it() {
        let shared = SharedCache::default();
        let mut t = Table::new();
        let ids_of = |p: &[u8]| -> Vec<Rank> { p.iter().map(|&b| b as Rank + 7).collect() };
        let piece = |k: usize| format!("{k:012}").into_bytes();
        for k in 0..BIG_PIECES {
            let p = piece(k);
            t.insert(&shared, &cache_key(&p, 0, p.len()), &ids_of(&p));
        }
        assert_eq!(t.big.len(), BIG_PIECES);
        // A new big piece (spilled into the full map), then the last one put there.
        let (new, old) = (piece(BIG_PIECES), piece(BIG_PIECES - 1));
        let text = [new.as_slice(), &old].concat();
        let spans = [(0, new.len()), (new.len(), text.len())];
        let (ids, missed) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!(ids, [ids_of(&new), ids_of(&old)].concat());
        assert_eq!(missed, vec![new.clone()]);
        assert!(t.big.is_empty() && t.spilled.is_empty());
        // Emptied: both merge again, exactly.
        let (ids, missed) = run(&mut t, &shared, &text, &spans, ids_of);
        assert_eq!(ids, [ids_of(&new), ids_of(&old)].concat());
        assert_eq!(missed.len(), 2);
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
