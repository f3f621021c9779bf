//! WordPiece: a vocabulary of word-initial pieces and `##`-continuations, encoded greedily —
//! longest known piece from the left, then the longest continuation, and so on. A word with a
//! position no piece matches, or longer than `max_input_chars_per_word` characters, becomes the
//! unknown token as a whole (BERT's rule).

pub mod pipeline;
pub mod trie;

use crate::error::{Error, Result};
use crate::vocab::pack_short;
use rustc_hash::FxHashMap;
use trie::Trie;

pub struct WordPiece {
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
        let continuing = Trie::new(tokens.iter().enumerate().filter_map(|(id, t)| {
            if prefix.is_empty() {
                None
            } else {
                t.strip_prefix(prefix).map(|s| (s.as_bytes(), id as u32))
            }
        }));
        let mut whole = FxHashMap::default();
        for (id, t) in tokens.iter().enumerate() {
            if let Some(key) = pack_short(t.as_bytes()) {
                whole.entry(key).or_insert(id as u32);
            }
        }
        Ok(WordPiece {
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
        let too_long = b.len() > self.max_chars && word.chars().count() > self.max_chars;
        let mark = out.len();
        if !too_long {
            if let Some(&id) = pack_short(b).and_then(|k| self.whole.get(&k)) {
                out.push((id, 0, b.len() as u32));
                return;
            }
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
    fn missing_unknown_token_is_an_error() {
        assert!(WordPiece::new(vec!["a".into()], "[UNK]", "##", 100).is_err());
    }
}
