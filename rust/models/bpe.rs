//! BPE with HF `tokenizers`' merge-list semantics: a pre-token's characters become tokens, then
//! the pair with the lowest merge rank (leftmost on ties) merges, again and again, until no
//! adjacent pair is in the merge list.
//!
//! Idea: the characters are a doubly linked list of symbols in a vector; a min-heap holds every
//! mergeable adjacent pair as (rank, position, the id it makes). A popped entry is stale when
//! its left symbol was merged away or its right neighbour changed; it is then dropped, which
//! is checked by looking the pair up again. Every merge pushes at most two new entries, so a
//! word of n characters takes O(n log n).
//!
//! The options, as HF has them: `continuing_subword_prefix` before every character but the
//! first, `end_of_word_suffix` after the last; a character the vocabulary lacks becomes its
//! bytes' `<0xXX>` tokens (`byte_fallback`, when all of them exist), else `unk_token` (runs of
//! them fused into one with `fuse_unk`), else it is dropped, as HF drops it; `ignore_merges`
//! looks the whole pre-token up first; `dropout` skips each merge with that probability,
//! drawn from a generator seeded per call from the model's seed and a call counter (so one
//! thread's sequence of calls is reproducible given the seed; HF draws from a thread-local
//! generator and has no seed).
//!
//! Invariants: a merge `(a, b)` at list index r makes `a + b` (b without the continuing
//! prefix's length of leading bytes, as HF cuts it) and both halves and the result are in the
//! vocabulary, checked when the model is built; a later duplicate of a pair replaces the
//! earlier one, as in HF's map. Token offsets are byte ranges of the pre-token, each character
//! (or byte, for byte fallback, the prefix's and suffix's bytes included, as HF counts them)
//! adding its length in order; a dropped character adds nothing (HF's offsets, which then
//! no longer line up with the pre-token: the pipeline clamps them).
//!
//! Downside: this runs on characters and hashes (id, id) pairs, so it is several times slower
//! than the rank encoder of `crate::encode` on byte-level vocabularies; a bounded cache of
//! recent words (HF's default of 10,000) makes repeated words one lookup, behind a lock. A
//! byte-level pipeline asks it only for pieces the encoder's piece cache lacks
//! (`byte_pieces.rs`).

use super::byte_pieces::BytePieces;
use super::ModelToken;
use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::vocab::pack_short;
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// HF's default cache capacity, in words.
pub const DEFAULT_CACHE_CAPACITY: usize = 10_000;
/// Longer words are not cached (HF's `MAX_LENGTH`).
const CACHE_MAX_BYTES: usize = 256;

/// The model's options, with HF's names and defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BpeOptions {
    pub dropout: Option<f32>,
    pub unk_token: Option<String>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub fuse_unk: bool,
    pub byte_fallback: bool,
    pub ignore_merges: bool,
}

#[derive(Debug)]
pub struct Bpe {
    vocab: FxHashMap<String, u32>,
    /// The tokens of at most 15 bytes again, keyed by their bytes packed into a `u128`
    /// (`vocab::pack_short`): `ignore_merges` looks every word up whole, and a string key cost a
    /// hash of the string and a `memcmp` on a heap string that is seldom in cache.
    short_vocab: FxHashMap<u128, u32>,
    by_id: FxHashMap<u32, String>,
    /// The merge list as given (its halves' ids: a pair of strings per merge took ~80 bytes),
    /// for saving.
    merge_list: Vec<(u32, u32)>,
    /// (left id, right id) → (rank, id made).
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    options: BpeOptions,
    /// `<0xXX>` per byte, where the vocabulary has it.
    byte_tokens: [Option<u32>; 256],
    seed: u64,
    calls: AtomicU64,
    cache: Option<WordCache>,
    cache_capacity: usize,
    /// The byte-level fast path's piece cache, when the model qualifies (`byte_pieces.rs`).
    pub(super) byte_pieces: Option<BytePieces>,
}

