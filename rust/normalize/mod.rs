//! Normalizing text before it is pre-tokenized. So far one form: NFC, which Qwen's tokenizer
//! applies to every text before encoding.

use std::borrow::Cow;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// `text` in NFC; borrowed when it already is (the quick check settles most text in one pass).
pub fn nfc(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    }
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
}
