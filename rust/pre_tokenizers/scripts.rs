//! HF's UnicodeScripts: a cut wherever the Unicode script changes (SentencePiece's rule for
//! which pieces may form a token), Hiragana, Katakana and `ー` counting as Han.
//!
//! HF groups chars by a table generated from Unicode 9's `Scripts.txt`. Today's Script
//! property (`unicode-script`) gives the same groups once chars assigned after 9.0 are taken
//! as HF's "Any" (unknown to its table), except for four code points whose script Unicode has
//! changed since; those are listed below. A test over every code point holds this against HF.
//!
//! "Any" (those chars, and the plain space) joins the run it stands in and never starts one:
//! as in HF, chars of "Any" before the first real script are left out of every piece.

use unic_ucd_age::Age;
use unicode_script::{Script, UnicodeScript};

/// The group HF puts `c` in; `None` is "Any".
fn group(c: char) -> Option<Script> {
    match c {
        ' ' => return None,
        '\u{30FC}' => return Some(Script::Han),
        // Unicode 9 had these as Common (Armenian hyphen, Arabic letter mark) and Devanagari
        // (two stress signs); later versions moved them.
        '\u{0589}' | '\u{061C}' => return Some(Script::Common),
        '\u{0953}' | '\u{0954}' => return Some(Script::Devanagari),
        _ => {}
    }
    let in_unicode_9 = Age::of(c).is_some_and(|age| {
        let v = age.actual();
        (v.major, v.minor) <= (9, 0)
    });
    if !in_unicode_9 {
        return None;
    }
    match c.script() {
        Script::Unknown => None,
        Script::Hiragana | Script::Katakana => Some(Script::Han),
        s => Some(s),
    }
}

/// The pieces (byte ranges) of `part`: a new piece starts at each char of a real script that
/// differs from the last real script seen.
pub fn cut(part: &str) -> Vec<(usize, usize)> {
    let mut starts = Vec::new();
    let mut last = None;
    for (i, c) in part.char_indices() {
        let g = group(c);
        if g.is_some() {
            if g != last {
                starts.push(i);
            }
            last = g;
        }
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        out.push((s, starts.get(k + 1).copied().unwrap_or(part.len())));
    }
    out
}
