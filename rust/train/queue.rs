//! The merge loop shared by every trainer: pair counts kept up to date incrementally, best pair
//! from a max-heap with lazy deletion. Each merge touches only the words that contain the merged
//! pair. The variants differ only in the [`Handles`]: the pair score (count for BPE, likelihood
//! for WordPiece), how a merged token is spelled (concatenation, or dropping the `##` of the right
//! part), and which symbols never merge (`</w>` when end-of-word merges are off).
//!
//! Why lazy deletion is exact: a heap entry is re-checked when popped and re-pushed with its true
//! key if it went stale, so it suffices that every pair's best entry is never *worse* than its
//! true state. By count: after a merge, every pair that does not contain the new token can only
//! lose occurrences, and new pairs (all contain the new token) are pushed fresh. By likelihood,
//! count(ab) / (count(a) count(b)) also *rises* when a merge uses up some of a's or b's
//! occurrences, so every live pair containing a merged part is pushed again with its new score.

use crate::error::{Error, Result};
use crate::vocab::Rank;
use rustc_hash::FxHashMap;
use std::collections::BinaryHeap;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// Equal counts: the lexicographically greatest `(bytes(left), bytes(right))` wins.
    Lexicographic,
    /// Equal counts: the pair that occurs first (words in order of first appearance, then left to
    /// right in the word) wins — what `Counter.most_common` gives in the textbook trainer.
    First,
}

/// Pair score: how the merge loop ranks pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// count(ab): BPE.
    Count,
    /// count(ab) / (count(a) * count(b)): WordPiece.
    Likelihood,
}

/// The variant of the one merge loop.
pub struct Handles {
    pub score: Score,
    /// Continuation marker dropped from the right part when spelling a merge (`##` for
    /// WordPiece); empty for plain concatenation.
    pub strip_right: Vec<u8>,
    /// Symbols that take part in no merge (`</w>` when end-of-word merges are off).
    pub frozen: Vec<Rank>,
    /// Longest token a merge may spell, in characters (markers included, as HF counts); a
    /// pair that would spell a longer one is passed over.
    pub max_chars: Option<usize>,
}

impl Handles {
    pub fn bpe() -> Handles {
        Handles {
            score: Score::Count,
            strip_right: Vec::new(),
            frozen: Vec::new(),
            max_chars: None,
        }
    }
}

struct Word {
    symbols: Vec<Rank>,
    count: u64,
}

type Pair = (Rank, Rank);

/// a·b for a 64-bit a and a 128-bit b, as (high 128 bits, low 64 bits): exact score comparison.
fn wide_mul(a: u64, b: u128) -> (u128, u64) {
    let lo = (a as u128) * (b as u64 as u128);
    let hi = (a as u128) * (b >> 64);
    (hi + (lo >> 64), lo as u64)
}

#[derive(PartialEq, Eq)]
struct Entry {
    count: u64,
    /// count(a) * count(b) for the likelihood score; 1 when ranking by count.
    denominator: u128,
    /// For `First`: (word index, byte offset in the word) of the first occurrence, inverted so that
    /// the max-heap prefers the earliest. Unused (zero) for `Lexicographic`.
    first: std::cmp::Reverse<(u32, u32)>,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
    pair: Pair,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // count / denominator compared exactly by cross-multiplying; then the higher count.
        wide_mul(self.count, other.denominator)
            .cmp(&wide_mul(other.count, self.denominator))
            .then_with(|| self.count.cmp(&other.count))
            .then_with(|| self.first.cmp(&other.first))
            .then_with(|| self.left.cmp(&other.left))
            .then_with(|| self.right.cmp(&other.right))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

pub struct MergeResult {
    /// Token bytes by id: the alphabet, then one per learned token.
    pub tokens: Vec<Rc<[u8]>>,
    /// Learned merges in order, as ids of the two parts.
    pub merges: Vec<Pair>,
}

struct State {
    words: Vec<Word>,
    tokens: Vec<Rc<[u8]>>,
    /// Alphabet symbols each token spans: positions for the `First` tie-break.
    widths: Vec<u32>,
    /// Occurrences of each token in the current segmentation (for the likelihood score).
    symbol_counts: Vec<u64>,
    /// Pairs each token is part of (may hold dead or repeated pairs; filtered when used).
    /// Kept only for the likelihood score.
    pairs_of: Vec<Vec<Pair>>,
    frozen: Vec<bool>,
    score: Score,
    strip_right: Vec<u8>,
    by_bytes: FxHashMap<Rc<[u8]>, Rank>,
    counts: FxHashMap<Pair, u64>,
    /// Words that contain (or once contained) each pair, ascending; stale entries are skipped.
    places: FxHashMap<Pair, Vec<u32>>,
    tie: TieBreak,
    /// Pair count changes of one merge (kept to reuse its allocation).
    delta: FxHashMap<Pair, i64>,
}

impl State {
    fn first_occurrence(&mut self, pair: Pair) -> Option<(u32, u32)> {
        let places = self.places.get_mut(&pair)?;
        let mut drop = 0;
        let mut found = None;
        for &w in places.iter() {
            let word = &self.words[w as usize];
            let mut offset = 0u32;
            for win in word.symbols.windows(2) {
                if (win[0], win[1]) == pair {
                    found = Some((w, offset));
                    break;
                }
                offset += self.widths[win[0] as usize];
            }
            if found.is_some() {
                break;
            }
            drop += 1;
        }
        places.drain(..drop);
        found
    }

