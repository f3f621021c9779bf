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
//! else takes the general path.

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
        let part = &text[start..end];
        let prefixed = prefix_space && !part.is_empty() && !part.starts_with(' ');
        let spaced;
        let scanned = if prefixed {
            spaced = format!(" {part}");
            spaced.as_str()
        } else {
            part
        };
        // Byte k of `scanned` stands for byte `start + k - shift` of the text (the space, k = 0,
        // for the first byte).
        let shift = usize::from(prefixed);
        let bytes = scanned.as_bytes();
        for (s, e) in scanner.spans(scanned)? {
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

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}
