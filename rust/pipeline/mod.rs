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
//! A byte-level pre-tokenizer of a known shape (GPT-2's, Llama 3's, Qwen's, DeepSeek-V3's) on
//! text the normalizer leaves as it is skips the general stages: the pipeline cuts the stretch
//! with the encoders' scanner, and a BPE model that qualifies answers its pieces from the
//! encoders' piece cache (`encode_cached`), else piece by piece (`byte_words.rs`).
//!
//! Downside: the byte-level rank encoder behind the tiktoken dialect is not a model here (its
//! tuned path runs beside the pipeline, not through it; this one shares its scanners and piece
//! caches but merges with HF's merge list, which `subword.Tokenizer` now encodes with too), and
//! the WordPiece and classic BPE facades keep their own older pipelines.

mod byte_words;
mod decode_stream;
mod json;

use byte_words::ByteWords;
pub use decode_stream::DecodeStream;

use crate::added_tokens::{AddedToken, AddedVocabulary};
use crate::bert::BertNormalizer;
use crate::decoders::Decoder;
use crate::error::{Error, Result};
use crate::models::{Model, ModelToken};
use crate::normalizers::{Normalized, Normalizer, UnicodeForm};
use crate::postprocess::{Encoding, Padding, Token, Truncation, Windows, NO_TEXT, NO_WORD};
use crate::pre_tokenizers::PreTokenizer;
use crate::processors::{self, Processor};
use crate::wordpiece::pipeline::BertStretch;
use std::sync::Arc;
use unicode_normalization::{is_nfc_quick, IsNormalized};

#[derive(Clone, Debug)]
pub struct Pipeline {
    /// Built for this pipeline's normalizer (see `added_tokens`): set with [`Pipeline::with_added`].
    pub added: Arc<AddedVocabulary>,
    pub normalizer: Option<Normalizer>,
    pub pre_tokenizer: Option<PreTokenizer>,
    pub model: Model,
    pub post_processor: Option<Processor>,
    pub decoder: Option<Decoder>,
    pub truncation: Option<Truncation>,
    pub padding: Option<Padding>,
}

/// One encode call's result: the tokens with their overflowing windows, and the strings of
/// the tokens whose string is not their id's (see [`Pipeline::token_string`]).
#[derive(Clone, Debug, Default)]
pub struct Encoded {
    pub main: Windows,
    pub strings: Vec<String>,
    /// One sequence and no post-processor: HF reads every token of it, padding included, as
    /// sequence 0 (it gives such a result no sequence ranges).
    pub lone: bool,
}

/// The `text` of a padding token (its string is the padding's `pad_token`).
pub const PAD_TEXT: u32 = NO_TEXT - 1;

/// The input of one sequence: a text, or words already cut (HF's `is_pretokenized`), each its
/// own word however the pre-tokenizer cuts it.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    Text(&'a str),
    Words(&'a [String]),
}

impl Pipeline {
    pub fn new(model: Model) -> Self {
        Pipeline {
            added: Arc::default(),
            normalizer: None,
            pre_tokenizer: None,
            model,
            post_processor: None,
            decoder: None,
            truncation: None,
            padding: None,
        }
    }

    /// The pipeline with these added tokens (id, token), matched as its normalizer leaves them.
    pub fn with_added(mut self, tokens: Vec<(u32, AddedToken)>) -> Result<Self> {
        self.added = Arc::new(AddedVocabulary::new(tokens, self.normalizer.as_ref())?);
        Ok(self)
    }

    /// `text` (and `pair`) through every stage: added tokens, normalizer, pre-tokenizer and
    /// model for each sequence, then truncation (its windows kept as overflowing), the
    /// post-processor and padding to the result's own length (a batch pads again to its
    /// longest, [`Pipeline::pad`]). `add_special_tokens` false leaves out the template's tokens
    /// but keeps its type ids, as HF does.
    pub fn encode_full(
        &self,
        text: Input<'_>,
        pair: Option<Input<'_>>,
        add_special_tokens: bool,
    ) -> Result<Encoded> {
        let mut strings = Vec::new();
        let a = self.encode_input(text, &mut strings)?;
        let b = match pair {
            Some(p) => {
                let mut b = self.encode_input(p, &mut strings)?;
                b.relabel(1, 1);
                Some(b)
            }
            None => None,
        };
        let b = b.map(Windows::new);
        self.post_process(Windows::new(a), b, strings, add_special_tokens)
    }

