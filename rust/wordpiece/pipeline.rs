//! The whole WordPiece tokenizer, HF's pipeline in order: added tokens cut out of the raw text →
//! BertNormalizer → BertPreTokenizer → WordPiece → truncation → template → padding. Offsets are
//! character offsets into the caller's text.

use super::WordPiece;
use crate::bert::{for_each_word, BertNormalizer, Normalized};
use crate::error::{Error, Result};
use crate::postprocess::{Batch, Encoding, Padding, Template, Truncation, Windows};
use aho_corasick::AhoCorasick;
use std::cell::RefCell;
use std::sync::Arc;

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

/// Cheap to clone: the model is shared, so changing truncation or padding copies no vocabulary.
#[derive(Clone)]
pub struct WordPieceTokenizer {
    pub normalizer: Option<BertNormalizer>,
    pub model: Arc<WordPiece>,
    added: Vec<AddedToken>,
    matcher: Option<AhoCorasick>,
    pub template: Option<Template>,
    pub truncation: Option<Truncation>,
    pub padding: Option<Padding>,
    pub decoder: Option<WordPieceDecoder>,
}

/// Per-thread buffers reused from text to text.
#[derive(Default)]
struct Scratch {
    norm: Normalized,
    pieces: Vec<(u32, u32, u32)>,
    a: Encoding,
    b: Encoding,
    out: Encoding,
    /// The last text with its overflowing windows, when truncation cut it.
    windows: Option<Windows>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Texts per parallel task in a batch: enough to amortize a task, small enough to balance.
const BATCH_CHUNK: usize = 64;

fn count_chars(b: &[u8]) -> u32 {
    b.iter().filter(|&&x| (x as i8) >= -0x40).count() as u32
}

/// BERT's stages between the added tokens: BertNormalizer (if any) → BertPreTokenizer →
/// WordPiece, on one stretch of text with no added token in it. The HF drop-in's pipeline
/// takes this path too when its stages are these (`Pipeline::bert_stretch`).
#[derive(Clone, Copy)]
pub struct BertStretch<'a> {
    pub normalizer: Option<&'a BertNormalizer>,
    pub model: &'a WordPiece,
}

