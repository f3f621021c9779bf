//! The byte-level pieces of a stretch of text the normalizer leaves as it is, for the
//! pre-tokenizers that only cut with a scanner and map bytes, after a space put first or not
//! (`PreTokenizer::byte_level_scanner`: GPT-2's and RoBERTa's, Llama 3's, Qwen's shapes).
//!
//! Idea: such a pre-tokenizer turns each byte of a piece into one printable char, so where a
//! byte of the model's input came from is arithmetic: the general path's alignments (16 bytes per
//! byte of the stretch, copied for every piece and rebuilt by the byte mapping, a few allocations
//! per char) are not needed. Each piece is written into one reused buffer with, per byte of it,
//! the byte of the original text it stands for.
//!
//! Invariant: the words and the offsets are the general path's. HF aligns every char a byte
//! mapping makes with the whole original char its byte came from, so a token's original range
//! runs from the start of the char holding its first byte to the end of the char holding its
//! last ([`ByteWords::original_range`]). Tested against HF on every corpus line and on hypothesis
//! text (`tests/test_open_models.py`, `tests/test_bpe_model.py`).
//!
//! Downside: only for these shapes, with no normalizer or NFC on text already in NFC; anything
//! else takes the general path. A BPE model with a piece cache (`models/byte_pieces.rs`) skips
//! even this: its pieces are looked up by their raw bytes, and mapped only on a miss.

use crate::error::Result;
use crate::formats::byte_unicode::byte_char;
use crate::pretokenize::Pattern;

/// One piece as the model sees it, and where its bytes came from.
#[derive(Default)]
pub struct ByteWords {
    /// The piece, each byte as its printable char.
    word: String,
    /// Per byte of `word`, the offset in the original text of the byte it stands for.
    from: Vec<usize>,
    /// The scanner's pieces of the stretch being walked, kept between stretches for its room.
    spans: Vec<crate::pretokenize::Span>,
}

impl ByteWords {
    /// Call `f(self)` for each non-empty piece `scanner` cuts from `text[start..end]` (after a
    /// space put first, with `prefix_space`, unless it starts with one), with [`Self::word`]
    /// and [`Self::original_range`] describing it. The space stands for the first char, as HF
    /// aligns a prepended char with the char it precedes.
    pub fn for_each(
        &mut self,
        scanner: &Pattern,
        prefix_space: bool,
        text: &str,
        (start, end): (usize, usize),
        mut f: impl FnMut(&Self) -> Result<()>,
    ) -> Result<()> {
        let (scanned, shift) = scanned_text(&text[start..end], prefix_space);
        let bytes = scanned.as_bytes();
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        scanner.for_each_span(&scanned, &mut spans)?;
        let walked = self.walk_spans(&spans, start, shift, bytes, &mut f);
        self.spans = spans;
        walked
    }

    /// [`Self::for_each`] over the scanner's pieces `spans` of `bytes` (the stretch from `start`,
    /// `shift` bytes of it the space put first).
    fn walk_spans(
        &mut self,
        spans: &[crate::pretokenize::Span],
        start: usize,
        shift: usize,
        bytes: &[u8],
        f: &mut impl FnMut(&Self) -> Result<()>,
    ) -> Result<()> {
        for &(s, e) in spans {
            if s == e {
                continue;
            }
            self.word.clear();
            self.from.clear();
            for (k, &b) in (s..).zip(&bytes[s..e]) {
                let c = byte_char(b);
                self.word.push(c);
                let at = start + k.saturating_sub(shift);
                self.from.extend(std::iter::repeat_n(at, c.len_utf8()));
            }
            f(self)?;
        }
        Ok(())
    }

    /// Let go of buffers a long text grew past `max_bytes`, so a thread keeps no more than that
    /// after it.
    pub fn trim(&mut self, max_bytes: usize) {
        fn cap<T>(v: &mut Vec<T>, max_bytes: usize) {
            if v.capacity() * std::mem::size_of::<T>() > max_bytes {
                *v = Vec::new();
            }
        }
        if self.word.capacity() > max_bytes {
            self.word = String::new();
        }
        cap(&mut self.from, max_bytes);
        cap(&mut self.spans, max_bytes);
    }

    pub fn word(&self) -> &str {
        &self.word
    }

    /// Where the piece starts in the original text.
    pub fn start(&self) -> usize {
        self.from[0]
    }

    /// The original byte range of the word's bytes `a..b`, as the general path's
    /// `Normalized::original_range` gives it (an empty range maps to where it stands).
    pub fn original_range(&self, text: &str, a: usize, b: usize) -> (usize, usize) {
        let bytes = text.as_bytes();
        let char_start = |mut i: usize| {
            while i > 0 && is_continuation(bytes[i]) {
                i -= 1;
            }
            i
        };
        let char_end = |mut i: usize| {
            i += 1;
            while i < bytes.len() && is_continuation(bytes[i]) {
                i += 1;
            }
            i
        };
        if a >= b {
            let at = match self.from.get(a) {
                Some(&i) => char_start(i),
                None => self.from.last().map_or(0, |&i| char_end(i)),
            };
            return (at, at);
        }
        (char_start(self.from[a]), char_end(self.from[b - 1]))
    }
}

/// What a byte-level pre-tokenizer cuts of `part`: `part` itself, or with `prefix_space` and
/// unless it is empty or starts with one, a space and `part`; and how many bytes were put first.
/// Byte k of the result stands for byte `k - shift` of `part` (the space, k = 0, for the first).
pub fn scanned_text(part: &str, prefix_space: bool) -> (std::borrow::Cow<'_, str>, usize) {
    if prefix_space && !part.is_empty() && !part.starts_with(' ') {
        (format!(" {part}").into(), 1)
    } else {
        (part.into(), 0)
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{Pattern, GPT2_PATTERN};

    fn words(w: &mut ByteWords, text: &str) -> Vec<(String, usize)> {
        let scanner = Pattern::new(GPT2_PATTERN).unwrap();
        let mut out = Vec::new();
        w.for_each(&scanner, false, text, (0, text.len()), |w| {
            out.push((w.word().to_string(), w.start()));
            Ok(())
        })
        .unwrap();
        out
    }

    /// The buffers kept between texts give the same words as fresh ones, and `trim` lets go of
    /// those a long text grew past the limit while keeping a short text's.
    #[test]
    fn kept_buffers_cut_alike_and_a_long_texts_buffers_are_let_go() {
        let mut kept = ByteWords::default();
        let long = "word ".repeat(100_000);
        for text in ["hello world", long.as_str(), "é ü", ""] {
            assert_eq!(
                words(&mut kept, text),
                words(&mut ByteWords::default(), text)
            );
        }
        words(&mut kept, &long);
        assert!(kept.spans.capacity() * std::mem::size_of::<crate::pretokenize::Span>() > 1 << 20);
        kept.trim(1 << 20);
        assert_eq!(kept.spans.capacity(), 0);
        words(&mut kept, "a few words");
        let small = kept.spans.capacity();
        kept.trim(1 << 20);
        assert_eq!(kept.spans.capacity(), small);
        assert!(small > 0);
    }
}
