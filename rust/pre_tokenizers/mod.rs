//! The pre-tokenizer stage of the pipeline: the normalized text cut into pieces, each a
//! normalized string of its own that still knows, byte by byte, where in the original it came
//! from; each piece is later encoded on its own. The components are HF `tokenizers`' own, with
//! its names, defaults, JSON form and results (its package is the test oracle): those that only
//! cut (`split.rs` has HF's matching and behaviors) and those that also rewrite their pieces
//! (`rewrite.rs`: ByteLevel, Metaspace).

mod custom;
mod rewrite;
mod scripts;
pub mod split;

use crate::options::{metaspace_fields, metaspace_json};
pub use crate::options::{ByteLevelOptions, PrependScheme};
pub use custom::{CustomPreTokenizer, PreTokenizeFn};
pub use split::{Behavior, Split};

use crate::bert::split::is_punctuation;
use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::normalizers::Normalized;
use crate::pretokenize::{Pattern, DEEPSEEK_V3_SPLITS};
use serde_json::{json, Value};
use split::{apply, chars_matching, regex_matches};
use std::sync::LazyLock;

#[derive(Clone, Debug)]
pub enum PreTokenizer {
    /// Boxed: with its compiled regex and scanner it is ten times the size of the others.
    Split(Box<Split>),
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
    /// Pieces of `length` chars (the last may be shorter); `length` is at least 1.
    FixedLength(usize),
    /// A cut where the Unicode script changes (`scripts.rs`).
    UnicodeScripts,
    /// GPT-2's bytes as printable chars, optionally after a space and GPT-2's pattern
    /// (`trim_offsets` is the post-processor's business; kept for the JSON form).
    ByteLevel(ByteLevelOptions),
    /// Spaces as `replacement`, one put first by `prepend_scheme`, and (with `split`) a piece
    /// per word, each starting with its `replacement`.
    Metaspace {
        replacement: char,
        prepend_scheme: PrependScheme,
        split: bool,
    },
    Sequence(Vec<PreTokenizer>),
    /// A Python object's `pre_tokenize` (`custom.rs`).
    Custom(CustomPreTokenizer),
}

/// HF's words, and what to do about it.
const CUSTOM_NOT_SAVED: &str = "Custom PreTokenizer cannot be serialized: a Python object's \
     pre_tokenize has no tokenizer.json form; set a built-in pre-tokenizer before saving or pickling";

static WORDS: LazyLock<fancy_regex::Regex> =
    LazyLock::new(|| fancy_regex::Regex::new(r"\w+|[^\w\s]+").expect("a valid regex"));