    /// What follows the model (HF's `post_process`): truncation (its windows kept as
    /// overflowing), the post-processor and padding, on one sequence's tokens and an optional
    /// pair's, which become sequences 0 and 1 (their type ids stay until a template sets
    /// them); `strings` are the token strings their `text` fields point at. A sequence's
    /// overflowing windows (from an earlier truncation) stay unless truncation cuts it again,
    /// which makes new ones, as in HF.
    pub fn post_process(
        &self,
        mut a: Windows,
        mut b: Option<Windows>,
        strings: Vec<String>,
        add_special_tokens: bool,
    ) -> Result<Encoded> {
        a.set_sequence(0);
        if let Some(b) = &mut b {
            b.set_sequence(1);
        }
        let mut parts = match &self.truncation {
            None => std::iter::once(a).chain(b).collect(),
            Some(t) => {
                let added = match (&self.post_processor, add_special_tokens) {
                    (Some(p), true) => p.added(b.is_some()),
                    _ => 0,
                };
                let b_len = b.as_ref().map(|b| b.enc.len());
                let (keep_a, keep_b) = t.lengths(a.enc.len(), b_len, added)?;
                let windows = |w: Windows, keep| -> Result<Windows> {
                    let ranges = t.windows(w.enc.len(), keep)?;
                    if ranges.len() == 1 {
                        return Ok(w); // not cut: its windows from before stay
                    }
                    let mut cut = ranges.into_iter().map(|r| w.enc.slice(r));
                    let mut out = Windows::new(cut.next().expect("a first window"));
                    out.overflow = cut.map(Windows::new).collect();
                    Ok(out)
                };
                let mut parts = vec![windows(a, keep_a)?];
                if let Some(b) = b {
                    parts.push(windows(b, keep_b)?);
                }
                parts
            }
        };
        if let Some(p) = &self.post_processor {
            let text = |t: &Token| self.token_string(t, &strings);
            parts = p.process(parts, add_special_tokens, &text);
        }
        let lone = self.post_processor.is_none() && parts.len() == 1;
        let mut main = processors::join(parts);
        if let Some(p) = &self.padding {
            let target = p.target(main.enc.len());
            self.pad(&mut main, target, lone);
        }
        if lone {
            main.mark_all(0);
        }
        Ok(Encoded {
            main,
            strings,
            lone,
        })
    }

    /// Pad `w` and its overflowing windows to `target` tokens, as the padding says (nothing
    /// without padding or when already as long); `lone` as in [`Encoded::lone`].
    pub fn pad(&self, w: &mut Windows, target: usize, lone: bool) {
        let Some(p) = &self.padding else { return };
        let sequence = if lone { 0 } else { NO_WORD };
        for o in &mut w.overflow {
            self.pad(o, target, lone);
        }
        let n = target.saturating_sub(w.enc.len());
        if n == 0 {
            return;
        }
        let pad = Token {
            id: p.pad_id,
            type_id: p.pad_type_id,
            offsets: (0, 0),
            word: NO_WORD,
            sequence,
            text: PAD_TEXT,
        };
        let toks = &mut w.enc.toks;
        if p.left {
            toks.splice(0..0, std::iter::repeat_n(pad, n));
        } else {
            toks.extend(std::iter::repeat_n(pad, n));
        }
    }

