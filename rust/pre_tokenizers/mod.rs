//! The pre-tokenizer stage of the pipeline: the normalized text cut into pieces (byte ranges),
//! each later encoded on its own. The components are HF `tokenizers`' own, with its names,
//! defaults, JSON form and results (its package is the test oracle). So far the ones that only
//! cut (`split.rs` has HF's matching and behaviors); ByteLevel and Metaspace, which also rewrite
//! the text, are the byte-level encoders' scanners (`crate::pretokenize`) for now.

pub mod split;

pub use split::{Behavior, Split};

use crate::error::{Error, Result};
use serde_json::{json, Value};
use split::{apply, chars_matching, regex_matches, shift};
use std::sync::LazyLock;

#[derive(Clone, Debug)]
pub enum PreTokenizer {
    Split(Split),
    /// `\w+|[^\w\s]+`, the rest removed.
    Whitespace,
    /// Cut at whitespace, removed.
    WhitespaceSplit,
    /// Each punctuation char (ASCII or Unicode `P*`), under the behavior.
    Punctuation(Behavior),
    /// Numeric chars: each on its own, or runs together.
    Digits {
        individual: bool,
    },
    CharDelimiterSplit(char),
    /// Whitespace removed, then each punctuation char isolated.
    Bert,
    Sequence(Vec<PreTokenizer>),
}

fn is_punctuation(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    c.is_ascii_punctuation() || c.is_punctuation()
}

static WORDS: LazyLock<fancy_regex::Regex> =
    LazyLock::new(|| fancy_regex::Regex::new(r"\w+|[^\w\s]+").expect("a valid regex"));

impl PreTokenizer {
    /// Cut each of `pieces` (byte ranges of `text`, in order) further.
    pub fn pre_tokenize(
        &self,
        text: &str,
        pieces: Vec<(usize, usize)>,
    ) -> Result<Vec<(usize, usize)>> {
        if let PreTokenizer::Sequence(parts) = self {
            let mut pieces = pieces;
            for p in parts {
                pieces = p.pre_tokenize(text, pieces)?;
            }
            return Ok(pieces);
        }
        let mut out = Vec::with_capacity(pieces.len());
        for range in pieces {
            out.extend(self.cut(text, range)?);
        }
        Ok(out)
    }

    /// The pieces of the whole of `text`.
    pub fn pre_tokenize_str(&self, text: &str) -> Result<Vec<(usize, usize)>> {
        self.pre_tokenize(text, vec![(0, text.len())])
    }

    fn cut(&self, text: &str, range: (usize, usize)) -> Result<Vec<(usize, usize)>> {
        let part = &text[range.0..range.1];
        let pieces = match self {
            PreTokenizer::Split(s) => return s.split(text, range),
            PreTokenizer::Whitespace => {
                let mut marked = regex_matches(part, &WORDS)?;
                for m in &mut marked {
                    m.1 = !m.1;
                }
                apply(marked, Behavior::Removed)
            }
            PreTokenizer::WhitespaceSplit => {
                apply(chars_matching(part, char::is_whitespace), Behavior::Removed)
            }
            PreTokenizer::Punctuation(b) => apply(chars_matching(part, is_punctuation), *b),
            PreTokenizer::Digits { individual } => apply(
                chars_matching(part, char::is_numeric),
                if *individual {
                    Behavior::Isolated
                } else {
                    Behavior::Contiguous
                },
            ),
            PreTokenizer::CharDelimiterSplit(d) => {
                apply(chars_matching(part, |c| c == *d), Behavior::Removed)
            }
            PreTokenizer::Bert => {
                let words = apply(chars_matching(part, char::is_whitespace), Behavior::Removed);
                let mut out = Vec::new();
                for (s, e) in words {
                    let cut = apply(
                        chars_matching(&part[s..e], is_punctuation),
                        Behavior::Isolated,
                    );
                    out.extend(shift(cut, s));
                }
                out
            }
            PreTokenizer::Sequence(_) => unreachable!("handled in pre_tokenize"),
        };
        Ok(shift(pieces, range.0))
    }