impl PreTokenizer {
    /// Cut each of `pieces` (in order) further; their alignments point into `original` (only
    /// a custom pre-tokenizer reads it).
    pub fn pre_tokenize(&self, original: &str, pieces: Vec<Normalized>) -> Result<Vec<Normalized>> {
        match self {
            PreTokenizer::Sequence(parts) => {
                let mut pieces = pieces;
                for p in parts {
                    pieces = p.pre_tokenize(original, pieces)?;
                }
                return Ok(pieces);
            }
            PreTokenizer::Custom(c) => return c.0.pre_tokenize(original, pieces),
            _ => {}
        }
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match self {
                PreTokenizer::ByteLevel(o) => {
                    out.extend(rewrite::byte_level(piece, o.add_prefix_space, o.use_regex)?)
                }
                PreTokenizer::Metaspace {
                    replacement,
                    prepend_scheme,
                    split,
                } => out.extend(rewrite::metaspace(
                    piece,
                    *replacement,
                    *prepend_scheme,
                    *split,
                )),
                _ => {
                    let ranges = self.cut(piece.normalized())?;
                    out.extend(ranges.into_iter().map(|(s, e)| piece.slice(s, e)));
                }
            }
        }
        // Every built-in cuts through HF's `PreTokenizedString::split`, which drops the empty
        // pieces (a custom pre-tokenizer's uncut empty split stays, as in HF).
        out.retain(|p| !p.normalized().is_empty());
        Ok(out)
    }

    /// The scanner whose pieces, each byte as its printable char, are exactly what this
    /// pre-tokenizer makes of a text, and whether a space is put first (unless the text starts
    /// with one): a ByteLevel with GPT-2's pattern, or an isolating Split on a built-in scanner
    /// followed by a ByteLevel that only maps bytes (Llama 3's and Qwen's shape). The pipeline
    /// then cuts and maps texts itself, without the per-byte alignments a general pre-tokenizer
    /// keeps (`byte_words.rs`).
    pub fn byte_level_scanner(&self) -> Option<(&Pattern, bool)> {
        fn deepseek_chain() -> &'static Pattern {
            static CHAIN: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
            CHAIN.get_or_init(|| {
                let parts = DEEPSEEK_V3_SPLITS.map(String::from);
                Pattern::isolated_splits(&parts).expect("DeepSeek-V3's splits are built in")
            })
        }
        let maps_only = |o: &ByteLevelOptions| !o.add_prefix_space && !o.use_regex;
        match self {
            PreTokenizer::ByteLevel(o) if o.use_regex => Some((&rewrite::GPT2, o.add_prefix_space)),
            PreTokenizer::Sequence(parts) => match parts.as_slice() {
                [PreTokenizer::Split(s), PreTokenizer::ByteLevel(o)] if maps_only(o) => {
                    Some((s.isolating_scanner()?, false))
                }
                // DeepSeek-V3's chain of three isolating Splits: the encoders' scanner of the
                // chain (`pretokenize::scan_deepseek`) cuts what the three cut in turn.
                [PreTokenizer::Split(a), PreTokenizer::Split(b), PreTokenizer::Split(c), PreTokenizer::ByteLevel(o)]
                    if maps_only(o)
                        && [a, b, c]
                            .iter()
                            .zip(DEEPSEEK_V3_SPLITS)
                            .all(|(s, p)| s.isolates_regex(p)) =>
                {
                    Some((deepseek_chain(), false))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The pieces of the whole of `text` (as HF's `pre_tokenize_str`): each piece's text and
    /// the byte range of `text` it covers.
    pub fn pre_tokenize_str(&self, text: &str) -> Result<Vec<(String, (usize, usize))>> {
        let pieces = self.pre_tokenize(text, vec![Normalized::new(text)])?;
        Ok(pieces
            .into_iter()
            .map(|p| {
                let range = p.original_span();
                (p.into_normalized(), range)
            })
            .collect())
    }

    /// The pieces (byte ranges) a cutting pre-tokenizer makes of `part`.
    fn cut(&self, part: &str) -> Result<Vec<(usize, usize)>> {
        let pieces = match self {
            PreTokenizer::Split(s) => return s.split(part, (0, part.len())),
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
                // The byte-class scanner of `crate::bert` (whitespace dropped, each
                // punctuation char isolated), a few times faster than the two general passes.
                let mut out = Vec::new();
                crate::bert::for_each_word(part, |s, e| out.push((s, e)));
                out
            }
            PreTokenizer::UnicodeScripts => scripts::cut(part),
            PreTokenizer::FixedLength(n) => {
                let starts: Vec<usize> = part.char_indices().map(|(i, _)| i).collect();
                starts
                    .chunks(*n)
                    .enumerate()
                    .map(|(k, chunk)| {
                        let end = starts.get((k + 1) * n).copied().unwrap_or(part.len());
                        (chunk[0], end)
                    })
                    .collect()
            }
            PreTokenizer::ByteLevel(_)
            | PreTokenizer::Metaspace { .. }
            | PreTokenizer::Sequence(_)
            | PreTokenizer::Custom(_) => unreachable!("handled in pre_tokenize"),
        };
        Ok(pieces)
    }

    /// From HF's tokenizer.json form; `path` names the place in the file for errors.
    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let (f, kind) = Fields::of(v, path, "pre-tokenizer")?;
        let behavior = |default: Behavior| -> Result<Behavior> {
            match f.get("behavior") {
                None => Ok(default),
                Some(_) => Behavior::parse(&f.text("behavior", None)?)
                    .map_err(|e| Error::invalid(format!("{}: {e}", f.at("behavior")))),
            }
        };
        Ok(match kind {
            "Whitespace" => PreTokenizer::Whitespace,
            "WhitespaceSplit" => PreTokenizer::WhitespaceSplit,
            "BertPreTokenizer" => PreTokenizer::Bert,
            "Punctuation" => PreTokenizer::Punctuation(behavior(Behavior::Isolated)?),
            "Digits" => PreTokenizer::Digits {
                individual: f.flag("individual_digits", false)?,
            },
            "CharDelimiterSplit" => PreTokenizer::CharDelimiterSplit(f.one_char("delimiter", "")?),
            "FixedLength" => match f.count("length", 5)? {
                0 => {
                    return Err(Error::invalid(format!(
                        "{}: a length of at least 1 is needed",
                        f.at("length")
                    )))
                }
                n => PreTokenizer::FixedLength(n),
            },
            "Split" => {
                let p = f
                    .get("pattern")
                    .and_then(Value::as_object)
                    .filter(|o| o.len() == 1);
                let (pattern, is_regex) = match p.and_then(|o| o.iter().next()) {
                    Some((k, Value::String(s))) if k == "String" => (s.clone(), false),
                    Some((k, Value::String(s))) if k == "Regex" => (s.clone(), true),
                    _ => {
                        return Err(Error::invalid(format!(
                            "{}: expected {{\"String\": ...}} or {{\"Regex\": ...}}",
                            f.at("pattern")
                        )))
                    }
                };
                if f.get("behavior").is_none() {
                    return Err(Error::invalid(format!("{path}: Split needs \"behavior\"")));
                }
                let b = behavior(Behavior::Removed)?;
                PreTokenizer::Split(Box::new(Split::new(
                    pattern,
                    is_regex,
                    b,
                    f.flag("invert", false)?,
                )?))
            }
            "ByteLevel" => PreTokenizer::ByteLevel(ByteLevelOptions::from_fields(&f)?),
            "Metaspace" => {
                let (replacement, prepend_scheme, split) = metaspace_fields(&f)?;
                PreTokenizer::Metaspace {
                    replacement,
                    prepend_scheme,
                    split,
                }
            }
            "Sequence" => PreTokenizer::Sequence(
                f.list("pretokenizers")?
                    .into_iter()
                    .map(|(p, at)| PreTokenizer::from_json(p, &at))
                    .collect::<Result<_>>()?,
            ),
            "UnicodeScripts" => PreTokenizer::UnicodeScripts,
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown pre-tokenizer type {other:?}"
                )))
            }
        })
    }

    /// Whether a custom (Python) pre-tokenizer is part of this one.
    pub fn is_custom(&self) -> bool {
        match self {
            PreTokenizer::Custom(_) => true,
            PreTokenizer::Sequence(parts) => parts.iter().any(PreTokenizer::is_custom),
            _ => false,
        }
    }

    /// HF's tokenizer.json form; a custom pre-tokenizer has none (HF's message).
    pub fn to_json(&self) -> Result<Value> {
        Ok(match self {
            PreTokenizer::Split(s) => s.to_json(),
            PreTokenizer::Whitespace => json!({"type": "Whitespace"}),
            PreTokenizer::WhitespaceSplit => json!({"type": "WhitespaceSplit"}),
            PreTokenizer::Bert => json!({"type": "BertPreTokenizer"}),
            PreTokenizer::FixedLength(n) => json!({"type": "FixedLength", "length": n}),
            PreTokenizer::UnicodeScripts => json!({"type": "UnicodeScripts"}),
            PreTokenizer::Punctuation(b) => {
                json!({"type": "Punctuation", "behavior": b.json_name()})
            }
            PreTokenizer::Digits { individual } => {
                json!({"type": "Digits", "individual_digits": individual})
            }
            PreTokenizer::CharDelimiterSplit(c) => {
                json!({"type": "CharDelimiterSplit", "delimiter": c.to_string()})
            }
            PreTokenizer::ByteLevel(o) => o.to_json(),
            PreTokenizer::Metaspace {
                replacement,
                prepend_scheme,
                split,
            } => metaspace_json(*replacement, *prepend_scheme, *split),
            PreTokenizer::Sequence(parts) => json!({
                "type": "Sequence",
                "pretokenizers": parts.iter().map(PreTokenizer::to_json).collect::<Result<Vec<_>>>()?,
            }),
            PreTokenizer::Custom(_) => return Err(Error::invalid(CUSTOM_NOT_SAVED)),
        })
    }
}

#[cfg(test)]
mod tests;
