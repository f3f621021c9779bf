//! The decoder stage of the pipeline: tokens back to text. The components are HF `tokenizers`'
//! own, with its names, defaults, JSON form and results (its package is the test oracle): each
//! turns the list of token strings into another list (HF's `decode_chain`), so they chain in a
//! `Sequence`, and `decode` joins the last list. Bytes (`bytes.rs`: ByteLevel, ByteFallback) and
//! word marks (`marks.rs`: WordPiece, Metaspace, BPEDecoder, CTC, Strip, Fuse, Replace).

mod bytes;
mod marks;

use crate::error::{Error, Result};
use crate::normalizers::{Replace, ReplacePattern};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrependScheme {
    Always,
    First,
    Never,
}

impl PrependScheme {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "always" => Ok(PrependScheme::Always),
            "first" => Ok(PrependScheme::First),
            "never" => Ok(PrependScheme::Never),
            other => Err(Error::invalid(format!(
                "unknown prepend_scheme {other:?}: use always, first or never"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PrependScheme::Always => "always",
            PrependScheme::First => "first",
            PrependScheme::Never => "never",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Decoder {
    /// HF's ByteLevel options, kept for its JSON form; decoding does not use them.
    ByteLevel {
        add_prefix_space: bool,
        trim_offsets: bool,
        use_regex: bool,
    },
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
}

impl Decoder {
    /// HF's `decode_chain`.
    pub fn decode_chain(&self, tokens: Vec<String>) -> Vec<String> {
        match self {
            Decoder::ByteLevel { .. } => bytes::byte_level(tokens),
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
            Decoder::Sequence(parts) => parts.iter().fold(tokens, |t, d| d.decode_chain(t)),
        }
    }

    /// The text of `tokens`.
    pub fn decode(&self, tokens: Vec<String>) -> String {
        self.decode_chain(tokens).concat()
    }

    /// From HF's tokenizer.json form; `path` names the place in the file for errors.
    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid(format!("{path}: a decoder must be a JSON object")))?;
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid(format!("{path}: a decoder needs a \"type\" string")))?;
        let text = |key: &str, default: &str| -> Result<String> {
            match obj.get(key) {
                None => Ok(default.to_string()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(Error::invalid(format!(
                    "{path}.{key}: expected a string, got {other}"
                ))),
            }
        };
        let flag = |key: &str, default: bool| -> Result<bool> {
            match obj.get(key) {
                None => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(Error::invalid(format!(
                    "{path}.{key}: expected true or false, got {other}"
                ))),
            }
        };
        let one_char = |key: &str, default: &str| -> Result<char> {
            let s = text(key, default)?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(Error::invalid(format!(
                    "{path}.{key}: expected one character, got {s:?}"
                ))),
            }
        };
        let count = |key: &str| -> Result<usize> {
            match obj.get(key) {
                None => Ok(0),
                Some(v) => v.as_u64().map(|n| n as usize).ok_or_else(|| {
                    Error::invalid(format!("{path}.{key}: expected a count, got {v}"))
                }),
            }
        };
        Ok(match kind {
            "ByteLevel" => Decoder::ByteLevel {
                add_prefix_space: flag("add_prefix_space", true)?,
                trim_offsets: flag("trim_offsets", true)?,
                use_regex: flag("use_regex", true)?,
            },
            "ByteFallback" => Decoder::ByteFallback,
            "Fuse" => Decoder::Fuse,
            "WordPiece" => Decoder::WordPiece {
                prefix: text("prefix", "##")?,
                cleanup: flag("cleanup", true)?,
            },
            "Metaspace" => Decoder::Metaspace {
                replacement: one_char("replacement", "▁")?,
                prepend_scheme: PrependScheme::parse(&text("prepend_scheme", "always")?)
                    .map_err(|e| Error::invalid(format!("{path}.prepend_scheme: {e}")))?,
                split: flag("split", true)?,
            },
            "BPEDecoder" => Decoder::Bpe {
                suffix: text("suffix", "</w>")?,
            },
            "CTC" => Decoder::Ctc {
                pad_token: text("pad_token", "<pad>")?,
                word_delimiter_token: text("word_delimiter_token", "|")?,
                cleanup: flag("cleanup", true)?,
            },
            "Strip" => Decoder::Strip {
                content: one_char("content", " ")?,
                start: count("start")?,
                stop: count("stop")?,
            },
            "Replace" => {
                let pattern = obj
                    .get("pattern")
                    .ok_or_else(|| Error::invalid(format!("{path}: Replace needs \"pattern\"")))?;
                let pattern = ReplacePattern::from_json(pattern, &format!("{path}.pattern"))?;
                Decoder::Replace(Replace::new(pattern, text("content", "")?)?)
            }
            "Sequence" => {
                let parts = obj
                    .get("decoders")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        Error::invalid(format!("{path}: Sequence needs a \"decoders\" list"))
                    })?;
                Decoder::Sequence(
                    parts
                        .iter()
                        .enumerate()
                        .map(|(k, d)| Decoder::from_json(d, &format!("{path}.decoders[{k}]")))
                        .collect::<Result<_>>()?,
                )
            }
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown decoder type {other:?}"
                )))
            }
        })
    }

    /// HF's tokenizer.json form.
    pub fn to_json(&self) -> Value {
        match self {
            Decoder::ByteLevel {
                add_prefix_space,
                trim_offsets,
                use_regex,
            } => json!({
                "type": "ByteLevel",
                "add_prefix_space": add_prefix_space,
                "trim_offsets": trim_offsets,
                "use_regex": use_regex,
            }),
            Decoder::ByteFallback => json!({"type": "ByteFallback"}),
            Decoder::Fuse => json!({"type": "Fuse"}),
            Decoder::WordPiece { prefix, cleanup } => {
                json!({"type": "WordPiece", "prefix": prefix, "cleanup": cleanup})
            }
            Decoder::Metaspace {
                replacement,
                prepend_scheme,
                split,
            } => json!({
                "type": "Metaspace",
                "replacement": replacement.to_string(),
                "prepend_scheme": prepend_scheme.name(),
                "split": split,
            }),
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
                "decoders": parts.iter().map(Decoder::to_json).collect::<Vec<_>>(),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