    fn entry(&mut self, pair: Pair, min_frequency: u64) -> Option<Entry> {
        let count = *self.counts.get(&pair)?;
        if count < min_frequency.max(1)
            || self.frozen[pair.0 as usize]
            || self.frozen[pair.1 as usize]
        {
            return None;
        }
        let denominator = match self.score {
            Score::Count => 1,
            Score::Likelihood => {
                self.symbol_counts[pair.0 as usize] as u128
                    * self.symbol_counts[pair.1 as usize] as u128
            }
        };
        let first = match self.tie {
            TieBreak::First => self.first_occurrence(pair)?,
            TieBreak::Lexicographic => (0, 0),
        };
        Some(Entry {
            count,
            denominator,
            first: std::cmp::Reverse(first),
            left: self.tokens[pair.0 as usize].clone(),
            right: self.tokens[pair.1 as usize].clone(),
            pair,
        })
    }
}

/// Learn up to `n_tokens` new tokens from `words` (symbol ids over `alphabet`, with counts, in
/// order of first appearance; `widths` gives how many positions each alphabet symbol spans).
/// Pairs that occur fewer than `min_frequency` times are never merged.
pub fn learn(
    alphabet: Vec<Rc<[u8]>>,
    words: Vec<(Vec<Rank>, u64)>,
    n_tokens: usize,
    min_frequency: u64,
    tie: TieBreak,
    handles: &Handles,
    mut progress: impl FnMut(usize) -> Result<()>,
) -> Result<MergeResult> {
    check_total(&words)?;
    let n_alphabet = alphabet.len();
    let by_bytes = alphabet
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as Rank))
        .collect();
    let mut frozen = vec![false; n_alphabet];
    for &f in &handles.frozen {
        frozen[f as usize] = true;
    }
    let mut st = State {
        words: words
            .into_iter()
            .map(|(symbols, count)| Word { symbols, count })
            .collect(),
        widths: vec![1; n_alphabet],
        symbol_counts: vec![0; n_alphabet],
        pairs_of: vec![Vec::new(); n_alphabet],
        tokens: alphabet,
        frozen,
        score: handles.score,
        strip_right: handles.strip_right.clone(),
        by_bytes,
        counts: FxHashMap::default(),
        places: FxHashMap::default(),
        tie,
        delta: FxHashMap::default(),
    };
    let likelihood = st.score == Score::Likelihood;
    for (w, word) in st.words.iter().enumerate() {
        for &s in &word.symbols {
            st.symbol_counts[s as usize] += word.count;
        }
        for win in word.symbols.windows(2) {
            let pair = (win[0], win[1]);
            let c = st.counts.entry(pair).or_insert(0);
            if *c == 0 && likelihood {
                st.pairs_of[pair.0 as usize].push(pair);
                st.pairs_of[pair.1 as usize].push(pair);
            }
            *c += word.count;
            let places = st.places.entry(pair).or_default();
            if places.last() != Some(&(w as u32)) {
                places.push(w as u32);
            }
        }
    }
    let mut pairs: Vec<Pair> = st.counts.keys().copied().collect();
    pairs.sort_unstable();
    let mut heap: BinaryHeap<Entry> = pairs
        .into_iter()
        .filter_map(|p| st.entry(p, min_frequency))
        .collect();
    let mut merges = Vec::new();
    // Count new tokens, not merges: a merge may spell a token that already exists.
    while st.tokens.len() < n_alphabet + n_tokens {
        let Some(top) = heap.pop() else { break };
        let Some(now) = st.entry(top.pair, min_frequency) else {
            continue;
        };
        if now != top {
            heap.push(now);
            continue;
        }
        // Passed over for good: it comes back only if a merge makes new occurrences, and then
        // it is checked again.
        if handles
            .max_chars
            .is_some_and(|max| merged_chars(&st, top.pair) > max)
        {
            continue;
        }
        let new_pairs = apply_merge(&mut st, top.pair);
        merges.push(top.pair);
        progress(st.tokens.len() - n_alphabet)?;
        for p in new_pairs {
            if let Some(e) = st.entry(p, min_frequency) {
                heap.push(e);
            }
        }
        if likelihood {
            // Fewer a's and b's: every pair still holding one scores higher now.
            for part in [top.pair.0, top.pair.1] {
                let mut list = std::mem::take(&mut st.pairs_of[part as usize]);
                list.retain(|p| st.counts.contains_key(p));
                list.sort_unstable();
                list.dedup();
                for &p in &list {
                    if let Some(e) = st.entry(p, min_frequency) {
                        heap.push(e);
                    }
                }
                st.pairs_of[part as usize] = list;
            }
            // Lists of symbols that are never merged only grow; drop their dead pairs now and then.
            if merges.len() % 1024 == 0 {
                let counts = &st.counts;
                for list in st.pairs_of.iter_mut() {
                    list.retain(|p| counts.contains_key(p));
                    list.shrink_to_fit();
                }
            }
            // Re-pushing leaves stale entries behind; keep the heap within a few times the
            // number of live pairs so memory stays bounded by the corpus's distinct pairs.
            if heap.len() > st.counts.len() + st.counts.len() / 2 + 4096 {
                let mut live: Vec<Pair> = st.counts.keys().copied().collect();
                live.sort_unstable();
                let entries: Vec<Entry> = live
                    .into_iter()
                    .filter_map(|p| st.entry(p, min_frequency))
                    .collect();
                heap = BinaryHeap::from(entries);
            }
        }
    }
    Ok(MergeResult {
        tokens: st.tokens,
        merges,
    })
}