impl Clone for Bpe {
    fn clone(&self) -> Self {
        Bpe {
            vocab: self.vocab.clone(),
            short_vocab: self.short_vocab.clone(),
            by_id: self.by_id.clone(),
            merge_list: self.merge_list.clone(),
            merges: self.merges.clone(),
            options: self.options.clone(),
            byte_tokens: self.byte_tokens,
            seed: self.seed,
            calls: AtomicU64::new(self.calls.load(Ordering::Relaxed)),
            cache: new_cache(self.cache_capacity),
            cache_capacity: self.cache_capacity,
            byte_pieces: self.byte_pieces.as_ref().map(BytePieces::fresh),
        }
    }
}

/// Recent words → their tokens.
type WordCache = RwLock<Words>;

/// The cached words: those of at most 15 bytes keyed by their packed bytes (as `short_vocab`),
/// the others by their text.
#[derive(Debug, Default)]
struct Words {
    short: FxHashMap<u128, Box<[ModelToken]>>,
    long: FxHashMap<Box<str>, Box<[ModelToken]>>,
}

impl Words {
    /// `word`'s tokens; `short` is its `pack_short` key.
    fn get(&self, word: &str, short: Option<u128>) -> Option<&[ModelToken]> {
        match short {
            Some(key) => self.short.get(&key),
            None => self.long.get(word),
        }
        .map(|t| &**t)
    }

    fn insert(&mut self, word: &str, short: Option<u128>, tokens: &[ModelToken]) {
        match short {
            Some(key) => self.short.insert(key, tokens.into()),
            None => self.long.insert(word.into(), tokens.into()),
        };
    }

    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }
}

fn new_cache(capacity: usize) -> Option<WordCache> {
    (capacity > 0).then(|| RwLock::new(Words::default()))
}

/// One character (or fallback byte, or unknown run) of a word being merged.
#[derive(Clone, Copy, Debug)]
struct Symbol {
    id: u32,
    /// Bytes of the pre-token it covers; 0 once merged into its left neighbour.
    len: usize,
    prev: usize,
    next: usize,
}

const NONE: usize = usize::MAX;

impl Bpe {
    /// The model from `vocab` (token → id, ids distinct) and the merge list in rank order.
    pub fn new<A: AsRef<str>, B: AsRef<str>>(
        vocab: FxHashMap<String, u32>,
        merge_list: impl IntoIterator<Item = (A, B)>,
        options: BpeOptions,
        seed: Option<u64>,
        cache_capacity: usize,
    ) -> Result<Self> {
        if let Some(p) = options.dropout {
            if !(0.0..=1.0).contains(&p) {
                return Err(Error::invalid(format!(
                    "BPE dropout must be between 0 and 1, got {p}"
                )));
            }
        }
        let mut by_id = FxHashMap::default();
        for (token, &id) in &vocab {
            if let Some(other) = by_id.insert(id, token.clone()) {
                return Err(Error::invalid(format!(
                    "BPE vocab gives id {id} to both {other:?} and {token:?}; ids must be distinct"
                )));
            }
        }
        let prefix_len = options
            .continuing_subword_prefix
            .as_deref()
            .map_or(0, str::len);
        let id_of = |t: &str, k: usize| {
            vocab.get(t).copied().ok_or_else(|| {
                Error::invalid(format!(
                    "BPE merge {k} uses {t:?}, which is not in the vocabulary; every merge's \
                     halves and result must be tokens of the vocab"
                ))
            })
        };
        let mut merges = FxHashMap::default();
        let mut merge_ids = Vec::new();
        for (k, (a, b)) in merge_list.into_iter().enumerate() {
            let (a, b) = (a.as_ref(), b.as_ref());
            let right = b.get(prefix_len..).ok_or_else(|| {
                Error::invalid(format!(
                    "BPE merge {k} ({a:?}, {b:?}): the right half is shorter than the \
                     continuing_subword_prefix or cut inside a character"
                ))
            })?;
            let made = format!("{a}{right}");
            let rank = u32::try_from(k)
                .map_err(|_| Error::invalid("BPE: more than 2**32 merges".to_string()))?;
            let pair = (id_of(a, k)?, id_of(b, k)?);
            merges.insert(pair, (rank, id_of(&made, k)?));
            merge_ids.push(pair);
        }
        let short_vocab = vocab
            .iter()
            .filter_map(|(t, &id)| Some((pack_short(t.as_bytes())?, id)))
            .collect();
        let mut byte_tokens = [None; 256];
        for (b, slot) in byte_tokens.iter_mut().enumerate() {
            *slot = vocab.get(&format!("<0x{b:02X}>")).copied();
        }
        let byte_pieces = BytePieces::new(&vocab, &options);
        Ok(Bpe {
            byte_pieces,
            vocab,
            short_vocab,
            by_id,
            merge_list: merge_ids,
            merges,
            options,
            byte_tokens,
            seed: seed.unwrap_or_else(|| fastrand::u64(..)),
            calls: AtomicU64::new(0),
            cache: new_cache(cache_capacity),
            cache_capacity,
        })
    }

