//! Scanner for the cl100k pattern
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
//!
//! Differences from GPT-2 that matter: any non-letter, non-digit char except `\r`/`\n` (not only a
//! space) may lead a word; digits go in groups of at most three; contractions are case-insensitive
//! with Unicode simple case folding (so `'ſ` — long s — is a contraction); a whitespace run that holds
//! a line break ends just after its last `\r`/`\n`.

use super::classes::{ascii_letters_end, is_other, len_before, run_end, Tables, CRLF, L, N, S};

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

#[inline]
pub fn next_end(t: &Tables, b: &[u8], i: usize) -> usize {
    if b[i] == b'\'' {
        if let Some(end) = contraction(t, b, i) {
            return end;
        }
    }
    let (c0, n0) = t.at(b, i);
    if c0 & L != 0 {
        return run_end(t, b, ascii_letters_end(b, i), |c| c & L != 0);
    }
    if c0 & N != 0 {
        let mut j = i + n0;
        for _ in 0..2 {
            if j >= b.len() {
                break;
            }
            let (c, n) = t.at(b, j);
            if c & N == 0 {
                break;
            }
            j += n;
        }
        return j;
    }
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`: a single non-letter, non-digit, non-line-break char leading letters.
    let next = if i + n0 < b.len() {
        t.at(b, i + n0).0
    } else {
        0
    };
    if c0 & CRLF == 0 && next & L != 0 {
        return run_end(t, b, ascii_letters_end(b, i + n0), |c| c & L != 0);
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
    let j = run_end(t, b, i, |c| c & S != 0);
    if j == b.len() {
        return j; // `\s++$`
    }
    // `\s*[\r\n]`: up to and including the run's last line break. `\r` and `\n` are ASCII, so a byte
    // scan cannot stop inside a multi-byte char.
    if let Some(k) = b[i..j].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        return i + k + 1;
    }
    let give_back = j - len_before(b, j);
    if give_back > i {
        give_back
    } else {
        i + n0
    }
}
