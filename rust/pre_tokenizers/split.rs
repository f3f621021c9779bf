//! Splitting by a pattern, HF's way: the pattern cuts the text into alternating runs of
//! non-matches and matches (`find_matches`), and a behavior decides what becomes of the
//! matches: removed, isolated, merged with the previous or next piece, or merged with their
//! contiguous neighbours. `invert` swaps matches and non-matches first.

use crate::error::{Error, Result};
use crate::formats::onig;
use crate::pretokenize::Pattern;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

impl Behavior {
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "removed" | "Removed" => Behavior::Removed,
            "isolated" | "Isolated" => Behavior::Isolated,
            "merged_with_previous" | "MergedWithPrevious" => Behavior::MergedWithPrevious,
            "merged_with_next" | "MergedWithNext" => Behavior::MergedWithNext,
            "contiguous" | "Contiguous" => Behavior::Contiguous,
            other => {
                return Err(Error::invalid(format!(
                    "unknown split behavior {other:?}: use removed, isolated, \
                     merged_with_previous, merged_with_next or contiguous"
                )))
            }
        })
    }

    /// The name in tokenizer.json.
    pub fn json_name(self) -> &'static str {
        match self {
            Behavior::Removed => "Removed",
            Behavior::Isolated => "Isolated",
            Behavior::MergedWithPrevious => "MergedWithPrevious",
            Behavior::MergedWithNext => "MergedWithNext",
            Behavior::Contiguous => "Contiguous",
        }
    }
}

/// Byte range and whether it is a match; the ranges cover the text in order.
pub type Marked = ((usize, usize), bool);

/// Every char `is_match` accepts is a match of its own.
pub fn chars_matching(text: &str, is_match: impl Fn(char) -> bool) -> Vec<Marked> {
    let mut out = Vec::new();
    let mut last = 0;
    for (b, c) in text.char_indices() {
        if is_match(c) {
            if last < b {
                out.push(((last, b), false));
            }
            out.push(((b, b + c.len_utf8()), true));
            last = b + c.len_utf8();
        }
    }
    if last < text.len() {
        out.push(((last, text.len()), false));
    }
    out
}

/// The matches of `re` (leftmost first, not overlapping) and the runs between them.
pub fn regex_matches(text: &str, re: &fancy_regex::Regex) -> Result<Vec<Marked>> {
    let mut out = Vec::new();
    let mut last = 0;
    for m in re.find_iter(text) {
        let m = m.map_err(|e| Error::invalid(format!("pattern failed on this text: {e}")))?;
        if last != m.start() {
            out.push(((last, m.start()), false));
        }
        out.push(((m.start(), m.end()), true));
        last = m.end();
    }
    if last != text.len() {
        out.push(((last, text.len()), false));
    }
    Ok(out)
}

/// The pieces `marked` gives under `behavior`, as byte ranges (empty ones dropped).
pub fn apply(marked: Vec<Marked>, behavior: Behavior) -> Vec<(usize, usize)> {
    let keep: Vec<((usize, usize), bool)> = match behavior {
        Behavior::Isolated => marked.into_iter().map(|(r, _)| (r, false)).collect(),
        Behavior::Removed => marked,
        Behavior::Contiguous => {
            let mut acc: Vec<Marked> = Vec::new();
            let mut previous = false;
            for (r, m) in marked {
                match acc.last_mut() {
                    Some((last, _)) if m == previous => last.1 = r.1,
                    _ => acc.push((r, false)),
                }
                previous = m;
            }
            acc
        }
        Behavior::MergedWithPrevious => {
            let mut acc: Vec<Marked> = Vec::new();
            let mut previous = false;
            for (r, m) in marked {
                match acc.last_mut() {
                    Some((last, _)) if m && !previous => last.1 = r.1,
                    _ => acc.push((r, false)),
                }
                previous = m;
            }
            acc
        }
        Behavior::MergedWithNext => {
            let mut acc: Vec<Marked> = Vec::new();
            let mut previous = false;
            for (r, m) in marked.into_iter().rev() {
                match acc.last_mut() {
                    Some((last, _)) if m && !previous => last.0 = r.0,
                    _ => acc.push((r, false)),
                }
                previous = m;
            }
            acc.reverse();
            acc
        }
    };
    keep.into_iter()
        .filter(|&((s, e), remove)| !remove && s < e)
        .map(|(r, _)| r)
        .collect()
}