    pub fn options(&self) -> &BpeOptions {
        &self.options
    }

    /// The merge list as given, as pairs of tokens.
    pub fn merge_list(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        let token = |id: &u32| self.by_id.get(id).map_or("", String::as_str);
        self.merge_list
            .iter()
            .map(move |(a, b)| (token(a), token(b)))
    }

    pub fn vocab(&self) -> &FxHashMap<String, u32> {
        &self.vocab
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(String::as_str)
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    pub fn cache_capacity(&self) -> usize {
        self.cache_capacity
    }

    pub fn clear_cache(&self) {
        if let Some(c) = &self.cache {
            c.write().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }

    /// The tokens of one pre-token, appended to `out`.
    pub fn tokenize(&self, word: &str, out: &mut Vec<ModelToken>) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        // The packed key, for the whole-word lookup and the cache (once per word).
        let short = pack_short(word.as_bytes());
        let dropout = self.options.dropout.filter(|&p| p > 0.0);
        // HF looks the whole word up only on its cached path, which dropout skips.
        if self.options.ignore_merges && dropout.is_none() {
            let whole = match short {
                Some(key) => self.short_vocab.get(&key),
                None => self.vocab.get(word),
            };
            if let Some(&id) = whole {
                out.push(ModelToken {
                    id,
                    start: 0,
                    end: word.len(),
                });
                return Ok(());
            }
        }
        let cache = self
            .cache
            .as_ref()
            .filter(|_| dropout.is_none() && word.len() < CACHE_MAX_BYTES);
        if let Some(c) = cache {
            if let Some(hit) = c.read().unwrap_or_else(|e| e.into_inner()).get(word, short) {
                out.extend_from_slice(hit);
                return Ok(());
            }
        }
        let from = out.len();
        let mut symbols = self.symbols(word)?;
        match dropout {
            Some(p) => {
                let n = self.calls.fetch_add(1, Ordering::Relaxed);
                let mut rng =
                    fastrand::Rng::with_seed(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                self.merge_all(&mut symbols, || rng.f32() < p);
            }
            None => self.merge_all(&mut symbols, || false),
        }
        let mut at = 0;
        for s in symbols.iter().filter(|s| s.len > 0) {
            out.push(ModelToken {
                id: s.id,
                start: at,
                end: at + s.len,
            });
            at += s.len;
        }
        if let Some(c) = cache {
            let mut c = c.write().unwrap_or_else(|e| e.into_inner());
            if c.len() < self.cache_capacity {
                c.insert(word, short, &out[from..]);
            }
        }
        Ok(())
    }

    /// The word's initial symbols: its characters with the prefix and suffix, byte fallback
    /// and unknowns as HF makes them (including HF's order when a byte fallback follows an
    /// unknown that is still being fused: the bytes come first).
    fn symbols(&self, word: &str) -> Result<Vec<Symbol>> {
        let mut symbols: Vec<Symbol> = Vec::with_capacity(word.len());
        let mut push = |id: u32, len: usize| {
            let k = symbols.len();
            if let Some(last) = symbols.last_mut() {
                last.next = k;
            }
            symbols.push(Symbol {
                id,
                len,
                prev: if k == 0 { NONE } else { k - 1 },
                next: NONE,
            });
        };
        let prefix = self.options.continuing_subword_prefix.as_deref();
        let suffix = self.options.end_of_word_suffix.as_deref();
        let mut unk: Option<(u32, usize)> = None;
        let mut text = String::new();
        let mut chars = word.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let is_last = chars.peek().is_none();
            let len = c.len_utf8();
            text.clear();
            if let (Some(p), false) = (prefix, i == 0) {
                text.push_str(p);
            }
            text.push(c);
            if let (Some(s), true) = (suffix, is_last) {
                text.push_str(s);
            }
            if let Some(&id) = self.vocab.get(text.as_str()) {
                if let Some((u, n)) = unk.take() {
                    push(u, n);
                }
                push(id, len);
                continue;
            }
            if self.options.byte_fallback {
                let ids: Option<Vec<u32>> =
                    text.bytes().map(|b| self.byte_tokens[b as usize]).collect();
                if let Some(ids) = ids {
                    for id in ids {
                        push(id, 1);
                    }
                    continue;
                }
            }
            if let Some(unk_token) = &self.options.unk_token {
                let unk_id = || {
                    self.vocab.get(unk_token).copied().ok_or_else(|| {
                        Error::invalid(format!(
                            "BPE cannot encode {c:?}: it is not in the vocabulary, nor is the \
                             unknown token {unk_token:?} (add it to the vocab or set unk_token \
                             to a token the vocab has)"
                        ))
                    })
                };
                unk = match (unk, self.options.fuse_unk) {
                    (Some((u, n)), true) => Some((u, n + len)),
                    (Some((u, n)), false) => {
                        push(u, n);
                        Some((unk_id()?, len))
                    }
                    (None, _) => Some((unk_id()?, len)),
                };
            }
        }
        if let Some((u, n)) = unk {
            push(u, n);
        }
        Ok(symbols)
    }

    /// Merge by rank until no adjacent pair is in the list; `drop_merge()` true skips the merge
    /// at the top of the heap for now (dropout): skipped merges come back once another merge
    /// has been made, as in HF.
    fn merge_all(&self, symbols: &mut [Symbol], mut drop_merge: impl FnMut() -> bool) {
        // Min-heap on (rank, position); the id made rides along to tell stale entries.
        let mut heap: BinaryHeap<Reverse<(u32, usize, u32)>> = symbols
            .windows(2)
            .enumerate()
            .filter_map(|(k, w)| {
                let &(rank, made) = self.merges.get(&(w[0].id, w[1].id))?;
                Some(Reverse((rank, k, made)))
            })
            .collect();
        let mut skipped = Vec::new();
        while let Some(Reverse(top @ (_, pos, made))) = heap.pop() {
            if drop_merge() {
                skipped.push(Reverse(top));
                continue;
            }
            heap.extend(skipped.drain(..));
            let left = symbols[pos];
            if left.len == 0 || left.next == NONE {
                continue;
            }
            let right = symbols[left.next];
            if self.merges.get(&(left.id, right.id)).map(|m| m.1) != Some(made) {
                continue;
            }
            symbols[pos].id = made;
            symbols[pos].len += right.len;
            symbols[pos].next = right.next;
            symbols[left.next].len = 0;
            if right.next != NONE {
                symbols[right.next].prev = pos;
            }
            let cur = symbols[pos];
            if cur.prev != NONE {
                if let Some(&(rank, m)) = self.merges.get(&(symbols[cur.prev].id, cur.id)) {
                    heap.push(Reverse((rank, cur.prev, m)));
                }
            }
            if cur.next != NONE {
                if let Some(&(rank, m)) = self.merges.get(&(cur.id, symbols[cur.next].id)) {
                    heap.push(Reverse((rank, pos, m)));
                }
            }
        }
    }

    pub fn from_fields(f: &Fields) -> Result<Self> {
        let vocab = super::vocab_field(f)?;
        let mut merge_list = Vec::new();
        if f.get("merges").is_some_and(|v| !v.is_null()) {
            for (m, at) in f.list("merges")? {
                merge_list.push(merge_of(m, &at)?);
            }
        }
        let optional = |key: &str| -> Result<Option<String>> {
            match f.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(Error::invalid(format!(
                    "{}: expected a string or null, got {other}",
                    f.at(key)
                ))),
            }
        };
        let dropout = match f.get("dropout") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_f64().ok_or_else(|| {
                Error::invalid(format!(
                    "{}: expected a number or null, got {v}",
                    f.at("dropout")
                ))
            })? as f32),
        };
        let options = BpeOptions {
            dropout,
            unk_token: optional("unk_token")?,
            continuing_subword_prefix: optional("continuing_subword_prefix")?,
            end_of_word_suffix: optional("end_of_word_suffix")?,
            fuse_unk: f.flag("fuse_unk", false)?,
            byte_fallback: f.flag("byte_fallback", false)?,
            ignore_merges: f.flag("ignore_merges", false)?,
        };
        Bpe::new(vocab, merge_list, options, None, DEFAULT_CACHE_CAPACITY)
    }

    /// HF's JSON form: the vocabulary in id order, merges as pairs.
    pub fn to_json(&self) -> Value {
        let mut by_id: Vec<(&u32, &String)> = self.by_id.iter().collect();
        by_id.sort();
        let vocab: serde_json::Map<String, Value> = by_id
            .into_iter()
            .map(|(id, t)| (t.clone(), json!(id)))
            .collect();
        let mut v = self.settings_json();
        if let Some(o) = v.as_object_mut() {
            o.insert("vocab".into(), Value::Object(vocab));
            let merges = self.merge_list().map(|(a, b)| json!([a, b])).collect();
            o.insert("merges".into(), Value::Array(merges));
        }
        v
    }

    /// [`Self::to_json`] without the vocabulary and merges.
    pub fn settings_json(&self) -> Value {
        let o = &self.options;
        json!({
            "type": "BPE",
            "dropout": o.dropout,
            "unk_token": o.unk_token,
            "continuing_subword_prefix": o.continuing_subword_prefix,
            "end_of_word_suffix": o.end_of_word_suffix,
            "fuse_unk": o.fuse_unk,
            "byte_fallback": o.byte_fallback,
            "ignore_merges": o.ignore_merges,
        })
    }
}

