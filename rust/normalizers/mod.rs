//! The normalizer stage of the pipeline: text → normalized text that keeps, for every byte, the
//! range of the original it came from (`normalized.rs`), so offsets stay exact whatever the
//! normalizers did. The components are HF `tokenizers`' own, with its names, defaults, JSON form
//! and results (its package is the test oracle): Unicode forms (`unicode.rs`), case and accents
//! (`case.rs`), whitespace and affixes (`strip.rs`), replacement (`replace.rs`), BERT's clean-up
//! (over `crate::bert`), and a sequence of them.

mod bytes;
mod case;
mod custom;
mod normalized;
mod precompiled;
mod replace;
mod strip;
mod unicode;

pub use case::uppercase;
pub use custom::{CustomNormalizer, NormalizeFn};
pub use normalized::Normalized;
pub use replace::{Replace, ReplacePattern};
pub use unicode::UnicodeForm;

use crate::bert::normalize::BertNormalizer;
use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
pub use precompiled::Precompiled;
use serde_json::{json, Map, Value};

/// HF's words, and what to do about it.
const CUSTOM_NOT_SAVED: &str = "Custom Normalizer cannot be serialized: a Python object's \
     normalize has no tokenizer.json form; set a built-in normalizer before saving or pickling";

#[derive(Clone, Debug)]
pub enum Normalizer {
    Unicode(UnicodeForm),
    Lowercase,
    StripAccents,
    Strip {
        left: bool,
        right: bool,
    },
    Prepend(String),
    Replace(Replace),
    /// `strip_accents: None` follows `lowercase`, as in HF.
    Bert {
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
    },
    /// Each UTF-8 byte as GPT-2's printable char.
    ByteLevel,
    /// SentencePiece's NMT clean-up: controls dropped, odd spaces made ' '.
    Nmt,
    /// SentencePiece's compiled rules (`precompiled.rs`).
    Precompiled(Precompiled),
    Sequence(Vec<Normalizer>),
    /// A Python object's `normalize` (`custom.rs`).
    Custom(CustomNormalizer),
}

impl Normalizer {
    /// Normalize `n`, whose alignments point into `original` (only a custom normalizer reads
    /// it; only a custom one fails).
    pub fn normalize(&self, original: &str, n: &mut Normalized) -> Result<()> {
        match self {
            Normalizer::Unicode(form) => form.apply(n),
            Normalizer::Lowercase => case::lowercase(n),
            Normalizer::StripAccents => case::strip_accents(n),
            Normalizer::Strip { left, right } => n.strip(*left, *right),
            Normalizer::Prepend(s) => n.prepend(s),
            Normalizer::Replace(r) => r.apply(n),
            Normalizer::ByteLevel => bytes::byte_level(n),
            Normalizer::Nmt => bytes::nmt(n),
            Normalizer::Precompiled(p) => p.apply(n),
            Normalizer::Bert {
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            } => {
                let bert = BertNormalizer {
                    clean_text: *clean_text,
                    handle_chinese_chars: *handle_chinese_chars,
                    strip_accents: strip_accents.unwrap_or(*lowercase),
                    lowercase: *lowercase,
                };
                case::bert(&bert, n)
            }
            Normalizer::Sequence(parts) => {
                for p in parts {
                    p.normalize(original, n)?;
                }
            }
            Normalizer::Custom(c) => c.0.normalize(original, n)?,
        }
        Ok(())
    }

    /// The normalized text of `text`.
    pub fn normalize_str(&self, text: &str) -> Result<String> {
        let mut n = Normalized::new(text);
        self.normalize(text, &mut n)?;
        Ok(n.into_normalized())
    }

    /// Whether a custom (Python) normalizer is part of this one.
    pub fn is_custom(&self) -> bool {
        match self {
            Normalizer::Custom(_) => true,
            Normalizer::Sequence(parts) => parts.iter().any(Normalizer::is_custom),
            _ => false,
        }
    }

