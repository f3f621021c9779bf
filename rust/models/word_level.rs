//! WordLevel: each pre-token is one token, looked up whole; what the vocabulary lacks becomes
//! the unknown token (HF `tokenizers`' `models.WordLevel`, its oracle in the tests).
//!
//! Downside: nothing below the word: a vocabulary without the unknown token cannot encode a
//! word it lacks, and says so.

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use rustc_hash::FxHashMap;
use serde_json::{json, Value};

/// HF's default unknown token.
pub const DEFAULT_UNK: &str = "<unk>";

#[derive(Clone, Debug)]
pub struct WordLevel {
    vocab: FxHashMap<String, u32>,
    /// By id; `None` where no token has the id.
    by_id: Vec<Option<String>>,
    unk_token: String,
}

impl WordLevel {
    /// Ids must be distinct (two tokens with one id could not be decoded).
    pub fn new(vocab: FxHashMap<String, u32>, unk_token: String) -> Result<Self> {
        let size = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut by_id = vec![None; size];
        for (token, &id) in &vocab {
            if let Some(other) = by_id[id as usize].replace(token.clone()) {
                return Err(Error::invalid(format!(
                    "WordLevel vocab gives id {id} to both {other:?} and {token:?}; ids must be \
                     distinct"
                )));
            }
        }
        Ok(WordLevel {
            vocab,
            by_id,
            unk_token,
        })
    }

    /// The id of `word`, else of the unknown token; an error naming both when neither is in
    /// the vocabulary.
    pub fn id_of(&self, word: &str) -> Result<u32> {
        if let Some(&id) = self.vocab.get(word) {
            return Ok(id);
        }
        self.vocab.get(&self.unk_token).copied().ok_or_else(|| {
            Error::invalid(format!(
                "WordLevel cannot encode {word:?}: it is not in the vocabulary, nor is the unknown \
                 token {:?} (add it to the vocab or set unk_token to a token the vocab has)",
                self.unk_token
            ))
        })
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.by_id.get(id as usize)?.as_deref()
    }

    pub fn vocab(&self) -> &FxHashMap<String, u32> {
        &self.vocab
    }

    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }

    /// HF's `get_vocab_size`: the number of tokens.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    pub fn from_fields(f: &Fields) -> Result<Self> {
        WordLevel::new(
            super::vocab_field(f)?,
            f.text("unk_token", Some(DEFAULT_UNK))?,
        )
    }

    pub fn to_json(&self) -> Value {
        let mut pairs: Vec<(&String, &u32)> = self.vocab.iter().collect();
        pairs.sort_by_key(|(t, &id)| (id, t.as_str()));
        let vocab: serde_json::Map<String, Value> = pairs
            .into_iter()
            .map(|(t, &id)| (t.clone(), json!(id)))
            .collect();
        let mut v = self.settings_json();
        v["vocab"] = Value::Object(vocab);
        v
    }

    /// [`Self::to_json`] without the vocabulary.
    pub fn settings_json(&self) -> Value {
        json!({"type": "WordLevel", "unk_token": self.unk_token})
    }
}