/// One merge of a tokenizer.json: `["a", "b"]`, or the older `"a b"`.
fn merge_of<'v>(m: &'v Value, at: &str) -> Result<(&'v str, &'v str)> {
    match m {
        Value::String(s) => s.split_once(' ').ok_or_else(|| {
            Error::invalid(format!("{at}: a merge \"a b\" needs a space, got {s:?}"))
        }),
        Value::Array(p) => match p.as_slice() {
            [Value::String(a), Value::String(b)] => Ok((a, b)),
            _ => Err(Error::invalid(format!(
                "{at}: a merge must be two strings, got {m}"
            ))),
        },
        other => Err(Error::invalid(format!(
            "{at}: a merge must be [\"a\", \"b\"] or \"a b\", got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tokens: &[&str], merges: &[(&str, &str)], options: BpeOptions) -> Bpe {
        let vocab = (0u32..)
            .zip(tokens)
            .map(|(i, t)| (t.to_string(), i))
            .collect();
        Bpe::new(
            vocab,
            merges.iter().copied(),
            options,
            Some(1),
            DEFAULT_CACHE_CAPACITY,
        )
        .expect("valid model")
    }

    fn run(m: &Bpe, word: &str) -> Vec<(String, usize, usize)> {
        let mut out = Vec::new();
        m.tokenize(word, &mut out).expect("encodes");
        out.iter()
            .map(|t| (m.id_to_token(t.id).unwrap().to_string(), t.start, t.end))
            .collect()
    }

    fn owned(v: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
        v.iter().map(|&(t, s, e)| (t.to_string(), s, e)).collect()
    }

    #[test]
    fn the_earliest_listed_merge_goes_first_whatever_the_ids() {
        // "bc" is listed first, so "abc" never becomes "ab" + "c" → "abc".
        let m = model(
            &["a", "b", "c", "ab", "bc", "abc"],
            &[("b", "c"), ("a", "b"), ("ab", "c")],
            BpeOptions::default(),
        );
        assert_eq!(run(&m, "abc"), owned(&[("a", 0, 1), ("bc", 1, 3)]));
        assert_eq!(run(&m, "abab"), owned(&[("ab", 0, 2), ("ab", 2, 4)]));
    }

    #[test]
    fn unknowns_fuse_only_when_asked_and_byte_fallback_counts_bytes() {
        let unk = |fuse_unk| BpeOptions {
            unk_token: Some("<unk>".into()),
            fuse_unk,
            ..BpeOptions::default()
        };
        let fused = model(&["a", "<unk>"], &[], unk(true));
        assert_eq!(run(&fused, "xéa"), owned(&[("<unk>", 0, 3), ("a", 3, 4)]));
        let apart = model(&["a", "<unk>"], &[], unk(false));
        assert_eq!(
            run(&apart, "xéa"),
            owned(&[("<unk>", 0, 1), ("<unk>", 1, 3), ("a", 3, 4)])
        );
        let bytes = BpeOptions {
            byte_fallback: true,
            ..BpeOptions::default()
        };
        let fb = model(&["a", "<0xC3>", "<0xA9>"], &[], bytes);
        assert_eq!(
            run(&fb, "aé"),
            owned(&[("a", 0, 1), ("<0xC3>", 1, 2), ("<0xA9>", 2, 3)])
        );
        // No unknown token and no fallback: HF drops the character, and its bytes count in no
        // token's offsets either.
        let plain = model(&["a"], &[], BpeOptions::default());
        assert_eq!(run(&plain, "xa"), owned(&[("a", 0, 1)]));
    }

    #[test]
    fn full_dropout_keeps_characters_and_ignore_merges_takes_whole_tokens() {
        let tokens = ["a", "b", "ab", "abab"];
        let merges = [("a", "b"), ("ab", "ab")];
        let all = BpeOptions {
            dropout: Some(1.0),
            ..BpeOptions::default()
        };
        assert_eq!(run(&model(&tokens, &merges, all), "ab").len(), 2);
        // A whole token no merge makes is taken only with ignore_merges.
        let whole = BpeOptions {
            ignore_merges: true,
            ..BpeOptions::default()
        };
        let m = model(&["a", "b", "ba"], &[], whole);
        assert_eq!(run(&m, "ba"), owned(&[("ba", 0, 2)]));
        let m = model(&["a", "b", "ba"], &[], BpeOptions::default());
        assert_eq!(run(&m, "ba"), owned(&[("b", 0, 1), ("a", 1, 2)]));
    }

    #[test]
    fn bad_models_are_refused() {
        let vocab: FxHashMap<String, u32> = [("a".to_string(), 0)].into_iter().collect();
        let merge = vec![("a".to_string(), "b".to_string())];
        assert!(Bpe::new(vocab.clone(), merge, BpeOptions::default(), None, 0).is_err());
        let odd = BpeOptions {
            dropout: Some(1.5),
            ..BpeOptions::default()
        };
        assert!(Bpe::new(vocab, Vec::<(&str, &str)>::new(), odd, None, 0).is_err());
    }
}
