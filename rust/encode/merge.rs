//! Rank merging of one piece: repeatedly merge the adjacent pair whose merged token has the lowest
//! rank, leftmost first among equals — tiktoken's rule, so the ids are the same.
//!
//! Short pieces (almost all of them) use a flat scan over a few ids: cache-friendly, no allocation
//! beyond reused scratch. Long pieces (a megabyte of one letter, base64 blobs, long CJK runs) use a
//! linked list and a min-heap with lazy deletion: O(n log n), no recursion, so no stack to overflow.

use super::Scratch;
use crate::error::Result;
use crate::vocab::{Rank, Vocab};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Above this many bytes a piece is merged with the heap.
const SCAN_LIMIT: usize = 256;

pub fn merge_piece(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<Rank>,
) -> Result<()> {
    if piece.len() <= SCAN_LIMIT {
        merge_scan(vocab, piece, scratch, out)
    } else {
        merge_heap(vocab, piece, &mut scratch.heap, out)
    }
}

fn merge_scan(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<Rank>,
) -> Result<()> {
    let ids = &mut scratch.ids;
    let ranks = &mut scratch.ranks;
    ids.clear();
    ranks.clear();
    ids.extend(piece.iter().map(|&b| vocab.byte_id(b)));
    ranks.extend(piece.windows(2).map(|w| vocab.merge_bytes(w[0], w[1])));
    loop {
        let mut best = Rank::MAX;
        let mut at = 0;
        for (i, &r) in ranks.iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == Rank::MAX {
            break;
        }
        ids[at] = best;
        ids.remove(at + 1);
        ranks.remove(at);
        if at > 0 {
            ranks[at - 1] = vocab.merge(ids[at - 1], ids[at]);
        }
        if at < ranks.len() {
            ranks[at] = vocab.merge(ids[at], ids[at + 1]);
        }
    }
    for &id in ids.iter() {
        out.push(Vocab::check_output(id)?);
    }
    Ok(())
}

const NONE: u32 = u32::MAX;

/// Buffers of the heap merge, kept between pieces.
#[derive(Default)]
pub struct HeapScratch {
    ids: Vec<Rank>,
    next: Vec<u32>,
    prev: Vec<u32>,
    alive: Vec<bool>,
    heap: BinaryHeap<Reverse<(Rank, u32)>>,
}

fn merge_heap(vocab: &Vocab, piece: &[u8], s: &mut HeapScratch, out: &mut Vec<Rank>) -> Result<()> {
    let n = piece.len();
    let HeapScratch {
        ids,
        next,
        prev,
        alive,
        heap,
    } = s;
    ids.clear();
    ids.extend(piece.iter().map(|&b| vocab.byte_id(b)));
    next.clear();
    next.extend(1..=n as u32);
    next[n - 1] = NONE;
    prev.clear();
    prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
    alive.clear();
    alive.resize(n, true);
    // (rank, position of the left node): min-heap order is exactly "lowest rank, then leftmost".
    heap.clear();
    heap.extend((0..n - 1).filter_map(|i| {
        let r = vocab.merge_bytes(piece[i], piece[i + 1]);
        (r != Rank::MAX).then_some(Reverse((r, i as u32)))
    }));
    while let Some(Reverse((rank, i))) = heap.pop() {
        let i = i as usize;
        let j = next[i];
        // Stale entry: the left node was merged away, or its pair changed since the push.
        if !alive[i] || j == NONE || vocab.merge(ids[i], ids[j as usize]) != rank {
            continue;
        }
        let j = j as usize;
        ids[i] = rank;
        alive[j] = false;
        next[i] = next[j];
        if next[j] != NONE {
            prev[next[j] as usize] = i as u32;
        }
        let p = prev[i];
        if p != NONE {
            let r = vocab.merge(ids[p as usize], ids[i]);
            if r != Rank::MAX {
                heap.push(Reverse((r, p)));
            }
        }
        if next[i] != NONE {
            let r = vocab.merge(ids[i], ids[next[i] as usize]);
            if r != Rank::MAX {
                heap.push(Reverse((r, i as u32)));
            }
        }
    }
    let mut i = 0u32;
    while i != NONE {
        out.push(Vocab::check_output(ids[i as usize])?);
        i = next[i as usize];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook quadratic algorithm on byte slices, as the oracle.
    fn reference(vocab: &Vocab, piece: &[u8]) -> Vec<Rank> {
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

    #[test]
    fn scan_and_heap_agree_with_reference() {
        let vocab = toy_vocab();
        let mut scratch = Scratch::default();
        let mut state = 0x243f6a8885a308d3u64;
        for len in 1..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let piece: Vec<u8> = (0..len)
                .map(|k| b"abc"[((state >> (k % 60)) % 3) as usize])
                .collect();
            let expected = reference(&vocab, &piece);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            merge_scan(&vocab, &piece, &mut scratch, &mut a).unwrap();
            merge_heap(&vocab, &piece, &mut HeapScratch::default(), &mut b).unwrap();
            assert_eq!(a, expected, "scan on {piece:?}");
            assert_eq!(b, expected, "heap on {piece:?}");
        }
    }

    #[test]
    fn missing_byte_is_an_error_not_a_panic() {
        let vocab = Vocab::new(vec![(b"a".to_vec(), 0), (b"ab".to_vec(), 1)], vec![]).unwrap();
        let mut out = Vec::new();
        merge_scan(&vocab, b"ab", &mut Scratch::default(), &mut out).unwrap();
        assert_eq!(out, vec![1]);
        assert!(merge_scan(&vocab, b"abb", &mut Scratch::default(), &mut Vec::new()).is_err());
        let mut hs = HeapScratch::default();
        assert!(merge_heap(&vocab, &[b'b'; 200], &mut hs, &mut Vec::new()).is_err());
    }
}
