//! Scanner for the cl100k pattern
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
//!
//! Differences from GPT-2 that matter: any non-letter, non-digit char except `\r`/`\n` (not only a
//! space) may lead a word; digits go in groups of at most three; contractions are case-insensitive
//! with Unicode simple case folding (so `'ſ` — long s — is a contraction); a whitespace run that holds
//! a line break ends just after its last `\r`/`\n`.
//!
//! The same scanner, with two switches, runs the open models' patterns of this shape:
//! - Llama 3's, cl100k's as first published:
//!   `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
//!   The non-possessive `?` and `+` change nothing (what they could give back cannot start the
//!   next part of their alternative); the difference is the end of the text: a whitespace run
//!   that reaches it and holds a line break ends after its last line break (`\s*[\r\n]+`), where
//!   cl100k's `\s++$` takes the whole run (`END_RUN`).
//! - Qwen 2's: Llama 3's with single digits (`DIGITS` = 1).

use super::classes::{
    ascii_letters_end, class_run_end, digits_end, is_other, len_before, run_end, Tables, CRLF, L,
    N, S,
};

#[inline]
fn contraction(t: &Tables, b: &[u8], i: usize) -> Option<usize> {
    let j = i + 1;
    if j >= b.len() {
        return None;
    }
    for x in [b's', b'd', b'm', b't'] {
        if let Some(n) = t.folds_to(b, j, x) {
            return Some(j + n);
        }
    }
    for [x, y] in [[b'l', b'l'], [b'v', b'e'], [b'r', b'e']] {
        if let Some(n) = t.folds_to(b, j, x) {
            if j + n < b.len() {
                if let Some(m) = t.folds_to(b, j + n, y) {
                    return Some(j + n + m);
                }
            }
        }
    }
    None
}

/// cl100k's pattern.
#[inline(always)]
pub fn next_end(t: &Tables, b: &[u8], i: usize) -> usize {
    next_end_of::<3, true>(t, b, i)
}

/// Llama 3's pattern.
#[inline]
pub fn next_end_llama3(t: &Tables, b: &[u8], i: usize) -> usize {
    next_end_of::<3, false>(t, b, i)
}

/// Qwen 2's pattern.
#[inline]
pub fn next_end_qwen2(t: &Tables, b: &[u8], i: usize) -> usize {
    next_end_of::<1, false>(t, b, i)
}

/// `DIGITS`: most digits in one piece. `END_RUN`: a whitespace run reaching the end of the text is
/// one piece (`\s++$`).
#[inline(always)]
fn next_end_of<const DIGITS: usize, const END_RUN: bool>(t: &Tables, b: &[u8], i: usize) -> usize {
    if b[i] == b'\'' {
        if let Some(end) = contraction(t, b, i) {
            return end;
        }
    }
    let (c0, n0) = t.at(b, i);
    if c0 & L != 0 {
        return class_run_end(t, b, ascii_letters_end(b, i), L);
    }
    if c0 & N != 0 {
        return digits_end(t, b, i, n0, DIGITS);
    }
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`: a single non-letter, non-digit, non-line-break char leading letters.
    let next = if i + n0 < b.len() {
        t.at(b, i + n0).0
    } else {
        0
    };
    if c0 & CRLF == 0 && next & L != 0 {
        return class_run_end(t, b, ascii_letters_end(b, i + n0), L);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    let others_from = if is_other(c0) {
        Some(i)
    } else if b[i] == b' ' && i + 1 < b.len() && is_other(next) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(s) = others_from {
        let j = run_end(t, b, s, is_other);
        return j + b[j..]
            .iter()
            .take_while(|&&x| x == b'\r' || x == b'\n')
            .count();
    }
    // Whitespace.
    let j = class_run_end(t, b, i, S);
    if END_RUN && j == b.len() {
        return j; // `\s++$`
    }
    // `\s*[\r\n]`: up to and including the run's last line break. `\r` and `\n` are ASCII, so a byte
    // scan cannot stop inside a multi-byte char.
    if let Some(k) = b[i..j].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        return i + k + 1;
    }
    if j == b.len() {
        return j; // `\s+(?!\S)` at the end (END_RUN is false here)
    }
    let give_back = j - len_before(b, j);
    if give_back > i {
        give_back
    } else if END_RUN {
        i + n0 // `\s`
    } else {
        j // `\s+`: a run of one char
    }
}
