//! The encoder: specials split → pre-tokenize → per piece: piece cache (`hot.rs`), whole-piece lookup, rank merge.

mod backtrack;
pub(crate) mod batch;
mod cache;
mod hot;
mod merge;
pub(crate) mod pages;
mod piece_cache;
mod raw_bytes;
pub mod recycled;
mod runs;
mod shared_cache;
mod stream;
mod unstable;

pub use batch::FlatBatch;
pub use hot::prefetch_line;
pub use piece_cache::PieceCache;
pub use stream::Stream;

use crate::error::{Error, Result};
use crate::pretokenize::{Pattern, Span, SPAN_BATCH};
use crate::specials::{Part, Rules, Selection, Specials};
use crate::vocab::{Rank, Vocab};
use batch::{par_map_runs, par_map_runs_to};
use cache::{LongCache, MAX_LONG_LEN};
use rayon::prelude::*;
use std::borrow::Cow;
use std::sync::OnceLock;

/// Texts at least this long are encoded on several cores (cut at safe points), in parts of at
/// least `PART_MIN` bytes: below that, the hand-off costs more than the second core gives.
const PARALLEL_MIN: usize = 256 << 10;
const PART_MIN: usize = 64 << 10;

/// Pieces at least this long are merged by backtracking (when the vocabulary allows it). On the
/// corpora, pieces of 65–511 bytes merge as fast with the heap (measured, warm: within noise at 17,
/// 33 and 65), while the backtracking table costs 40–80 ms to build on first use; above this, a
/// piece is rare in text and a run or blob, where backtracking is 3–30× the heap's speed.
const BACKTRACK_MIN: usize = 512;

/// Fewest texts one rayon task takes: splitting a batch of short texts down to single items costs
/// more in task overhead than the texts take to encode.
pub const MIN_BATCH_SPLIT: usize = 64;

/// Reused buffers for merging, so short pieces allocate nothing.
#[derive(Default)]
pub struct Scratch {
    scan: merge::ScanScratch,
    heap: merge::HeapScratch,
    backtrack: backtrack::Scratch,
}

/// A thread's state for encoding: merge buffers and the piece caches of the encoders it ran.
#[derive(Default)]
pub struct ThreadState {
    merge: Scratch,
    hot: hot::Tables,
    /// Where `count` puts one batch's ids at a time.
    tally: Vec<Rank>,
}

/// Distinct for every encoder made in this process: names its piece-cache tables.
fn next_encoder_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

pub struct Encoder {
    vocab: Vocab,
    pattern: Pattern,
    specials: Specials,
    long_cache: LongCache,
    /// Look the whole piece up before merging (tiktoken always does; HF only with `ignore_merges`).
    whole_lookup: bool,
    /// Mergeable token bytes, sorted; built on first use by `encode_with_unstable`.
    sorted_tokens: OnceLock<Vec<Box<[u8]>>>,
    /// Names this encoder's per-thread piece caches; changes when the encoding rule does.
    id: u64,
    /// The second level of the piece cache, shared by the threads; made on first use.
    shared: OnceLock<shared_cache::SharedCache>,
    /// Put every text in NFC before anything else (Qwen's rule).
    nfc: bool,
    /// The backtracking merge's table, built on the first piece long enough to use it; `None`
    /// inside when the vocabulary does not allow it (see `backtrack`).
    backtrack: OnceLock<Option<backtrack::Backtrack>>,
}

/// Ids of an encoding plus how many of them came from its last piece (0 if it ended in a special).
pub struct Encoded {
    pub ids: Vec<Rank>,
    pub last_piece_len: usize,
}

impl Encoder {
    pub fn new(vocab: Vocab, pattern: Pattern) -> Result<Self> {
        let specials = Specials::new(
            vocab
                .specials()
                .iter()
                .map(|(t, _)| t.to_string())
                .collect(),
        )?;
        Ok(Encoder {
            vocab,
            pattern,
            specials,
            long_cache: LongCache::default(),
            whole_lookup: true,
            sorted_tokens: OnceLock::new(),
            id: next_encoder_id(),
            shared: OnceLock::new(),
            nfc: false,
            backtrack: OnceLock::new(),
        })
    }

    /// Put every text in NFC first, as Qwen's tokenizer does.
    pub fn with_nfc(mut self) -> Self {
        self.nfc = true;
        self
    }

    pub fn normalizes_nfc(&self) -> bool {
        self.nfc
    }

