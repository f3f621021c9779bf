//! 64 bytes of text → one bit per byte for each ASCII class the block scanners need.
//!
//! Idea: the classes of 64 bytes at once, as bit masks, let a scanner find every piece boundary
//! of a block with a few dozen integer operations (`block_cl100k.rs`) instead of a chain of
//! class lookups and branches per piece. Two classifiers give the same masks: AVX2 (two 32-byte
//! loads, a dozen compares, one `movemask` per class and half) and a portable byte loop over a
//! 256-entry table, which the tests hold both the AVX2 classifier and the block rules to. The
//! walker (`blocks.rs`) checks for AVX2 once per text, not per block, and runs its loop compiled
//! with AVX2 on, so the classifier inlines into it.
//!
//! Only ASCII is classified here: bytes ≥ 0x80 are `high`, and the scanners treat everything
//! from the first of them as unknown, but for the letters `wide_letters.rs` then takes out of
//! `high` (the walker asks for them only when a block has a non-ASCII byte). The ASCII members of each class are checked against the
//! Unicode tables the scalar scanners use (`classes.rs`) in the tests below, so the two can
//! never disagree about, say, `\x0b` being whitespace or `\x1c` not being it.

use super::wide_letters::WideLeads;

/// Bit `k` of each mask says whether byte `k` of the block is in the class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteMasks {
    /// `A-Z`, `a-z`: the ASCII `\p{L}`.
    pub letter: u64,
    /// `a-z`: the ASCII `\p{Ll}` (o200k's words change case only upwards).
    pub lower: u64,
    /// `0-9`: the ASCII `\p{N}`.
    pub digit: u64,
    /// `\r`, `\n`.
    pub line: u64,
    /// The ASCII `\s` other than `\r` and `\n`: space, `\t`, `\x0b`, `\x0c`.
    pub blank: u64,
    /// The space, 0x20 (the optional space before a pattern's run of others).
    pub space: u64,
    /// `'`, which starts the contractions.
    pub apostrophe: u64,
    /// `/`, which o200k's runs of others take after them with the line breaks.
    pub slash: u64,
    /// Bytes ≥ 0x80: the parts of non-ASCII chars.
    pub high: u64,
    /// The bytes past the text's end, in none of the classes: set by the walker (`blocks.rs`) in
    /// a text's last, padded block, 0 in a full block. Every block scanner treats the end as an
    /// end (a piece stops there, `(?!\S)` holds there), so a short text is cut whole.
    pub end: u64,
}

impl ByteMasks {
    /// ASCII bytes in none of the classes: `[^\s\p{L}\p{N}]` (punctuation, symbols, controls).
    #[inline(always)]
    pub fn other(&self) -> u64 {
        !(self.letter | self.digit | self.line | self.blank | self.high | self.end)
    }
}

/// A way to classify a block; the block scanners are generic over it.
pub trait Classify: Copy {
    fn classify(self, block: &[u8; 64]) -> ByteMasks;

    /// The bytes of the block's non-ASCII letters that `w` takes (`wide_letters.rs`).
    fn wide_letters(self, block: &[u8; 64], w: &WideLeads) -> u64;
}

/// The portable classifier: one table load per byte. Too slow to pay for the blocks (the
/// scanners run scalar without AVX2); the tests hold the block rules and the AVX2 classifier
/// to it.
#[cfg(test)]
pub mod portable {
    use super::{ByteMasks, Classify, WideLeads};

    pub const LETTER: u8 = 1;
    pub const DIGIT: u8 = 2;
    pub const LINE: u8 = 4;
    pub const BLANK: u8 = 8;
    const SPACE: u8 = 16;
    const APOSTROPHE: u8 = 32;
    const HIGH: u8 = 64;
    pub const LOWER: u8 = 128;

    const fn byte_class(x: u8) -> u8 {
        match x {
            b'a'..=b'z' => LETTER | LOWER,
            b'A'..=b'Z' => LETTER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => LINE,
            b' ' => BLANK | SPACE,
            b'\t' | 0x0b | 0x0c => BLANK,
            b'\'' => APOSTROPHE,
            0x80..=0xff => HIGH,
            _ => 0,
        }
    }

    pub static BYTE_CLASS: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut x = 0;
        while x < 256 {
            t[x] = byte_class(x as u8);
            x += 1;
        }
        t
    };

    #[derive(Clone, Copy)]
    pub struct Portable;

    impl Classify for Portable {
        #[inline(always)]
        fn classify(self, block: &[u8; 64]) -> ByteMasks {
            let mut m = ByteMasks::default();
            for (k, &x) in block.iter().enumerate() {
                let c = BYTE_CLASS[x as usize] as u64;
                m.letter |= (c & 1) << k;
                m.digit |= ((c >> 1) & 1) << k;
                m.line |= ((c >> 2) & 1) << k;
                m.blank |= ((c >> 3) & 1) << k;
                m.space |= ((c >> 4) & 1) << k;
                m.apostrophe |= ((c >> 5) & 1) << k;
                m.high |= ((c >> 6) & 1) << k;
                m.lower |= ((c >> 7) & 1) << k;
                m.slash |= ((x == b'/') as u64) << k;
            }
            m
        }

        #[inline(always)]
        fn wide_letters(self, block: &[u8; 64], w: &WideLeads) -> u64 {
            crate::pretokenize::wide_letters::portable(block, w)
        }
    }
}

