//! Long pieces by backtracking over compatible tokens, in about linear time.
//!
//! The idea. Call two tokens `a`, `b` *compatible* when BPE of the bytes `a·b` gives exactly
//! `[a, b]`, and a token *reachable* when BPE of its own bytes gives itself. Then for any text:
//! 1. the BPE result is a sequence of reachable tokens whose neighbours are all compatible
//!    (BPE restricted to the span of two neighbours makes the same choices as BPE of the whole,
//!    so a merge across their boundary would have happened there too);
//! 2. it is the only such sequence: run BPE on the text; its first merge across a boundary of
//!    such a sequence would also be the first cross merge of BPE on those two neighbours alone,
//!    which compatibility forbids; so BPE never crosses the boundaries and, within each token,
//!    ends at that token because the token is reachable.
//!
//! So encoding is a search for that sequence: at each position try the tokens that start there,
//! longest first, and take the first that is reachable, compatible with the previous token and
//! does not end at a dead position; when none fits, mark the position dead and back up to try a
//! shorter token before it. By (2) applied to the prefix ending at a position, every path that
//! reaches it has the same last token; so a position from which nothing fits is dead for every
//! path, and is never tried again (one bit per byte).
//!
//! Compatibility is decided without running BPE: undo the merges that built `a` and `b`, latest
//! first, and at each step ask whether the two parts now facing each other across the boundary
//! would merge before the merge just undone. That needs each token's last merge (its split) and
//! merges that happen in increasing rank order within a token. Both come from one BPE run over the
//! token's bytes, done the first time the token is met and kept; a token whose run goes down in
//! rank switches the method off for its encoder (the heap merge takes over; no known vocabulary
//! does this). Tie rule: among equal ranks BPE merges leftmost first, so of two facing tokens of
//! equal rank the right one was made last and is undone first.
//!
//! Downsides:
//! - BPE is not prefix-stable, so the greedy guess can be wrong for long stretches: in a run of
//!   `=` (cl100k) a prefix of 80 is one token while a longer run is 64s, and at every 64th byte a
//!   doomed 80 is explored for a window before it dies. The search therefore has a budget in
//!   proportion to its progress and hands the piece to the heap merge when it runs out.
//! - The trie of the vocabulary's tokens is built on the first long piece (o200k: ~0.1 s, 2 MB).
//!   It serves only pieces longer than the flat merge's limit, where the heap merge's ~1 M heap
//!   operations per megabyte are the cost this removes.

use crate::error::{Error, Result};
use crate::vocab::{Rank, Vocab};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const NONE: Rank = Rank::MAX;

/// The search gives up once it has tried more than this many candidate tokens per byte of the
/// furthest point it reached, plus [`TRIES_SLACK`]. Text whose BPE the longest-first guess gets
/// right costs about one try per token.
pub const TRIES_PER_BYTE: usize = 2;
pub const TRIES_SLACK: usize = 256;

/// A token longer than this is not split (the flat BPE run that finds a split is quadratic): the
/// method switches off for its encoder instead. Real vocabularies' tokens are at most 128 bytes.
const MAX_SPLIT_LEN: usize = 4096;

/// A token's split as kept: `(left << 32) | right`, or one of these marks.
const NOT_YET: u64 = 0;
const UNREACHABLE: u64 = u64::MAX;

/// Direct-mapped memo of [`Backtrack::compatible`]: a long piece asks about the same few pairs
/// again and again (a run, a repeated pattern). Entries carry the piece's generation, so a new
/// piece (perhaps of another vocabulary: the scratch is per thread) sees none of the old ones.
const MEMO_SLOTS: usize = 1024;

/// How many trie walks the scratch remembers (see `Scratch::recent`).
const RECENT: usize = 4;

pub struct Backtrack {
    /// Token bytes → rank, for the tokens that start at a position (every prefix on one walk).
    trie: fst::Map<Vec<u8>>,
    /// By the first two bytes: where the trie's walk stands after them (the two widest levels,
    /// whose nodes are the slowest to search), or `None` if no token starts with them.
    head: Vec<Option<Head>>,
    /// By rank: the token's length in bytes (0: no token has the rank).
    len: Vec<u32>,
    /// By rank: the split, `NOT_YET` or `UNREACHABLE`; bytes are never looked up here.
    split: Vec<AtomicU64>,
    /// Set when a token's merges went down in rank: the undo walk would be wrong.
    off: AtomicBool,
}