    /// `text` as the pattern sees it.
    fn normalized<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.nfc {
            crate::normalize::nfc(text)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Merge whole pieces too instead of looking them up first (HF BPE without `ignore_merges`).
    pub fn without_whole_lookup(mut self) -> Self {
        self.whole_lookup = false;
        self.id = next_encoder_id();
        self.shared = OnceLock::new();
        self.long_cache = LongCache::default();
        self
    }

    pub fn whole_lookup(&self) -> bool {
        self.whole_lookup
    }

    /// (lookups, hits) of this encoder's piece cache on the calling thread, for benchmarks.
    pub fn cache_stats(&self) -> (u64, u64) {
        with_scratch(|s| s.hot.stats(self.id))
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// BPE on a piece the piece cache lacks, whole-piece lookup first (tiktoken does the same,
    /// and it can differ from what merging would give). `key` is the piece packed
    /// (`vocab::pack_short`), 0 if it is longer than 15 bytes.
    #[inline(always)]
    fn encode_missed_piece(
        &self,
        piece: &[u8],
        key: u128,
        scratch: &mut Scratch,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        if key == 0 {
            return self.encode_long_piece(piece, scratch, out);
        }
        if let Some(id) = self.vocab.rank_packed(key).filter(|_| self.whole_lookup) {
            out.push(id);
            return Ok(());
        }
        self.merge(piece, scratch, out)
    }

    /// [`Self::encode_missed_piece`] for pieces of 16 bytes or more.
    fn encode_long_piece(
        &self,
        piece: &[u8],
        scratch: &mut Scratch,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        if self.whole_lookup {
            if let Some(id) = self.vocab.rank(piece) {
                out.push(id);
                return Ok(());
            }
        }
        // The piece cache keeps pieces of up to `hot::MAX_LEN` bytes, the long cache longer ones.
        if piece.len() <= hot::MAX_LEN || piece.len() > MAX_LONG_LEN {
            return self.merge(piece, scratch, out);
        }
        if self.long_cache.get_into(piece, out) {
            return Ok(());
        }
        let start = out.len();
        self.merge(piece, scratch, out)?;
        self.long_cache.insert(piece, &out[start..]);
        Ok(())
    }

    /// BPE on bytes as one piece, without the whole-piece lookup (tiktoken's `byte_pair_encode`).
    fn merge_bytes(&self, piece: &[u8]) -> Result<Vec<Rank>> {
        let mut out = Vec::new();
        self.merge(piece, &mut Scratch::default(), &mut out)?;
        Ok(out)
    }

    /// BPE of one piece onto `out`: the flat or heap merge, or for a long piece the backtracking
    /// one when the vocabulary allows it (same ids; see `backtrack` for why).
    fn merge(&self, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<Rank>) -> Result<()> {
        if piece.len() >= BACKTRACK_MIN {
            let table = self
                .backtrack
                .get_or_init(|| backtrack::Backtrack::build(&self.vocab));
            if let Some(table) = table.as_ref().filter(|t| !t.is_off()) {
                if table.encode(&self.vocab, piece, &mut scratch.backtrack, out)? {
                    return Ok(());
                }
            }
        }
        merge::merge_piece(&self.vocab, piece, scratch, out)
    }

    /// Ordinary text (no specials): returns how many ids the last piece produced.
    fn encode_text(
        &self,
        text: &str,
        state: &mut ThreadState,
        out: &mut Vec<Rank>,
    ) -> Result<usize> {
        let hot = state.hot.of(self.id);
        let scratch = &mut state.merge;
        let shared = self.shared.get_or_init(Default::default);
        let mut feed = hot::Feed::new(hot, shared, text.as_bytes(), out, |piece, key, out| {
            self.encode_missed_piece(piece, key, scratch, out)
        });
        self.pattern.for_each_span(text, &mut feed)?;
        feed.finish()
    }

    /// How many ids ordinary text (no specials) gives, holding one batch's ids at a time.
    fn count_text(&self, text: &str, state: &mut ThreadState) -> Result<usize> {
        /// Most ids the tally keeps from one call to the next: a long piece's ids may have
        /// grown it past a batch's (it is freed at the next call, so a test can see its size).
        const TALLY_KEEP: usize = 1 << 12;
        let ThreadState {
            merge: scratch,
            hot,
            tally,
        } = state;
        let hot = hot.of(self.id);
        let shared = self.shared.get_or_init(Default::default);
        if tally.capacity() > TALLY_KEEP {
            *tally = Vec::new();
        }
        tally.clear();
        let mut feed = hot::Feed::new(hot, shared, text.as_bytes(), tally, |piece, key, out| {
            self.encode_missed_piece(piece, key, scratch, out)
        })
        .counting();
        self.pattern.for_each_span(text, &mut feed)?;
        feed.finish_count()
    }

    /// Encode the pieces `spans` of `text` (as its pattern cut them) onto `out`.
    fn encode_spans(&self, text: &str, spans: &[Span], out: &mut Vec<Rank>) -> Result<()> {
        with_scratch(|state| {
            let hot = state.hot.of(self.id);
            let scratch = &mut state.merge;
            let shared = self.shared.get_or_init(Default::default);
            for batch in spans.chunks(SPAN_BATCH) {
                hot.encode_batch(shared, text.as_bytes(), batch, out, |piece, key, out| {
                    self.encode_missed_piece(piece, key, scratch, out)
                })?;
            }
            Ok(())
        })
    }

    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let text = &*self.normalized(text);
        let mut out = recycled::take(text.len() / 2 + 16);
        self.encode_stretch(text, &mut out)?;
        Ok(out)
    }

    /// Text free of specials onto `out`, on several cores when it is long enough and its pattern
    /// has safe cuts; returns how many ids its last piece gave.
    fn encode_stretch(&self, text: &str, out: &mut Vec<Rank>) -> Result<usize> {
        if let Some(part_len) = self.part_len(text) {
            return crate::pool::run_parallel(|| self.encode_in_parts(text, part_len, out))?;
        }
        with_scratch(|state| self.encode_text(text, state, out))
    }

    /// [`Self::encode_stretch`]'s count of ids, with no result vector.
    fn count_stretch(&self, text: &str) -> Result<usize> {
        if let Some(part_len) = self.part_len(text) {
            return crate::pool::run_parallel(|| {
                let parts =
                    crate::pretokenize::safe_cut::parts(text.as_bytes(), 0..text.len(), part_len);
                parts
                    .par_iter()
                    .map(|r| with_scratch(|state| self.count_text(&text[r.clone()], state)))
                    .sum::<Result<usize>>()
            })?;
        }
        with_scratch(|state| self.count_text(text, state))
    }

    /// The length of the parts `text` is cut into to encode them on several cores; None when
    /// it is to be encoded on this thread (short, one thread, or a pattern with no safe cuts).
    fn part_len(&self, text: &str) -> Option<usize> {
        if text.len() < PARALLEL_MIN || !self.pattern.has_safe_cuts() {
            return None;
        }
        let threads = crate::pool::parallelism();
        (threads > 1).then(|| (text.len() / (4 * threads)).max(PART_MIN))
    }

    /// Encode `text` cut at safe points into parts of about `part_len` bytes, the parts in
    /// parallel: the same pieces as the whole (see `pretokenize::safe_cut`), so the same ids.
    pub fn encode_in_parts(
        &self,
        text: &str,
        part_len: usize,
        out: &mut Vec<Rank>,
    ) -> Result<usize> {
        if !self.pattern.has_safe_cuts() {
            return Err(Error::invalid("this pattern has no safe cut points"));
        }
        let parts = crate::pretokenize::safe_cut::parts(text.as_bytes(), 0..text.len(), part_len);
        let encoded: Vec<(Vec<Rank>, usize)> = parts
            .par_iter()
            .map(|r| {
                let part = &text[r.clone()];
                let mut ids = Vec::with_capacity(part.len() / 4 + 1);
                let last = with_scratch(|state| self.encode_text(part, state, &mut ids))?;
                Ok((ids, last))
            })
            .collect::<Result<_>>()?;
        out.reserve(encoded.iter().map(|(ids, _)| ids.len()).sum());
        let mut last = 0;
        for (ids, l) in encoded {
            out.extend_from_slice(&ids);
            last = l;
        }
        Ok(last)
    }

    /// tiktoken's `encode`: text matching a disallowed special is an error; allowed specials become
    /// their ids; everything else is ordinary text, each stretch between specials pre-tokenized on its
    /// own (so `$` and lookahead see the stretch's end).
    pub fn encode(
        &self,
        text: &str,
        allowed: &Selection,
        disallowed: &Selection,
    ) -> Result<Encoded> {
        self.encode_with_rules(text, &self.specials.rules(allowed, disallowed)?)
    }

    /// [`Encoder::encode`] with the special-token arguments already resolved.
    pub fn encode_with_rules(&self, text: &str, rules: &Rules) -> Result<Encoded> {
        let text = &*self.normalized(text);
        rules.check(text)?;
        self.encode_with_scratch(text, rules)
    }

    fn encode_with_scratch(&self, text: &str, rules: &Rules) -> Result<Encoded> {
        let mut out = recycled::take(text.len() / 2 + 16);
        let last_piece_len = self.encode_into(text, rules, &mut out)?;
        Ok(Encoded {
            ids: out,
            last_piece_len,
        })
    }

    /// How many ids `encode` would give, without a result vector: each batch of pieces' ids
    /// goes to a small buffer the thread keeps and is counted there, so memory does not grow
    /// with the text (a 16 MB text's 4 M ids were 16 MB of fresh pages per call, which made
    /// counting slower than encoding to numpy).
    pub fn count(&self, text: &str, allowed: &Selection, disallowed: &Selection) -> Result<usize> {
        self.count_with_rules(text, &self.specials.rules(allowed, disallowed)?)
    }

    fn count_with_rules(&self, text: &str, rules: &Rules) -> Result<usize> {
        let text = &*self.normalized(text);
        rules.check(text)?;
        let mut n = 0;
        for part in rules.parts(text) {
            n += match part {
                Part::Stretch(r) => self.count_stretch(&text[r])?,
                Part::Special(_) => 1,
            };
        }
        Ok(n)
    }

    /// Append the ids of `text` (specials split as `rules` say) to `out`; returns how many came
    /// from its last piece (0 if it ended in a special).
    fn encode_into(&self, text: &str, rules: &Rules, out: &mut Vec<Rank>) -> Result<usize> {
        let mut last_piece_len = 0;
        for part in rules.parts(text) {
            last_piece_len = match part {
                Part::Stretch(r) => self.encode_stretch(&text[r], out)?,
                Part::Special(r) => {
                    out.push(self.special_id(&text[r]));
                    0
                }
            };
        }
        Ok(last_piece_len)
    }

    /// The id of a special the split rules found.
    fn special_id(&self, special: &str) -> Rank {
        self.vocab
            .special_id(special)
            .expect("the split rules match only specials")
    }

    pub fn encode_batch(
        &self,
        texts: &[&str],
        allowed: &Selection,
        disallowed: &Selection,
        num_threads: usize,
    ) -> Result<FlatBatch> {
        let rules = self.specials.rules(allowed, disallowed)?;
        par_map_runs(texts, num_threads, |run, out, ends| {
            self.append_run(run, Some(&rules), None, out, ends)
        })
    }

    pub fn encode_ordinary_batch(&self, texts: &[&str], num_threads: usize) -> Result<FlatBatch> {
        par_map_runs(texts, num_threads, |run, out, ends| {
            self.append_run(run, None, None, out, ends)
        })
    }

    /// `encode_ordinary(text)` appended to `out`.
    pub fn append_ordinary(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        self.encode_stretch(&self.normalized(text), out).map(drop)
    }

    /// `encode(text)` under `rules` (from `specials().rules(..)`), appended to `out`.
    pub fn append_with_rules(&self, text: &str, rules: &Rules, out: &mut Vec<Rank>) -> Result<()> {
        let text = &*self.normalized(text);
        rules.check(text)?;
        self.encode_into(text, rules, out).map(drop)
    }

    pub fn count_batch(
        &self,
        texts: &[&str],
        allowed: &Selection,
        disallowed: &Selection,
        num_threads: usize,
    ) -> Result<Vec<usize>> {
        let rules = self.specials.rules(allowed, disallowed)?;
        par_map_runs_to(texts, num_threads, |run, counts| {
            self.count_run(run, &rules, counts)
        })
    }

    /// The id of exactly one token: a mergeable token's bytes or a special token's text.
    pub fn encode_single_token(&self, bytes: &[u8]) -> Result<Rank> {
        if let Some(id) = self.vocab.rank(bytes) {
            return Ok(id);
        }
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| self.vocab.special_id(s))
            .ok_or_else(|| Error::NotAToken(bytes.to_vec()))
    }

    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(out)
    }

    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        self.vocab.token_bytes(id).ok_or(Error::UnknownId(id))
    }

    pub fn decode_bytes_batch(
        &self,
        batch: &[Vec<Rank>],
        num_threads: usize,
    ) -> Result<Vec<Vec<u8>>> {
        par_map(batch, num_threads, |ids| self.decode_bytes(ids))
    }

    /// Decoded bytes and, per token, the char offset where it starts in the decoded text (a token that
    /// starts inside a char gets the offset of that char) — tiktoken's `decode_with_offsets`.
    pub fn decode_with_offsets(&self, ids: &[Rank]) -> Result<(Vec<u8>, Vec<usize>)> {
        let mut text = Vec::new();
        let mut offsets = Vec::with_capacity(ids.len());
        let mut chars = 0usize;
        let is_continuation = |b: u8| (0x80..0xC0).contains(&b);
        for &id in ids {
            let bytes = self.token_bytes(id)?;
            let starts_inside = bytes.first().is_some_and(|&b| is_continuation(b));
            offsets.push(chars.saturating_sub(starts_inside as usize));
            chars += bytes.iter().filter(|&&b| !is_continuation(b)).count();
            text.extend_from_slice(bytes);
        }
        Ok((text, offsets))
    }

    /// Every mergeable token's bytes, sorted.
    pub fn sorted_token_bytes(&self) -> &[Box<[u8]>] {
        self.sorted_tokens.get_or_init(|| {
            let mut v: Vec<Box<[u8]>> = self
                .vocab
                .mergeable()
                .into_iter()
                .map(|(b, _)| b.into())
                .collect();
            v.sort_unstable();
            v
        })
    }

    pub fn specials(&self) -> &Specials {
        &self.specials
    }
}