    /// The string a result shows for `t`: the padding's token, an added token as matched, a
    /// post-processor's special token, else the model's.
    pub fn token_string(&self, t: &Token, strings: &[String]) -> String {
        if t.text == PAD_TEXT {
            if let Some(p) = &self.padding {
                return p.pad_token.clone();
            }
        }
        if let Some(s) = strings.get(t.text as usize) {
            return s.clone();
        }
        if t.word == NO_WORD {
            if let Some(s) = self
                .post_processor
                .as_ref()
                .and_then(|p| p.special_string(t.id))
            {
                return s;
            }
        }
        self.id_to_token(t.id).unwrap_or_default().to_string()
    }

    /// [`Pipeline::encode_full`] of a text, without overflowing windows or strings.
    pub fn encode(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special_tokens: bool,
    ) -> Result<Encoding> {
        let e = self.encode_full(Input::Text(text), pair.map(Input::Text), add_special_tokens)?;
        Ok(e.main.enc)
    }

    fn encode_input(&self, input: Input<'_>, strings: &mut Vec<String>) -> Result<Encoding> {
        // Room for about a token per four bytes (English with a 100 K vocabulary makes one per
        // 4.4): grown one token at a time, a line's result was a few reallocations.
        let bytes = match input {
            Input::Text(text) => text.len(),
            Input::Words(words) => words.iter().map(String::len).sum(),
        };
        let mut out = Encoding::with_capacity(bytes / 4 + 4);
        match input {
            Input::Text(text) => {
                let mut word = 0;
                self.encode_text(text, &mut word, &mut out, strings)?;
            }
            Input::Words(words) => {
                // Each word is encoded apart, its offsets within itself (as HF gives them).
                for (k, w) in (0u32..).zip(words) {
                    let mut word = 0;
                    let from = out.len();
                    self.encode_text(w, &mut word, &mut out, strings)?;
                    for t in &mut out.toks[from..] {
                        t.word = k;
                    }
                }
            }
        }
        Ok(out)
    }

    /// One text's tokens: ids, character offsets into `text`, word indexes from `*word` on,
    /// and their strings.
    fn encode_text(
        &self,
        text: &str,
        word: &mut u32,
        out: &mut Encoding,
        strings: &mut Vec<String>,
    ) -> Result<()> {
        let chars = CharIndex::new(text);
        let mut scratch = Scratch::take();
        if let Some((normalizer, model)) = self.bert_stages() {
            let stages = BertStretch {
                normalizer: normalizer.as_ref(),
                model,
            };
            self.encode_bert(text, stages, &chars, word, out, strings, &mut scratch);
            scratch.put_back();
            return Ok(());
        }
        let walked = self.walk(text, |part| {
            match part {
                Part::Added {
                    id,
                    start,
                    end,
                    text,
                } => {
                    out.push(id, (chars.at(start), chars.at(end)), *word);
                    out.set_text(strings.len() as u32);
                    strings.push(text.to_string());
                    *word += 1;
                }
                Part::ByteStretch(stretch) => match self.model.byte_level() {
                    Some(bpe) => {
                        self.encode_cached(bpe, text, stretch, &chars, word, out, &mut scratch)?
                    }
                    _ => {
                        let Scratch {
                            words,
                            model_tokens,
                            ..
                        } = &mut scratch;
                        let (scanner, prefix_space) = (stretch.scanner, stretch.prefix_space);
                        let range = (stretch.start, stretch.end);
                        words.for_each(scanner, prefix_space, text, range, |piece| {
                            model_tokens.clear();
                            self.model.tokenize(piece.word(), model_tokens)?;
                            let len = piece.word().len();
                            for t in model_tokens.iter() {
                                let (start, end) =
                                    piece.original_range(text, t.start.min(len), t.end.min(len));
                                out.push(t.id, (chars.at(start), chars.at(end)), *word);
                            }
                            *word += 1;
                            Ok(())
                        })?
                    }
                },
                Part::Word(piece) => {
                    let model_tokens = &mut scratch.model_tokens;
                    model_tokens.clear();
                    self.model.tokenize(piece.normalized(), model_tokens)?;
                    let len = piece.normalized().len();
                    for t in model_tokens.iter() {
                        // A model's byte ranges can overrun the piece (HF's BPE counts the
                        // prefix's bytes of a byte fallback and skips dropped characters):
                        // keep them inside. (HF lets them run on into the text after the
                        // piece; ids and tokens agree.)
                        let (start, end) = piece.original_range(t.start.min(len), t.end.min(len));
                        out.push(t.id, (chars.at(start), chars.at(end)), *word);
                    }
                    *word += 1;
                }
            }
            Ok(())
        });
        scratch.put_back();
        walked
    }

