//! Rank merging of one piece: repeatedly merge the adjacent pair whose merged token has the lowest
//! rank, leftmost first among equals — tiktoken's rule, so the ids are the same.
//!
//! Short pieces (almost all of them) use a flat scan over a few ids: cache-friendly, no allocation
//! beyond reused scratch. Long pieces (a megabyte of one letter, base64 blobs, long CJK runs) use a
//! linked list and a min-heap with lazy deletion: O(n log n), no recursion, so no stack to overflow.

use super::Scratch;
use crate::error::Result;
use crate::vocab::{Rank, Vocab};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Above this many bytes a piece is merged with the buckets: the flat scan is quadratic, and
/// Chinese runs of 20–80 chars are common. Measured on 700 KB of Chinese/Russian/German with a
/// cold cache, o200k: 21 MB/s at 256, 31 at 64, 28 at 24–48 (the buckets' setup then dominates).
const SCAN_LIMIT: usize = 64;

pub fn merge_piece(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<Rank>,
) -> Result<()> {
    if piece.len() <= SCAN_LIMIT {
        merge_scan(vocab, piece, &mut scratch.scan, out)
    } else {
        merge_heap(vocab, piece, &mut scratch.heap, out)
    }
}

/// Room of the flat scan's buffers: a piece of `SCAN_LIMIT` bytes plus the `SHIFT` slots a
/// removal reads past the live ones.
const SCAN_ROOM: usize = SCAN_LIMIT + SHIFT;
/// Slots one step of [`remove_at`] moves.
const SHIFT: usize = 8;

/// The flat scan's buffers, kept between pieces (filled once, never shrunk).
pub struct ScanScratch {
    ids: Box<[Rank; SCAN_ROOM]>,
    ranks: Box<[Rank; SCAN_ROOM]>,
}

impl Default for ScanScratch {
    fn default() -> Self {
        ScanScratch {
            ids: Box::new([0; SCAN_ROOM]),
            ranks: Box::new([Rank::MAX; SCAN_ROOM]),
        }
    }
}

/// Drop slot `at` of the first `len` slots of `a`, moving the rest down one. In steps of
/// `SHIFT` slots loaded whole, then stored (so the overlap is harmless): `Vec::remove` calls
/// `memmove`, whose call and size dispatch cost more than the few slots a short piece moves
/// (it was 7% of encoding time on Chinese/Russian/German). Reads up to `SHIFT` slots past
/// `len`, which `SCAN_ROOM` leaves room for.
#[inline(always)]
fn remove_at(a: &mut [Rank; SCAN_ROOM], at: usize, len: usize) {
    debug_assert!(at < len && len <= SCAN_LIMIT);
    let mut i = at;
    while i + 1 < len {
        let step: [Rank; SHIFT] = a[i + 1..i + 1 + SHIFT].try_into().expect("SHIFT slots");
        a[i..i + SHIFT].copy_from_slice(&step);
        i += SHIFT;
    }
}

/// Rank merging by a scan for the lowest pair rank per merge: quadratic, but over at most
/// `SCAN_LIMIT` bytes, in L1, with no allocation. `ranks[i]` is the rank of the merge of
/// `ids[i]` and `ids[i + 1]` (`Rank::MAX`: none).
fn merge_scan(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut ScanScratch,
    out: &mut Vec<Rank>,
) -> Result<()> {
    // The buffers hold SCAN_LIMIT slots (and the zips below would silently cut a longer piece).
    assert!(
        piece.len() <= SCAN_LIMIT,
        "merge_scan takes pieces of at most SCAN_LIMIT bytes"
    );
    let ScanScratch { ids, ranks } = scratch;
    let mut len = piece.len();
    for (id, &b) in ids.iter_mut().zip(piece) {
        *id = vocab.byte_id(b);
    }
    for (r, w) in ranks.iter_mut().zip(piece.windows(2)) {
        *r = vocab.merge_bytes(w[0], w[1]);
    }
    while len > 1 {
        let mut best = Rank::MAX;
        let mut at = 0;
        for (i, &r) in ranks[..len - 1].iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == Rank::MAX {
            break;
        }
        ids[at] = best;
        remove_at(ids, at + 1, len);
        remove_at(ranks, at, len - 1);
        len -= 1;
        if at > 0 {
            ranks[at - 1] = vocab.merge(ids[at - 1], ids[at]);
        }
        if at + 1 < len {
            ranks[at] = vocab.merge(ids[at], ids[at + 1]);
        }
    }
    for &id in &ids[..len] {
        out.push(Vocab::check_output(id)?);
    }
    Ok(())
}

