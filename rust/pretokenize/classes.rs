//! Unicode character classes for the hand-written scanners.
//!
//! The tables are built from `regex-syntax`, the very crate whose tables `fancy-regex` (tiktoken's
//! engine) matches `\p{L}`, `\p{N}`, `\s` … with, so a scanner and the regex can never disagree about
//! which class a code point is in. One flat `u16` per code point (2.2 MB, built once in ~2 ms) keeps
//! the hot path a single indexed load.

use regex_syntax::hir::{Class, HirKind};
use std::sync::OnceLock;

pub const L: u16 = 1 << 0;
pub const N: u16 = 1 << 1;
/// Unicode White_Space, i.e. the regex `\s`.
pub const S: u16 = 1 << 2;
pub const LU: u16 = 1 << 3;
pub const LL: u16 = 1 << 4;
pub const LT: u16 = 1 << 5;
pub const LM: u16 = 1 << 6;
pub const LO: u16 = 1 << 7;
pub const M: u16 = 1 << 8;
/// `\r` or `\n`.
pub const CRLF: u16 = 1 << 9;
/// Punctuation, `\p{P}`.
pub const P: u16 = 1 << 10;
/// Symbols, `\p{S}`.
pub const SYM: u16 = 1 << 11;
/// The CJK ranges DeepSeek-V3 isolates: `[一-龥぀-ゟ゠-ヿ]` (U+4E00–9FA5, U+3040–30FF).
pub const HAN_KANA: u16 = 1 << 12;

/// Word characters, the regex `\w` (letters, marks, decimal digits, connector punctuation,
/// joiners).
pub const W: u16 = 1 << 13;

/// "Other": neither whitespace, letter nor number (`[^\s\p{L}\p{N}]`).
#[inline(always)]
pub fn is_other(c: u16) -> bool {
    c & (S | L | N) == 0
}

pub struct Tables {
    by_char: Box<[u16]>,
    ascii: [u16; 128],
    /// For each of the letters in the contraction alternatives, every char that `(?i)x` matches.
    folds: [(u8, Box<[char]>); 8],
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .expect("built-in class pattern parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(cls)) => cls
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        other => panic!("{pattern} is not a Unicode class: {other:?}"),
    }
}

fn build() -> Tables {
    let mut by_char = vec![0u16; 0x110000].into_boxed_slice();
    for (pattern, bit) in [
        (r"\p{L}", L),
        (r"\p{N}", N),
        (r"\s", S),
        (r"\p{Lu}", LU),
        (r"\p{Ll}", LL),
        (r"\p{Lt}", LT),
        (r"\p{Lm}", LM),
        (r"\p{Lo}", LO),
        (r"\p{M}", M),
        (r"[\r\n]", CRLF),
        (r"\p{P}", P),
        (r"\p{S}", SYM),
        (
            "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]",
            HAN_KANA,
        ),
        (r"\w", W),
    ] {
        for (lo, hi) in class_ranges(pattern) {
            for c in lo..=hi {
                by_char[c as usize] |= bit;
            }
        }
    }
    let mut ascii = [0u16; 128];
    ascii.copy_from_slice(&by_char[..128]);
    let folds = b"sdmtlver".map(|x| {
        let chars: Vec<char> = class_ranges(&format!("(?i){}", x as char))
            .into_iter()
            .flat_map(|(lo, hi)| (lo..=hi).filter_map(char::from_u32))
            .collect();
        (x, chars.into_boxed_slice())
    });
    Tables {
        by_char,
        ascii,
        folds,
    }
}

pub fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build)
}

impl Tables {
    /// Class bits of one char.
    #[inline]
    pub fn of(&self, c: char) -> u16 {
        self.by_char[c as usize]
    }

    /// Class bits and byte length of the char starting at `i` (a char boundary of valid UTF-8).
    #[inline(always)]
    pub fn at(&self, b: &[u8], i: usize) -> (u16, usize) {
        let x = b[i];
        if x < 0x80 {
            (self.ascii[x as usize], 1)
        } else {
            let (c, n) = decode(b, i);
            (self.by_char[c as usize], n)
        }
    }

    /// Does the char at `i` match `(?i)letter`? Returns its length if so.
    #[inline]
    pub fn folds_to(&self, b: &[u8], i: usize, letter: u8) -> Option<usize> {
        let x = b[i];
        if x < 0x80 {
            return (x.to_ascii_lowercase() == letter).then_some(1);
        }
        let (c, n) = decode(b, i);
        let set = &self.folds.iter().find(|(l, _)| *l == letter)?.1;
        set.contains(&char::from_u32(c)?).then_some(n)
    }
}

