//! Every piece boundary of a 64-byte block at once, for the cl100k family of patterns (cl100k,
//! Llama 3, Qwen 2: `scan_cl100k.rs` has the patterns and their scalar scanner).
//!
//! Idea: on ASCII text, whether a piece starts at a byte depends on a few bytes around it, not
//! on the scan that led there, so the starts of a whole block are a formula over its class
//! masks (`masks.rs`). The rules, for a block that begins where a piece begins (bit 0), with
//! `W` the blanks (ASCII `\s` but `\r\n`), `O` the others (`[^\s\p{L}\p{N}]`):
//! - a letter starts a piece unless the byte before is a letter, a blank, or the first of a run
//!   of others that no space precedes (that one byte leads the letters: `[^\r\n\p{L}\p{N}]?\p{L}+`);
//! - a run of others starts a piece unless a space precedes it (` ?[^\s\p{L}\p{N}]+`); the line
//!   breaks right after it are its own (`[\r\n]*`);
//! - digits start a piece at the start of their run and every `DIGITS` digits after;
//! - in a run of whitespace (less the line breaks a run of others took): its first byte, the
//!   byte after its last line break (`\s*[\r\n]`), and its last blank when two blanks end the
//!   run (`\s+(?!\S)` gives one back); the byte after the run starts a piece unless the run ends
//!   in a blank that leads it (a letter, or others after a space);
//! - a `'` that starts a piece followed by `s d m t` or `ll ve re` (any case) is a contraction:
//!   the piece ends after it whatever follows.
//!
//! Invariant: bit 0 is a piece start, so the block is scanned as if the text began there (the
//! scalar scanner's pieces from a start depend only on the bytes from it, so nothing before it
//! matters). What lies past the first unknown byte (≥ 0x80 and not taken as a letter, below) or past the
//! block is unknown: a non-ASCII char
//! may be a letter a blank leads, whitespace that extends a run, or a long s that completes a
//! contraction. [`starts`] returns the horizon below which every start is certain: the byte
//! before the unknown, and no further than the first byte of a whitespace run that reaches it.
//!
//! Non-ASCII letters: the walker marks the bytes of the non-ASCII letters `wide_letters.rs` can
//! vouch for (Cyrillic, Latin-1's, CJK ideographs, most Hangul) as `letter` and clears them from
//! `high`; a letter's bytes all carry the bit, so "the byte before is a letter" still means "the
//! char before is one", and no rule looks at a letter's own bytes otherwise.
//!
//! Downside: a block gives nothing past its first unknown byte (a non-ASCII char that is no
//! such letter: CJK punctuation, a dash, a non-breaking space); the rules are a second
//! statement of the pattern, which the tests hold to the scalar scanner on long random texts
//! over every class boundary.

use super::masks::ByteMasks;

/// Piece starts of `block` (bit k: a piece starts at byte k; bit 0 always) below the horizon,
/// and the horizon: every start below it is certain. `DIGITS`: most digits in one piece.
/// `END_RUN`: a whitespace run that reaches the text's end is one piece (cl100k's `\s++$`;
/// Llama 3 and Qwen 2 cut it as anywhere else).
#[inline(always)]
pub fn starts<const DIGITS: usize, const END_RUN: bool>(
    block: &[u8; 64],
    m: &ByteMasks,
) -> (u64, u32) {
    let (letter, digit, line, blank, space) = (m.letter, m.digit, m.line, m.blank, m.space);
    let other = m.other();
    let ws = blank | line;

    // Line breaks right after a run of others end that run's piece (`[\r\n]*`): the runs of line
    // breaks that start after an other, by the carry of adding their first bits.
    let taken = line & !line.wrapping_add(line & (other << 1));
    let mut st = 1 | whitespace_starts(blank, line, taken, m.end) | text_end(m.end);
    // The byte after a whitespace run, unless the run's last blank leads it.
    let after_ws = !ws & (ws << 1);
    let led = (letter & (blank << 1)) | (other & (space << 1));
    st |= after_ws & !led;

    // Runs of others no space precedes; when such a run is one byte long and letters follow,
    // it leads them.
    let first_other = other & !(other << 1) & !(space << 1);
    st |= first_other;
    st |= letter & ((digit | (other & !first_other)) << 1);

    st |= digit & !(digit << 1);
    if DIGITS == 1 {
        st |= digit;
    } else {
        st |= digit_groups(digit, DIGITS as u32);
    }

    let mut quotes = m.apostrophe & first_other;
    while quotes != 0 {
        let c = quotes.trailing_zeros() as usize;
        if let Some(len) = contraction_len(block, c) {
            if c + len < 64 {
                st |= 1 << (c + len);
            }
        }
        quotes &= quotes - 1;
    }

    if END_RUN && m.end != 0 {
        st &= !inside_end_run(ws & !taken, m.end);
    }

    let horizon = horizon(m.high, m.end, ws);
    (st & below(horizon), horizon)
}

