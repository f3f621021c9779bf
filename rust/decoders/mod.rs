//! The decoder stage of the pipeline: tokens back to text. The components are HF `tokenizers`'
//! own, with its names, defaults, JSON form and results (its package is the test oracle): each
//! turns the list of token strings into another list (HF's `decode_chain`), so they chain in a
//! `Sequence`, and `decode` joins the last list. Bytes (`bytes.rs`: ByteLevel, ByteFallback) and
//! word marks (`marks.rs`: WordPiece, Metaspace, BPEDecoder, CTC, Strip, Fuse, Replace).

mod bytes;
mod custom;
mod marks;

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::normalizers::{Replace, ReplacePattern};
use crate::options::{metaspace_fields, metaspace_json};
pub use crate::options::{ByteLevelOptions, PrependScheme};
pub use custom::{CustomDecoder, DecodeFn};
use serde_json::{json, Value};

#[derive(Clone, Debug)]
pub enum Decoder {
    /// HF's ByteLevel options, kept for its JSON form; decoding does not use them.
    ByteLevel(ByteLevelOptions),
    ByteFallback,
    WordPiece {
        prefix: String,
        cleanup: bool,
    },
    Metaspace {
        replacement: char,
        prepend_scheme: PrependScheme,
        split: bool,
    },
    Bpe {
        suffix: String,
    },
    Ctc {
        pad_token: String,
        word_delimiter_token: String,
        cleanup: bool,
    },
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
    Fuse,
    Replace(Replace),
    Sequence(Vec<Decoder>),
    /// A Python object's `decode_chain` (`custom.rs`).
    Custom(CustomDecoder),
}

/// HF's words, and what to do about it.
const CUSTOM_NOT_SAVED: &str = "Custom PyDecoder cannot be serialized: a Python object's \
     decode_chain has no tokenizer.json form; set a built-in decoder before saving or pickling";

impl Decoder {
    /// HF's `decode_chain` (only a custom decoder fails).
    pub fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(match self {
            Decoder::ByteLevel(_) => bytes::byte_level(tokens),
            Decoder::ByteFallback => bytes::byte_fallback(tokens),
            Decoder::WordPiece { prefix, cleanup } => marks::wordpiece(tokens, prefix, *cleanup),
            Decoder::Metaspace {
                replacement,
                prepend_scheme,
                ..
            } => marks::metaspace(tokens, *replacement, *prepend_scheme),
            Decoder::Bpe { suffix } => marks::bpe(tokens, suffix),
            Decoder::Ctc {
                pad_token,
                word_delimiter_token,
                cleanup,
            } => marks::ctc(tokens, pad_token, word_delimiter_token, *cleanup),
            Decoder::Strip {
                content,
                start,
                stop,
            } => marks::strip(tokens, *content, *start, *stop),
            Decoder::Fuse => vec![tokens.concat()],
            Decoder::Replace(r) => tokens.iter().map(|t| r.replace_str(t)).collect(),
            Decoder::Sequence(parts) => {
                let mut tokens = tokens;
                for d in parts {
                    tokens = d.decode_chain(tokens)?;
                }
                tokens
            }
            Decoder::Custom(c) => c.0.decode_chain(tokens)?,
        })
    }

    /// The text of `tokens`.
    pub fn decode(&self, tokens: Vec<String>) -> Result<String> {
        Ok(self.decode_chain(tokens)?.concat())
    }

    /// From HF's tokenizer.json form; `path` names the place in the file for errors.
    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let (f, kind) = Fields::of(v, path, "decoder")?;
        Ok(match kind {
            "ByteLevel" => Decoder::ByteLevel(ByteLevelOptions::from_fields(&f)?),
            "ByteFallback" => Decoder::ByteFallback,
            "Fuse" => Decoder::Fuse,
            "WordPiece" => Decoder::WordPiece {
                prefix: f.text("prefix", Some("##"))?,
                cleanup: f.flag("cleanup", true)?,
            },
            "Metaspace" => {
                let (replacement, prepend_scheme, split) = metaspace_fields(&f)?;
                Decoder::Metaspace {
                    replacement,
                    prepend_scheme,
                    split,
                }
            }
            "BPEDecoder" => Decoder::Bpe {
                suffix: f.text("suffix", Some("</w>"))?,
            },
            "CTC" => Decoder::Ctc {
                pad_token: f.text("pad_token", Some("<pad>"))?,
                word_delimiter_token: f.text("word_delimiter_token", Some("|"))?,
                cleanup: f.flag("cleanup", true)?,
            },
            "Strip" => Decoder::Strip {
                content: f.one_char("content", " ")?,
                start: f.count("start", 0)?,
                stop: f.count("stop", 0)?,
            },
            "Replace" => {
                let pattern = f
                    .get("pattern")
                    .ok_or_else(|| Error::invalid(format!("{path}: Replace needs \"pattern\"")))?;
                let pattern = ReplacePattern::from_json(pattern, &f.at("pattern"))?;
                Decoder::Replace(Replace::new(pattern, f.text("content", Some(""))?)?)
            }
            "Sequence" => Decoder::Sequence(
                f.list("decoders")?
                    .into_iter()
                    .map(|(d, at)| Decoder::from_json(d, &at))
                    .collect::<Result<_>>()?,
            ),
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown decoder type {other:?}"
                )))
            }
        })
    }

    /// HF's tokenizer.json form; a custom decoder has none (HF's message).
    pub fn to_json(&self) -> Result<Value> {
        Ok(match self {
            Decoder::ByteLevel(o) => o.to_json(),
            Decoder::ByteFallback => json!({"type": "ByteFallback"}),
            Decoder::Fuse => json!({"type": "Fuse"}),
            Decoder::WordPiece { prefix, cleanup } => {
                json!({"type": "WordPiece", "prefix": prefix, "cleanup": cleanup})
            }
            Decoder::Metaspace {
                replacement,
                prepend_scheme,
                split,
            } => metaspace_json(*replacement, *prepend_scheme, *split),
            Decoder::Bpe { suffix } => json!({"type": "BPEDecoder", "suffix": suffix}),
            Decoder::Ctc {
                pad_token,
                word_delimiter_token,
                cleanup,
            } => json!({
                "type": "CTC",
                "pad_token": pad_token,
                "word_delimiter_token": word_delimiter_token,
                "cleanup": cleanup,
            }),
            Decoder::Strip {
                content,
                start,
                stop,
            } => {
                json!({"type": "Strip", "content": content.to_string(), "start": start, "stop": stop})
            }
            Decoder::Replace(r) => json!({
                "type": "Replace",
                "pattern": r.pattern().to_json(),
                "content": r.content(),
            }),
            Decoder::Sequence(parts) => json!({
                "type": "Sequence",
                "decoders": parts.iter().map(Decoder::to_json).collect::<Result<Vec<_>>>()?,
            }),
            Decoder::Custom(_) => return Err(Error::invalid(CUSTOM_NOT_SAVED)),
        })
    }
}

#[cfg(test)]
mod tests;
