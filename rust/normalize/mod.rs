//! Normalizing text before it is pre-tokenized. So far one form: NFC, which Qwen's tokenizer
//! applies to every text before encoding.

use std::borrow::Cow;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Bytes per stretch that is checked, and normalized only if the check fails.
const STRETCH: usize = 4 << 10;

/// `text` in NFC; borrowed when it already is (the quick check settles most text in one pass).
/// Otherwise it is cut at stable code points into stretches of about [`STRETCH`] bytes and only
/// the stretches that fail the quick check are normalized: a text with a few decomposed accents
/// costs a copy, not a normalization of all of it.
pub fn nfc(text: &str) -> Cow<'_, str> {
    if is_nfc_quick(text.chars()) == IsNormalized::Yes {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + STRETCH).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        // Extend to the next stable code point, so that the cut changes nothing.
        end += text[end..]
            .char_indices()
            .find(|&(_, c)| is_stable(c))
            .map_or(text.len() - end, |(i, _)| i);
        let stretch = &text[start..end];
        if is_nfc_quick(stretch.chars()) == IsNormalized::Yes {
            out.push_str(stretch);
        } else {
            out.extend(stretch.nfc());
        }
        start = end;
    }
    Cow::Owned(out)
}

/// A char that never combines with what comes before it: NFC of a text cut before it is NFC of
/// the two parts (UAX #15, "stable code points": NFC_Quick_Check = Yes and combining class 0).
fn is_stable(c: char) -> bool {
    canonical_combining_class(c) == 0 && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes
}

/// The last byte offset at which `text` may be cut so that NFC of the parts is NFC of the whole
/// (before its last stable char; 0 if there is none). The text after it may still change.
pub fn last_stable_cut(text: &str) -> usize {
    text.char_indices()
        .rev()
        .find(|&(_, c)| is_stable(c))
        .map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfc_composes_and_cuts_are_stable() {
        assert_eq!(nfc("e\u{301}"), "\u{e9}");
        assert!(matches!(nfc("plain"), Cow::Borrowed(_)));
        // Hangul jamo compose: the vowel is no stable cut point, the leading consonant is.
        let jamo = "x\u{1100}\u{1161}";
        assert_eq!(last_stable_cut(jamo), 1);
        for text in [
            "cafe\u{301} au lait",
            "x\u{1100}\u{1161}\u{11a8}y",
            "a\u{308}\u{301}",
        ] {
            let whole: String = text.nfc().collect();
            let at = last_stable_cut(text);
            let parts = format!("{}{}", nfc(&text[..at]), nfc(&text[at..]));
            assert_eq!(parts, whole, "{text:?}");
        }
    }

    #[test]
    fn stretchwise_nfc_is_nfc_on_random_long_text() {
        const ALPHABET: &[&str] = &[
            "a", "e", " ", "\u{301}", "\u{308}", "\u{323}", "\u{1100}", "\u{1161}", "\u{11a8}",
            "\u{e9}", "\u{212b}", "\u{f900}", "\u{3099}", "\u{304b}", "x",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200 {
            let mut text = String::new();
            let len = 1 + (state % (3 * STRETCH as u64)) as usize;
            while text.len() < len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(ALPHABET[(state % ALPHABET.len() as u64) as usize]);
            }
            assert_eq!(nfc(&text), text.nfc().collect::<String>());
        }
    }
}
