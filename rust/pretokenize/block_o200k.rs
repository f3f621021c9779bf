//! Every piece boundary of a 64-byte block at once, for o200k and Mistral Tekken (`scan_o200k.rs`
//! has the patterns and their scalar scanner). `block_cl100k.rs` explains the method and the
//! invariant: bit 0 is a piece start, and only starts below the horizon count.
//!
//! On ASCII text the pattern's words are `[A-Z]*[a-z]*` (at least one letter), so a run of
//! letters breaks where a lower-case letter meets an upper-case one. The rest is cl100k's rules
//! with three changes:
//! - a run of others takes the line breaks *and slashes* after it (`[\r\n/]*`), so a slash it
//!   took neither starts a piece nor leads letters;
//! - a contraction is the end of a word, not a piece (`(?i:'s|'t|'re|'ve|'m|'ll|'d)?`): a `'`
//!   right after a word's letter, with `s t m d` or `re ve ll` (any case) after it, belongs to
//!   the word, and the piece ends after it whatever follows. After a contraction's own letters a
//!   `'` is no contraction (the suffix is optional once), so the quotes are taken in order;
//! - Tekken has no contractions and single digits (`CONTRACTIONS`, `DIGITS`).
//!
//! Non-ASCII letters of one case (Cyrillic, Latin-1's) come from the walker as letters, the
//! lower-case ones in `lower` too, so camelCase splits them as it splits ASCII.
//!
//! Downside: as for the cl100k family, a block gives nothing past its first unknown byte, and
//! here letters of neither case (CJK, Hangul, kana) are unknown.

use super::block_cl100k;
use super::masks::ByteMasks;

/// Piece starts of `block` below the horizon (bit 0 always), and the horizon.
#[inline(always)]
pub fn starts<const CONTRACTIONS: bool, const DIGITS: usize>(
    block: &[u8; 64],
    m: &ByteMasks,
) -> (u64, u32) {
    let (letter, digit, line, blank, space) = (m.letter, m.digit, m.line, m.blank, m.space);
    let ws = blank | line;
    // What a run of others takes after it: line breaks and slashes, from a line break right
    // after the run (a slash there is one of the run's others), by the carry of adding that
    // line break. A slash the tail took is an other too, so a line break after it is a second
    // such bit in the same tail; the carry of the first has cleared the tail past it but the
    // sum has that bit set, so it is put back.
    let tail = line | m.slash;
    let from = line & (m.other() << 1);
    let carried = tail & !tail.wrapping_add(from);
    let taken = carried | (from & (carried << 1));
    let other = m.other() & !taken;

    let mut st = 1
        | block_cl100k::whitespace_starts(blank, line, taken, m.end)
        | block_cl100k::text_end(m.end);
    let led = (letter & (blank << 1)) | (other & (space << 1));
    st |= !ws & (ws << 1) & !taken & !led;

    let first_other = other & !(other << 1) & !(space << 1);
    st |= first_other;
    st |= letter & ((digit | (other & !first_other) | (taken & m.slash)) << 1);
    // camelCase: a word ends where lower case meets upper case.
    st |= letter & !m.lower & (m.lower << 1);

    st |= digit & !(digit << 1);
    st |= if DIGITS == 1 {
        digit
    } else {
        block_cl100k::digit_groups(digit, DIGITS as u32)
    };

    let mut horizon = block_cl100k::horizon(m.high, m.end, ws);
    if CONTRACTIONS {
        let mut suffix_letters = 0u64;
        let mut quotes = m.apostrophe & (letter << 1);
        while quotes != 0 {
            let c = quotes.trailing_zeros() as usize;
            quotes &= quotes - 1;
            if suffix_letters >> (c - 1) & 1 == 1 {
                continue; // right after a contraction: the word has had its suffix
            }
            match contraction_len(block, c) {
                Some(len) => {
                    st &= !(((1u64 << len) - 1) << c);
                    suffix_letters |= ((1u64 << (len - 1)) - 1) << (c + 1);
                    if c + len < 64 {
                        st |= 1 << (c + len);
                    }
                }
                None if c + 2 >= 64 => horizon = horizon.min(c as u32),
                None => {}
            }
        }
    }

    (st & block_cl100k::below(horizon), horizon)
}

/// Length of the contraction at the `'` at `c` (`'s 't 'm 'd 're 've 'll`, any case), if the
/// block shows one.
#[inline(always)]
fn contraction_len(block: &[u8; 64], c: usize) -> Option<usize> {
    let x = *block.get(c + 1)? | 0x20;
    if matches!(x, b's' | b't' | b'm' | b'd') {
        return Some(2);
    }
    let y = *block.get(c + 2)? | 0x20;
    matches!((x, y), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')).then_some(3)
}
