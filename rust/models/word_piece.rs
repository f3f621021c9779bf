//! WordPiece as a pipeline model: the greedy longest-match model of `crate::wordpiece` (with
//! its trie and recent-word cache) from HF's fields and JSON form.

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::wordpiece::WordPiece;
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use std::sync::Arc;

/// HF's defaults.
pub const DEFAULT_UNK: &str = "[UNK]";
pub const DEFAULT_PREFIX: &str = "##";
pub const DEFAULT_MAX_CHARS: usize = 100;

/// The model from a `token → id` map whose ids are exactly `0..len` (the WordPiece model keeps
/// tokens by id).
pub fn from_vocab(
    vocab: &FxHashMap<String, u32>,
    unk_token: &str,
    prefix: &str,
    max_chars: usize,
) -> Result<Arc<WordPiece>> {
    let mut tokens = vec![None; vocab.len()];
    for (token, &id) in vocab {
        match tokens.get_mut(id as usize) {
            Some(slot @ None) => *slot = Some(token.clone()),
            Some(Some(other)) => {
                return Err(Error::invalid(format!(
                    "WordPiece vocab gives id {id} to both {other:?} and {token:?}; ids must be \
                     distinct"
                )))
            }
            None => {
                return Err(Error::invalid(format!(
                    "WordPiece vocab ids must be 0..{} (one per token); {token:?} has {id}",
                    vocab.len()
                )))
            }
        }
    }
    let tokens = tokens.into_iter().map(|t| t.expect("ids 0..len")).collect();
    Ok(Arc::new(WordPiece::new(
        tokens, unk_token, prefix, max_chars,
    )?))
}

pub fn from_fields(f: &Fields) -> Result<Arc<WordPiece>> {
    let vocab = super::vocab_field(f)?;
    from_vocab(
        &vocab,
        &f.text("unk_token", Some(DEFAULT_UNK))?,
        &f.text("continuing_subword_prefix", Some(DEFAULT_PREFIX))?,
        f.count("max_input_chars_per_word", DEFAULT_MAX_CHARS)?,
    )
}

pub fn to_json(m: &WordPiece) -> Value {
    let vocab: serde_json::Map<String, Value> = m
        .tokens()
        .iter()
        .enumerate()
        .map(|(id, t)| (t.clone(), json!(id)))
        .collect();
    let mut v = settings_json(m);
    v["vocab"] = Value::Object(vocab);
    v
}

/// [`to_json`] without the vocabulary.
pub fn settings_json(m: &WordPiece) -> Value {
    json!({
        "type": "WordPiece",
        "unk_token": m.unk_token(),
        "continuing_subword_prefix": m.prefix(),
        "max_input_chars_per_word": m.max_chars(),
    })
}