/// Run `f` with this thread's merge buffers, so that encoding many small texts does not allocate
/// them again for each text.
fn with_scratch<T>(f: impl FnOnce(&mut ThreadState) -> T) -> T {
    thread_local! {
        static STATE: std::cell::RefCell<ThreadState> = Default::default();
    }
    STATE.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut ThreadState::default()),
    })
}

/// `f` over `items` on `num_threads` threads, results in order; the first error wins. A task
/// takes `MIN_BATCH_SPLIT` items, or fewer when the batch is too short to give every thread
/// a few tasks so (74 long texts were one task, on one core).
pub(crate) fn par_map<I: Sync, T: Send>(
    items: &[I],
    num_threads: usize,
    f: impl Fn(&I) -> Result<T> + Sync + Send,
) -> Result<Vec<T>> {
    let threads = crate::pool::resolve(num_threads)?;
    let min_len = MIN_BATCH_SPLIT
        .min(items.len().div_ceil(4 * threads))
        .max(1);
    crate::pool::install(threads, || {
        items.par_iter().with_min_len(min_len).map(f).collect()
    })?
}

#[cfg(test)]
mod count_tests {
    use super::runs::tests::encoder;
    use super::ThreadState;
    use crate::specials::Selection;

    /// Pseudo-random text of `n` units: many batches of pieces, pieces longer than the piece
    /// cache keeps (a long run of `a`), non-ASCII text and specials.
    fn text(mut state: u64, n: usize) -> String {
        let units = ["a", "b", " ", "\n", "ab", " ba", "é", "<s>", "12", "!?"];
        let mut t = String::new();
        for k in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            t.push_str(units[(state % units.len() as u64) as usize]);
            if k % 5_000 == 0 {
                t.push_str(&"a".repeat(3_000 + k / 100));
            }
        }
        t
    }

    #[test]
    fn count_is_the_length_of_encode_for_texts_of_many_batches() {
        let enc = encoder();
        for (seed, n) in [(1, 0), (2, 3), (3, 70), (4, 5_000), (5, 200_000)] {
            let t = text(seed, n);
            for allowed in [Selection::none(), Selection::All] {
                let encoded = enc.encode(&t, &allowed, &Selection::none());
                let counted = enc.count(&t, &allowed, &Selection::none());
                match (encoded, counted) {
                    (Ok(e), Ok(c)) => assert_eq!(c, e.ids.len(), "seed {seed}"),
                    (Err(_), Err(_)) => {}
                    (e, c) => panic!("seed {seed}: encode {:?}, count {:?}", e.is_ok(), c.is_ok()),
                }
            }
        }
    }

    #[test]
    fn counting_on_one_thread_keeps_a_batch_of_ids_not_the_text() {
        let enc = encoder();
        // No long piece: every batch gives at most a few hundred ids.
        let t = "ab ba é! 12\n".repeat(50_000);
        let mut state = ThreadState::default();
        let n = enc.count_text(&t, &mut state).unwrap();
        assert_eq!(n, enc.encode_ordinary(&t).unwrap().len());
        assert!(n > 100_000);
        assert!(state.tally.capacity() < 4_096, "{}", state.tally.capacity());
    }
}

#[cfg(test)]
mod par_map_tests {
    use super::par_map;

    /// A batch of a few slow items still spreads over the threads, in order.
    #[test]
    fn a_short_batch_of_slow_items_uses_every_thread() {
        let items: Vec<u32> = (0..8).collect();
        let got = par_map(&items, 2, |&k| {
            std::thread::sleep(std::time::Duration::from_millis(30));
            Ok((k, std::thread::current().id()))
        })
        .unwrap();
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), items);
        let first = got[0].1;
        assert!(got.iter().any(|g| g.1 != first), "all on one thread");
    }
}