#[derive(Clone, Copy)]
struct Head {
    node: fst::raw::CompiledAddr,
    /// The transducer's output so far.
    out: u64,
    /// The two-byte token, or `NONE`.
    token: Rank,
}

/// Buffers of the backtracking merge, kept between pieces.
pub struct Scratch {
    /// One bit per byte position: no encoding passes through it.
    dead: Vec<u64>,
    /// (pair, generation << 1 | compatible).
    memo: Box<[(u64, u32)]>,
    generation: u32,
    /// The tokens starting at the current position, shortest first.
    starts: Vec<Rank>,
    /// The last few trie walks of this piece: `(at, seen, starts)`, where the walk from `at` read
    /// `seen` bytes (the one it stopped at included). A walk from a position whose next `seen`
    /// bytes are the same gives the same tokens: in a run or a repeated pattern, nearly every
    /// position, and a compare of those bytes costs far less than the walk.
    recent: [(usize, usize, Vec<Rank>); RECENT],
    next_recent: usize,
    /// BPE parts of a token whose split is being found.
    parts: Vec<Rank>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            dead: Vec::new(),
            memo: vec![(u64::MAX, 0); MEMO_SLOTS].into_boxed_slice(),
            generation: 0,
            starts: Vec::new(),
            parts: Vec::new(),
            recent: Default::default(),
            next_recent: 0,
        }
    }
}

impl Scratch {
    fn start_piece(&mut self, n: usize) {
        self.dead.clear();
        self.dead.resize(n / 64 + 1, 0);
        for r in &mut self.recent {
            r.1 = 0;
        }
        self.generation = self.generation.wrapping_add(1) & (u32::MAX >> 1);
        if self.generation == 0 {
            self.memo.fill((u64::MAX, 0));
            self.generation = 1;
        }
    }

    #[inline]
    fn is_dead(&self, at: usize) -> bool {
        self.dead[at / 64] & (1 << (at % 64)) != 0
    }
}

impl Backtrack {
    /// The table for `vocab`, or `None` when the method does not apply: a byte without a token of
    /// its own (then pieces can hold bytes no token covers).
    pub fn build(vocab: &Vocab) -> Option<Backtrack> {
        let mut tokens = vocab.mergeable();
        let size = tokens.iter().map(|&(_, r)| r as usize + 1).max()?;
        for b in 0..=255u8 {
            let id = vocab.byte_id(b);
            if Vocab::check_output(id).is_err() || vocab.token_bytes(id) != Some(&[b][..]) {
                return None;
            }
        }
        let mut len = vec![0u32; size];
        for &(bytes, rank) in &tokens {
            len[rank as usize] = bytes.len() as u32;
        }
        tokens.sort_unstable();
        let trie = fst::Map::from_iter(tokens.iter().map(|&(b, r)| (b, r as u64))).ok()?;
        let head = heads(trie.as_fst());
        Some(Backtrack {
            trie,
            head,
            len,
            split: (0..size).map(|_| AtomicU64::new(NOT_YET)).collect(),
            off: AtomicBool::new(false),
        })
    }

