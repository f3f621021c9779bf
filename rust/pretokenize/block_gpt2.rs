//! Every piece boundary of a 64-byte block at once, for the GPT-2 / r50k / p50k pattern
//! (`scan_gpt2.rs` has the pattern and its scalar scanner). `block_cl100k.rs` explains the
//! method and the invariant: bit 0 is a piece start, and only starts below the horizon count.
//!
//! The rules on ASCII text:
//! - a run of letters, of digits or of others starts a piece unless a space precedes it
//!   (` ?\p{L}++`, ` ?\p{N}++`, ` ?[^\s\p{L}\p{N}]++`);
//! - a whitespace run starts a piece, and so does its last byte when the run is two or more
//!   long (`\s+(?!\S)` gives it back); the byte after the run starts a piece unless the run ends
//!   in a space, which leads it;
//! - a `'` that starts a piece followed by `s d m t` or `ll ve re` (lower case only) is a
//!   contraction: the piece ends after it whatever follows, and its letters start nothing.
//!
//! Downside: as for the cl100k family, a block gives nothing past its first unknown byte (the
//! non-ASCII letters `wide_letters.rs` takes are letters here too).

use super::masks::ByteMasks;

/// Piece starts of `block` below the horizon (bit 0 always), and the horizon.
#[inline(always)]
pub fn starts(block: &[u8; 64], m: &ByteMasks) -> (u64, u32) {
    let (letter, digit, space) = (m.letter, m.digit, m.space);
    let other = m.other();
    let ws = m.blank | m.line;
    let led = space << 1;

    let mut st = 1 | (ws & !(ws << 1)) | super::block_cl100k::text_end(m.end);
    // The last of two or more whitespace bytes before a non-blank (`\s+(?!\S)` gives it back;
    // at the text's end it keeps it).
    st |= ws & (ws << 1) & !((ws | m.end) >> 1);
    st |= !ws & (ws << 1) & !led;
    st |= letter & !(letter << 1) & !led;
    st |= digit & !(digit << 1) & !led;
    let first_other = other & !(other << 1) & !led;
    st |= first_other;

    // A contraction's letters are not the start of a run of letters (the `'` is no run of others
    // they follow); one the block cannot decide ends the certain part before its letters.
    let mut horizon = horizon(m.high, m.end, ws);
    let mut quotes = m.apostrophe & first_other;
    while quotes != 0 {
        let c = quotes.trailing_zeros() as usize;
        match contraction_len(block, c) {
            Ok(Some(len)) => {
                st &= !(((1u64 << (len - 1)) - 1) << (c + 1));
                if c + len < 64 {
                    st |= 1 << (c + len);
                }
            }
            Ok(None) => {}
            Err(Undecided) => horizon = horizon.min(c as u32 + 1),
        }
        quotes &= quotes - 1;
    }

    (st & super::block_cl100k::below(horizon), horizon)
}

/// A contraction the block ends in the middle of.
struct Undecided;

/// Length of the contraction at the `'` at `c`, if one is there.
#[inline(always)]
fn contraction_len(block: &[u8; 64], c: usize) -> Result<Option<usize>, Undecided> {
    let x = *block.get(c + 1).ok_or(Undecided)?;
    if matches!(x, b's' | b'd' | b'm' | b't') {
        return Ok(Some(2));
    }
    if !matches!(x, b'l' | b'v' | b'r') {
        return Ok(None);
    }
    let y = *block.get(c + 2).ok_or(Undecided)?;
    Ok(matches!((x, y), (b'l', b'l') | (b'v', b'e') | (b'r', b'e')).then_some(3))
}

/// The first position whose start is not certain: the first non-ASCII byte (or the end of the
/// block; no rule here looks ahead but the whitespace rules), and at most one past the start
/// of a whitespace run that reaches it; past the text's end if that comes first.
#[inline(always)]
fn horizon(high: u64, end: u64, ws: u64) -> u32 {
    let unknown = high.trailing_zeros();
    let stop = end.trailing_zeros();
    if stop < unknown {
        return stop + 1;
    }
    let mut h = unknown;
    if unknown > 0 && ws >> (unknown - 1) & 1 == 1 {
        let before = !ws & ((1u64 << (unknown - 1)) - 1);
        let run_start = 64 - before.leading_zeros();
        h = h.min(run_start + 1);
    }
    h
}
