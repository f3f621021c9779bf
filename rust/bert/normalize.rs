//! HF's BertNormalizer, with alignment: the normalized text plus, for every normalized byte, the
//! index of the original character it comes from — enough to give HF's character offsets.
//!
//! ASCII takes a table-driven fast path (it cannot decompose, carry accents or be CJK). Other
//! characters are buffered in runs and put through HF's steps in HF's order: clean, CJK, NFD and
//! drop nonspacing marks, lowercase. Runs end at ASCII characters, which are NFD starters, so
//! canonical reordering never crosses a run boundary and per-run NFD equals whole-text NFD.

use super::classes::{flags, BERT_SPACE, CJK, DROP, LOWER_SELF, STABLE};
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::UnicodeNormalization;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BertNormalizer {
    pub clean_text: bool,
    pub handle_chinese_chars: bool,
    pub strip_accents: bool,
    pub lowercase: bool,
}

impl Default for BertNormalizer {
    fn default() -> Self {
        BertNormalizer {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: true,
            lowercase: true,
        }
    }
}

/// Normalized text and, per byte of it, the original character index it was made from.
#[derive(Default, Debug)]
pub struct Normalized {
    pub text: String,
    pub origin: Vec<u32>,
}

impl Normalized {
    pub fn clear(&mut self) {
        self.text.clear();
        self.origin.clear();
    }

    fn push(&mut self, c: char, origin: u32) {
        let before = self.text.len();
        self.text.push(c);
        self.origin
            .extend(std::iter::repeat_n(origin, self.text.len() - before));
    }

    fn push_ascii(&mut self, b: u8, origin: u32) {
        self.text.push(b as char);
        self.origin.push(origin);
    }
}

/// `\t \n \r` count as whitespace, not control (BERT's rule).
pub fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

pub fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// The CJK ideograph blocks BERT spaces out (the ranges HF uses, typo at 0x2B920 included).
pub fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// What clean-text does to an ASCII byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AsciiAction {
    Keep,
    Space,
    Drop,
}

/// `ascii_action` for every ASCII byte, computed once (the Unicode tables are binary searches).
const ASCII_ACTIONS: [AsciiAction; 128] = {
    let mut t = [AsciiAction::Keep; 128];
    let mut b = 0;
    while b < 128 {
        // Cc is 0x00..=0x1F and 0x7F in ASCII; \t \n \r are whitespace, not control.
        t[b] = if b == 0x7F || (b < 0x20 && !matches!(b, 0x09 | 0x0A | 0x0D)) {
            AsciiAction::Drop
        } else if matches!(b, 0x09 | 0x0A | 0x0D | 0x20) {
            AsciiAction::Space
        } else {
            AsciiAction::Keep
        };
        b += 1;
    }
    t
};

#[cfg(test)]
fn ascii_action(b: u8) -> AsciiAction {
    let c = b as char;
    if b == 0 || is_control(c) {
        AsciiAction::Drop
    } else if is_whitespace(c) {
        AsciiAction::Space
    } else {
        AsciiAction::Keep
    }
}

/// The canonical decomposition of a precomposed Hangul syllable (Unicode's algorithm).
fn hangul_jamo(c: char) -> Option<[Option<char>; 3]> {
    let s = (c as u32).checked_sub(0xAC00).filter(|&s| s < 11172)?;
    let (l, v, t) = (0x1100 + s / 588, 0x1161 + (s % 588) / 28, 0x11A7 + s % 28);
    Some([
        char::from_u32(l),
        char::from_u32(v),
        (t != 0x11A7).then(|| char::from_u32(t)).flatten(),
    ])
}

