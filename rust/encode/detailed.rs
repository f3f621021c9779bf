//! Encoding with per-token character offsets, for the HF-style `Tokenizer` API. Every special token
//! in the vocabulary is split out (HF always matches added tokens), and each stretch of text between
//! them may get a leading space first (HF's ByteLevel `add_prefix_space`); that space belongs to no
//! input character, so offsets never point at it.

use super::{with_scratch, Encoder};
use crate::error::Result;
use crate::normalizers::{Normalized, UnicodeForm};
use crate::specials::Selection;
use crate::vocab::Rank;
use std::borrow::Cow;

pub struct Detailed {
    pub ids: Vec<Rank>,
    /// (start, end) character offsets into the input, one pair per id.
    pub offsets: Vec<(usize, usize)>,
}

impl Encoder {
    pub fn encode_detailed(&self, text: &str, prefix_space: bool) -> Result<Detailed> {
        let mut ids = Vec::with_capacity(text.len() / 4 + 1);
        let mut spans = Vec::with_capacity(text.len() / 4 + 1);
        // A stretch between specials: under NFC (Qwen's files) it is normalized as HF does, with
        // HF's tables and alignments, and each token's byte range maps back through them.
        let segment =
            |seg: &str, at: usize, ids: &mut Vec<Rank>, spans: &mut Vec<(usize, usize)>| {
                let normalized = (self.normalizes_nfc()
                    && matches!(crate::normalize::nfc(seg), Cow::Owned(_)))
                .then(|| {
                    let mut n = Normalized::new(seg);
                    UnicodeForm::Nfc.apply(&mut n);
                    n
                });
                let input = normalized.as_ref().map_or(seg, |n| n.normalized());
                let before = spans.len();
                self.segment_spans(input, prefix_space, ids, spans)?;
                for span in &mut spans[before..] {
                    let (s, e) = match &normalized {
                        Some(n) => n.original_range(span.0, span.1),
                        None => *span,
                    };
                    *span = (at + s, at + e);
                }
                Ok::<(), crate::Error>(())
            };
        let mut start = 0;
        if let Some(ac) = self.specials().allowed_matcher(&Selection::All)? {
            for m in ac.find_iter(text) {
                if m.start() > start {
                    segment(&text[start..m.start()], start, &mut ids, &mut spans)?;
                }
                ids.push(
                    self.vocab()
                        .special_id(&text[m.range()])
                        .expect("matcher holds only specials"),
                );
                spans.push((m.start(), m.end()));
                start = m.end();
            }
        }
        if start < text.len() {
            segment(&text[start..], start, &mut ids, &mut spans)?;
        }
        Ok(Detailed {
            offsets: char_offsets(text.as_bytes(), &spans),
            ids,
        })
    }

    /// The ids of `seg` onto `ids` and each one's byte range in `seg` onto `spans`. A prefix
    /// space added for ByteLevel belongs to no byte of `seg`: the bytes of a token that are only
    /// that space point at the first char instead.
    fn segment_spans(
        &self,
        seg: &str,
        prefix_space: bool,
        ids: &mut Vec<Rank>,
        spans: &mut Vec<(usize, usize)>,
    ) -> Result<()> {
        let mut cursor = 0;
        let (owned, mut virtual_bytes);
        let input = if prefix_space && !seg.starts_with(' ') {
            owned = format!(" {seg}");
            virtual_bytes = 1;
            owned.as_str()
        } else {
            virtual_bytes = 0;
            seg
        };
        let before = ids.len();
        with_scratch(|scratch| self.encode_text(input, scratch, ids))?;
        let first_char = seg.chars().next().map_or(0, char::len_utf8);
        for &id in &ids[before..] {
            let mut len = self.token_bytes(id)?.len();
            let skip = len.min(virtual_bytes);
            virtual_bytes -= skip;
            len -= skip;
            if len == 0 {
                spans.push((cursor, cursor + first_char));
                continue;
            }
            spans.push((cursor, cursor + len));
            cursor += len;
        }
        Ok(())
    }
}

/// Byte spans to character spans; a span that starts or ends inside a character covers that whole
/// character, as HF reports byte-level tokens.
fn char_offsets(b: &[u8], spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // `starts[x]`: how many chars start before byte x.
    let mut starts = Vec::with_capacity(b.len() + 1);
    let mut count = 0usize;
    starts.push(0);
    for &byte in b {
        count += (byte & 0xC0 != 0x80) as usize;
        starts.push(count);
    }
    let upto = |x: usize| starts[x];
    spans
        .iter()
        .map(|&(s, e)| {
            if s == e {
                let c = upto(s);
                (c, c)
            } else {
                let start = upto(s + 1) - 1;
                (start, upto(e))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::char_offsets;

    #[test]
    fn partial_chars_cover_their_char() {
        let text = "a인b".as_bytes(); // 'a', then 3 bytes, then 'b'
        let spans = [(0, 1), (1, 2), (2, 4), (4, 5), (5, 5)];
        assert_eq!(
            char_offsets(text, &spans),
            vec![(0, 1), (1, 2), (1, 2), (2, 3), (3, 3)]
        );
    }
}
