//! Scanner for the GPT-2 / r50k / p50k pattern
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`.
//!
//! Every char belongs to `\s`, `\p{L}`, `\p{N}` or "other", so the alternatives tile the text and the
//! scanner only decides where the piece starting at `i` ends. The lookahead `\s+(?!\S)` is the one
//! backtracking construct: a whitespace run not at the end gives back its last char (which then
//! becomes the optional space of the next piece, or a piece of its own).

use super::classes::{
    ascii_letters_end, class_run_end, is_other, len_before, run_end, Tables, L, N, S,
};

#[inline]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    let rest = &b[i + 1..];
    match rest.first()? {
        b's' | b'd' | b'm' | b't' => Some(i + 2),
        b'l' if rest.get(1) == Some(&b'l') => Some(i + 3),
        b'v' | b'r' if rest.get(1) == Some(&b'e') => Some(i + 3),
        _ => None,
    }
}

/// End of the piece that starts at `i` (< `b.len()`).
#[inline(always)]
pub fn next_end(t: &Tables, b: &[u8], i: usize) -> usize {
    if b[i] == b'\'' {
        if let Some(end) = contraction(b, i) {
            return end;
        }
    }
    let (c0, n0) = t.at(b, i);
    // The optional leading space of ` ?\p{L}++`, ` ?\p{N}++` and ` ?[^\s\p{L}\p{N}]++`.
    let (c, start) = if b[i] == b' ' && i + 1 < b.len() {
        (t.at(b, i + 1).0, i + 1)
    } else {
        (c0, i)
    };
    if c & L != 0 {
        return class_run_end(t, b, ascii_letters_end(b, start), L);
    }
    if c & N != 0 {
        return class_run_end(t, b, start, N);
    }
    if is_other(c) {
        return run_end(t, b, start, is_other);
    }
    // Whitespace (c0 is `\s` here).
    let j = class_run_end(t, b, i, S);
    if j == b.len() {
        return j;
    }
    let give_back = j - len_before(b, j);
    if give_back > i {
        give_back
    } else {
        i + n0
    }
}