    /// BERT's normalizer (if any), pre-tokenizer and WordPiece model, when they are this
    /// pipeline's stages and no added token is matched in normalized text: the WordPiece
    /// tokenizer's own path then does their work on each stretch between added tokens, with
    /// one char index per normalized byte instead of the general path's alignments. The two
    /// give the same tokens (tested against HF on both, and against each other).
    fn bert_stages(&self) -> Option<(Option<BertNormalizer>, &crate::wordpiece::WordPiece)> {
        let (Model::WordPiece(model), Some(PreTokenizer::Bert)) =
            (&self.model, &self.pre_tokenizer)
        else {
            return None;
        };
        let normalizer = match &self.normalizer {
            None => None,
            Some(Normalizer::Bert {
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            }) => Some(BertNormalizer {
                clean_text: *clean_text,
                handle_chinese_chars: *handle_chinese_chars,
                strip_accents: strip_accents.unwrap_or(*lowercase),
                lowercase: *lowercase,
            }),
            Some(_) => return None,
        };
        (!self.added.matches_normalized()).then_some((normalizer, &**model))
    }

    /// [`Self::encode_text`] by BERT's stages (`bert_stages`): the added tokens cut out of the
    /// raw text, and each stretch between them through `stages`.
    #[allow(clippy::too_many_arguments)]
    fn encode_bert(
        &self,
        text: &str,
        stages: BertStretch<'_>,
        chars: &CharIndex,
        word: &mut u32,
        out: &mut Encoding,
        strings: &mut Vec<String>,
        scratch: &mut Scratch,
    ) {
        if text.is_empty() {
            return;
        }
        let Scratch {
            bert_norm,
            word_pieces,
            ..
        } = scratch;
        for &(id, start, end) in self.added.split_raw(text).iter() {
            match id {
                Some(id) => {
                    out.push(id, (chars.at(start), chars.at(end)), *word);
                    out.set_text(strings.len() as u32);
                    strings.push(text[start..end].to_string());
                    *word += 1;
                }
                None => {
                    let seg = &text[start..end];
                    stages.encode(
                        seg,
                        chars.at(start),
                        word,
                        bert_norm,
                        word_pieces,
                        |id, o, w| out.push(id, o, w),
                    );
                }
            }
        }
    }

    /// The tokens of a byte-level stretch by `bpe`'s piece cache (`models/byte_pieces.rs`):
    /// the scanner's pieces, their ids all at once, and each id's raw bytes in turn, a piece's
    /// tokens covering it exactly. A token's offsets cover every char it has a byte of, as HF
    /// aligns a mapped byte with its whole char (a space put first stands for the first char,
    /// as in `byte_words.rs`); its word is its piece's index among the non-empty pieces,
    /// counted on from `*word`.
    #[allow(clippy::too_many_arguments)]
    fn encode_cached(
        &self,
        bpe: crate::models::ByteLevelBpe<'_>,
        text: &str,
        stretch: ByteStretch<'_>,
        chars: &CharIndex,
        word: &mut u32,
        out: &mut Encoding,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let Scratch { spans, ids, .. } = scratch;
        let part = &text[stretch.start..stretch.end];
        let (scanned, shift) = byte_words::scanned_text(part, stretch.prefix_space);
        let scanned = &*scanned;
        let original = |k: usize| stretch.start + k.saturating_sub(shift);
        spans.clear();
        // The scanner cuts the stretch as text of its own, as the general path does.
        stretch.scanner.for_each_span(scanned, spans)?;
        spans.retain(|&(a, b)| a < b);
        ids.clear();
        bpe.encode(scanned.as_bytes(), spans, ids)?;
        let broken = || Error::invalid("internal: a piece's tokens do not cover it exactly");
        let mut pieces = (*word..).zip(spans.iter());
        let (mut in_word, mut at, mut end) = (*word, 0, 0);
        for &id in ids.iter() {
            if at == end {
                let (w, &(a, b)) = pieces.next().ok_or_else(broken)?;
                (in_word, at, end) = (w, a, b);
            }
            let from = at;
            at += bpe.raw_len(id)?;
            if at > end {
                return Err(broken());
            }
            let offsets = chars.covering(original(from), original(at - 1) + 1);
            out.push(id, offsets, in_word);
        }
        if at != end || pieces.next().is_some() {
            return Err(broken());
        }
        *word += spans.len() as u32;
        Ok(())
    }