    /// Whether the method was found not to apply (then nothing here is used again).
    pub fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }

    /// Part of a reachable token is unreachable: only merges that go down in rank can do that.
    /// The caller sees `is_off` and hands the piece on.
    fn switch_off(&self) -> bool {
        self.off.store(true, Ordering::Relaxed);
        false
    }

    /// The tokens that start at `text[at..]`, shortest first, into `starts`; returns how many
    /// bytes the walk read (the one it stopped at included), or 0 if it reached the end.
    #[inline]
    fn starts_at(&self, vocab: &Vocab, text: &[u8], at: usize, starts: &mut Vec<Rank>) -> usize {
        starts.clear();
        starts.push(vocab.byte_id(text[at]));
        if at + 1 == text.len() {
            return 0;
        }
        let Some(head) = self.head[(text[at] as usize) << 8 | text[at + 1] as usize] else {
            return 2;
        };
        if head.token != NONE {
            starts.push(head.token);
        }
        let fst = self.trie.as_fst();
        let mut node = fst.node(head.node);
        let mut value = fst::raw::Output::new(head.out);
        for (k, &b) in text[at + 2..].iter().enumerate() {
            let Some(i) = node.find_input(b) else {
                return k + 3;
            };
            let t = node.transition(i);
            value = value.cat(t.out);
            node = fst.node(t.addr);
            if node.is_final() {
                starts.push(value.cat(node.final_output()).value() as Rank);
            }
        }
        0
    }

    /// [`Self::starts_at`] through the scratch's recent walks.
    #[inline]
    fn starts_recent(&self, vocab: &Vocab, s: &mut Scratch, text: &[u8], at: usize) {
        for (from, seen, starts) in &s.recent {
            if *seen != 0
                && at + seen <= text.len()
                && text[at..at + seen] == text[*from..*from + seen]
            {
                s.starts.clone_from(starts);
                return;
            }
        }
        let seen = self.starts_at(vocab, text, at, &mut s.starts);
        if seen != 0 {
            let slot = &mut s.recent[s.next_recent];
            s.next_recent = (s.next_recent + 1) % RECENT;
            slot.0 = at;
            slot.1 = seen;
            slot.2.clone_from(&s.starts);
        }
    }

    /// A multi-byte token's split, found on first use; `None` if it is unreachable.
    fn split(&self, vocab: &Vocab, t: Rank, parts: &mut Vec<Rank>) -> Option<(Rank, Rank)> {
        let mut v = self.split[t as usize].load(Ordering::Relaxed);
        if v == NOT_YET {
            let bytes = vocab.token_bytes(t).unwrap_or_default();
            if bytes.len() > MAX_SPLIT_LEN {
                self.switch_off();
                return None;
            }
            v = match last_merge(vocab, bytes, parts) {
                Ok(Some((a, b))) if parts[..] == [t] => (a as u64) << 32 | b as u64,
                Ok(_) => UNREACHABLE,
                Err(()) => {
                    self.off.store(true, Ordering::Relaxed);
                    UNREACHABLE
                }
            };
            // A race only computes the same value twice.
            self.split[t as usize].store(v, Ordering::Relaxed);
        }
        (v != UNREACHABLE).then_some(((v >> 32) as Rank, v as Rank))
    }

    /// Whether BPE of the bytes of `a` then `b` gives `[a, b]` (both reachable).
    ///
    /// Walks the merges back, latest first: `limit` is the rank of the merge just undone, and a
    /// merge of the two facing parts below it (or, when the undone merge was on the right, at it:
    /// leftmost goes first) would have happened before it.
    fn compatible(&self, vocab: &Vocab, mut a: Rank, mut b: Rank, parts: &mut Vec<Rank>) -> bool {
        if vocab.merge(a, b) != NONE {
            return false;
        }
        loop {
            let (la, lb) = (self.len[a as usize], self.len[b as usize]);
            // Undo the later of the two merges: the higher rank, the right one on a tie.
            let limit;
            if lb == 1 || (la > 1 && a > b) {
                if la == 1 {
                    return true;
                }
                limit = a;
                let Some((_, right)) = self.split(vocab, a, parts) else {
                    return self.switch_off();
                };
                a = right;
            } else {
                limit = b + 1;
                let Some((left, _)) = self.split(vocab, b, parts) else {
                    return self.switch_off();
                };
                b = left;
            }
            let m = vocab.merge(a, b);
            if m != NONE && m < limit {
                return false;
            }
        }
    }

    /// [`Self::compatible`] through the memo.
    #[inline]
    fn compatible_memo(&self, vocab: &Vocab, s: &mut Scratch, a: Rank, b: Rank) -> bool {
        let key = (a as u64) << 32 | b as u64;
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize;
        let (k, v) = s.memo[slot];
        if k == key && v >> 1 == s.generation {
            return v & 1 == 1;
        }
        let c = self.compatible(vocab, a, b, &mut s.parts);
        s.memo[slot] = (key, s.generation << 1 | c as u32);
        c
    }

    /// Append BPE of `piece` to `out` and return `true`, or return `false` with `out` as it was
    /// when the search ran over its budget ([`TRIES_PER_BYTE`]) or the method turned out not to
    /// apply; then the caller merges the piece another way.
    pub fn encode(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Rank>,
    ) -> Result<bool> {
        self.encode_within(vocab, piece, s, out, Some(TRIES_PER_BYTE))
    }

    /// [`Self::encode`] with the budget given (`None`: none).
    fn encode_within(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Rank>,
        tries_per_byte: Option<usize>,
    ) -> Result<bool> {
        let n = piece.len();
        s.start_piece(n);
        let base = out.len();
        let (mut tries, mut furthest) = (0usize, 0usize);
        let mut at = 0;
        // After backing up: only tokens shorter than the one taken back may be tried here.
        let mut below = u32::MAX;
        while at < n {
            self.starts_recent(vocab, s, piece, at);
            let starts = std::mem::take(&mut s.starts);
            let prev = (out.len() > base).then(|| out[out.len() - 1]);
            let mut taken = None;
            for &t in starts.iter().rev() {
                let l = self.len[t as usize];
                if l >= below {
                    continue;
                }
                tries += 1;
                if l > 1 && self.split(vocab, t, &mut s.parts).is_none() {
                    continue;
                }
                if s.is_dead(at + l as usize) {
                    continue;
                }
                if prev.is_some_and(|p| !self.compatible_memo(vocab, s, p, t)) {
                    continue;
                }
                taken = Some(t);
                break;
            }
            s.starts = starts;
            let over = tries_per_byte.is_some_and(|k| tries > k * furthest + TRIES_SLACK);
            if over || self.is_off() {
                out.truncate(base);
                return Ok(false);
            }
            match taken {
                Some(t) => {
                    out.push(t);
                    at += self.len[t as usize] as usize;
                    furthest = furthest.max(at);
                    below = u32::MAX;
                }
                None => {
                    // Nothing fits after `prev`: no encoding passes through `at`.
                    s.dead[at / 64] |= 1 << (at % 64);
                    let Some(p) = prev else {
                        // BPE's own result always fits, so the search cannot run out.
                        return Err(Error::invalid(
                            "internal error: backtracking BPE found no encoding; please report \
                             this text",
                        ));
                    };
                    out.pop();
                    below = self.len[p as usize];
                    at -= below as usize;
                }
            }
        }
        Ok(true)
    }
}