/// HF's Split: a string (matched literally) or a regex, a behavior, `invert`.
#[derive(Clone, Debug)]
pub struct Split {
    pattern: String,
    is_regex: bool,
    behavior: Behavior,
    invert: bool,
    re: fancy_regex::Regex,
    /// The hand-written scanner of a built-in pattern (`crate::pretokenize`), when the regex is
    /// one: Llama 3's, Qwen's, Tekken's, o200k's, GPT-2's as first published.
    scanner: Option<Pattern>,
}

/// The scanner of `pattern` when it is a built-in pattern that Oniguruma reads as written
/// (the rewrite of `formats/onig.rs` leaves it unchanged; cl100k's `{1,3}+` and GPT-2's `$`
/// are read otherwise, so they keep the regex). Its pieces are the regex's matches, and they
/// tile the text (the patterns end in `\s+`, so every char is in a match): the same
/// `find_matches` without the regex engine, 20-100x faster on the lookahead `\s+(?!\S)`. The
/// scanners are checked against fancy-regex running these patterns (`pretokenize/tests.rs`).
fn scanner_for(pattern: &str) -> Option<Pattern> {
    let as_onig = onig::escapes_and_anchors(&onig::interval_dialect(pattern, onig::Dialect::Rust));
    if as_onig.ok()? != pattern {
        return None;
    }
    let scanner = Pattern::new(pattern).ok()?;
    (scanner.has_safe_cuts() && scanner.as_str() == pattern).then_some(scanner)
}

impl Split {
    pub fn new(pattern: String, is_regex: bool, behavior: Behavior, invert: bool) -> Result<Self> {
        let re = if is_regex {
            onig::regex(&pattern, "Split")?
        } else {
            fancy_regex::Regex::new(&fancy_regex::escape(&pattern))
                .map_err(|e| Error::invalid(format!("Split: invalid pattern {pattern:?}: {e}")))?
        };
        let scanner = if is_regex {
            scanner_for(&pattern)
        } else {
            None
        };
        Ok(Split {
            pattern,
            is_regex,
            behavior,
            invert,
            re,
            scanner,
        })
    }

    /// The scanner when this Split keeps each of its matches as one piece (behavior
    /// isolated, not inverted): its pieces are then exactly the scanner's, which tile the text.
    /// Is this the isolating, not inverted Split on the regex `pattern` (as a tokenizer.json
    /// writes it)?
    pub fn isolates_regex(&self, pattern: &str) -> bool {
        self.is_regex
            && self.pattern == pattern
            && self.behavior == Behavior::Isolated
            && !self.invert
    }

    pub fn isolating_scanner(&self) -> Option<&Pattern> {
        (self.behavior == Behavior::Isolated && !self.invert)
            .then_some(self.scanner.as_ref())
            .flatten()
    }

    /// The pieces of `text[range]`, as byte ranges of `text`.
    pub fn split(&self, text: &str, range: (usize, usize)) -> Result<Vec<(usize, usize)>> {
        let part = &text[range.0..range.1];
        let mut marked = if !self.is_regex && self.pattern.is_empty() {
            vec![((0, part.len()), false)]
        } else if let Some(scanner) = &self.scanner {
            let spans = scanner.spans(part)?;
            spans.into_iter().map(|r| (r, true)).collect()
        } else {
            regex_matches(part, &self.re)?
        };
        if self.invert {
            for m in &mut marked {
                m.1 = !m.1;
            }
        }
        Ok(shift(apply(marked, self.behavior), range.0))
    }

    pub fn to_json(&self) -> Value {
        let pattern = if self.is_regex {
            json!({ "Regex": self.pattern })
        } else {
            json!({ "String": self.pattern })
        };
        json!({
            "type": "Split",
            "pattern": pattern,
            "behavior": self.behavior.json_name(),
            "invert": self.invert,
        })
    }
}

fn shift(ranges: Vec<(usize, usize)>, by: usize) -> Vec<(usize, usize)> {
    ranges.into_iter().map(|(s, e)| (s + by, e + by)).collect()
}