    /// What the model sees of `text`, in order: added tokens cut out of the raw text first,
    /// then, in each stretch between them, the normalizer, added tokens cut out of the
    /// normalized text, and the pre-tokenizer's non-empty pieces.
    fn walk(&self, text: &str, mut f: impl FnMut(Part<'_>) -> Result<()>) -> Result<()> {
        if text.is_empty() {
            // HF hands an empty text to no stage (a normalizer that appends sees nothing).
            return Ok(());
        }
        for &(id, start, end) in self.added.split_raw(text).iter() {
            if let Some(id) = id {
                f(Part::Added {
                    id,
                    start,
                    end,
                    text: &text[start..end],
                })?;
                continue;
            }
            if let Some(scanner) = self.byte_level_scanner(&text[start..end]) {
                self.walk_bytes(text, (start, end), scanner, &mut f)?;
                continue;
            }
            if let Some(scanner) = self.nfc_parts_scanner(end - start) {
                // A long stretch not all in NFC: one decomposed accent no longer sends all of
                // it down the general path, only the part around it.
                let parts =
                    crate::pretokenize::safe_cut::parts(text.as_bytes(), start..end, NFC_PART);
                for part in parts {
                    if is_nfc_quick(text[part.clone()].chars()) == IsNormalized::Yes {
                        self.walk_bytes(text, (part.start, part.end), (scanner, false), &mut f)?;
                    } else {
                        self.walk_normalized(text, part.start, part.end, &mut f)?;
                    }
                }
                continue;
            }
            self.walk_normalized(text, start, end, &mut f)?;
        }
        Ok(())
    }

    /// [`Self::walk`] of the stretch `text[start..end]` (no raw added token in it) through the
    /// normalizer: added tokens cut out of the normalized text, and the pre-tokenizer's pieces.
    fn walk_normalized(
        &self,
        text: &str,
        start: usize,
        end: usize,
        f: &mut impl FnMut(Part<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut stretch = Normalized::of_range(text, start, end);
        if let Some(n) = &self.normalizer {
            n.normalize(text, &mut stretch)?;
        }
        let parts = self.added.split_normalized(stretch.normalized());
        // The common case, no added token in the stretch: it is the one piece, not a copy.
        if matches!(parts[..], [(None, 0, e)] if e == stretch.normalized().len()) {
            return self.walk_words(text, stretch, f);
        }
        for &(id, s, e) in parts.iter() {
            let piece = stretch.slice(s, e);
            match id {
                Some(id) if !piece.normalized().is_empty() => {
                    let (start, end) = piece.original_range(0, piece.normalized().len());
                    f(Part::Added {
                        id,
                        start,
                        end,
                        text: piece.normalized(),
                    })?;
                }
                Some(_) => {}
                None => self.walk_words(text, piece, f)?,
            }
        }
        Ok(())
    }

    /// The scanner to cut a stretch of `len` bytes by, where it is not all in NFC, into parts
    /// of about [`NFC_PART`] bytes, each taking the byte-level path if it is in NFC and the
    /// general one if not: when the normalizer is NFC (Qwen's), the pre-tokenizer a built-in
    /// scanner's isolating `Split` before a byte mapping, and no added token is matched in
    /// normalized text. A safe cut ("graphic ASCII, `\n`, ASCII letter", `safe_cut.rs`) is a
    /// piece boundary of the scanner's pattern; NFC composes nothing across it (the `\n` is a
    /// starter nothing combines with), so NFC of the parts is NFC of the stretch, and the
    /// pieces, their ids and their offsets are the whole stretch's.
    fn nfc_parts_scanner(&self, len: usize) -> Option<&crate::pretokenize::Pattern> {
        if len < 4 * NFC_PART
            || !matches!(self.normalizer, Some(Normalizer::Unicode(UnicodeForm::Nfc)))
            || self.added.matches_normalized()
        {
            return None;
        }
        match self.pre_tokenizer.as_ref()?.byte_level_scanner()? {
            (scanner, false) if scanner.has_safe_cuts() => Some(scanner),
            _ => None,
        }
    }

    /// The pre-tokenizer's scanner when the pipeline can cut and map the bytes of `stretch`
    /// itself (`byte_words.rs`): a byte-level pre-tokenizer of a known shape, and a stretch
    /// the normalizer leaves as it is: no normalizer, or NFC (Qwen's) on a stretch the quick
    /// check finds in NFC already (most text), whose alignments NFC then leaves the identity.
    fn byte_level_scanner(&self, stretch: &str) -> Option<(&crate::pretokenize::Pattern, bool)> {
        let scanner = self.pre_tokenizer.as_ref()?.byte_level_scanner()?;
        let unchanged = match &self.normalizer {
            // DeepSeek-V3's file has an empty Sequence.
            None => true,
            Some(Normalizer::Sequence(steps)) if steps.is_empty() => true,
            Some(Normalizer::Unicode(UnicodeForm::Nfc)) => {
                is_nfc_quick(stretch.chars()) == IsNormalized::Yes
            }
            Some(_) => false,
        };
        unchanged.then_some(scanner)
    }

    /// [`Self::walk`] of the unnormalized stretch `text[start..end]` through the byte-level
    /// fast path: added tokens cut out (as from a normalized stretch, which this one is), the
    /// stretches between them handed on whole, for `scanner` to cut.
    fn walk_bytes(
        &self,
        text: &str,
        (start, end): (usize, usize),
        (scanner, prefix_space): (&crate::pretokenize::Pattern, bool),
        f: &mut impl FnMut(Part<'_>) -> Result<()>,
    ) -> Result<()> {
        let stretch = &text[start..end];
        for &(id, s, e) in self.added.split_normalized(stretch).iter() {
            match id {
                Some(id) if s < e => f(Part::Added {
                    id,
                    start: start + s,
                    end: start + e,
                    text: &stretch[s..e],
                })?,
                Some(_) => {}
                None if s < e => f(Part::ByteStretch(ByteStretch {
                    start: start + s,
                    end: start + e,
                    scanner,
                    prefix_space,
                }))?,
                None => {}
            }
        }
        Ok(())
    }

    /// The pre-tokenizer's non-empty pieces of `piece` (a stretch with no added token), in order.
    fn walk_words(
        &self,
        text: &str,
        piece: Normalized,
        f: &mut impl FnMut(Part<'_>) -> Result<()>,
    ) -> Result<()> {
        if piece.normalized().is_empty() {
            return Ok(());
        }
        let pieces = match &self.pre_tokenizer {
            Some(p) => p.pre_tokenize(text, vec![piece])?,
            None => vec![piece],
        };
        for piece in pieces.iter().filter(|p| !p.normalized().is_empty()) {
            f(Part::Word(piece))?;
        }
        Ok(())
    }

    /// Whether cutting a text at the training reader's safe points (`pretokenize::safe_cut`:
    /// after `X\n`, `X` an ASCII graphic char, before an ASCII letter) leaves every word of
    /// [`Self::for_each_word`] as it is, so that a long text is counted in parallel parts.
    ///
    /// True when the pre-tokenizer first drops whitespace (no word then spans the `\n`) and
    /// what follows it sees one word at a time; the normalizer works char by char, blind to
    /// where the text starts and ends (`\n` and an ASCII letter are starters that compose with
    /// nothing, so even the Unicode forms keep the cut); and no added token holds whitespace
    /// (one could span the cut). Anything else (Prepend, Strip, Replace, Metaspace, ByteLevel
    /// first …) is counted whole: the rule is conservative, never clever.
    pub fn has_safe_cuts(&self) -> bool {
        fn local(n: &Normalizer) -> bool {
            match n {
                Normalizer::Unicode(_)
                | Normalizer::Lowercase
                | Normalizer::StripAccents
                | Normalizer::Bert { .. } => true,
                Normalizer::Sequence(all) => all.iter().all(local),
                // Nmt drops U+000B (whitespace) and makes U+200B a space; ByteLevel turns
                // every space into a printable char: either moves a word boundary.
                Normalizer::Strip { .. }
                | Normalizer::Prepend(_)
                | Normalizer::Replace(_)
                | Normalizer::ByteLevel
                | Normalizer::Nmt
                | Normalizer::Precompiled(_)
                | Normalizer::Custom(_) => false,
            }
        }
        fn drops_whitespace(p: &PreTokenizer) -> bool {
            matches!(
                p,
                PreTokenizer::Bert | PreTokenizer::Whitespace | PreTokenizer::WhitespaceSplit
            )
        }
        // After a whitespace cut each stage splits words on its own; Metaspace's
        // prepend_scheme "first" looks at where a word is in the text, so it is left out.
        fn per_word(p: &PreTokenizer) -> bool {
            match p {
                PreTokenizer::Metaspace { .. } | PreTokenizer::Custom(_) => false,
                PreTokenizer::Sequence(all) => all.iter().all(per_word),
                _ => true,
            }
        }
        let cut_first = match &self.pre_tokenizer {
            Some(PreTokenizer::Sequence(all)) => all
                .split_first()
                .is_some_and(|(first, rest)| drops_whitespace(first) && rest.iter().all(per_word)),
            Some(p) => drops_whitespace(p),
            None => false,
        };
        cut_first
            && self.normalizer.as_ref().is_none_or(local)
            && self
                .added
                .tokens()
                .iter()
                .all(|(_, t)| !t.content.contains(char::is_whitespace))
    }

    /// Call `f(word, start)` for each pre-token of `text` that the model would see, with the
    /// byte offset in `text` where its original text starts (ascending): what HF's trainers
    /// count. Added tokens are cut out first and never counted.
    pub fn for_each_word(&self, text: &str, mut f: impl FnMut(&str, usize)) -> Result<()> {
        let mut words = ByteWords::default();
        self.walk(text, |part| {
            match part {
                Part::Word(piece) => f(piece.normalized(), piece.original_range(0, 0).0),
                Part::ByteStretch(s) => {
                    let range = (s.start, s.end);
                    words.for_each(s.scanner, s.prefix_space, text, range, |piece| {
                        f(piece.word(), piece.start());
                        Ok(())
                    })?
                }
                Part::Added { .. } => {}
            }
            Ok(())
        })
    }

    /// An added token's id, else the model's (HF's `token_to_id`).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added
            .token_to_id(token)
            .or_else(|| self.model.token_to_id(token))
    }

    /// An added token's content (its normalized form, if it has one), else the model's token
    /// (HF's `id_to_token`).
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.added
            .decode_form(id)
            .or_else(|| self.model.id_to_token(id))
    }

    /// The model's vocabulary size, and with the added tokens the model lacks.
    pub fn vocab_size(&self, with_added_tokens: bool) -> usize {
        let model = self.model.vocab_size();
        if !with_added_tokens {
            return model;
        }
        let new = self
            .added
            .tokens()
            .iter()
            .filter(|(id, _)| self.model.id_to_token(*id).is_none())
            .count();
        model + new
    }

    /// The text of `ids`: their tokens (ids nobody has are skipped, and the special added
    /// tokens with `skip_special_tokens`, as HF does) through the decoder, or joined with
    /// spaces without one (HF's default).
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let tokens: Vec<String> = ids
            .iter()
            .filter_map(|&id| {
                let token = self
                    .added
                    .decode_form(id)
                    .or_else(|| self.model.id_to_token(id))?;
                // HF skips by the string: any token that reads as a special added token.
                let skip = skip_special_tokens && self.added.is_special(token);
                (!skip).then(|| token.to_string())
            })
            .collect();
        match &self.decoder {
            Some(d) => d.decode(tokens),
            None => Ok(tokens.join(" ")),
        }
    }
}

/// One thing the model stage is handed, as [`Pipeline::walk`] finds them.
enum Part<'a> {
    /// An added token: its id, its original byte range, and its text (raw or normalized, as
    /// it was matched).
    Added {
        id: u32,
        start: usize,
        end: usize,
        text: &'a str,
    },
    /// A pre-token for the model.
    Word(&'a Normalized),
    /// A stretch for the byte-level fast path.
    ByteStretch(ByteStretch<'a>),
}

/// A stretch of text the normalizer leaves as it is, with no added token in it, for a byte-level
/// pre-tokenizer: `scanner` cuts `text[start..end]` (non-empty), after a space put first with
/// `prefix_space`, and the pieces' bytes are mapped to chars one to one.
#[derive(Clone, Copy)]
struct ByteStretch<'a> {
    start: usize,
    end: usize,
    scanner: &'a crate::pretokenize::Pattern,
    prefix_space: bool,
}

/// Byte offset → character offset of one text.
/// Bytes of a part a stretch not all in NFC is cut into (`Pipeline::nfc_parts_scanner`): the
/// general path's per-byte alignments then cover the parts around a decomposed char, not the
/// whole text (Qwen's tokenizer.json on 2 MB of en_docs holding one: 7.7 MB/s).
const NFC_PART: usize = 4096;

/// The buffers an encode reuses from one text to the next on a thread (a batch of short texts
/// paid an allocation and a free for each of them, text by text).
#[derive(Default)]
struct Scratch {
    words: ByteWords,
    model_tokens: Vec<ModelToken>,
    /// The cached path's pieces of a stretch, and their ids.
    spans: Vec<crate::pretokenize::Span>,
    ids: Vec<u32>,
    /// BERT's path: a stretch normalized, and a word's pieces.
    bert_norm: crate::bert::Normalized,
    word_pieces: Vec<(u32, u32, u32)>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::default();
}

impl Scratch {
    /// This thread's buffers, taken: a stage that calls back into a pipeline on the same
    /// thread (a Python component) finds none and makes its own, so nothing is shared.
    fn take() -> Self {
        SCRATCH.with(std::cell::Cell::take)
    }