/// Decode the multi-byte UTF-8 char at `i`. The input comes from a `&str`, so it is valid.
#[inline(always)]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i] as u32;
    if x < 0xE0 {
        (((x & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
    } else if x < 0xF0 {
        (
            ((x & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F),
            3,
        )
    } else {
        (
            ((x & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F),
            4,
        )
    }
}

/// Byte length of the char that ends at `end` (exclusive).
#[inline(always)]
pub fn len_before(b: &[u8], end: usize) -> usize {
    let mut k = end - 1;
    while b[k] & 0xC0 == 0x80 {
        k -= 1;
    }
    end - k
}

/// End of `\p{N}{1,max}` at `i`, whose char (of `n0` bytes) is a digit: the patterns cut a run of
/// digits into pieces of at most `max`, counted from the run's start.
#[inline(always)]
pub fn digits_end(t: &Tables, b: &[u8], i: usize, n0: usize, max: usize) -> usize {
    let mut j = i + n0;
    for _ in 1..max {
        if j >= b.len() {
            break;
        }
        let (c, n) = t.at(b, j);
        if c & N == 0 {
            break;
        }
        j += n;
    }
    j
}

/// End of the maximal run of chars starting at `i` whose class satisfies `keep`.
#[inline(always)]
pub fn run_end(t: &Tables, b: &[u8], mut i: usize, keep: impl Fn(u16) -> bool) -> usize {
    while i < b.len() {
        let (c, n) = t.at(b, i);
        if !keep(c) {
            break;
        }
        i += n;
    }
    i
}

const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// High bit of each byte of `v` set where that byte is an ASCII letter (SWAR: eight bytes in a
/// few integer operations). Folding case with `| 0x20` maps `A-Z` onto `a-z` and no other ASCII
/// byte into `a-z` (`@` and `[` land just outside); bytes ≥ 0x80 are cleared by `!v`.
#[inline(always)]
fn ascii_letter_bits(v: u64) -> u64 {
    ascii_lower_bits(v | 0x2020_2020_2020_2020) & !v
}

/// High bit of each byte set where that byte is in `a-z` (0x61..=0x7A): `y + 0x1F` reaches the
/// high bit from 0x61 up, `y + 0x05` from 0x7B up, with no carry between bytes since `y < 0x80`.
#[inline(always)]
fn ascii_lower_bits(v: u64) -> u64 {
    let y = v & LOW7;
    (y + 0x1f1f_1f1f_1f1f_1f1f) & !(y + 0x0505_0505_0505_0505) & !v & HIGH
}

#[inline(always)]
fn swar_run_end(
    b: &[u8],
    mut i: usize,
    bits: impl Fn(u64) -> u64,
    byte: impl Fn(u8) -> bool,
) -> usize {
    while i + 8 <= b.len() {
        let v = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let m = bits(v);
        if m != HIGH {
            return i + ((!m & HIGH).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && byte(b[i]) {
        i += 1;
    }
    i
}

/// End of the run of ASCII letters from `i`, eight bytes a step. Every ASCII letter is `\p{L}`,
/// so a scanner may skip these before its general class loop.
#[inline(always)]
pub fn ascii_letters_end(b: &[u8], i: usize) -> usize {
    swar_run_end(b, i, ascii_letter_bits, |x| x.is_ascii_alphabetic())
}

/// End of the run of ASCII lowercase letters (`\p{Ll}`, all in o200k's "lower" class) from `i`.
#[inline(always)]
pub fn ascii_lower_end(b: &[u8], i: usize) -> usize {
    swar_run_end(b, i, ascii_lower_bits, |x| x.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(b: &[u8], f: fn(&u8) -> bool) -> usize {
        b.iter().position(|c| !f(c)).unwrap_or(b.len())
    }

    #[test]
    fn swar_runs_match_byte_loops() {
        let alpha: fn(&u8) -> bool = u8::is_ascii_alphabetic;
        let lower: fn(&u8) -> bool = u8::is_ascii_lowercase;
        // Every byte value at every offset of the first eight-byte step and past it.
        for x in 0..=255u8 {
            for at in 0..12 {
                let mut b = vec![b'q'; 20];
                b[at] = x;
                assert_eq!(ascii_letters_end(&b, 0), want(&b, alpha), "{x:#x} at {at}");
                assert_eq!(ascii_lower_end(&b, 0), want(&b, lower), "{x:#x} at {at}");
                b[at] = x.to_ascii_uppercase();
                b[(at + 5) % 20] = b'Z';
                assert_eq!(ascii_letters_end(&b, 0), want(&b, alpha));
                assert_eq!(ascii_lower_end(&b, 3), 3 + want(&b[3..], lower));
            }
        }
    }
}
