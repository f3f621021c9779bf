//! The whole WordPiece tokenizer, HF's pipeline in order: added tokens cut out of the raw text →
//! BertNormalizer → BertPreTokenizer → WordPiece → truncation → template → padding. Offsets are
//! character offsets into the caller's text.

use super::WordPiece;
use crate::bert::{for_each_word, BertNormalizer, Normalized};
use crate::error::{Error, Result};
use crate::postprocess::{Encoding, Padding, Template, Truncation};
use aho_corasick::AhoCorasick;
use std::cell::RefCell;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    pub content: String,
    pub id: u32,
    pub special: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordPieceDecoder {
    pub prefix: String,
    pub cleanup: bool,
}

pub struct WordPieceTokenizer {
    pub normalizer: Option<BertNormalizer>,
    pub model: WordPiece,
    added: Vec<AddedToken>,
    matcher: Option<AhoCorasick>,
    pub template: Option<Template>,
    pub truncation: Option<Truncation>,
    pub padding: Option<Padding>,
    pub decoder: Option<WordPieceDecoder>,
}

thread_local! {
    static SCRATCH: RefCell<(Normalized, Vec<(u32, u32, u32)>)> = RefCell::default();
}

fn count_chars(b: &[u8]) -> u32 {
    b.iter().filter(|&&x| (x as i8) >= -0x40).count() as u32
}

impl WordPieceTokenizer {
    pub fn new(
        normalizer: Option<BertNormalizer>,
        model: WordPiece,
        added: Vec<AddedToken>,
        template: Option<Template>,
        decoder: Option<WordPieceDecoder>,
    ) -> Result<Self> {
        if let Some(t) = &template {
            t.validate()?;
        }
        let mut tok = WordPieceTokenizer {
            normalizer,
            model,
            added: Vec::new(),
            matcher: None,
            template,
            truncation: None,
            padding: None,
            decoder,
        };
        tok.set_added(added)?;
        Ok(tok)
    }

