//! Unicode character classes for the hand-written scanners.
//!
//! The tables are built from `regex-syntax`, the very crate whose tables `fancy-regex` (tiktoken's
//! engine) matches `\p{L}`, `\p{N}`, `\s` … with, so a scanner and the regex can never disagree about
//! which class a code point is in. One flat `u16` per code point (2.2 MB, built once in ~2 ms) keeps
//! the lookup a single indexed load; two 2 KB tables per 64-code-point block spare a CJK or
//! Hangul char its last byte and that table's cache misses (CJK alone spans 40 KB of it).

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

/// Not a class any code point has (the bits above [`W`] are unused): a block of mixed classes.
const MIXED: u16 = u16::MAX;

pub struct Tables {
    by_char: Box<[u16]>,
    ascii: [u16; 128],
    /// For each block of 64 code points below U+10000 (`c >> 6`, which a 3-byte char's first
    /// two bytes give without decoding it), the class bits all 64 share: a run of a class
    /// passes a char of a block that shares one of its bits on a load from this 2 KB table
    /// instead of the 2.2 MB one (CJK and Hangul text touch 60 KB of that).
    block_and: Box<[u16; 1024]>,
    /// The class of every code point of such a block when they all have the same one (every
    /// CJK ideograph and Hangul syllable block), else [`MIXED`]: `at` then needs neither the
    /// char's last byte nor the big table.
    block_class: Box<[u16; 1024]>,
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
    let mut block_and = Box::new([0u16; 1024]);
    let mut block_class = Box::new([MIXED; 1024]);
    for (k, block) in by_char[..0x10000].chunks(64).enumerate() {
        block_and[k] = block.iter().fold(u16::MAX, |all, &c| all & c);
        if block.iter().all(|&c| c == block[0]) {
            block_class[k] = block[0];
        }
    }
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
        block_and,
        block_class,
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
            return (self.ascii[x as usize], 1);
        }
        if x < 0xE0 {
            let c = ((x as usize & 0x1F) << 6) | (b[i + 1] as usize & 0x3F);
            return (self.by_char[c], 2);
        }
        if x < 0xF0 {
            let c = self.block_class[block_of(b, i)];
            if c != MIXED {
                return (c, 3);
            }
        }
        self.at_decoded(b, i)
    }

    /// [`Tables::at`] for a multi-byte char, without the block shortcut.
    #[inline(always)]
    fn at_decoded(&self, b: &[u8], i: usize) -> (u16, usize) {
        let (c, n) = decode(b, i);
        (self.by_char[c as usize], n)
    }

    /// Does `c`, not ASCII, match `(?i)x` for one of the contractions' letters (`ſ` for `s`)?
    pub fn is_contraction_fold(&self, c: char) -> bool {
        !c.is_ascii() && self.folds.iter().any(|(_, set)| set.contains(&c))
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

/// The 64-code-point block (`c >> 6`) of the 3-byte char at `i`, from its first two bytes.
#[inline(always)]
fn block_of(b: &[u8], i: usize) -> usize {
    // Valid UTF-8: a 3-byte char's second byte is there.
    ((b[i] as usize & 0x0F) << 6) | (b[i + 1] as usize & 0x3F)
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

/// End of the maximal run of chars from `i` that have one of the class bits of `mask` (`\p{L}+`
/// is `class_run_end(t, b, i, L)`): `run_end` for a class, with a char whose whole 64-code-point
/// block shares a bit of `mask` (every CJK ideograph, Hangul syllable, Cyrillic letter …)
/// passed without decoding it.
#[inline(always)]
pub fn class_run_end(t: &Tables, b: &[u8], mut i: usize, mask: u16) -> usize {
    while i < b.len() {
        let x = b[i];
        if x < 0x80 {
            if t.ascii[x as usize] & mask == 0 {
                break;
            }
            i += 1;
            continue;
        }
        if x < 0xE0 {
            // A 2-byte char: its block is its first byte's low bits, and a char of a mixed
            // block decodes in a few operations into the table's first 4 KB.
            let c = if t.block_and[x as usize & 0x1F] & mask != 0 {
                mask
            } else {
                t.by_char[((x as usize & 0x1F) << 6) | (b[i + 1] as usize & 0x3F)]
            };
            if c & mask == 0 {
                break;
            }
            i += 2;
            continue;
        }
        if x < 0xF0 {
            let block = block_of(b, i);
            if t.block_and[block] & mask != 0 {
                i += 3;
                continue;
            }
            if t.block_class[block] != MIXED {
                break; // one class for the whole block, and it lacks `mask`
            }
        }
        let (c, n) = t.at_decoded(b, i);
        if c & mask == 0 {
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
    // A word in another script: no eight-byte step to take.
    if b.get(i).is_some_and(|&x| x >= 0x80) {
        return i;
    }
    swar_run_end(b, i, ascii_letter_bits, |x| x.is_ascii_alphabetic())
}

/// End of the run of ASCII lowercase letters (`\p{Ll}`, all in o200k's "lower" class) from `i`.
#[inline(always)]
pub fn ascii_lower_end(b: &[u8], i: usize) -> usize {
    if b.get(i).is_some_and(|&x| x >= 0x80) {
        return i;
    }
    swar_run_end(b, i, ascii_lower_bits, |x| x.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(b: &[u8], f: fn(&u8) -> bool) -> usize {
        b.iter().position(|c| !f(c)).unwrap_or(b.len())
    }

    /// The block shortcuts against the plain table, on every code point: `at` gives its
    /// classes, and a run of each class the scanners ask for passes it exactly when its
    /// classes have one of the run's bits.
    #[test]
    fn block_shortcuts_agree_with_the_table_on_every_code_point() {
        let t = tables();
        let masks = [L, N, S, LL | LM | LO | M, LU | LT | LM | LO | M];
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let mut buf = [0u8; 8];
            let n = c.encode_utf8(&mut buf).len();
            // Two of the char, then a char in none of the masks' classes.
            let text = format!("{c}{c}\u{0}");
            let b = text.as_bytes();
            let want = t.by_char[c as usize];
            assert_eq!(t.at(b, 0), (want, n), "{c:?}");
            for mask in masks {
                let run = if want & mask != 0 { 2 * n } else { 0 };
                assert_eq!(class_run_end(t, b, 0, mask), run, "{c:?} mask {mask:#x}");
                assert_eq!(run_end(t, b, 0, |k| k & mask != 0), run, "{c:?}");
            }
        }
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
