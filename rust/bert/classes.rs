//! The character classes the BERT steps ask about, looked up in one byte of flags per character:
//! a table for the Basic Multilingual Plane, built once from the Unicode tables HF uses (each of
//! which is a binary search), and computed directly above it.

use std::sync::OnceLock;
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::char::{canonical_combining_class, decompose_canonical};

/// Removed by clean-text: NUL, U+FFFD and control characters (`\t \n \r` are whitespace).
pub const DROP: u8 = 1;
/// BERT whitespace (clean-text turns it into a space).
pub const BERT_SPACE: u8 = 2;
/// `char::is_whitespace`: separates words in the pre-tokenizer.
pub const SPACE: u8 = 4;
/// ASCII punctuation or Unicode P*: a word of its own.
pub const PUNCT: u8 = 8;
/// A CJK ideograph that gets spaces around it.
pub const CJK: u8 = 16;
/// NFD leaves it alone and it is a starter (combining class 0) and not a nonspacing mark, so
/// accent stripping can pass it through without the NFD machinery.
pub const STABLE: u8 = 32;
/// Lowercasing leaves it alone.
pub const LOWER_SELF: u8 = 64;

fn compute(c: char) -> u8 {
    let mut f = 0;
    if c == '\0' || c == '\u{fffd}' || super::normalize::is_control(c) {
        f |= DROP;
    }
    if super::normalize::is_whitespace(c) {
        f |= BERT_SPACE;
    }
    if c.is_whitespace() {
        f |= SPACE;
    }
    if super::split::is_punctuation(c) {
        f |= PUNCT;
    }
    if super::normalize::is_chinese_char(c) {
        f |= CJK;
    }
    let mut decomposed = 0;
    let mut same = true;
    decompose_canonical(c, |d| {
        decomposed += 1;
        same &= d == c;
    });
    if same && decomposed == 1 && canonical_combining_class(c) == 0 && !c.is_mark_nonspacing() {
        f |= STABLE;
    }
    let mut lower = c.to_lowercase();
    if lower.next() == Some(c) && lower.next().is_none() {
        f |= LOWER_SELF;
    }
    f
}

static BMP: OnceLock<Box<[u8]>> = OnceLock::new();

#[inline]
pub fn flags(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x10000 {
        BMP.get_or_init(|| {
            (0..0x10000u32)
                .map(|cp| char::from_u32(cp).map_or(0, compute))
                .collect()
        })[cp as usize]
    } else {
        compute(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_direct_computation() {
        for cp in (0..0x10000u32)
            .step_by(7)
            .chain([0x20, 0x3000, 0x301, 0xe9, 0x4e2d])
        {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(flags(c), compute(c), "U+{cp:04X}");
            }
        }
        assert_eq!(flags('é') & STABLE, 0); // e + U+0301 under NFD
        assert_ne!(flags('ж') & STABLE, 0);
        assert_eq!(flags('\u{301}') & STABLE, 0);
        assert_eq!(flags('한') & STABLE, 0);
        assert_ne!(flags('中') & CJK, 0);
    }
}
