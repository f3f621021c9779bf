//! The model stage of the pipeline: a pre-token to its tokens. The components are HF
//! `tokenizers`' own, with its names and JSON form. BPE (HF's merge-list
//! semantics), WordLevel and WordPiece; the byte-level rank encoder and classic BPE still run
//! their own pipelines (`encode`, `classic`), and so does WordPiece with BERT's fixed stages
//! (`wordpiece::pipeline`), until they move here.

pub mod bpe;
mod byte_pieces;
mod word_level;
pub mod word_piece;

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::wordpiece::WordPiece;
pub use bpe::{Bpe, BpeOptions};
pub use byte_pieces::ByteLevelBpe;
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::sync::Arc;
pub use word_level::{WordLevel, DEFAULT_UNK};

/// One token a model made of a pre-token: its id and its byte range in the pre-token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelToken {
    pub id: u32,
    pub start: usize,
    pub end: usize,
}

/// A model's `"vocab"` object of token: id (none: empty).
fn vocab_field(f: &Fields) -> Result<FxHashMap<String, u32>> {
    let at = f.at("vocab");
    match f.get("vocab") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(token, id)| match id.as_u64() {
                Some(id) if id <= u32::MAX as u64 => Ok((token.clone(), id as u32)),
                _ => Err(Error::invalid(format!(
                    "{at}.{token}: an id must be an integer in 0..=4294967295 (a u32), got {id}"
                ))),
            })
            .collect(),
        Some(other) => Err(Error::invalid(format!(
            "{at}: expected an object of token: id, got {other}"
        ))),
        None => Ok(FxHashMap::default()),
    }
}

/// A model; cloning shares it (a pipeline is rebuilt whenever a stage changes, and the
/// vocabulary should not be copied each time).
#[derive(Clone, Debug)]
pub enum Model {
    Bpe(Arc<Bpe>),
    WordLevel(Arc<WordLevel>),
    WordPiece(Arc<WordPiece>),
}

impl Model {
    /// The tokens of one pre-token, in order, appended to `out`.
    pub fn tokenize(&self, piece: &str, out: &mut Vec<ModelToken>) -> Result<()> {
        match self {
            Model::Bpe(m) => m.tokenize(piece, out),
            Model::WordLevel(m) => {
                out.push(ModelToken {
                    id: m.id_of(piece)?,
                    start: 0,
                    end: piece.len(),
                });
                Ok(())
            }
            Model::WordPiece(m) => {
                let mut pieces = Vec::new();
                m.encode_word(piece, &mut pieces);
                out.extend(pieces.into_iter().map(|(id, start, end)| ModelToken {
                    id,
                    start: start as usize,
                    end: end as usize,
                }));
                Ok(())
            }
        }
    }

    /// The BPE model, when it takes byte-level pieces through its piece cache
    /// (`byte_pieces.rs`).
    pub fn byte_level(&self) -> Option<ByteLevelBpe<'_>> {
        match self {
            Model::Bpe(m) => m.byte_level(),
            _ => None,
        }
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            Model::Bpe(m) => m.token_to_id(token),
            Model::WordLevel(m) => m.token_to_id(token),
            Model::WordPiece(m) => m.token_to_id(token),
        }
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        match self {
            Model::Bpe(m) => m.id_to_token(id),
            Model::WordLevel(m) => m.id_to_token(id),
            Model::WordPiece(m) => m.token(id),
        }
    }

    pub fn vocab_size(&self) -> usize {
        match self {
            Model::Bpe(m) => m.vocab_size(),
            Model::WordLevel(m) => m.vocab_size(),
            Model::WordPiece(m) => m.len(),
        }
    }

    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let (f, kind) = Fields::of(v, path, "model")?;
        match kind {
            "BPE" => Ok(Model::Bpe(Arc::new(Bpe::from_fields(&f)?))),
            "WordLevel" => Ok(Model::WordLevel(Arc::new(WordLevel::from_fields(&f)?))),
            "WordPiece" => Ok(Model::WordPiece(word_piece::from_fields(&f)?)),
            "Unigram" => Err(Error::invalid(format!(
                "{path}: the Unigram model is not supported yet (a later issue); subword reads \
                 BPE, WordPiece and WordLevel"
            ))),
            other => Err(Error::invalid(format!(
                "{path}: model type {other:?} is not one of BPE, WordPiece, WordLevel"
            ))),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Model::Bpe(m) => m.to_json(),
            Model::WordLevel(m) => m.to_json(),
            Model::WordPiece(m) => word_piece::to_json(m),
        }
    }

    /// [`Self::to_json`] without the vocabulary and merges: the model's settings.
    pub fn settings_json(&self) -> Value {
        match self {
            Model::Bpe(m) => m.settings_json(),
            Model::WordLevel(m) => m.settings_json(),
            Model::WordPiece(m) => word_piece::settings_json(m),
        }
    }
}
