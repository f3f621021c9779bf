//! WordPiece: a vocabulary of word-initial pieces and `##`-continuations, encoded greedily —
//! longest known piece from the left, then the longest continuation, and so on. A word with a
//! position no piece matches, or longer than `max_input_chars_per_word` characters, becomes the
//! unknown token as a whole (BERT's rule).

pub mod pipeline;
pub mod trie;

use crate::error::{Error, Result};
use crate::vocab::pack_short;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use trie::Trie;

/// Recently seen short words and their pieces, per thread: a few KB that stay in cache, where
/// the vocabulary's hash table and trie (a few MB) do not. Slots belong to one model at a time.
const RECENT_SLOTS: usize = 4096;

#[derive(Clone, Copy, Default)]
struct Recent {
    /// The word packed as in `whole` (0: empty slot).
    key: u128,
    n: u8,
    ids: [u32; 3],
    ends: [u8; 3],
}

struct RecentWords {
    model: u64,
    slots: Box<[Recent]>,
}

thread_local! {
    static RECENT: RefCell<RecentWords> = RefCell::new(RecentWords {
        model: 0,
        slots: vec![Recent::default(); RECENT_SLOTS].into_boxed_slice(),
    });
}

static NEXT_MODEL: AtomicU64 = AtomicU64::new(1);

#[inline]
fn slot_of(key: u128) -> usize {
    let h = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 52) as usize & (RECENT_SLOTS - 1)
}

pub struct WordPiece {
    /// Identifies this model in the per-thread cache of recent words.
    serial: u64,
    /// Token string by id (ids are dense: 0..len).
    tokens: Vec<String>,
    /// Word-initial tokens of up to 15 bytes, keyed by their bytes packed into a `u128` (with the
    /// length): most words of natural text are one such token, and one integer-keyed lookup
    /// finds them faster than a walk down the trie (or a byte-string key and its `memcmp`).
    whole: FxHashMap<u128, u32>,
    initial: Trie,
    /// Continuation pieces, keyed without their prefix.
    continuing: Trie,
    prefix: String,
    unk_token: String,
    unk_id: u32,
    max_chars: usize,
}

impl WordPiece {
    /// `tokens[id]` is the token with that id.
    pub fn new(
        tokens: Vec<String>,
        unk_token: &str,
        prefix: &str,
        max_chars: usize,
    ) -> Result<WordPiece> {
        let unk_id = tokens.iter().position(|t| t == unk_token).ok_or_else(|| {
            Error::invalid(format!(
                "the unknown token {unk_token:?} is not in the WordPiece vocabulary; add it \
                     or pass the vocabulary's own unk_token"
            ))
        })? as u32;
        let initial = Trie::new(
            tokens
                .iter()
                .enumerate()
                .map(|(id, t)| (t.as_bytes(), id as u32)),
        );
        // With an empty prefix every token continues a word too (HF looks `prefix + rest` up).
        let continuing = Trie::new(
            tokens
                .iter()
                .enumerate()
                .filter_map(|(id, t)| t.strip_prefix(prefix).map(|s| (s.as_bytes(), id as u32))),
        );
        let mut whole = FxHashMap::default();
        for (id, t) in tokens.iter().enumerate() {
            if let Some(key) = pack_short(t.as_bytes()) {
                whole.entry(key).or_insert(id as u32);
            }
        }
        Ok(WordPiece {
            serial: NEXT_MODEL.fetch_add(1, Ordering::Relaxed),
            whole,
            tokens,
            initial,
            continuing,
            prefix: prefix.to_string(),
            unk_token: unk_token.to_string(),
            unk_id,
            max_chars,
        })
    }

