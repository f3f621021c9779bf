//! The vocabulary: the single source of truth for ids and their bytes.
//!
//! Besides the two directions (bytes → id, id → bytes) it derives the *pair table*: for every token
//! `t` that is the concatenation of two tokens `a` and `b` (or single bytes), `(a, b) → t`. BPE with
//! tiktoken-style ranks merges the adjacent pair whose concatenation has the lowest rank, so looking
//! up `(id_a, id_b)` in a `u64`-keyed map gives exactly the same answer as hashing the concatenated
//! bytes, at a fraction of the cost.

use crate::error::{Error, Result};
use pair_table::{pair_key, PairTable};
use rustc_hash::FxHashMap;

mod pair_table;

pub type Rank = u32;

/// Ids above this are refused: the id → bytes table is dense.
pub const MAX_ID: Rank = (1 << 26) - 1;

/// Stand-in ids for single bytes that the vocabulary lacks. They may be merged away; one that
/// survives to the output is an error, since that byte has no token.
const PSEUDO_BASE: Rank = u32::MAX - 256;

const ABSENT: u32 = u32::MAX;

/// Longest token (in bytes) kept in the packed-key map.
const SHORT: usize = 15;

/// Bytes in the low 15 bytes, length in the top byte: distinct for distinct byte strings
/// (`b.len() <= 15`). Built from two overlapping loads instead of a variable-length copy, which
/// compiles to a `memcpy` call and cost more than the hash lookup it feeds.
#[inline(always)]
fn pack(b: &[u8]) -> u128 {
    let n = b.len();
    debug_assert!(n <= SHORT);
    let load8 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let load4 = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64;
    let (lo, hi) = if n >= 8 {
        // The last 8 bytes, shifted so that only bytes 8..n remain.
        let hi = if n > 8 {
            load8(n - 8) >> (8 * (16 - n))
        } else {
            0
        };
        (load8(0), hi)
    } else if n >= 4 {
        (load4(0) | (load4(n - 4) << (8 * (n - 4))), 0)
    } else if n > 0 {
        let (a, m, z) = (b[0] as u64, b[n / 2] as u64, b[n - 1] as u64);
        (a | (m << (8 * (n / 2))) | (z << (8 * (n - 1))), 0)
    } else {
        (0, 0)
    };
    lo as u128 | (hi as u128) << 64 | (n as u128) << 120
}

/// [`pack`] for keys of 1..=15 bytes; None otherwise.
#[inline(always)]
pub(crate) fn pack_short(b: &[u8]) -> Option<u128> {
    (!b.is_empty() && b.len() <= SHORT).then(|| pack(b))
}

pub struct Vocab {
    encoder: FxHashMap<Box<[u8]>, Rank>,
    /// The tokens of at most `SHORT` bytes again, keyed by their bytes packed into a `u128`: most
    /// pieces are this short, and an integer key avoids a `memcmp` call per lookup.
    short: FxHashMap<u128, Rank>,
    special_encoder: FxHashMap<String, Rank>,
    /// Dense by id: (start, len) into `bytes`; `len == ABSENT` where no token has the id.
    spans: Vec<(u32, u32)>,
    bytes: Vec<u8>,
    is_special: Vec<bool>,
    byte_ids: [Rank; 256],
    pairs: PairTable,
    /// The pair table restricted to two single bytes, dense (256 KB, stays in L2): every piece
    /// starts as bytes, so most lookups of a merge hit this instead of the big hash map.
    byte_pairs: Box<[Rank]>,
    /// Set when only listed merges apply (HF files): the list, in order.
    listed_merges: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    max_token_value: Rank,
}