    /// From HF's tokenizer.json form; `path` names the place in the file for errors.
    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let obj = v.as_object().ok_or_else(|| {
            Error::invalid(format!("{path}: a pre-tokenizer must be a JSON object"))
        })?;
        let kind = obj.get("type").and_then(Value::as_str).ok_or_else(|| {
            Error::invalid(format!("{path}: a pre-tokenizer needs a \"type\" string"))
        })?;
        let behavior = |default: Behavior| -> Result<Behavior> {
            match obj.get("behavior") {
                None => Ok(default),
                Some(Value::String(s)) => {
                    Behavior::parse(s).map_err(|e| Error::invalid(format!("{path}.behavior: {e}")))
                }
                Some(other) => Err(Error::invalid(format!(
                    "{path}.behavior: expected a string, got {other}"
                ))),
            }
        };
        Ok(match kind {
            "Whitespace" => PreTokenizer::Whitespace,
            "WhitespaceSplit" => PreTokenizer::WhitespaceSplit,
            "BertPreTokenizer" => PreTokenizer::Bert,
            "Punctuation" => PreTokenizer::Punctuation(behavior(Behavior::Isolated)?),
            "Digits" => PreTokenizer::Digits {
                individual: match obj.get("individual_digits") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => {
                        return Err(Error::invalid(format!(
                            "{path}.individual_digits: expected true or false, got {other}"
                        )))
                    }
                },
            },
            "CharDelimiterSplit" => {
                let d = obj
                    .get("delimiter")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let mut chars = d.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => PreTokenizer::CharDelimiterSplit(c),
                    _ => {
                        return Err(Error::invalid(format!(
                            "{path}.delimiter: expected one character, got {d:?}"
                        )))
                    }
                }
            }
            "Split" => {
                let p = obj
                    .get("pattern")
                    .and_then(Value::as_object)
                    .filter(|o| o.len() == 1);
                let (pattern, is_regex) = match p.and_then(|o| o.iter().next()) {
                    Some((k, Value::String(s))) if k == "String" => (s.clone(), false),
                    Some((k, Value::String(s))) if k == "Regex" => (s.clone(), true),
                    _ => {
                        return Err(Error::invalid(format!(
                            "{path}.pattern: expected {{\"String\": ...}} or {{\"Regex\": ...}}"
                        )))
                    }
                };
                let invert = match obj.get("invert") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => {
                        return Err(Error::invalid(format!(
                            "{path}.invert: expected true or false, got {other}"
                        )))
                    }
                };
                let behavior = match obj.get("behavior") {
                    Some(_) => behavior(Behavior::Removed)?,
                    None => {
                        return Err(Error::invalid(format!("{path}: Split needs \"behavior\"")))
                    }
                };
                PreTokenizer::Split(Split::new(pattern, is_regex, behavior, invert)?)
            }
            "Sequence" => {
                let parts = obj
                    .get("pretokenizers")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        Error::invalid(format!("{path}: Sequence needs a \"pretokenizers\" list"))
                    })?;
                PreTokenizer::Sequence(
                    parts
                        .iter()
                        .enumerate()
                        .map(|(k, p)| {
                            PreTokenizer::from_json(p, &format!("{path}.pretokenizers[{k}]"))
                        })
                        .collect::<Result<_>>()?,
                )
            }
            "ByteLevel" | "Metaspace" | "UnicodeScripts" | "FixedLength" => {
                return Err(Error::invalid(format!(
                    "{path}: the {kind} pre-tokenizer is not in this stage yet"
                )))
            }
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown pre-tokenizer type {other:?}"
                )))
            }
        })
    }

    /// HF's tokenizer.json form.
    pub fn to_json(&self) -> Value {
        match self {
            PreTokenizer::Split(s) => s.to_json(),
            PreTokenizer::Whitespace => json!({"type": "Whitespace"}),
            PreTokenizer::WhitespaceSplit => json!({"type": "WhitespaceSplit"}),
            PreTokenizer::Bert => json!({"type": "BertPreTokenizer"}),
            PreTokenizer::Punctuation(b) => {
                json!({"type": "Punctuation", "behavior": b.json_name()})
            }
            PreTokenizer::Digits { individual } => {
                json!({"type": "Digits", "individual_digits": individual})
            }
            PreTokenizer::CharDelimiterSplit(c) => {
                json!({"type": "CharDelimiterSplit", "delimiter": c.to_string()})
            }
            PreTokenizer::Sequence(parts) => json!({
                "type": "Sequence",
                "pretokenizers": parts.iter().map(PreTokenizer::to_json).collect::<Vec<_>>(),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
