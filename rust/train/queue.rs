//! The merge loop: pair counts kept up to date incrementally, best pair from a max-heap with lazy
//! deletion. Each merge touches only the words that contain the merged pair.
//!
//! Why lazy deletion is exact: after a merge, every pair that does not contain the new token can
//! only lose occurrences (count down, first occurrence later). So a heap entry is never *worse*
//! than the pair's true state; popping re-checks the entry and re-pushes it with its true key if
//! it went stale. New pairs (all contain the new token) are pushed fresh.

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

struct Word {
    symbols: Vec<Rank>,
    count: u64,
}

type Pair = (Rank, Rank);

#[derive(PartialEq, Eq)]
struct Entry {
    count: u64,
    /// For `First`: (word index, byte offset in the word) of the first occurrence, inverted so that
    /// the max-heap prefers the earliest. Unused (zero) for `Lexicographic`.
    first: std::cmp::Reverse<(u32, u32)>,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
    pair: Pair,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.count
            .cmp(&other.count)
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
    /// Token bytes by id: 256 single bytes, then one per learned merge.
    pub tokens: Vec<Rc<[u8]>>,
    /// Learned merges in order, as ids of the two parts.
    pub merges: Vec<Pair>,
}

struct State {
    words: Vec<Word>,
    tokens: Vec<Rc<[u8]>>,
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
                offset += self.tokens[win[0] as usize].len() as u32;
            }
            if found.is_some() {
                break;
            }
            drop += 1;
        }
        places.drain(..drop);
        found
    }

    fn entry(&mut self, pair: Pair) -> Option<Entry> {
        let count = *self.counts.get(&pair)?;
        if count == 0 {
            return None;
        }
        let first = match self.tie {
            TieBreak::First => self.first_occurrence(pair)?,
            TieBreak::Lexicographic => (0, 0),
        };
        Some(Entry {
            count,
            first: std::cmp::Reverse(first),
            left: self.tokens[pair.0 as usize].clone(),
            right: self.tokens[pair.1 as usize].clone(),
            pair,
        })
    }
}

/// Learn up to `n_merges` merges from `words` (pre-token bytes and counts, in order of first
/// appearance). Stops early when the best pair occurs fewer than `min_frequency` times.
pub fn learn(
    words: Vec<(Box<[u8]>, u64)>,
    n_merges: usize,
    min_frequency: u64,
    tie: TieBreak,
    mut progress: impl FnMut(usize),
) -> MergeResult {
    let tokens: Vec<Rc<[u8]>> = (0..=255u8).map(|b| Rc::from(&[b][..])).collect();
    let by_bytes = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as Rank))
        .collect();
    let mut st = State {
        words: words
            .into_iter()
            .map(|(b, count)| Word {
                symbols: b.iter().map(|&x| x as Rank).collect(),
                count,
            })
            .collect(),
        tokens,
        by_bytes,
        counts: FxHashMap::default(),
        places: FxHashMap::default(),
        tie,
        delta: FxHashMap::default(),
    };
    for (w, word) in st.words.iter().enumerate() {
        for win in word.symbols.windows(2) {
            let pair = (win[0], win[1]);
            *st.counts.entry(pair).or_insert(0) += word.count;
            let places = st.places.entry(pair).or_default();
            if places.last() != Some(&(w as u32)) {
                places.push(w as u32);
            }
        }
    }
    let pairs: Vec<Pair> = st.counts.keys().copied().collect();
    let mut heap: BinaryHeap<Entry> = pairs.into_iter().filter_map(|p| st.entry(p)).collect();
    let mut merges = Vec::new();
    // Count new tokens, not merges: a merge may spell a token that already exists.
    while st.tokens.len() < 256 + n_merges {
        let Some(top) = heap.pop() else { break };
        let Some(now) = st.entry(top.pair) else {
            continue;
        };
        if now != top {
            heap.push(now);
            continue;
        }
        if top.count < min_frequency.max(1) {
            break;
        }
        let new_pairs = apply_merge(&mut st, top.pair);
        merges.push(top.pair);
        progress(st.tokens.len() - 256);
        for p in new_pairs {
            if let Some(e) = st.entry(p) {
                heap.push(e);
            }
        }
    }
    MergeResult {
        tokens: st.tokens,
        merges,
    }
}

/// Merge `pair` everywhere; returns the pairs whose count grew (all of them contain the new token).
fn apply_merge(st: &mut State, pair: Pair) -> Vec<Pair> {
    let merged: Rc<[u8]> = [&*st.tokens[pair.0 as usize], &*st.tokens[pair.1 as usize]]
        .concat()
        .into();
    // Two merges can spell the same bytes ("a"+"bc", "ab"+"c"): the token is then reused.
    let new_id = match st.by_bytes.get(&merged) {
        Some(&id) => id,
        None => {
            let id = st.tokens.len() as Rank;
            st.tokens.push(merged.clone());
            st.by_bytes.insert(merged, id);
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
            *c = (*c as i64 + d) as u64;
            if *c == 0 {
                st.counts.remove(&p);
            }
        }
    }
    st.counts.remove(&pair);
    st.delta = delta;
    // Deterministic push order (the heap's order does not depend on it, but keep runs identical).
    grown.sort_unstable();
    grown
}
