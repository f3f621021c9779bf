//! HF's Replace: every match of a string or a regex becomes `content`.
//!
//! A string pattern is matched literally, leftmost first, without overlaps. A regex runs on
//! fancy-regex, where HF uses Oniguruma, rewritten where the two differ (`formats/onig.rs`);
//! exotic constructs may still differ (then the regex is refused or matches differently; the
//! README says so). Empty matches
//! are skipped, so a pattern that can match nothing still terminates and inserts nothing there.

use super::Normalized;
use crate::error::{Error, Result};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplacePattern {
    String(String),
    Regex(String),
}

impl ReplacePattern {
    /// `text` as a regex if `regex`, else matched literally.
    pub fn new(text: String, regex: bool) -> Self {
        if regex {
            ReplacePattern::Regex(text)
        } else {
            ReplacePattern::String(text)
        }
    }

    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let obj = v.as_object().filter(|o| o.len() == 1);
        match obj.and_then(|o| o.iter().next()) {
            Some((k, Value::String(s))) if k == "String" => Ok(ReplacePattern::String(s.clone())),
            Some((k, Value::String(s))) if k == "Regex" => Ok(ReplacePattern::Regex(s.clone())),
            _ => Err(Error::invalid(format!(
                "{path}: expected {{\"String\": ...}} or {{\"Regex\": ...}}, got {v}"
            ))),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            ReplacePattern::String(s) => json!({ "String": s }),
            ReplacePattern::Regex(r) => json!({ "Regex": r }),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Replace {
    pattern: ReplacePattern,
    content: String,
    regex: Option<fancy_regex::Regex>,
}

impl Replace {
    pub fn new(pattern: ReplacePattern, content: String) -> Result<Self> {
        let regex = match &pattern {
            ReplacePattern::String(s) if s.is_empty() => {
                return Err(Error::invalid(
                    "Replace needs a non-empty pattern (an empty one matches everywhere)",
                ))
            }
            ReplacePattern::String(_) => None,
            ReplacePattern::Regex(r) => Some(crate::formats::onig::regex(r, "Replace")?),
        };
        Ok(Replace {
            pattern,
            content,
            regex,
        })
    }

    pub fn pattern(&self) -> &ReplacePattern {
        &self.pattern
    }

    pub fn content(&self) -> &str {
        &self.content
    }

    pub fn apply(&self, n: &mut Normalized) {
        let matches = self.matches(n.normalized());
        n.replace_ranges(&matches, &self.content);
    }

    /// `text` with every match replaced (the decoders' Replace, where no alignment is kept).
    pub fn replace_str(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (s, e) in self.matches(text) {
            out.push_str(&text[last..s]);
            out.push_str(&self.content);
            last = e;
        }
        out.push_str(&text[last..]);
        out
    }

    /// The non-empty matches, in order.
    fn matches(&self, text: &str) -> Vec<(usize, usize)> {
        match (&self.pattern, &self.regex) {
            (ReplacePattern::String(s), _) => text
                .match_indices(s.as_str())
                .map(|(i, m)| (i, i + m.len()))
                .collect(),
            (_, Some(re)) => re
                .find_iter(text)
                // A regex that fails at run time (backtracking limit) replaces nothing further.
                .map_while(|m| m.ok())
                .filter(|m| m.start() < m.end())
                .map(|m| (m.start(), m.end()))
                .collect(),
            (ReplacePattern::Regex(_), None) => Vec::new(),
        }
    }
}