/// Every count the merge loop keeps (of a symbol, of a pair, a change in one merge) is at most
/// the number of symbol occurrences in the corpus, Σ count × length. Checking once that this fits
/// an i64 (changes are signed) rules out overflow everywhere after, so a huge count is an error
/// here, never a wrapped number deciding a merge.
fn check_total(words: &[(Vec<Rank>, u64)]) -> Result<()> {
    let total = words.iter().try_fold(0u64, |acc, (symbols, count)| {
        count
            .checked_mul(symbols.len() as u64)
            .and_then(|n| acc.checked_add(n))
            .filter(|&t| t <= i64::MAX as u64)
    });
    match total {
        Some(_) => Ok(()),
        None => Err(Error::invalid(format!(
            "the counts add up to more than {} symbol occurrences (count × length summed over \
             the pre-tokens); scale them down",
            i64::MAX
        ))),
    }
}

/// Merge `pair` everywhere; returns the pairs whose count grew (all of them contain the new token).
/// Characters of the token merging `pair` would spell (tokens of the character-level trainers
/// are UTF-8: count the bytes that start a character).
fn merged_chars(st: &State, pair: Pair) -> usize {
    let right = &st.tokens[pair.1 as usize];
    let right = right.strip_prefix(&st.strip_right[..]).unwrap_or(right);
    let chars = |b: &[u8]| b.iter().filter(|&&x| x & 0xC0 != 0x80).count();
    chars(&st.tokens[pair.0 as usize]) + chars(right)
}