    /// Append the pieces of `word` as (id, start, end) byte ranges within the word.
    pub fn encode_word(&self, word: &str, out: &mut Vec<(u32, u32, u32)>) {
        let b = word.as_bytes();
        // Long words (and any word when max_input_chars_per_word is tiny) take the full path.
        let key = pack_short(b).filter(|_| b.len() <= self.max_chars);
        let Some(key) = key else {
            return self.match_word(word, out);
        };
        RECENT.with(|cell| {
            let recent = &mut *cell.borrow_mut();
            if recent.model != self.serial {
                recent.slots.fill(Recent::default());
                recent.model = self.serial;
            }
            let slot = &mut recent.slots[slot_of(key)];
            if slot.key == key {
                let mut start = 0;
                for k in 0..slot.n as usize {
                    out.push((slot.ids[k], start, slot.ends[k] as u32));
                    start = slot.ends[k] as u32;
                }
                return;
            }
            let mark = out.len();
            match self.whole.get(&key) {
                Some(&id) => out.push((id, 0, b.len() as u32)),
                None => self.match_word(word, out),
            }
            let pieces = &out[mark..];
            if pieces.len() <= 3 {
                *slot = Recent {
                    key,
                    n: pieces.len() as u8,
                    ids: std::array::from_fn(|k| pieces.get(k).map_or(0, |p| p.0)),
                    ends: std::array::from_fn(|k| pieces.get(k).map_or(0, |p| p.2 as u8)),
                };
            }
        })
    }

    /// Greedy longest match down the tries (or the unknown token for the whole word).
    fn match_word(&self, word: &str, out: &mut Vec<(u32, u32, u32)>) {
        let b = word.as_bytes();
        let too_long = b.len() > self.max_chars && word.chars().count() > self.max_chars;
        let mark = out.len();
        if !too_long {
            let mut pos = 0;
            while pos < b.len() {
                let trie = if pos == 0 {
                    &self.initial
                } else {
                    &self.continuing
                };
                match trie.longest_prefix(&b[pos..]) {
                    Some((id, len)) => {
                        out.push((id, pos as u32, (pos + len) as u32));
                        pos += len;
                    }
                    None => break,
                }
            }
            if pos == b.len() {
                return;
            }
        }
        out.truncate(mark);
        out.push((self.unk_id, 0, b.len() as u32));
    }

    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(|s| s.as_str())
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        if let Some(rest) = token.strip_prefix(self.prefix.as_str()) {
            if !self.prefix.is_empty() {
                if let Some(id) = self.continuing.get(rest.as_bytes()) {
                    if self.tokens[id as usize] == token {
                        return Some(id);
                    }
                }
            }
        }
        self.initial.get(token.as_bytes())
    }

    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }

    pub fn max_chars(&self) -> usize {
        self.max_chars
    }
}

impl std::fmt::Debug for WordPiece {
    /// The settings and size, not the tries.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordPiece")
            .field("tokens", &self.tokens.len())
            .field("prefix", &self.prefix)
            .field("unk_token", &self.unk_token)
            .field("max_chars", &self.max_chars)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WordPiece {
        let v = ["[UNK]", "un", "##aff", "##able", "a", "##a", "##ff"];
        WordPiece::new(v.iter().map(|s| s.to_string()).collect(), "[UNK]", "##", 5).unwrap()
    }

    fn pieces(m: &WordPiece, w: &str) -> Vec<String> {
        let mut out = Vec::new();
        m.encode_word(w, &mut out);
        out.iter()
            .map(|&(id, _, _)| m.token(id).unwrap().to_string())
            .collect()
    }

    #[test]
    fn greedy_longest_match_and_unknown_words() {
        let m = WordPiece::new(
            ["[UNK]", "un", "##aff", "##able", "a", "##a", "##ff"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "[UNK]",
            "##",
            100,
        )
        .unwrap();
        assert_eq!(pieces(&m, "unaffable"), ["un", "##aff", "##able"]);
        assert_eq!(pieces(&m, "unx"), ["[UNK]"]);
        assert_eq!(pieces(&m, "aaa"), ["a", "##a", "##a"]);
        // max 5 chars: a 6-char word is unknown even though it would match
        assert_eq!(pieces(&model(), "aaaaaa"), ["[UNK]"]);
        assert_eq!(model().token_to_id("##ff"), Some(6));
        assert_eq!(model().token_to_id("ff"), None);
    }

    #[test]
    fn recent_words_belong_to_their_model() {
        let a = model();
        let b = WordPiece::new(
            ["[UNK]", "una", "##ffable"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "[UNK]",
            "##",
            100,
        )
        .unwrap();
        for _ in 0..3 {
            assert_eq!(pieces(&a, "unaff"), ["un", "##aff"]);
            assert_eq!(pieces(&b, "unaff"), ["[UNK]"]);
            assert_eq!(pieces(&b, "unaffable"), ["una", "##ffable"]);
        }
    }

    #[test]
    fn missing_unknown_token_is_an_error() {
        assert!(WordPiece::new(vec!["a".into()], "[UNK]", "##", 100).is_err());
    }
}