impl BertStretch<'_> {
    /// Call `push(id, offsets, word)` for each token of `seg`, in order: offsets in chars of
    /// the whole text, whose char `first_char` starts `seg`; words counted on from `*word`.
    /// `norm` and `pieces` are buffers.
    pub fn encode(
        &self,
        seg: &str,
        first_char: u32,
        word: &mut u32,
        norm: &mut Normalized,
        pieces: &mut Vec<(u32, u32, u32)>,
        mut push: impl FnMut(u32, (u32, u32), u32),
    ) {
        if seg.is_empty() {
            return;
        }
        norm.clear();
        match self.normalizer {
            Some(n) => n.normalize_into(seg, first_char, norm),
            None => {
                for (idx, c) in (first_char..).zip(seg.chars()) {
                    norm.text.push(c);
                    norm.origin.extend(std::iter::repeat_n(idx, c.len_utf8()));
                }
            }
        }
        let (ntext, origin) = (&norm.text, &norm.origin);
        for_each_word(ntext, |s, e| {
            pieces.clear();
            self.model.encode_word(&ntext[s..e], pieces);
            for &(id, ps, pe) in pieces.iter() {
                let (ps, pe) = (s + ps as usize, s + pe as usize);
                push(id, (origin[ps], origin[pe - 1] + 1), *word);
            }
            *word += 1;
        });
    }
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
            model: Arc::new(model),
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
        let mut seen = rustc_hash::FxHashSet::default();
        for a in &added {
            if a.content.is_empty() {
                return Err(Error::invalid("an added token cannot be the empty string"));
            }
            if !seen.insert(a.content.as_str()) {
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
        self.matcher = crate::specials::matcher(
            &added
                .iter()
                .map(|a| a.content.as_bytes())
                .collect::<Vec<_>>(),
        )?;
        self.added = added;
        Ok(())
    }

    pub fn added(&self) -> &[AddedToken] {
        &self.added
    }

    /// One sequence through added tokens, normalizer, pre-tokenizer and model, into `s.a`, or
    /// into `s.b` (with type id and sequence 1) for the `second` of a pair.
    fn encode_sequence(&self, text: &str, second: bool, s: &mut Scratch) {
        let Scratch {
            norm, pieces, a, b, ..
        } = s;
        let enc = if second { b } else { a };
        enc.clear();
        let bytes = text.as_bytes();
        let mut word = 0u32;
        let mut chars = 0u32;
        let mut at = 0usize;
        let mut gap = |enc: &mut Encoding, seg: &str, first_char: u32, word: &mut u32| {
            let stretch = BertStretch {
                normalizer: self.normalizer.as_ref(),
                model: &self.model,
            };
            stretch.encode(seg, first_char, word, norm, pieces, |id, offsets, word| {
                enc.push(id, offsets, word)
            });
        };
        if let Some(m) = &self.matcher {
            for hit in m.find_iter(bytes) {
                let seg = &text[at..hit.start()];
                gap(enc, seg, chars, &mut word);
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
        gap(enc, &text[at..], chars, &mut word);
        if second {
            enc.relabel(1, 1);
        }
    }

    /// A text or a pair, truncated and with the template's tokens, into `s.out` (unpadded), and
    /// its overflowing windows into `s.overflow`.
    fn encode_into(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special: bool,
        s: &mut Scratch,
    ) -> Result<()> {
        self.encode_sequence(text, false, s);
        if let Some(p) = pair {
            self.encode_sequence(p, true, s);
        }
        s.windows = None;
        let template = self.template.as_ref().filter(|_| add_special);
        let b_len = pair.map(|_| s.b.len());
        let (keep_a, keep_b) = match &self.truncation {
            Some(t) => t.lengths(
                s.a.len(),
                b_len,
                template.map_or(0, |tp| tp.added(b_len.is_some())),
            )?,
            None => (None, None),
        };
        if keep_a.is_none() && keep_b.is_none() {
            let b = pair.map(|_| &s.b);
            assemble(template, &s.a, b, &mut s.out);
            return Ok(());
        }
        let t = self.truncation.as_ref().expect("lengths came from it");
        let windows = |e: &Encoding, keep| -> Result<Windows> {
            let mut parts = t.windows(e.len(), keep)?.into_iter().map(|r| e.slice(r));
            let mut w = Windows::new(parts.next().expect("a first window"));
            w.overflow = parts.map(Windows::new).collect();
            Ok(w)
        };
        let a = windows(&s.a, keep_a)?;
        let b = match b_len {
            Some(_) => Some(windows(&s.b, keep_b)?),
            None => None,
        };
        s.windows = Some(match template {
            Some(tp) => tp.apply_windows(a, b),
            None => match b {
                Some(b) => a.merge(&b),
                None => a,
            },
        });
        Ok(())
    }

    fn push_result(s: &Scratch, batch: &mut Batch) {
        match &s.windows {
            Some(w) => batch.push_windows(w),
            None => batch.push(&s.out),
        }
    }

    /// Encode a text or a pair (one item of a batch): truncated, with the template's tokens.
    /// Padding is left to the reader ([`Self::pad_target`]).
    pub fn encode(&self, text: &str, pair: Option<&str>, add_special: bool) -> Result<Batch> {
        SCRATCH.with(|cell| {
            let s = &mut *cell.borrow_mut();
            self.encode_into(text, pair, add_special, s)?;
            let mut batch = Batch::with_capacity(s.out.len(), 1);
            Self::push_result(s, &mut batch);
            Ok(batch)
        })
    }

    /// Encode many inputs in parallel, in chunks that each fill one [`Batch`], in input order.
    pub fn encode_batch(
        &self,
        inputs: &[(&str, Option<&str>)],
        add_special: bool,
    ) -> Result<Vec<Batch>> {
        use rayon::prelude::*;
        crate::pool::install(0, || {
            inputs
                .par_chunks(BATCH_CHUNK)
                .map(|chunk| {
                    SCRATCH.with(|cell| {
                        let s = &mut *cell.borrow_mut();
                        // About one token per four bytes: reserve once instead of growing.
                        let bytes: usize = chunk
                            .iter()
                            .map(|(a, b)| a.len() + b.map_or(0, str::len))
                            .sum();
                        let mut batch =
                            Batch::with_capacity(bytes / 4 + 4 * chunk.len(), chunk.len());
                        for &(a, b) in chunk {
                            self.encode_into(a, b, add_special, s)?;
                            Self::push_result(s, &mut batch);
                        }
                        Ok(batch)
                    })
                })
                .collect()
        })?
    }

    /// The length results of a batch whose longest has `longest` tokens are padded to (0 when
    /// padding is off).
    pub fn pad_target(&self, longest: usize) -> usize {
        self.padding.as_ref().map_or(0, |p| p.target(longest))
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
                    "id {id} is not in the vocabulary (valid ids: 0 to {})",
                    self.vocab_size().saturating_sub(1)
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

/// `a` (and `b`) with the template's tokens (or just joined), into `out`.
fn assemble(template: Option<&Template>, a: &Encoding, b: Option<&Encoding>, out: &mut Encoding) {
    match template {
        Some(t) => t.apply(a, b, out),
        None => {
            out.clear();
            out.extend_from(a, None, None);
            if let Some(b) = b {
                out.extend_from(b, None, None);
            }
        }
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