fn apply_merge(st: &mut State, pair: Pair) -> Vec<Pair> {
    let right = &st.tokens[pair.1 as usize];
    let right = right.strip_prefix(&st.strip_right[..]).unwrap_or(right);
    let merged: Rc<[u8]> = [&*st.tokens[pair.0 as usize], right].concat().into();
    // Two merges can spell the same bytes ("a"+"bc", "ab"+"c"): the token is then reused.
    let new_id = match st.by_bytes.get(&merged) {
        Some(&id) => id,
        None => {
            let id = st.tokens.len() as Rank;
            st.tokens.push(merged.clone());
            st.by_bytes.insert(merged, id);
            st.widths
                .push(st.widths[pair.0 as usize] + st.widths[pair.1 as usize]);
            st.symbol_counts.push(0);
            st.pairs_of.push(Vec::new());
            st.frozen.push(false);
            id
        }
    };
    let places = st.places.remove(&pair).unwrap_or_default();
    let mut delta = std::mem::take(&mut st.delta);
    delta.clear();
    let (mut sites, mut out, mut new_pos) = (Vec::new(), Vec::new(), Vec::new());
    for &w in &places {
        let word = &mut st.words[w as usize];
        let syms = &word.symbols;
        let n = syms.len();
        // Where the pair occurs, left to right without overlap ("aaa" → one site, at 0).
        sites.clear();
        let mut i = 0;
        while i + 1 < n {
            if (syms[i], syms[i + 1]) == pair {
                sites.push(i);
                i += 2;
            } else {
                i += 1;
            }
        }
        if sites.is_empty() {
            continue; // a stale place
        }
        let count = word.count as i64;
        let used = sites.len() as u64 * word.count;
        st.symbol_counts[pair.0 as usize] -= used;
        st.symbol_counts[pair.1 as usize] -= used;
        st.symbol_counts[new_id as usize] += used;
        // Only pairs that touch a merged position change: the old ones around each site go…
        let mut last = usize::MAX;
        for &s in &sites {
            for k in s.saturating_sub(1)..=s + 1 {
                if k + 1 < n && (last == usize::MAX || k > last) {
                    *delta.entry((syms[k], syms[k + 1])).or_insert(0) -= count;
                    last = k;
                }
            }
        }
        out.clear();
        new_pos.clear();
        let (mut i, mut next_site) = (0, 0);
        while i < n {
            if next_site < sites.len() && sites[next_site] == i {
                new_pos.push(out.len());
                out.push(new_id);
                i += 2;
                next_site += 1;
            } else {
                out.push(syms[i]);
                i += 1;
            }
        }
        std::mem::swap(&mut word.symbols, &mut out);
        // …and the new ones around each new token come.
        let syms = &word.symbols;
        let m = syms.len();
        let mut last = usize::MAX;
        for &j in &new_pos {
            for k in j.saturating_sub(1)..=j {
                if k + 1 < m && (last == usize::MAX || k > last) {
                    last = k;
                    let p = (syms[k], syms[k + 1]);
                    *delta.entry(p).or_insert(0) += count;
                    let places = st.places.entry(p).or_default();
                    // Words are visited in ascending order, so this is almost always a push; only
                    // a reused token can meet a list that already holds later words.
                    match places.last() {
                        Some(&l) if l == w => {}
                        Some(&l) if l > w => {
                            if let Err(at) = places.binary_search(&w) {
                                places.insert(at, w);
                            }
                        }
                        _ => places.push(w),
                    }
                }
            }
        }
    }
    let mut grown = Vec::new();
    for (&p, &d) in &delta {
        if d > 0 {
            grown.push(p);
        }
        if d != 0 {
            let c = st.counts.entry(p).or_insert(0);
            if *c == 0 && st.score == Score::Likelihood {
                st.pairs_of[p.0 as usize].push(p);
                st.pairs_of[p.1 as usize].push(p);
            }
            *c = (*c as i64 + d) as u64;
            if *c == 0 {
                // Gone everywhere: drop its word list too, or dead pairs pile up over a run.
                st.counts.remove(&p);
                st.places.remove(&p);
            }
        }
    }
    st.counts.remove(&pair);
    st.delta = delta;
    // Deterministic push order (the heap's order does not depend on it, but keep runs identical).
    grown.sort_unstable();
    grown
}
