//! Scanner for DeepSeek-V3's pre-tokenizer: three regexes, each isolating its matches within the
//! pieces of the one before (HF's Sequence of `Split`s, behavior `Isolated`):
//! 1. `\p{N}{1,3}` — runs of digits, in threes from the start of the run;
//! 2. `[一-龥぀-ゟ゠-ヿ]+` — runs of CJK ideographs and kana;
//! 3. on every piece so far, `R3` =
//!    `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
//!    whose matches and the text between them are the pieces.
//!
//! One pass instead of three: a stage-1 digit chunk never contains a CJK char nor an `R3` match
//! (a digit leads a word only before a letter, and there are none in it), so it is a piece as it
//! is; a CJK run is stage 2's piece, and every other stretch (no digit, no CJK char) is the window
//! `R3` runs in, its end acting as the end of the text (`(?!\S)` looks no further). Inside a
//! window, text where no `R3` match starts (a control char not before a letter, say) is a piece of
//! its own up to the next position where one does — what the regex engine's search skips over.

use super::classes::{
    ascii_letters_end, class_run_end, digits_end, len_before, run_end, Tables, CRLF, HAN_KANA, L,
    M, N, P, S, SYM,
};

/// The three regexes as tokenizer.json gives them (as read into fancy-regex's dialect).
pub const DEEPSEEK_V3_SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+",
    concat!(
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^"##,
        "\r\n",
        r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[",
        "\r\n",
        r"]*|\s*[",
        "\r\n",
        r"]+|\s+(?!\S)|\s+"
    ),
];

#[inline]
pub fn next_end(t: &Tables, b: &[u8], i: usize) -> usize {
    let (c0, n0) = t.at(b, i);
    if c0 & N != 0 {
        return digits_end(t, b, i, n0, 3);
    }
    // The window is never measured up front (that would rescan it for every piece): every run
    // and look-ahead below stops at the first char outside it instead.
    if c0 & HAN_KANA != 0 {
        piece(t, b, i, |c| c & HAN_KANA != 0)
    } else {
        piece(t, b, i, |c| c & (N | HAN_KANA) == 0)
    }
}

/// The piece at `i` inside the window of chars that satisfy `inside`: `R3`'s match there, or the
/// text up to where a match starts.
#[inline(always)]
fn piece(t: &Tables, b: &[u8], i: usize, inside: impl Fn(u16) -> bool + Copy) -> usize {
    if let Some(end) = r3_match(t, b, i, inside) {
        return end;
    }
    let mut j = i + t.at(b, i).1;
    while j < b.len() && inside(t.at(b, j).0) && r3_match(t, b, j, inside).is_none() {
        j += t.at(b, j).1;
    }
    j
}

/// The end of `R3`'s match at `i` (inside the window), if one starts there. A char outside the
/// window counts as the end of the text.
#[inline(always)]
fn r3_match(t: &Tables, b: &[u8], i: usize, inside: impl Fn(u16) -> bool + Copy) -> Option<usize> {
    let (c0, n0) = t.at(b, i);
    let next = if i + n0 < b.len() {
        let c = t.at(b, i + n0).0;
        if inside(c) {
            c
        } else {
            0
        }
    } else {
        0
    };
    // `[ASCII punctuation][A-Za-z]+` (ASCII is never outside an "other" window, and a CJK
    // window holds no ASCII).
    if b[i].is_ascii_punctuation() && i + 1 < b.len() && b[i + 1].is_ascii_alphabetic() {
        return Some(ascii_letters_end(b, i + 1));
    }
    // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`: the lead is taken when a letter or mark follows;
    // else the run may start here (only if this char is a letter or mark itself).
    let word = move |c: u16| c & (L | M) != 0 && inside(c);
    if c0 & (CRLF | L | P | SYM) == 0 && word(next) {
        return Some(run_end(t, b, i + n0, word));
    }
    if word(c0) {
        return Some(run_end(t, b, i, word));
    }
    // ` ?[\p{P}\p{S}]+[\r\n]*`
    let sign = move |c: u16| c & (P | SYM) != 0 && inside(c);
    let signs_from = if sign(c0) {
        Some(i)
    } else if b[i] == b' ' && sign(next) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(s) = signs_from {
        let j = run_end(t, b, s, sign);
        // Line breaks are outside a CJK window: they follow only signs of an "other" one.
        let breaks = |c: u16| c & CRLF != 0 && inside(c);
        return Some(run_end(t, b, j, breaks));
    }
    if c0 & S == 0 {
        return None;
    }
    // Whitespace (never outside an "other" window): `\s*[\r\n]+` up to the run's last line
    // break; else `\s+(?!\S)` gives the last char back to what follows, unless the run ends the
    // window (the text's end, a digit or a CJK char); a run of one char is `\s+`.
    let j = class_run_end(t, b, i, S);
    if let Some(k) = b[i..j].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        return Some(i + k + 1);
    }
    if j == b.len() || !inside(t.at(b, j).0) {
        return Some(j);
    }
    let give_back = j - len_before(b, j);
    Some(if give_back > i { give_back } else { j })
}