    /// From HF's tokenizer.json form; `path` names the place in the file for errors.
    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let (f, kind) = Fields::of(v, path, "normalizer")?;
        Ok(match kind {
            "NFC" => Normalizer::Unicode(UnicodeForm::Nfc),
            "NFD" => Normalizer::Unicode(UnicodeForm::Nfd),
            "NFKC" => Normalizer::Unicode(UnicodeForm::Nfkc),
            "NFKD" => Normalizer::Unicode(UnicodeForm::Nfkd),
            "Lowercase" => Normalizer::Lowercase,
            "StripAccents" => Normalizer::StripAccents,
            "Strip" => Normalizer::Strip {
                left: f.flag("strip_left", true)?,
                right: f.flag("strip_right", true)?,
            },
            "Prepend" => Normalizer::Prepend(f.text("prepend", None)?),
            "Replace" => {
                let pattern = f
                    .get("pattern")
                    .ok_or_else(|| Error::invalid(format!("{path}: Replace needs \"pattern\"")))?;
                let pattern = ReplacePattern::from_json(pattern, &f.at("pattern"))?;
                Normalizer::Replace(Replace::new(pattern, f.text("content", None)?)?)
            }
            "BertNormalizer" => Normalizer::Bert {
                clean_text: f.flag("clean_text", true)?,
                handle_chinese_chars: f.flag("handle_chinese_chars", true)?,
                strip_accents: match f.get("strip_accents") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(other) => {
                        return Err(Error::invalid(format!(
                            "{}: expected true, false or null, got {other}",
                            f.at("strip_accents")
                        )))
                    }
                },
                lowercase: f.flag("lowercase", true)?,
            },
            "Sequence" => Normalizer::Sequence(
                f.list("normalizers")?
                    .into_iter()
                    .map(|(n, at)| Normalizer::from_json(n, &at))
                    .collect::<Result<_>>()?,
            ),
            "ByteLevel" => Normalizer::ByteLevel,
            "Nmt" => Normalizer::Nmt,
            "Precompiled" => {
                let at = f.at("precompiled_charsmap");
                let text = f.text("precompiled_charsmap", None)?;
                let bytes = BASE64
                    .decode(text.as_bytes())
                    .map_err(|e| Error::invalid(format!("{at}: not base64 ({e})")))?;
                Normalizer::Precompiled(
                    Precompiled::new(bytes).map_err(|e| Error::invalid(format!("{at}: {e}")))?,
                )
            }
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown normalizer type {other:?}"
                )))
            }
        })
    }

    /// HF's tokenizer.json form; a custom normalizer has none (HF's message).
    pub fn to_json(&self) -> Result<Value> {
        let typed = |kind: &str, rest: Value| {
            let mut m = Map::new();
            m.insert("type".into(), Value::String(kind.into()));
            if let Value::Object(r) = rest {
                m.extend(r);
            }
            Value::Object(m)
        };
        Ok(match self {
            Normalizer::Unicode(form) => typed(form.name(), json!({})),
            Normalizer::Lowercase => typed("Lowercase", json!({})),
            Normalizer::StripAccents => typed("StripAccents", json!({})),
            Normalizer::ByteLevel => typed("ByteLevel", json!({})),
            Normalizer::Nmt => typed("Nmt", json!({})),
            Normalizer::Precompiled(p) => typed(
                "Precompiled",
                json!({ "precompiled_charsmap": BASE64.encode(p.charsmap()) }),
            ),
            Normalizer::Strip { left, right } => {
                typed("Strip", json!({"strip_left": left, "strip_right": right}))
            }
            Normalizer::Prepend(s) => typed("Prepend", json!({ "prepend": s })),
            Normalizer::Replace(r) => typed(
                "Replace",
                json!({"pattern": r.pattern().to_json(), "content": r.content()}),
            ),
            Normalizer::Bert {
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            } => typed(
                "BertNormalizer",
                json!({
                    "clean_text": clean_text,
                    "handle_chinese_chars": handle_chinese_chars,
                    "strip_accents": strip_accents,
                    "lowercase": lowercase,
                }),
            ),
            Normalizer::Sequence(parts) => typed(
                "Sequence",
                json!({ "normalizers": parts.iter().map(Normalizer::to_json).collect::<Result<Vec<_>>>()? }),
            ),
            Normalizer::Custom(_) => return Err(Error::invalid(CUSTOM_NOT_SAVED)),
        })
    }
}

#[cfg(test)]
mod tests;