    pub fn set_added(&mut self, added: Vec<AddedToken>) -> Result<()> {
        for (k, a) in added.iter().enumerate() {
            if a.content.is_empty() {
                return Err(Error::invalid("an added token cannot be the empty string"));
            }
            if added[..k].iter().any(|b| b.content == a.content) {
                return Err(Error::invalid(format!(
                    "added token {:?} is listed twice",
                    a.content
                )));
            }
            if let Some(t) = self.model.token(a.id) {
                if t != a.content {
                    return Err(Error::invalid(format!(
                        "added token {:?} has id {}, which the vocabulary gives to {t:?}",
                        a.content, a.id
                    )));
                }
            }
        }
        self.matcher = if added.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(added.iter().map(|a| a.content.as_bytes()))
                    .map_err(|e| Error::invalid(format!("added tokens: {e}")))?,
            )
        };
        self.added = added;
        Ok(())
    }

    pub fn added(&self) -> &[AddedToken] {
        &self.added
    }

    /// One sequence through added tokens, normalizer, pre-tokenizer and model.
    pub fn encode_sequence(&self, text: &str, type_id: u32) -> Encoding {
        let mut enc = Encoding::default();
        let bytes = text.as_bytes();
        let mut word = 0u32;
        let mut chars = 0u32;
        let mut at = 0usize;
        SCRATCH.with(|s| {
            let (norm, pieces) = &mut *s.borrow_mut();
            let mut gap = |enc: &mut Encoding, seg: &str, first_char: u32, word: &mut u32| {
                if seg.is_empty() {
                    return;
                }
                norm.clear();
                match &self.normalizer {
                    Some(n) => n.normalize_into(seg, first_char, norm),
                    None => {
                        let mut idx = first_char;
                        for c in seg.chars() {
                            norm.text.push(c);
                            norm.origin.extend(std::iter::repeat_n(idx, c.len_utf8()));
                            idx += 1;
                        }
                    }
                }
                let (ntext, origin) = (&norm.text, &norm.origin);
                for_each_word(ntext, |s, e| {
                    pieces.clear();
                    self.model.encode_word(&ntext[s..e], pieces);
                    for &(id, ps, pe) in pieces.iter() {
                        let (ps, pe) = (s + ps as usize, s + pe as usize);
                        enc.push(id, (origin[ps], origin[pe - 1] + 1), *word);
                    }
                    *word += 1;
                });
            };
            if let Some(m) = &self.matcher {
                for hit in m.find_iter(bytes) {
                    let seg = &text[at..hit.start()];
                    gap(&mut enc, seg, chars, &mut word);
                    chars += count_chars(seg.as_bytes());
                    let n = count_chars(&bytes[hit.start()..hit.end()]);
                    enc.push(
                        self.added[hit.pattern().as_usize()].id,
                        (chars, chars + n),
                        word,
                    );
                    word += 1;
                    chars += n;
                    at = hit.end();
                }
            }
            gap(&mut enc, &text[at..], chars, &mut word);
        });
        if type_id != 0 {
            enc.type_ids.iter_mut().for_each(|t| *t = type_id);
            enc.sequence.iter_mut().for_each(|t| *t = 1);
        }
        enc
    }

    /// Encode a text or a pair, truncated and with the template's tokens; padded only to a fixed
    /// length (padding to the longest is for batches).
    pub fn encode(&self, text: &str, pair: Option<&str>, add_special: bool) -> Result<Encoding> {
        let mut e = self.encode_unpadded(text, pair, add_special)?;
        if let Some(p) = &self.padding {
            if p.length.is_some() || p.multiple_of.is_some() {
                let target = p.target(e.len());
                p.apply(&mut e, target);
            }
        }
        Ok(e)
    }

    fn encode_unpadded(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special: bool,
    ) -> Result<Encoding> {
        let mut a = self.encode_sequence(text, 0);
        let mut b = pair.map(|p| self.encode_sequence(p, 1));
        let template = self.template.as_ref().filter(|_| add_special);
        if let Some(t) = &self.truncation {
            let added = template.map_or(0, |tp| tp.added(b.is_some()));
            t.apply(&mut a, b.as_mut(), added)?;
        }
        Ok(match (template, b) {
            (Some(t), b) => t.apply(a, b),
            (None, Some(b)) => {
                let mut a = a;
                for (k, &id) in b.ids.iter().enumerate() {
                    a.push(id, b.offsets[k], b.words[k]);
                    *a.type_ids.last_mut().unwrap() = b.type_ids[k];
                    *a.sequence.last_mut().unwrap() = 1;
                }
                a
            }
            (None, None) => a,
        })
    }

    /// Encode many inputs in parallel; padding to the longest looks at the whole batch.
    pub fn encode_batch(
        &self,
        inputs: &[(&str, Option<&str>)],
        add_special: bool,
    ) -> Result<Vec<Encoding>> {
        use rayon::prelude::*;
        let mut out: Vec<Encoding> = inputs
            .par_iter()
            .with_min_len(16)
            .map(|&(a, b)| self.encode_unpadded(a, b, add_special))
            .collect::<Result<_>>()?;
        if let Some(p) = &self.padding {
            let longest = out.iter().map(|e| e.len()).max().unwrap_or(0);
            let target = p.target(longest);
            out.par_iter_mut().for_each(|e| p.apply(e, target));
        }
        Ok(out)
    }

    /// Only the ids (no offsets kept): the fast path for counting and model input.
    pub fn encode_ids(&self, text: &str, add_special: bool) -> Result<Vec<u32>> {
        Ok(self.encode(text, None, add_special)?.ids)
    }

    pub fn token(&self, id: u32) -> Option<&str> {
        self.model.token(id).or_else(|| {
            self.added
                .iter()
                .find(|a| a.id == id)
                .map(|a| a.content.as_str())
        })
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added
            .iter()
            .find(|a| a.content == token)
            .map(|a| a.id)
            .or_else(|| self.model.token_to_id(token))
    }

    pub fn vocab_size(&self) -> usize {
        let outside = self
            .added
            .iter()
            .filter(|a| a.id as usize >= self.model.len())
            .count();
        self.model.len() + outside
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.added.iter().any(|a| a.special && a.id == id)
    }

    /// Text of `ids`: tokens joined by the decoder (HF's WordPiece decoder, or spaces without one).
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        let mut out = String::new();
        let mut first = true;
        for &id in ids {
            if skip_special && self.is_special(id) {
                continue;
            }
            let tok = self.token(id).ok_or_else(|| {
                Error::invalid(format!(
                    "id {id} is not in the vocabulary (ids are 0..{})",
                    self.vocab_size()
                ))
            })?;
            match &self.decoder {
                Some(d) => {
                    let piece = if first {
                        tok.to_string()
                    } else if let Some(rest) = tok.strip_prefix(d.prefix.as_str()) {
                        rest.to_string()
                    } else {
                        format!(" {tok}")
                    };
                    if d.cleanup {
                        out.push_str(&cleanup(&piece));
                    } else {
                        out.push_str(&piece);
                    }
                }
                None => {
                    if !first {
                        out.push(' ');
                    }
                    out.push_str(tok);
                }
            }
            first = false;
        }
        Ok(out)
    }
}

/// BERT's detokenization clean-up, applied to each decoded piece (as HF does).
fn cleanup(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}
