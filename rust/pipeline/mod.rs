//! The tokenizer as HF `tokenizers` composes it: normalizer → pre-tokenizer → model, each stage
//! optional but the model, with the decoder for the way back.
//!
//! Idea: the text becomes one [`Normalized`] (every byte knowing its original range), the
//! pre-tokenizer cuts it into pieces that keep those ranges, the model tokenizes each piece, and
//! a token's offsets are its piece's original range of the token's bytes, as characters of the
//! original text (HF's Python offsets). A token's word is the index of its piece among the
//! non-empty pieces.
//!
//! Invariant: offsets are character offsets into the text given, ascending within a word.
//!
//! Downside: so far only the WordLevel model runs here; post-processing (templates), added
//! tokens, truncation and padding are still in the older per-model pipelines.

use crate::decoders::Decoder;
use crate::error::Result;
use crate::models::{Model, ModelToken};
use crate::normalizers::{Normalized, Normalizer};
use crate::postprocess::Encoding;
use crate::pre_tokenizers::PreTokenizer;

#[derive(Clone, Debug)]
pub struct Pipeline {
    pub normalizer: Option<Normalizer>,
    pub pre_tokenizer: Option<PreTokenizer>,
    pub model: Model,
    pub decoder: Option<Decoder>,
}

impl Pipeline {
    pub fn new(model: Model) -> Self {
        Pipeline {
            normalizer: None,
            pre_tokenizer: None,
            model,
            decoder: None,
        }
    }

    /// The tokens of `text`: ids, character offsets into `text`, and word indexes.
    pub fn encode(&self, text: &str) -> Result<Encoding> {
        let mut normalized = Normalized::new(text);
        if let Some(n) = &self.normalizer {
            n.normalize(&mut normalized);
        }
        let pieces = match &self.pre_tokenizer {
            Some(p) => p.pre_tokenize(vec![normalized])?,
            None => vec![normalized],
        };
        let chars = CharIndex::new(text);
        let mut out = Encoding::default();
        let mut tokens: Vec<ModelToken> = Vec::new();
        let words = pieces.iter().filter(|p| !p.normalized().is_empty());
        for (word, piece) in (0u32..).zip(words) {
            tokens.clear();
            self.model.tokenize(piece.normalized(), &mut tokens)?;
            for t in &tokens {
                let (start, end) = piece.original_range(t.start, t.end);
                out.push(t.id, (chars.at(start), chars.at(end)), word);
            }
        }
        Ok(out)
    }

    /// The text of `ids`: their tokens (ids the model lacks are skipped, as HF does) through
    /// the decoder, or joined with spaces without one (HF's default).
    pub fn decode(&self, ids: &[u32]) -> String {
        let tokens: Vec<String> = ids
            .iter()
            .filter_map(|&id| self.model.id_to_token(id).map(str::to_string))
            .collect();
        match &self.decoder {
            Some(d) => d.decode(tokens),
            None => tokens.join(" "),
        }
    }
}

/// Byte offset → character offset of one text.
struct CharIndex {
    /// The character count before each byte (and one past the end), for non-ASCII text; empty
    /// when the text is ASCII and the two are the same.
    before: Vec<u32>,
}

impl CharIndex {
    fn new(text: &str) -> Self {
        if text.is_ascii() {
            return CharIndex { before: Vec::new() };
        }
        let mut before = Vec::with_capacity(text.len() + 1);
        let mut n = 0u32;
        for c in text.chars() {
            before.extend(std::iter::repeat_n(n, c.len_utf8()));
            n += 1;
        }
        before.push(n);
        CharIndex { before }
    }

    fn at(&self, byte: usize) -> u32 {
        if self.before.is_empty() {
            byte as u32
        } else {
            self.before[byte]
        }
    }
}
