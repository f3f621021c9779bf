//! Scanner for the o200k pattern (alternatives in order):
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 3. `\p{N}{1,3}`   4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`   5. `\s*[\r\n]+`   6. `\s+(?!\S)`   7. `\s+`
//!
//! Nothing here is possessive, so the scanner reproduces the backtracking order: the optional
//! leading char is first taken, then dropped; the "upper" class U and the "lower" class W overlap
//! (Lm, Lo and marks are in both), so in (1) `U*` backs off until a W char can follow. Marks are also
//! in `[^\r\n\p{L}\p{N}]`, which is why both choices for the leading char must be tried.
//!
//! Mistral Tekken's pattern is this one without the optional contractions and with single
//! digits: the same scanner with `CONTRACTIONS` off and `DIGITS` = 1.

use super::classes::{
    ascii_lower_end, class_run_end, digits_end, is_other, len_before, run_end, Tables, CRLF, L, LL,
    LM, LO, LT, LU, M, N, S,
};

const U: u16 = LU | LT | LM | LO | M;
const W: u16 = LL | LM | LO | M;

/// `U* W+` from `s`: the end of the match, if any.
#[inline(always)]
fn lower_word(t: &Tables, b: &[u8], s: usize) -> Option<usize> {
    let mut j = s;
    let mut last_w = None;
    while j < b.len() {
        let (c, n) = t.at(b, j);
        if c & U == 0 {
            // The end of `U*`: a W char here starts the `W+` that ends the word.
            if c & W != 0 {
                return Some(class_run_end(t, b, ascii_lower_end(b, j + n), W));
            }
            break;
        }
        if c & W != 0 {
            last_w = Some(j + n);
        }
        j += n;
    }
    last_w
}

/// `U+ W*` from `s`.
#[inline(always)]
fn upper_word(t: &Tables, b: &[u8], s: usize) -> Option<usize> {
    let j = class_run_end(t, b, s, U);
    (j > s).then(|| class_run_end(t, b, j, W))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `e`.
#[inline(always)]
fn with_contraction(t: &Tables, b: &[u8], e: usize) -> usize {
    if e + 1 >= b.len() || b[e] != b'\'' {
        return e;
    }
    let j = e + 1;
    for x in [b's', b't', b'm', b'd'] {
        if let Some(n) = t.folds_to(b, j, x) {
            return j + n;
        }
    }
    for [x, y] in [[b'r', b'e'], [b'v', b'e'], [b'l', b'l']] {
        if let Some(n) = t.folds_to(b, j, x) {
            if j + n < b.len() {
                if let Some(m) = t.folds_to(b, j + n, y) {
                    return j + n + m;
                }
            }
        }
    }
    e
}

/// o200k's pattern.
#[inline(always)]
pub fn next_end(t: &Tables, b: &[u8], i: usize) -> usize {
    next_end_of::<true, 3>(t, b, i)
}

/// Tekken's pattern.
#[inline]
pub fn next_end_tekken(t: &Tables, b: &[u8], i: usize) -> usize {
    next_end_of::<false, 1>(t, b, i)
}

#[inline(always)]
fn next_end_of<const CONTRACTIONS: bool, const DIGITS: usize>(
    t: &Tables,
    b: &[u8],
    i: usize,
) -> usize {
    let with_contraction = |e: usize| {
        if CONTRACTIONS {
            with_contraction(t, b, e)
        } else {
            e
        }
    };
    let (c0, n0) = t.at(b, i);
    let leads = c0 & (CRLF | L | N) == 0 && i + n0 < b.len();
    for word in [lower_word, upper_word] {
        if leads {
            if let Some(e) = word(t, b, i + n0) {
                return with_contraction(e);
            }
        }
        if let Some(e) = word(t, b, i) {
            return with_contraction(e);
        }
    }
    if c0 & N != 0 {
        return digits_end(t, b, i, n0, DIGITS);
    }
    let others_from = if is_other(c0) {
        Some(i)
    } else if b[i] == b' ' && i + 1 < b.len() && is_other(t.at(b, i + 1).0) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(s) = others_from {
        let j = run_end(t, b, s, is_other);
        return j + b[j..]
            .iter()
            .take_while(|&&x| matches!(x, b'\r' | b'\n' | b'/'))
            .count();
    }
    let j = class_run_end(t, b, i, S);
    if let Some(k) = b[i..j].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        return i + k + 1;
    }
    if j == b.len() {
        return j;
    }
    let give_back = j - len_before(b, j);
    if give_back > i {
        give_back
    } else {
        j
    }
}