/// The starts inside whitespace runs (less the line breaks `taken` by a run of others before
/// them), for the patterns that end a run after its last line break (`\s*[\r\n]`) and give its
/// last blank back (`\s+(?!\S)`): each run's first byte, the last blank of a run that ends in
/// two blanks before a non-blank (at the text's `end` nothing is given back), and the blanks
/// after the run's last line break.
#[inline(always)]
pub(super) fn whitespace_starts(blank: u64, line: u64, taken: u64, end: u64) -> u64 {
    let ws = blank | line;
    let run = ws & !taken;
    let mut st = run & !(run << 1);
    st |= blank & (blank << 1) & !((ws | end) >> 1);
    // A run of blanks after a line break starts a piece when no line break follows it
    // (otherwise `\s*[\r\n]` runs on through it): a short loop, one turn per such run.
    let mut after_break = blank & ((line & !taken) << 1);
    while after_break != 0 {
        let k = after_break.trailing_zeros();
        let end = k + (!(blank >> k)).trailing_zeros();
        if end < 64 && line >> end & 1 == 0 {
            st |= 1 << k;
        }
        after_break &= after_break - 1;
    }
    st
}

/// The bytes after the first of the run of `run` that reaches the text's `end` (none if no run
/// reaches it): what `\s++$` takes whole.
#[inline(always)]
fn inside_end_run(run: u64, end: u64) -> u64 {
    let stop = end.trailing_zeros();
    // The run's first byte: just past the last byte before the end that is not in it.
    let first = 64 - (!(run | end)).leading_zeros();
    below(stop) & !below(first + 1)
}

/// The text's end as a start (its first bit of `end`): the last piece ends there.
#[inline(always)]
pub(super) fn text_end(end: u64) -> u64 {
    end & !(end << 1)
}

/// The bits below `horizon` (at most 64).
#[inline(always)]
pub(super) fn below(horizon: u32) -> u64 {
    if horizon >= 64 {
        u64::MAX
    } else {
        (1 << horizon) - 1
    }
}

/// Length of the contraction at the `'` at `c`, if one is there: `'s 'd 'm 't`, `'ll 've 're`
/// in any case. ASCII only: a non-ASCII byte after the `'` is past the horizon.
#[inline(always)]
fn contraction_len(block: &[u8; 64], c: usize) -> Option<usize> {
    // `| 0x20` maps exactly `A-Z` onto `a-z` among the bytes that land on a letter.
    let x = *block.get(c + 1)? | 0x20;
    if matches!(x, b's' | b'd' | b'm' | b't') {
        return Some(2);
    }
    let y = *block.get(c + 2)? | 0x20;
    matches!((x, y), (b'l', b'l') | (b'v', b'e') | (b'r', b'e')).then_some(3)
}

/// The starts inside runs of digits: every `max`-th digit from the run's start.
#[inline(always)]
pub(super) fn digit_groups(digit: u64, max: u32) -> u64 {
    // Digits with at least `max` digits before them in their run; the first of each run is the
    // run's start + max. Runs that long are rare in prose, so a loop per run.
    let mut long = digit;
    for k in 1..=max {
        long &= digit << k;
    }
    let mut st = 0;
    while long != 0 {
        let k = long.trailing_zeros();
        let end = k + (!(digit >> k)).trailing_zeros();
        let mut p = k;
        while p < end {
            st |= 1 << p;
            p += max;
        }
        long &= if end >= 64 { 0 } else { !((1 << end) - 1) };
    }
    st
}

/// The first position whose start is not certain: the byte before the first non-ASCII byte
/// (or the end of the block), whose start depends on whether the unknown char is a letter it
/// leads, and at most one past the start of a whitespace run that reaches the unknown. (A
/// contraction needs no more: a non-ASCII char completes one only right after the `'`, whose
/// piece then ends past the unknown.) If the text ends first, nothing is unknown: every start
/// up to its end (included) is certain.
#[inline(always)]
pub(super) fn horizon(high: u64, end: u64, ws: u64) -> u32 {
    let unknown = high.trailing_zeros();
    let stop = end.trailing_zeros();
    if stop < unknown {
        return stop + 1;
    }
    let mut h = unknown.saturating_sub(1);
    if unknown > 0 && ws >> (unknown - 1) & 1 == 1 {
        let before = !ws & ((1u64 << (unknown - 1)) - 1);
        let run_start = 64 - before.leading_zeros();
        h = h.min(run_start + 1);
    }
    h
}