/// The AVX2 classifier. Only made by [`Avx2::detect`], so holding one proves the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when this CPU runs AVX2 (std caches the answer: an atomic load after the first).
    #[inline]
    pub fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Classify for Avx2 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> ByteMasks {
        // SAFETY: an `Avx2` exists only where `detect` found AVX2; the loads read the 64 bytes
        // of `block` (unaligned loads).
        unsafe { classify_avx2(block) }
    }

    #[inline(always)]
    fn wide_letters(self, block: &[u8; 64], w: &WideLeads) -> u64 {
        // SAFETY: as for `classify`.
        unsafe { super::wide_letters::avx2(block, w) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify_avx2(block: &[u8; 64]) -> ByteMasks {
    use std::arch::x86_64::*;
    let half = |x: __m256i| {
        let eq = |c: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8));
        // Signed compares: bytes ≥ 0x80 are negative, so they fall below every bound.
        let gt = |v: __m256i, c: u8| _mm256_cmpgt_epi8(v, _mm256_set1_epi8(c as i8));
        let lt = |v: __m256i, c: u8| _mm256_cmpgt_epi8(_mm256_set1_epi8(c as i8), v);
        let folded = _mm256_or_si256(x, _mm256_set1_epi8(0x20));
        let letter = _mm256_and_si256(gt(folded, b'a' - 1), lt(folded, b'z' + 1));
        let lower = _mm256_and_si256(gt(x, b'a' - 1), lt(x, b'z' + 1));
        let digit = _mm256_and_si256(gt(x, b'0' - 1), lt(x, b'9' + 1));
        let line = _mm256_or_si256(eq(b'\r'), eq(b'\n'));
        let space = eq(b' ');
        let blank = _mm256_or_si256(
            _mm256_or_si256(space, eq(b'\t')),
            _mm256_or_si256(eq(0x0b), eq(0x0c)),
        );
        let bits = |v: __m256i| _mm256_movemask_epi8(v) as u32 as u64;
        [
            bits(letter),
            bits(digit),
            bits(line),
            bits(blank),
            bits(space),
            bits(eq(b'\'')),
            bits(x),
            bits(lower),
            bits(eq(b'/')),
        ]
    };
    let p = block.as_ptr().cast::<__m256i>();
    let lo = half(_mm256_loadu_si256(p));
    let hi = half(_mm256_loadu_si256(p.add(1)));
    let join = |k: usize| lo[k] | hi[k] << 32;
    ByteMasks {
        letter: join(0),
        digit: join(1),
        line: join(2),
        blank: join(3),
        space: join(4),
        apostrophe: join(5),
        high: join(6),
        lower: join(7),
        slash: join(8),
        end: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::portable::*;
    use super::*;
    use crate::pretokenize::classes::{tables, CRLF, L, LL, LM, LO, LT, M, N, S};

    #[test]
    fn ascii_classes_are_the_unicode_tables() {
        let t = tables();
        for x in 0u8..0x80 {
            let (c, _) = t.at(&[x], 0);
            let m = BYTE_CLASS[x as usize];
            assert_eq!(m & LETTER != 0, c & L != 0, "{x:#x} letter");
            assert_eq!(m & DIGIT != 0, c & N != 0, "{x:#x} digit");
            assert_eq!(m & LINE != 0, c & CRLF != 0, "{x:#x} line");
            assert_eq!(m & BLANK != 0, c & S != 0 && c & CRLF == 0, "{x:#x} blank");
            assert_eq!(m & LOWER != 0, c & LL != 0, "{x:#x} lower");
            assert_eq!(
                c & (LT | LM | LO | M),
                0,
                "{x:#x}: ASCII has only upper and lower letters"
            );
        }
    }

    #[test]
    fn classifiers_agree_on_every_byte_at_every_position() {
        let Some(avx2) = Avx2::detect() else {
            eprintln!("no AVX2 on this CPU: only the portable classifier runs here");
            return;
        };
        for x in 0..=255u8 {
            for at in 0..64 {
                let mut block = [b'q'; 64];
                block[at] = x;
                block[(at * 7 + 3) % 64] = x.wrapping_add(at as u8);
                assert_eq!(
                    avx2.classify(&block),
                    Portable.classify(&block),
                    "{x:#x} at {at}"
                );
            }
        }
    }
}