const NONE: u32 = u32::MAX;

/// The last pair lookups of long-piece merging, direct-mapped: a long piece is mostly a few
/// pairs over and over (a run of one char, a repeated pattern, base64's alphabet), which this
/// answers from L1 instead of the vocabulary's pair map, whose lookup is a hash, a probe and a
/// compare. Random text only pays a compare per lookup. Emptied for each piece. An empty slot's key is `u64::MAX`, the
/// pair (`Rank::MAX`, `Rank::MAX`) of two non-ids.
pub struct PairMemo(Box<[(u64, Rank); MEMO_SLOTS]>);

const MEMO_SLOTS: usize = 256;

impl Default for PairMemo {
    fn default() -> Self {
        PairMemo(Box::new([(u64::MAX, 0); MEMO_SLOTS]))
    }
}

impl PairMemo {
    /// Forget every pair: the scratch is shared by all encoders of a thread, so the memo is
    /// emptied for each piece rather than trusted across vocabularies.
    fn clear(&mut self) {
        self.0.fill((u64::MAX, 0));
    }

    #[inline(always)]
    fn merge(&mut self, vocab: &Vocab, a: Rank, b: Rank) -> Rank {
        let key = (a as u64) << 32 | b as u64;
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
        let e = &mut self.0[slot];
        if e.0 != key {
            *e = (key, vocab.merge(a, b));
        }
        e.1
    }
}

/// Buffers of the long-piece merge, kept between pieces.
#[derive(Default)]
pub struct HeapScratch {
    memo: PairMemo,
    ids: Vec<Rank>,
    next: Vec<u32>,
    prev: Vec<u32>,
    alive: Vec<bool>,
    /// Positions whose pair (may have) this rank; stale entries are skipped when met.
    buckets: FxHashMap<Rank, Vec<u32>>,
    /// The two buckets pushed to last, most recent first: a merge's new pairs mostly go to the
    /// same two ranks again and again, so this skips most map lookups.
    last: [Option<(Rank, Vec<u32>)>; 2],
    /// Ranks with a bucket, lowest first (a rank may be listed more than once).
    ranks: BinaryHeap<Reverse<Rank>>,
    /// Positions of the rank being processed that its own merges created.
    local: BinaryHeap<Reverse<u32>>,
    /// Emptied buckets, reused so that a long piece does not allocate per rank.
    spare: Vec<Vec<u32>>,
}

impl HeapScratch {
    #[inline]
    fn push(&mut self, rank: Rank, pos: u32) {
        match &mut self.last {
            [Some((r, b)), _] if *r == rank => return b.push(pos),
            [_, Some((r, _))] if *r == rank => self.last.swap(0, 1),
            _ => {
                // Park the older one in the map and bring this rank's bucket out.
                if let Some((r, b)) = self.last[1].take() {
                    self.buckets.insert(r, b);
                }
                let b = match self.buckets.remove(&rank) {
                    Some(b) => b,
                    None => {
                        self.ranks.push(Reverse(rank));
                        self.spare.pop().unwrap_or_default()
                    }
                };
                self.last.swap(0, 1);
                self.last[0] = Some((rank, b));
            }
        }
        if let Some((_, b)) = &mut self.last[0] {
            b.push(pos);
        }
    }

    /// Take the bucket of `rank` out for walking (None if it has none).
    fn take(&mut self, rank: Rank) -> Option<Vec<u32>> {
        for k in 0..2 {
            if self.last[k].as_ref().is_some_and(|(r, _)| *r == rank) {
                return self.last[k].take().map(|(_, b)| b);
            }
        }
        self.buckets.remove(&rank)
    }
}