    /// Most bytes a buffer keeps between texts: a long text's pieces are let go after it.
    const KEEP_BYTES: usize = 256 << 10;

    fn put_back(mut self) {
        self.words.trim(Self::KEEP_BYTES);
        fn trim<T>(v: &mut Vec<T>) {
            if v.capacity() * std::mem::size_of::<T>() > Scratch::KEEP_BYTES {
                *v = Vec::new();
            }
        }
        trim(&mut self.model_tokens);
        trim(&mut self.spans);
        trim(&mut self.ids);
        trim(&mut self.word_pieces);
        trim(&mut self.bert_norm.origin);
        if self.bert_norm.text.capacity() > Self::KEEP_BYTES {
            self.bert_norm.text = String::new();
        }
        SCRATCH.with(|s| s.set(self));
    }
}

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

    /// The chars of the byte range `a..b` (non-empty), a char it has only some bytes of counted
    /// whole.
    #[inline]
    fn covering(&self, a: usize, b: usize) -> (u32, u32) {
        if self.before.is_empty() {
            (a as u32, b as u32)
        } else {
            (self.before[a], self.before[b - 1] + 1)
        }
    }

    fn at(&self, byte: usize) -> u32 {
        if self.before.is_empty() {
            byte as u32
        } else {
            self.before[byte]
        }
    }
}

#[cfg(test)]
mod tests;
