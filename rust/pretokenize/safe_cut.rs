//! Where a text may be cut so that every built-in pattern splits the parts exactly as it splits
//! the whole: what lets training count, and the encoder encode, one long text on several cores.
//!
//! A cut at `p` is safe when `text[p-2..p+1]` is "non-space ASCII, `\n`, ASCII letter". Why, for
//! each built-in pattern (gpt2, cl100k, o200k): no piece can contain both the `\n` and the letter
//! — a letter piece may only be led by one char that is not a line break (`[^\r\n\p{L}\p{N}]?`),
//! a whitespace piece never holds a letter, and `\s+(?!\S)` gives the `\n` back only to a
//! following space, not to a letter. So a piece ends at `p` in the whole text. In the part
//! before the cut, the run ending in `\n` is either glued to the graphic char before it
//! (` ?[^\s\p{L}\p{N}]++[\r\n]*` in cl100k and o200k) or a lone `\n` piece (`\s*[\r\n]`,
//! `\s++$` and `\s` all give exactly `\n` when the char before is not whitespace) — the same as
//! in the whole text; and the part after starts with a letter whose piece starts there in both.
//! A custom pattern may behave otherwise, so only the built-in scanners are ever cut
//! (`Pattern::has_safe_cuts`).

use std::ops::Range;

pub fn is_safe_cut(b: &[u8], p: usize) -> bool {
    p >= 2
        && p < b.len()
        && b[p - 1] == b'\n'
        && b[p - 2].is_ascii_graphic()
        && b[p].is_ascii_alphabetic()
}

/// The first safe cut at or after `from`, if any.
pub fn next_safe_cut(b: &[u8], from: usize) -> Option<usize> {
    let mut p = from.max(2);
    while p < b.len() {
        if is_safe_cut(b, p) {
            return Some(p);
        }
        p += memchr::memchr(b'\n', &b[p..])? + 1;
    }
    None
}

/// Cut `b[range]` into parts of about `part_len` bytes (or more, up to the next safe cut), in
/// order, as ranges of `b`.
pub fn parts(b: &[u8], range: Range<usize>, part_len: usize) -> Vec<Range<usize>> {
    let b = &b[..range.end];
    let mut out = Vec::with_capacity(range.len() / part_len.max(1) + 1);
    let mut s = range.start;
    while b.len() - s > part_len {
        match next_safe_cut(b, s + part_len.max(1)) {
            Some(p) => {
                out.push(s..p);
                s = p;
            }
            None => break,
        }
    }
    out.push(s..b.len());
    out
}