impl BertNormalizer {
    /// Append the normalization of `text` to `out`; `first_char` is the original index of
    /// `text`'s first character.
    pub fn normalize_into(&self, text: &str, first_char: u32, out: &mut Normalized) {
        let mut run: Vec<(char, u32)> = Vec::new();
        let mut idx = first_char;
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if !run.is_empty() {
                    self.flush(&mut run, out);
                }
                // A stretch of ASCII maps byte for byte (dropped bytes end it): one bulk copy.
                let end = bytes[i..]
                    .iter()
                    .position(|&x| {
                        x >= 0x80
                            || (self.clean_text && ASCII_ACTIONS[x as usize] == AsciiAction::Drop)
                    })
                    .map_or(bytes.len(), |k| i + k);
                if end == i {
                    // a dropped byte
                    i += 1;
                    idx += 1;
                    continue;
                }
                let (lower, clean) = (self.lowercase, self.clean_text);
                let mapped = bytes[i..end].iter().map(|&x| {
                    if clean && ASCII_ACTIONS[x as usize] == AsciiAction::Space {
                        b' '
                    } else if lower {
                        x.to_ascii_lowercase()
                    } else {
                        x
                    }
                });
                // SAFETY: only ASCII bytes are appended, so the text stays valid UTF-8.
                unsafe { out.text.as_mut_vec() }.extend(mapped);
                out.origin.extend(idx..idx + (end - i) as u32);
                idx += (end - i) as u32;
                i = end;
                continue;
            } else {
                let c = text[i..].chars().next().expect("char boundary");
                i += c.len_utf8();
                let f = flags(c);
                if self.clean_text && f & DROP != 0 {
                    idx += 1;
                    continue;
                }
                if self.clean_text && f & BERT_SPACE != 0 {
                    self.flush(&mut run, out);
                    out.push_ascii(b' ', idx);
                } else if self.handle_chinese_chars && f & CJK != 0 {
                    if self.strip_accents && f & STABLE == 0 {
                        run.extend([(' ', idx), (c, idx), (' ', idx)]);
                    } else {
                        self.flush(&mut run, out);
                        out.push_ascii(b' ', idx);
                        out.push(c, idx);
                        out.push_ascii(b' ', idx);
                    }
                } else if !self.strip_accents || f & STABLE != 0 {
                    // A starter NFD leaves alone bounds any reordering: no run needed.
                    self.flush(&mut run, out);
                    if self.lowercase && f & LOWER_SELF == 0 {
                        for l in c.to_lowercase() {
                            out.push(l, idx);
                        }
                    } else {
                        out.push(c, idx);
                    }
                } else if let Some(jamo) = hangul_jamo(c) {
                    // Hangul syllables decompose by arithmetic into starters without case.
                    self.flush(&mut run, out);
                    for j in jamo.into_iter().flatten() {
                        out.push(j, idx);
                    }
                } else {
                    run.push((c, idx));
                }
            }
            idx += 1;
        }
        self.flush(&mut run, out);
    }

    /// Accents, then case, on a run of non-ASCII characters (and the spaces put around CJK).
    fn flush(&self, run: &mut Vec<(char, u32)>, out: &mut Normalized) {
        if run.is_empty() {
            return;
        }
        let mut emit = |c: char, origin: u32| {
            if self.lowercase {
                for l in c.to_lowercase() {
                    out.push(l, origin);
                }
            } else {
                out.push(c, origin);
            }
        };
        if self.strip_accents {
            // HF's alignment rule for a transform: a character with change <= 0 takes the place
            // of the next input character (and `-change` more are dropped); an inserted one
            // (change > 0) belongs to the input character before it.
            let mut cursor = 0usize;
            for (c, change) in run.iter().map(|&(c, _)| c).nfd() {
                let origin = if change > 0 {
                    run[cursor.saturating_sub(1)].1
                } else {
                    let o = run[cursor.min(run.len() - 1)].1;
                    cursor += 1 + (-change) as usize;
                    o
                };
                if !c.is_mark_nonspacing() {
                    emit(c, origin);
                }
            }
        } else {
            for &(c, origin) in run.iter() {
                emit(c, origin);
            }
        }
        run.clear();
    }

    pub fn normalize(&self, text: &str) -> Normalized {
        let mut out = Normalized::default();
        self.normalize_into(text, 0, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_original_characters() {
        let n = BertNormalizer::default();
        let out = n.normalize("Café\u{0}中x");
        assert_eq!(out.text, "cafe \u{4e2d} x");
        // c a f e -> 0..4 ; \0 dropped ; spaces and 中 -> 5 ; x -> 6
        assert_eq!(out.origin[..4], [0, 1, 2, 3]);
        assert_eq!(*out.origin.last().unwrap(), 6);
    }

    #[test]
    fn ascii_table_matches_the_unicode_rules() {
        for b in 0..128u8 {
            assert_eq!(ASCII_ACTIONS[b as usize], ascii_action(b), "byte {b:#x}");
        }
    }

    #[test]
    fn hangul_arithmetic_matches_nfd() {
        for cp in (0xAC00..0xAC00 + 11172).step_by(13) {
            let c = char::from_u32(cp).unwrap();
            let fast: String = hangul_jamo(c).unwrap().into_iter().flatten().collect();
            let nfd: String = std::iter::once(c).nfd().map(|(c, _)| c).collect();
            assert_eq!(fast, nfd, "U+{cp:04X}");
        }
    }

    #[test]
    fn combining_accent_is_dropped_and_case_folds() {
        let n = BertNormalizer::default();
        assert_eq!(n.normalize("E\u{301}\tÅ").text, "e a");
        let cased = BertNormalizer {
            lowercase: false,
            strip_accents: false,
            ..Default::default()
        };
        assert_eq!(cased.normalize("É").text, "É");
    }
}