impl Vocab {
    /// Build from mergeable `(bytes, rank)` pairs and special `(text, id)` pairs.
    pub fn new(mergeable: Vec<(Vec<u8>, Rank)>, specials: Vec<(String, Rank)>) -> Result<Self> {
        let mut encoder: FxHashMap<Box<[u8]>, Rank> = FxHashMap::default();
        encoder.reserve(mergeable.len());
        let mut max_id = 0;
        for (bytes, rank) in mergeable {
            if rank > MAX_ID {
                return Err(Error::invalid(format!(
                    "token rank {rank} is too large (at most {MAX_ID})"
                )));
            }
            if bytes.is_empty() {
                return Err(Error::invalid(format!(
                    "token {rank} has no bytes; every token needs at least one"
                )));
            }
            max_id = max_id.max(rank);
            if let Some(old) = encoder.insert(bytes.clone().into_boxed_slice(), rank) {
                return Err(Error::invalid(format!(
                    "token {} appears twice, with ranks {old} and {rank}",
                    show_bytes(&bytes)
                )));
            }
        }
        let mut special_encoder = FxHashMap::default();
        for (text, id) in &specials {
            if *id > MAX_ID {
                return Err(Error::invalid(format!(
                    "special token id {id} is too large (at most {MAX_ID})"
                )));
            }
            if text.is_empty() {
                return Err(Error::invalid("a special token cannot be the empty string"));
            }
            max_id = max_id.max(*id);
            if special_encoder.insert(text.clone(), *id).is_some() {
                return Err(Error::invalid(format!(
                    "special token {text:?} is given twice"
                )));
            }
        }
        let mut spans = vec![(0u32, ABSENT); max_id as usize + 1];
        let mut is_special = vec![false; max_id as usize + 1];
        let mut bytes = Vec::new();
        let mut place = |id: Rank, b: &[u8], special: bool| -> Result<()> {
            let slot = &mut spans[id as usize];
            if slot.1 != ABSENT {
                // Two specials may share an id (tiktoken's o200k_harmony names 200018 twice);
                // both encode to it, and it decodes to the one given first.
                if special && is_special[id as usize] {
                    return Ok(());
                }
                return Err(Error::invalid(format!("id {id} is given to two tokens")));
            }
            *slot = (bytes.len() as u32, b.len() as u32);
            bytes.extend_from_slice(b);
            is_special[id as usize] = special;
            Ok(())
        };
        // Sorted so that the table's layout (and any error) does not depend on hash order.
        let mut by_id: Vec<(&[u8], Rank)> = encoder.iter().map(|(b, &r)| (&**b, r)).collect();
        by_id.sort_unstable_by_key(|&(_, r)| r);
        for (b, r) in by_id {
            place(r, b, false)?;
        }
        let mut special_by_id = specials.clone();
        special_by_id.sort_by_key(|(_, id)| *id);
        for (text, id) in &special_by_id {
            place(*id, text.as_bytes(), true)?;
        }
        let mut byte_ids = [0; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = encoder
                .get(&[b as u8][..])
                .copied()
                .unwrap_or(PSEUDO_BASE + b as Rank);
        }
        let short = encoder
            .iter()
            .filter(|(b, _)| b.len() <= SHORT)
            .map(|(b, &r)| (pack(b), r))
            .collect();
        let mut vocab = Vocab {
            encoder,
            short,
            special_encoder,
            spans,
            bytes,
            is_special,
            byte_ids,
            pairs: PairTable::new(FxHashMap::default()),
            byte_pairs: Box::default(),
            listed_merges: None,
            max_token_value: max_id,
        };
        vocab.pairs = PairTable::new(vocab.derive_pairs());
        vocab.byte_pairs = vocab.derive_byte_pairs();
        Ok(vocab)
    }