/// The trie's state after each two bytes.
fn heads(fst: &fst::raw::Fst<Vec<u8>>) -> Vec<Option<Head>> {
    let root = fst.root();
    let mut head = vec![None; 1 << 16];
    for t0 in root.transitions() {
        let n0 = fst.node(t0.addr);
        for t1 in n0.transitions() {
            let n1 = fst.node(t1.addr);
            let out = t0.out.cat(t1.out);
            head[(t0.inp as usize) << 8 | t1.inp as usize] = Some(Head {
                node: t1.addr,
                out: out.value(),
                token: if n1.is_final() {
                    out.cat(n1.final_output()).value() as Rank
                } else {
                    NONE
                },
            });
        }
    }
    head
}

/// BPE of `bytes` (tiktoken's rule, the flat quadratic scan) into `parts`, returning the last
/// merge; `Err` if the merges' ranks ever go down (the undo walk of [`Backtrack::compatible`]
/// assumes they do not).
fn last_merge(
    vocab: &Vocab,
    bytes: &[u8],
    parts: &mut Vec<Rank>,
) -> std::result::Result<Option<(Rank, Rank)>, ()> {
    parts.clear();
    parts.extend(bytes.iter().map(|&b| vocab.byte_id(b)));
    let mut last = None;
    let mut floor = 0;
    loop {
        let mut best = (NONE, 0);
        for i in 0..parts.len() - 1 {
            let r = vocab.merge(parts[i], parts[i + 1]);
            if r < best.0 {
                best = (r, i);
            }
        }
        let (r, i) = best;
        if r == NONE {
            return Ok(last);
        }
        if r < floor {
            return Err(());
        }
        floor = r;
        last = Some((parts[i], parts[i + 1]));
        parts[i] = r;
        parts.remove(i + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge::tests::{assert_bpe, falling_ranks_vocab, pieces, reference};
    use super::*;

    /// A vocabulary learned the way BPE learns one: the most frequent pair of a pseudo-random text
    /// over `alphabet` merged `merges` times, each merge the next rank. Runs and repeats abound.
    fn trained(alphabet: &[u8], merges: usize, mut state: u64) -> Vocab {
        let mut text: Vec<Vec<u8>> = (0..4000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Skewed draws, so some letters run long.
                let k = (state % 64) as usize;
                vec![alphabet[(k * k / 64) * alphabet.len() / 64]]
            })
            .collect();
        let mut tokens: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for m in 0..merges {
            let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), usize> =
                Default::default();
            for w in text.windows(2) {
                *counts.entry((w[0].clone(), w[1].clone())).or_default() += 1;
            }
            let Some(((a, b), _)) = counts.into_iter().max_by_key(|(_, c)| *c) else {
                break;
            };
            let joined = [a.as_slice(), b.as_slice()].concat();
            if tokens.iter().any(|(t, _)| *t == joined) {
                break;
            }
            tokens.push((joined.clone(), 256 + m as Rank));
            let mut merged = Vec::with_capacity(text.len());
            let mut i = 0;
            while i < text.len() {
                if i + 1 < text.len() && text[i] == a && text[i + 1] == b {
                    merged.push(joined.clone());
                    i += 2;
                } else {
                    merged.push(text[i].clone());
                    i += 1;
                }
            }
            text = merged;
        }
        Vocab::new(tokens, vec![]).unwrap()
    }

    fn runs(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for len in 1..max_len {
            for &c in alphabet {
                out.push(vec![c; len]);
            }
            out.push(alphabet.iter().copied().cycle().take(len).collect());
        }
        out
    }

    /// With no budget the search always finishes, and its ids are BPE's.
    #[test]
    fn equals_textbook_bpe_on_learned_vocabularies() {
        for (alphabet, seed) in [
            (&b"ab"[..], 7u64),
            (b"abc", 0x243f6a8885a308d3),
            (b"abcd", 99),
        ] {
            let vocab = trained(alphabet, 120, seed);
            let table = Backtrack::build(&vocab).unwrap();
            let mut s = Scratch::default();
            let mut all = pieces(
                &[alphabet[0], alphabet[1], *alphabet.last().unwrap()],
                seed,
                400,
            );
            all.extend(runs(alphabet, 300));
            for piece in all {
                let mut got = Vec::new();
                let done = table
                    .encode_within(&vocab, &piece, &mut s, &mut got, None)
                    .unwrap();
                assert!(done && !table.is_off());
                assert_bpe(&vocab, &piece, &got);
            }
        }
    }

    /// Under the real budget the answer is BPE's or a hand-back that leaves `out` as it was.
    #[test]
    fn over_budget_hands_back_untouched() {
        let vocab = trained(b"ab", 120, 7);
        let table = Backtrack::build(&vocab).unwrap();
        let mut s = Scratch::default();
        let (mut finished, mut handed) = (0, 0);
        for piece in runs(b"ab", 2000).into_iter().step_by(7) {
            let mut got = vec![12345];
            if table.encode(&vocab, &piece, &mut s, &mut got).unwrap() {
                assert_eq!(got[1..], reference(&vocab, &piece)[..]);
                finished += 1;
            } else {
                assert_eq!(got, vec![12345]);
                handed += 1;
            }
        }
        assert!(
            finished > handed,
            "{finished} finished, {handed} handed back"
        );
    }

    /// A token BPE cannot make from its own bytes (`xyz`: neither `xy` nor `yz` is a token) never
    /// appears, even though the trie offers it at every `x`.
    #[test]
    fn unreachable_tokens_are_never_chosen() {
        let mut tokens: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (t, r) in [("zx", 256), ("xyz", 257), ("zxz", 258), ("yy", 259)] {
            tokens.push((t.as_bytes().to_vec(), r));
        }
        let vocab = Vocab::new(tokens, vec![]).unwrap();
        let table = Backtrack::build(&vocab).unwrap();
        let mut s = Scratch::default();
        for piece in pieces(b"xyz", 0x9e3779b97f4a7c15, 300) {
            let mut got = Vec::new();
            assert!(table
                .encode_within(&vocab, &piece, &mut s, &mut got, None)
                .unwrap());
            assert_eq!(got, reference(&vocab, &piece));
            assert!(!got.contains(&257));
        }
    }

    /// Merges that go down in rank (`zxy` ranks below `xy`) break the undo walk's premise: the
    /// table must notice and hand every such piece back, never answer wrongly.
    #[test]
    fn merges_going_down_in_rank_switch_it_off() {
        let vocab = falling_ranks_vocab();
        let table = Backtrack::build(&vocab).unwrap();
        let mut s = Scratch::default();
        let mut handed = 0;
        for piece in pieces(b"xyz", 0x9e3779b97f4a7c15, 300) {
            let mut got = Vec::new();
            if table
                .encode_within(&vocab, &piece, &mut s, &mut got, None)
                .unwrap()
            {
                assert_eq!(got, reference(&vocab, &piece));
            } else {
                handed += 1;
            }
        }
        assert!(table.is_off() && handed > 0);
    }

    #[test]
    fn a_byte_without_a_token_means_no_table() {
        let vocab = Vocab::new(vec![(b"a".to_vec(), 0), (b"ab".to_vec(), 1)], vec![]).unwrap();
        assert!(Backtrack::build(&vocab).is_none());
    }
}
