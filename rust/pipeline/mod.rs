//! The tokenizer as HF `tokenizers` composes it: normalizer → pre-tokenizer → model →
//! post-processor, each stage optional but the model, with the decoder for the way back.
//!
//! Idea: the text becomes one [`Normalized`] (every byte knowing its original range), the
//! pre-tokenizer cuts it into pieces that keep those ranges, the model tokenizes each piece, and
//! a token's offsets are its piece's original range of the token's bytes, as characters of the
//! original text (HF's Python offsets). A token's word is the index of its piece among the
//! non-empty pieces.
//!
//! Invariant: offsets are character offsets into the text given, ascending within a word.
//!
//! A pair is its two sequences encoded alike, the second with type id 1 and sequence 1, joined
//! by the post-processor's template or, without one, one after the other (HF's default).
//!
//! Downside: so far the WordLevel and WordPiece models and the template post-processors run
//! here; added tokens, truncation and padding are still in the older per-model pipelines.

mod json;

use crate::decoders::Decoder;
use crate::error::Result;
use crate::models::{Model, ModelToken};
use crate::normalizers::{Normalized, Normalizer};
use crate::postprocess::Encoding;
use crate::pre_tokenizers::PreTokenizer;
use crate::processors::Template;

#[derive(Clone, Debug)]
pub struct Pipeline {
    pub normalizer: Option<Normalizer>,
    pub pre_tokenizer: Option<PreTokenizer>,
    pub model: Model,
    pub post_processor: Option<Template>,
    pub decoder: Option<Decoder>,
}

impl Pipeline {
    pub fn new(model: Model) -> Self {
        Pipeline {
            normalizer: None,
            pre_tokenizer: None,
            model,
            post_processor: None,
            decoder: None,
        }
    }

    /// [`Pipeline::encode`] with the token strings: the model's for its tokens, the template's
    /// for the ones it added.
    pub fn encode_with_tokens(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special_tokens: bool,
    ) -> Result<(Encoding, Vec<String>)> {
        let e = self.encode(text, pair, add_special_tokens)?;
        let mut added = match (&self.post_processor, add_special_tokens) {
            (Some(t), true) => t.added_strings(pair.is_some()),
            _ => Vec::new(),
        }
        .into_iter();
        let tokens = e
            .toks
            .iter()
            .map(|t| {
                let from_model = || self.model.id_to_token(t.id).unwrap_or_default().to_string();
                if t.word == crate::postprocess::NO_WORD {
                    added.next().unwrap_or_else(from_model)
                } else {
                    from_model()
                }
            })
            .collect();
        Ok((e, tokens))
    }

    /// `text` (and `pair`) through every stage; `add_special_tokens` false leaves out the
    /// template's tokens but keeps its type ids, as HF does.
    pub fn encode(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special_tokens: bool,
    ) -> Result<Encoding> {
        let a = self.encode_sequence(text)?;
        let b = match pair {
            Some(p) => {
                let mut b = self.encode_sequence(p)?;
                b.relabel(1, 1);
                Some(b)
            }
            None => None,
        };
        match &self.post_processor {
            Some(t) => {
                let mut out = Encoding::default();
                if add_special_tokens {
                    t.apply(&a, b.as_ref(), &mut out);
                } else {
                    t.without_specials().apply(&a, b.as_ref(), &mut out);
                }
                Ok(out)
            }
            None => {
                let mut out = a;
                if let Some(b) = b {
                    out.extend_from(&b, None, None);
                }
                Ok(out)
            }
        }
    }

    /// One sequence's tokens: ids, character offsets into `text`, and word indexes.
    fn encode_sequence(&self, text: &str) -> Result<Encoding> {
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
            let len = piece.normalized().len();
            for t in &tokens {
                // A model's byte ranges can overrun the piece (HF's BPE counts the prefix's
                // bytes of a byte fallback and skips dropped characters): keep them inside.
                // (HF lets them run on into the text after the piece; ids and tokens agree.)
                let (start, end) = piece.original_range(t.start.min(len), t.end.min(len));
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