/// Long pieces: the same merges, in the same order, as repeatedly taking the lowest
/// `(rank, position)` pair — but grouped by rank instead of in one heap of every position.
///
/// Idea: pairs wait in one bucket per rank; the lowest rank's bucket is sorted once and walked
/// left to right. A merge creates at most two pairs: one of the same rank (it lies left of or at
/// the walk, so a small side heap gives it its turn first), of a higher rank (into its bucket,
/// for later), or of a lower rank (a vocabulary whose tokens do not rank above their parts):
/// then the rest of the walk goes back into its bucket and the lower rank is taken first. So
/// every step still takes the lowest `(rank, position)`, exactly as the heap did.
///
/// Cost: a sort per bucket and O(1) per merge, instead of a heap of n entries whose every
/// operation misses the cache: a megabyte of one repeated letter merges ~10× faster. Downside:
/// stale entries are only dropped when their bucket is walked.
fn merge_heap(vocab: &Vocab, piece: &[u8], s: &mut HeapScratch, out: &mut Vec<Rank>) -> Result<()> {
    let n = piece.len();
    s.memo.clear();
    s.ids.clear();
    s.ids.extend(piece.iter().map(|&b| vocab.byte_id(b)));
    s.next.clear();
    s.next.extend(1..=n as u32);
    s.next[n - 1] = NONE;
    s.prev.clear();
    s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
    s.alive.clear();
    s.alive.resize(n, true);
    s.ranks.clear();
    for (_, mut b) in s.last.iter_mut().filter_map(Option::take) {
        b.clear();
        s.spare.push(b);
    }
    for (_, mut b) in s.buckets.drain() {
        b.clear();
        s.spare.push(b);
    }
    for i in 0..n - 1 {
        let r = vocab.merge_bytes(piece[i], piece[i + 1]);
        if r != Rank::MAX {
            s.push(r, i as u32);
        }
    }
    while let Some(Reverse(rank)) = s.ranks.pop() {
        let Some(mut walk) = s.take(rank) else {
            continue; // listed twice; already walked
        };
        walk.sort_unstable();
        walk.dedup();
        s.local.clear();
        let mut at = 0;
        let mut lower = false;
        loop {
            // The leftmost waiting position of this rank.
            let from_local = match (walk.get(at), s.local.peek()) {
                (Some(&w), Some(&Reverse(l))) => l < w,
                (None, Some(_)) => true,
                (_, None) => false,
            };
            let i = if from_local {
                s.local.pop().expect("peeked").0 as usize
            } else if at < walk.len() {
                at += 1;
                walk[at - 1] as usize
            } else {
                break;
            };
            let j = s.next[i];
            // Stale: the left node was merged away, or its pair changed since it was listed.
            if !s.alive[i] || j == NONE || s.memo.merge(vocab, s.ids[i], s.ids[j as usize]) != rank
            {
                continue;
            }
            let j = j as usize;
            s.ids[i] = rank;
            s.alive[j] = false;
            s.next[i] = s.next[j];
            if s.next[j] != NONE {
                s.prev[s.next[j] as usize] = i as u32;
            }
            let p = s.prev[i];
            let left = (p != NONE).then(|| (s.memo.merge(vocab, s.ids[p as usize], rank), p));
            let right = (s.next[i] != NONE).then(|| {
                (
                    s.memo.merge(vocab, rank, s.ids[s.next[i] as usize]),
                    i as u32,
                )
            });
            for (r, pos) in [left, right].into_iter().flatten() {
                if r == Rank::MAX {
                    continue;
                }
                if r == rank {
                    s.local.push(Reverse(pos));
                } else {
                    lower |= r < rank;
                    s.push(r, pos);
                }
            }
            if lower {
                // A lower rank appeared: it goes first; this rank's rest waits in its bucket.
                let rest: Vec<u32> = walk[at..]
                    .iter()
                    .copied()
                    .chain(s.local.drain().map(|Reverse(p)| p))
                    .collect();
                for pos in rest {
                    s.push(rank, pos);
                }
                break;
            }
        }
        walk.clear();
        s.spare.push(walk);
    }
    let mut i = 0u32;
    while i != NONE {
        out.push(Vocab::check_output(s.ids[i as usize])?);
        i = s.next[i as usize];
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The textbook quadratic algorithm on byte slices, as the oracle.
    pub(in crate::encode) fn reference(vocab: &Vocab, piece: &[u8]) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
                if let Some(r) = vocab.rank(&joined) {
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| vocab.rank(p).unwrap()).collect()
    }

    /// `got` is the textbook BPE of `piece`.
    pub(in crate::encode) fn assert_bpe(vocab: &Vocab, piece: &[u8], got: &[Rank]) {
        let want = reference(vocab, piece);
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(piece));
    }

    fn toy_vocab() -> Vocab {
        let mut tokens: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (k, t) in [
            "ab", "bc", "abc", "aa", "aaaa", "ca", "bca", "cab", "aab", "bb",
        ]
        .iter()
        .enumerate()
        {
            tokens.push((t.as_bytes().to_vec(), 256 + k as Rank));
        }
        Vocab::new(tokens, vec![]).unwrap()
    }

    /// Pseudo-random pieces over a three-letter alphabet, of every length in `1..max_len`.
    pub(in crate::encode) fn pieces(
        alphabet: &[u8; 3],
        mut state: u64,
        max_len: usize,
    ) -> Vec<Vec<u8>> {
        (1..max_len)
            .map(|len| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (0..len)
                    .map(|k| alphabet[((state >> (k % 60)) % 3) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn scan_and_heap_agree_with_reference() {
        let vocab = toy_vocab();
        // One scratch throughout: what a longer piece left in the buffers must not leak.
        let mut scratch = ScanScratch::default();
        for piece in pieces(b"abc", 0x243f6a8885a308d3, 300) {
            let expected = reference(&vocab, &piece);
            if piece.len() <= SCAN_LIMIT {
                let mut a = Vec::new();
                merge_scan(&vocab, &piece, &mut scratch, &mut a).unwrap();
                assert_eq!(a, expected, "scan on {piece:?}");
            }
            let mut b = Vec::new();
            merge_heap(&vocab, &piece, &mut HeapScratch::default(), &mut b).unwrap();
            assert_eq!(b, expected, "heap on {piece:?}");
        }
    }

    /// Tokens that rank below one of their parts (`zxy` below `xy`), so a merge can create a pair
    /// of lower rank than its own.
    pub(in crate::encode) fn falling_ranks_vocab() -> Vocab {
        let mut tokens: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (t, r) in [
            ("xy", 270),
            ("zxy", 260),
            ("yz", 265),
            ("zxyz", 262),
            ("xyy", 258),
        ] {
            tokens.push((t.as_bytes().to_vec(), r));
        }
        Vocab::new(tokens, vec![]).unwrap()
    }

    /// The long-piece merge must take a lower-ranked pair a merge created first.
    #[test]
    fn lower_ranks_created_by_a_merge_go_first() {
        let vocab = falling_ranks_vocab();
        let mut scan = ScanScratch::default();
        for piece in pieces(b"xyz", 0x9e3779b97f4a7c15, 400) {
            let mut got = Vec::new();
            merge_heap(&vocab, &piece, &mut HeapScratch::default(), &mut got).unwrap();
            assert_bpe(&vocab, &piece, &got);
            if piece.len() <= SCAN_LIMIT {
                got.clear();
                merge_scan(&vocab, &piece, &mut scan, &mut got).unwrap();
                assert_bpe(&vocab, &piece, &got);
            }
        }
    }

    #[test]
    fn missing_byte_is_an_error_not_a_panic() {
        let vocab = Vocab::new(vec![(b"a".to_vec(), 0), (b"ab".to_vec(), 1)], vec![]).unwrap();
        let mut out = Vec::new();
        merge_scan(&vocab, b"ab", &mut ScanScratch::default(), &mut out).unwrap();
        assert_eq!(out, vec![1]);
        let mut scan = ScanScratch::default();
        assert!(merge_scan(&vocab, b"abb", &mut scan, &mut Vec::new()).is_err());
        let mut hs = HeapScratch::default();
        assert!(merge_heap(&vocab, &[b'b'; 200], &mut hs, &mut Vec::new()).is_err());
    }
}
