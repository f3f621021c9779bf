//! Streaming encode: text arrives in chunks, ids leave as soon as no later chunk can change them.
//!
//! The ids of the whole text are the ids of its pieces, so a prefix of pieces may be encoded
//! once every piece in it is *final*: the same in the whole text, whatever follows. For the
//! GPT family of patterns ([`Pattern::streams_exactly`]) a piece `s..e` of the text seen so far is
//! final when `e + 3 <= w`, `w` being where the trailing run of whitespace begins (the end, if
//! the text does not end in whitespace). Why: such a piece is decided by the chars up to
//! `e + 2` — contractions look at most 3 bytes past a piece's start, o200k's optional
//! contraction 3 bytes past the letters, a letter, digit or punctuation run one char past its
//! end, `(?!\S)` one char past the match — or by a whole whitespace run and the char after it;
//! a whitespace run that ends before `w` is followed by a non-space char already seen, and the
//! run that reaches the end starts at `w`, so a piece before it ending at `e + 3 <= w` never
//! touches it. The patterns have no lookbehind, so what follows a final piece is encoded as if
//! it were a text of its own. DeepSeek-V3's chain is of the same kind: its digit chunks are
//! decided by the next char, its CJK runs too, and inside the rest its regex looks no further
//! than the one above (its text between matches ends where a match starts, which the chars
//! already seen show).
//!
//! Special tokens: an allowed special that starts more than `longest - 1` bytes before the end
//! is wholly in view, so they are only searched up to there, and the stretch before one is final
//! as a whole (the whole-text encoder pre-tokenizes each stretch on its own). Disallowed strings
//! only raise: each check covers what is held plus the last `longest - 1` bytes already let go,
//! so one that straddles a chunk boundary or a release is still seen.
//!
//! Memory: what is held is at most the last few pieces, a trailing whitespace run, a possible
//! partial special, and the newest chunk. A try scans everything held, so tries wait until the
//! held text has doubled (at least [`MIN_TRY`] bytes): linear work even while one long piece
//! holds everything back. Other patterns cannot be proven to stream, so their text is held to the
//! end and encoded whole (exact, memory grows with the text).

use super::{with_scratch, Encoder};
use crate::error::Result;
use crate::specials::{Rules, Selection};
use crate::vocab::Rank;

/// Fewest held bytes before a try: below this, a try costs more than the memory it frees.
const MIN_TRY: usize = 1 << 10;

/// How many bytes past a final piece's end its decision may look (see the module doc).
const LOOKAHEAD: usize = 3;

pub struct Stream {
    rules: Rules,
    /// Longest allowed special (0 if none).
    longest_split: usize,
    /// The last bytes let go, as many as a disallowed string could reach back (see module doc).
    released_tail: String,
    held: String,
    /// Text not yet in NFC, for an encoder that normalizes: the part after the last cut at
    /// which NFC of the parts is NFC of the whole.
    raw: String,
    next_try: usize,
    min_try: usize,
}

impl Encoder {
    /// A stream with tiktoken's special-token arguments, resolved once. `min_try` overrides
    /// [`MIN_TRY`] (tests use 1, so that every chunk boundary is a boundary the stream decides at).
    pub fn stream(
        &self,
        allowed: &Selection,
        disallowed: &Selection,
        min_try: Option<usize>,
    ) -> Result<Stream> {
        let min_try = min_try.unwrap_or(MIN_TRY).max(1);
        let rules = self.specials().rules(allowed, disallowed)?;
        let longest_split = rules.longest_split();
        Ok(Stream {
            rules,
            longest_split,
            released_tail: String::new(),
            held: String::new(),
            raw: String::new(),
            next_try: min_try,
            min_try,
        })
    }

    /// Take in `chunk`; append to `out` the ids that are now final.
    pub fn stream_feed(&self, s: &mut Stream, chunk: &str, out: &mut Vec<Rank>) -> Result<()> {
        if self.normalizes_nfc() {
            s.raw.push_str(chunk);
            let cut = crate::normalize::last_stable_cut(&s.raw);
            s.held.push_str(&crate::normalize::nfc(&s.raw[..cut]));
            s.raw.drain(..cut);
        } else {
            s.held.push_str(chunk);
        }
        if !self.pattern().streams_exactly() || s.held.len() < s.next_try {
            return Ok(());
        }
        let done = self.emit_final(s, false, out)?;
        let keep = s.rules.longest_forbidden().saturating_sub(1);
        if keep > 0 {
            // Only the last `keep` bytes can matter; copy no more of what is let go than that.
            s.released_tail
                .push_str(&s.held[floor_boundary(&s.held, done.saturating_sub(keep))..done]);
            let cut = floor_boundary(&s.released_tail, s.released_tail.len().saturating_sub(keep));
            s.released_tail.drain(..cut);
        }
        s.held.drain(..done);
        s.next_try = (2 * s.held.len()).max(s.min_try);
        Ok(())
    }

    /// The end of the text: append the ids of everything still held.
    pub fn stream_finish(&self, s: &mut Stream, out: &mut Vec<Rank>) -> Result<()> {
        let raw = std::mem::take(&mut s.raw);
        s.held.push_str(&crate::normalize::nfc(&raw));
        self.emit_final(s, true, out)?;
        s.held.clear();
        Ok(())
    }

    /// Encode the final prefix of what `s` holds (all of it `at_end`); returns its length in
    /// bytes. One thread only: a stream starts no pool.
    fn emit_final(&self, s: &Stream, at_end: bool, out: &mut Vec<Rank>) -> Result<usize> {
        let text = s.held.as_str();
        if s.released_tail.is_empty() {
            s.rules.check(text)?;
        } else {
            s.rules.check(&format!("{}{text}", s.released_tail))?;
        }
        let mut in_view = text.len();
        if s.longest_split > 0 && !at_end {
            in_view = floor_boundary(text, in_view.saturating_sub(s.longest_split - 1));
        }
        let mut start = 0;
        if let Some(ac) = &s.rules.split {
            while let Some(m) = ac.find(&text[start..]) {
                let (m_start, m_end) = (start + m.start(), start + m.end());
                if m_start >= in_view {
                    break;
                }
                if m_start > start {
                    with_scratch(|state| self.encode_text(&text[start..m_start], state, out))?;
                }
                let id = self
                    .vocab
                    .special_id(&text[m_start..m_end])
                    .expect("matcher holds only specials");
                out.push(id);
                start = m_end;
            }
        }
        if start >= in_view {
            return Ok(start);
        }
        let open = &text[start..in_view];
        if at_end {
            with_scratch(|state| self.encode_text(open, state, out))?;
            return Ok(text.len());
        }
        let trailing_space = open
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_whitespace())
            .last()
            .map_or(open.len(), |(i, _)| i);
        let spans = self.pattern().spans(open)?;
        let n = spans
            .iter()
            .take_while(|&&(_, end)| end + LOOKAHEAD <= trailing_space)
            .count();
        self.encode_spans(open, &spans[..n], out)?;
        Ok(start + spans[..n].last().map_or(0, |&(_, end)| end))
    }
}

/// The char boundary of `text` at or before `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}
