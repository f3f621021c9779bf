//! HF BPE on byte-level pieces through the encoder's piece cache: the pipeline's fast path for
//! tokenizer.json files of the GPT-2, Llama 3, Qwen and DeepSeek shapes.
//!
//! Idea: such a pipeline hands the model raw pieces of text whose bytes it maps one to one onto
//! printable chars, so a piece's bytes name its tokens. The cache (`encode::PieceCache`) keeps
//! the model's ids per piece bytes, and the model's merge-list BPE runs only on a miss. Offsets
//! need no alignments either: every token the model can make of such a piece is a run of those
//! chars, so its length in raw bytes is its length in chars, kept per id.
//!
//! Invariant: only for a model that gives every byte-level piece the same tokens whatever else
//! happens: every one of the 256 byte chars is in the vocabulary (so no unknown, byte fallback
//! or dropped char ever appears), no dropout (ids are a function of the piece), and no
//! continuing-subword prefix or end-of-word suffix (token lengths are piece bytes). The model
//! decides every id; merge order and ties are HF's, since its own merge runs on every miss.
//!
//! Downside: a model whose vocabulary lacks a byte char takes the per-piece path, with a
//! string and a cache lock per piece.

use super::{Bpe, BpeOptions, ModelToken};
use crate::encode::PieceCache;
use crate::error::{Error, Result};
use crate::formats::byte_unicode::{byte_char, decode};
use crate::pretokenize::Span;
use rustc_hash::FxHashMap;

#[derive(Debug, Default)]
pub struct BytePieces {
    cache: PieceCache,
    /// Per id, the raw bytes its token stands for; 0 for a token that is not a run of byte chars
    /// (no byte-level piece makes it).
    raw_len: Box<[u32]>,
}

impl BytePieces {
    /// The fast path's state for a model with `vocab` and `options`, when the model qualifies
    /// (see the module's invariant).
    pub(super) fn new(vocab: &FxHashMap<String, u32>, options: &BpeOptions) -> Option<Self> {
        let plain = options.dropout.is_none_or(|p| p <= 0.0)
            && options.continuing_subword_prefix.is_none()
            && options.end_of_word_suffix.is_none();
        let mut buf = [0u8; 4];
        let every_byte =
            (0..=255u8).all(|b| vocab.contains_key(&*byte_char(b).encode_utf8(&mut buf)));
        if !plain || !every_byte {
            return None;
        }
        let top = vocab.values().copied().max().map_or(0, |m| m as usize + 1);
        let mut raw_len = vec![0u32; top];
        for (token, &id) in vocab {
            if decode(token).is_some() {
                raw_len[id as usize] = token.chars().count() as u32;
            }
        }
        Some(BytePieces {
            cache: PieceCache::default(),
            raw_len: raw_len.into_boxed_slice(),
        })
    }

    /// The same model's state with an empty cache of its own (a clone may change the model).
    pub(super) fn fresh(&self) -> Self {
        BytePieces {
            cache: PieceCache::default(),
            raw_len: self.raw_len.clone(),
        }
    }

    /// The raw bytes of the token `id` made of a byte-level piece.
    #[inline]
    pub fn raw_len(&self, id: u32) -> Result<usize> {
        match self.raw_len.get(id as usize) {
            Some(&n) if n > 0 => Ok(n as usize),
            _ => Err(Error::invalid(format!(
                "internal: BPE gave id {id} for a byte-level piece, which is no run of byte chars"
            ))),
        }
    }
}

/// A BPE model on its fast path: made only by [`Bpe::byte_level`], so the piece cache and the
/// lengths are that model's own and the path's presence is checked once, where it is made.
#[derive(Clone, Copy)]
pub struct ByteLevelBpe<'a> {
    bpe: &'a Bpe,
    pieces: &'a BytePieces,
}

impl Bpe {
    /// The byte-level fast path, when this model qualifies for it.
    pub fn byte_level(&self) -> Option<ByteLevelBpe<'_>> {
        let pieces = self.byte_pieces.as_ref()?;
        Some(ByteLevelBpe { bpe: self, pieces })
    }

    /// The model without its fast path, to test that path against the per-piece one.
    #[cfg(test)]
    pub fn without_byte_pieces(mut self) -> Self {
        self.byte_pieces = None;
        self
    }
}

impl ByteLevelBpe<'_> {
    /// The ids of the raw pieces `spans` of `text` (non-empty, in order) onto `out`, as
    /// [`Bpe::tokenize`] gives them for the pieces' byte chars.
    pub fn encode(&self, text: &[u8], spans: &[Span], out: &mut Vec<u32>) -> Result<()> {
        let mut word = String::new();
        let mut tokens: Vec<ModelToken> = Vec::new();
        self.pieces
            .cache
            .encode_spans(text, spans, out, |piece, out| {
                word.clear();
                word.extend(piece.iter().map(|&b| byte_char(b)));
                tokens.clear();
                self.bpe.tokenize(&word, &mut tokens)?;
                out.extend(tokens.iter().map(|t| t.id));
                Ok(())
            })
    }

    /// The raw bytes of the token `id` made of a byte-level piece.
    #[inline]
    pub fn raw_len(&self, id: u32) -> Result<usize> {
        self.pieces.raw_len(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_vocab(extra: &[&str]) -> FxHashMap<String, u32> {
        let mut v: FxHashMap<String, u32> = (0..=255u8)
            .map(|b| (byte_char(b).to_string(), b as u32))
            .collect();
        for (id, t) in (256..).zip(extra) {
            v.insert(t.to_string(), id);
        }
        v
    }

    /// Only a model that makes every byte-level piece into the same byte-char tokens each time
    /// takes the cache; a token's raw length is its chars, and a token no piece can make is
    /// refused rather than given a length.
    #[test]
    fn the_fast_path_is_for_plain_models_with_every_byte_char() {
        let plain = BpeOptions::default();
        let fast = BytePieces::new(&byte_vocab(&["Ġthe", "a b", "<unk>"]), &plain).unwrap();
        assert_eq!(fast.raw_len(256).unwrap(), 4);
        assert_eq!(fast.raw_len(0xE9).unwrap(), 1);
        assert!(
            fast.raw_len(257).is_err(),
            "a literal space is no byte char"
        );
        assert!(fast.raw_len(9999).is_err());
        let mut missing = byte_vocab(&[]);
        missing.remove(&byte_char(0x80).to_string());
        assert!(BytePieces::new(&missing, &plain).is_none());
        for options in [
            BpeOptions {
                dropout: Some(0.1),
                ..plain.clone()
            },
            BpeOptions {
                continuing_subword_prefix: Some("##".into()),
                ..plain.clone()
            },
            BpeOptions {
                end_of_word_suffix: Some("</w>".into()),
                ..plain.clone()
            },
        ] {
            assert!(
                BytePieces::new(&byte_vocab(&[]), &options).is_none(),
                "{options:?}"
            );
        }
        let zero = BpeOptions {
            dropout: Some(0.0),
            unk_token: Some("<unk>".into()),
            ignore_merges: true,
            ..plain
        };
        assert!(BytePieces::new(&byte_vocab(&["<unk>"]), &zero).is_some());
    }
}