    /// Like [`Vocab::new`], but only the listed merges may be applied (HF's BPE semantics); their
    /// priority is the merged token's id, so ids must follow merge order (the caller checks).
    pub fn with_merges(
        mergeable: Vec<(Vec<u8>, Rank)>,
        specials: Vec<(String, Rank)>,
        merges: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Self> {
        let mut vocab = Self::new(mergeable, specials)?;
        let mut pairs = FxHashMap::default();
        for (a, b) in merges {
            let merged = vocab.rank(&[a.as_slice(), b.as_slice()].concat());
            let (Some(x), Some(y), Some(m)) = (vocab.piece_id(a), vocab.piece_id(b), merged) else {
                return Err(Error::invalid(format!(
                    "merge ({}, {}) joins bytes that are not tokens",
                    show_bytes(a),
                    show_bytes(b)
                )));
            };
            pairs.entry(pair_key(x, y)).or_insert(m);
        }
        vocab.pairs = PairTable::new(pairs);
        vocab.byte_pairs = vocab.derive_byte_pairs();
        vocab.listed_merges = Some(merges.to_vec());
        Ok(vocab)
    }

    fn derive_byte_pairs(&self) -> Box<[Rank]> {
        (0..=0xFFFFu32)
            .map(|k| {
                self.merge(
                    self.byte_ids[(k >> 8) as usize],
                    self.byte_ids[(k & 0xFF) as usize],
                )
            })
            .collect()
    }

    /// `merge(byte_id(a), byte_id(b))`, from the dense table.
    #[inline(always)]
    pub fn merge_bytes(&self, a: u8, b: u8) -> Rank {
        self.byte_pairs[((a as usize) << 8) | b as usize]
    }

    /// Every split of every token into two tokens (or single bytes): `(a, b) → t`.
    ///
    /// A token of up to [`DIRECT`] bytes looks each prefix and suffix up in the map (at most
    /// `DIRECT` lookups of at most `DIRECT` bytes). A longer one would cost time quadratic in its
    /// length that way (a 10 MB token: minutes), so its prefixes and suffixes longer than `DIRECT`
    /// come from [`proper_prefix_tokens`] over the long tokens, forwards and backwards: time
    /// proportional to their bytes (times a log for sorting), whatever the longest token.
    fn derive_pairs(&self) -> FxHashMap<u64, Rank> {
        let mut pairs = FxHashMap::default();
        pairs.reserve(self.encoder.len() * 2);
        let long: Vec<(&[u8], Rank)> = self
            .encoder
            .iter()
            .filter(|(t, _)| t.len() > DIRECT)
            .map(|(t, &id)| (&**t, id))
            .collect();
        let reversed: Vec<(Vec<u8>, Rank)> = long
            .iter()
            .map(|&(t, id)| (t.iter().rev().copied().collect(), id))
            .collect();
        let long_prefixes = proper_prefix_tokens(&long);
        let long_suffixes = proper_prefix_tokens(
            &reversed
                .iter()
                .map(|(t, id)| (&t[..], *id))
                .collect::<Vec<_>>(),
        );
        for (t, &id) in &self.encoder {
            if t.len() <= DIRECT {
                for k in 1..t.len() {
                    if let (Some(a), Some(b)) = (self.piece_id(&t[..k]), self.piece_id(&t[k..])) {
                        pairs.insert(pair_key(a, b), id);
                    }
                }
            }
        }
        for (i, &(t, id)) in long.iter().enumerate() {
            let n = t.len();
            // Suffixes by length.
            let mut suffix: FxHashMap<usize, Rank> = long_suffixes[i].iter().copied().collect();
            for len in 1..=DIRECT {
                if let Some(b) = self.piece_id(&t[n - len..]) {
                    suffix.insert(len, b);
                }
            }
            let short_prefixes = (1..=DIRECT).filter_map(|k| Some((k, self.piece_id(&t[..k])?)));
            for (k, a) in short_prefixes.chain(long_prefixes[i].iter().copied()) {
                if let Some(&b) = suffix.get(&(n - k)) {
                    pairs.insert(pair_key(a, b), id);
                }
            }
        }
        pairs
    }

    /// Id of a token or (possibly pseudo) single byte.
    #[inline]
    fn piece_id(&self, b: &[u8]) -> Option<Rank> {
        if b.len() == 1 {
            Some(self.byte_ids[b[0] as usize])
        } else {
            self.encoder.get(b).copied()
        }
    }

    /// The rank of the piece whose [`pack_short`] key is `key`.
    #[inline(always)]
    pub fn rank_packed(&self, key: u128) -> Option<Rank> {
        self.short.get(&key).copied()
    }

    #[inline(always)]
    pub fn rank(&self, piece: &[u8]) -> Option<Rank> {
        if piece.len() <= SHORT {
            self.rank_packed(pack(piece))
        } else {
            self.encoder.get(piece).copied()
        }
    }

    #[inline(always)]
    pub fn byte_id(&self, b: u8) -> Rank {
        self.byte_ids[b as usize]
    }

    /// The token that merging `a` and `b` produces, or `Rank::MAX`.
    #[inline(always)]
    pub fn merge(&self, a: Rank, b: Rank) -> Rank {
        self.pairs.get(a, b)
    }

    /// Turn an id left by merging into an output id, failing for a byte the vocabulary lacks.
    #[inline(always)]
    pub fn check_output(id: Rank) -> Result<Rank> {
        if id >= PSEUDO_BASE {
            Err(Error::invalid(format!(
                "byte 0x{:02x} has no token in this vocabulary, so text containing it cannot be encoded",
                id - PSEUDO_BASE
            )))
        } else {
            Ok(id)
        }
    }

    /// Bytes of any token, special or not.
    #[inline(always)]
    pub fn token_bytes(&self, id: Rank) -> Option<&[u8]> {
        let &(start, len) = self.spans.get(id as usize)?;
        (len != ABSENT).then(|| &self.bytes[start as usize..(start + len) as usize])
    }

    pub fn special_id(&self, text: &str) -> Option<Rank> {
        self.special_encoder.get(text).copied()
    }

    pub fn is_special(&self, id: Rank) -> bool {
        self.is_special.get(id as usize).copied().unwrap_or(false)
    }

    /// Mergeable tokens as `(bytes, rank)`, by rank.
    pub fn mergeable(&self) -> Vec<(&[u8], Rank)> {
        let mut v: Vec<(&[u8], Rank)> = self.encoder.iter().map(|(b, &r)| (&**b, r)).collect();
        v.sort_unstable_by_key(|&(_, r)| r);
        v
    }

    /// Special tokens as `(text, id)`, by id.
    pub fn specials(&self) -> Vec<(&str, Rank)> {
        let mut v: Vec<(&str, Rank)> = self
            .special_encoder
            .iter()
            .map(|(t, &r)| (t.as_str(), r))
            .collect();
        v.sort_unstable_by_key(|&(_, r)| r);
        v
    }

    /// The listed merges, when only those apply (see [`Vocab::with_merges`]).
    pub fn listed_merges(&self) -> Option<&[(Vec<u8>, Vec<u8>)]> {
        self.listed_merges.as_deref()
    }

    pub fn n_mergeable(&self) -> usize {
        self.encoder.len()
    }

    pub fn n_specials(&self) -> usize {
        self.special_encoder.len()
    }

    pub fn max_token_value(&self) -> Rank {
        self.max_token_value
    }
}

/// Tokens up to this long find their splits by direct lookups (see `Vocab::derive_pairs`).
const DIRECT: usize = 64;

/// For each of `tokens` (distinct byte strings), the others that are proper prefixes of it, as
/// `(length, id)`.
///
/// In sorted order a token's prefixes come before it, and every token between a prefix and it
/// shares that prefix; so a stack in which each entry is a prefix of the next holds, when a token
/// is reached, exactly its prefixes. Each token is pushed and popped once, and each test costs at
/// most the length of the shorter string: linear in the bytes after the sort.
fn proper_prefix_tokens(tokens: &[(&[u8], Rank)]) -> Vec<Vec<(usize, Rank)>> {
    let mut order: Vec<usize> = (0..tokens.len()).collect();
    order.sort_unstable_by(|&i, &j| tokens[i].0.cmp(tokens[j].0));
    let mut out = vec![Vec::new(); tokens.len()];
    let mut stack: Vec<usize> = Vec::new();
    for i in order {
        let t = tokens[i].0;
        while let Some(&top) = stack.last() {
            if t.starts_with(tokens[top].0) {
                break;
            }
            stack.pop();
        }
        out[i] = stack
            .iter()
            .map(|&j| (tokens[j].0.len(), tokens[j].1))
            .collect();
        stack.push(i);
    }
    out
}

/// Bytes as Python would show them: `b'ab\xff'`.
pub fn show_bytes(bytes: &[u8]) -> String {
    let body: String = bytes
        .iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    format!("b'{body}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split looked up directly: the definition `derive_pairs` must match.
    fn naive_pairs(v: &Vocab) -> FxHashMap<u64, Rank> {
        let mut pairs = FxHashMap::default();
        for (t, &id) in &v.encoder {
            for k in 1..t.len() {
                if let (Some(a), Some(b)) = (v.piece_id(&t[..k]), v.piece_id(&t[k..])) {
                    pairs.insert(pair_key(a, b), id);
                }
            }
        }
        pairs
    }

    #[test]
    fn pack_is_bytes_then_length() {
        for n in 0..=SHORT {
            let b: Vec<u8> = (0..n as u8).map(|k| 0xA0 ^ k.wrapping_mul(37)).collect();
            let mut want = [0u8; 16];
            want[..n].copy_from_slice(&b);
            want[15] = n as u8;
            assert_eq!(pack(&b), u128::from_le_bytes(want), "length {n}");
        }
    }

    #[test]
    fn long_tokens_get_every_split() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        // Runs of one byte at lengths around the direct-lookup limit, and longer mixed tokens
        // whose prefixes and suffixes are tokens only at some lengths.
        for n in [2, 3, 63, 64, 65, 66, 100, 129, 130, 131, 200] {
            tokens.push(vec![b'a'; n]);
        }
        for n in [33, 65, 70, 140] {
            tokens.push(b"xy".repeat(n));
            tokens.push([b"q".as_slice(), &b"xy".repeat(n)].concat());
            tokens.push([&b"xy".repeat(n), b"z".as_slice()].concat());
        }
        let ranks = tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t, i as Rank))
            .collect();
        let v = Vocab::new(ranks, vec![]).unwrap();
        let pairs: FxHashMap<u64, Rank> = v.pairs.entries().into_iter().collect();
        assert_eq!(pairs, naive_pairs(&v));
        // Splits into two long tokens, and into a long and a short one, are there.
        let a = |n: usize| v.rank(&vec![b'a'; n]).unwrap();
        assert_eq!(v.merge(a(65), a(66)), a(131));
        assert_eq!(v.merge(a(100), a(100)), a(200));
        assert_eq!(v.merge(a(66), a(64)), a(130));
    }

    #[test]
    fn ids_too_big_for_the_packed_pair_table_are_still_found_and_merged() {
        // Pairs of ids of 2^21 and up do not fit the packed pair table.
        let big = 1 << 24;
        let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        ranks.push((b"ab".to_vec(), big + 1));
        ranks.push((b"abc".to_vec(), big + 3));
        ranks.push((b"cd".to_vec(), 300));
        ranks.push((b"abcdefghijklm".to_vec(), 301));
        let v = Vocab::new(ranks, vec![]).unwrap();
        assert_eq!(v.rank(b"ab"), Some(big + 1));
        assert_eq!(v.rank(b"abc"), Some(big + 3));
        assert_eq!(v.rank(b"cd"), Some(300));
        assert_eq!(v.rank(b"abcdefghijklm"), Some(301));
        assert_eq!(v.rank(b"abcd"), None);
        assert_eq!(v.merge(v.byte_id(b'a'), v.byte_id(b'b')), big + 1);
        assert_eq!(v.merge(big + 1, v.byte_id(b'c')), big + 3);
        assert_eq!(v.merge(v.byte_id(b'c'), v.byte_id(b'd')), 300);
        assert_eq!(v.merge(v.byte_id(b'b'), v.byte_id(b'c')), Rank::MAX);
    }
}
