//! The post-processor stage: the special tokens a template puts around the sequences and the
//! type ids it gives them (HF `tokenizers`' `TemplateProcessing`, with `BertProcessing` as its
//! `[CLS] $A [SEP]` case, and `RobertaProcessing`), the byte-level offset trimming (`ByteLevel`),
//! and `Sequence`s of them. The template itself and its application are
//! `postprocess::Template`, shared with the WordPiece pipeline; this module reads HF's template
//! strings and runs the stage.
//!
//! Idea, as HF runs it: the sequences (one, or two for a pair) go through each processor in
//! turn; a template joins them into one, the others change each in place; what is left is
//! joined in order at the end.

mod byte_level;

use crate::error::{Error, Result};
use crate::formats::hf_post::{parse_post, render_post};
use crate::formats::json_fields::Fields;
pub use crate::postprocess::{Piece, Template};
use crate::postprocess::{Token, Windows};
use serde_json::{json, Value};

/// A token's string, as the pipeline running the stage knows it.
pub type TextOf<'a> = &'a dyn Fn(&Token) -> String;

#[derive(Clone, Debug, PartialEq)]
pub enum Processor {
    Template(Template),
    /// Offsets trimmed of the spaces byte-level tokens carry (`use_regex` is kept for the
    /// file; it changes nothing here).
    ByteLevel {
        add_prefix_space: bool,
        trim_offsets: bool,
        use_regex: bool,
    },
    /// `<s> $A </s>` and `<s> $A </s> </s> $B </s>`, every type id 0, offsets trimmed first.
    Roberta {
        sep: (String, u32),
        cls: (String, u32),
        trim_offsets: bool,
        add_prefix_space: bool,
    },
    Sequence(Vec<Processor>),
}

impl Processor {
    /// HF's `num_special_tokens_to_add`.
    pub fn added(&self, pair: bool) -> usize {
        match self {
            Processor::Template(t) => t.added(pair),
            Processor::ByteLevel { .. } => 0,
            Processor::Roberta { .. } => {
                if pair {
                    4
                } else {
                    2
                }
            }
            Processor::Sequence(ps) => ps.iter().map(|p| p.added(pair)).sum(),
        }
    }

    /// The string of a token this processor adds (by id; the first special that has it).
    pub fn special_string(&self, id: u32) -> Option<String> {
        match self {
            Processor::Template(t) => t.string_of(id),
            Processor::ByteLevel { .. } => None,
            Processor::Roberta { sep, cls, .. } => [cls, sep]
                .into_iter()
                .find(|(_, i)| *i == id)
                .map(|(s, _)| s.clone()),
            Processor::Sequence(ps) => ps.iter().find_map(|p| p.special_string(id)),
        }
    }

    /// The sequences (each with its overflowing windows) after this processor (see the
    /// module doc); `text` gives a token's string.
    pub fn process(
        &self,
        mut parts: Vec<Windows>,
        add_special_tokens: bool,
        text: TextOf<'_>,
    ) -> Vec<Windows> {
        match self {
            Processor::Template(t) => apply_template(t, parts, add_special_tokens),
            Processor::ByteLevel {
                add_prefix_space,
                trim_offsets,
                ..
            } => {
                if *trim_offsets {
                    trim_all(&mut parts, *add_prefix_space, text);
                }
                // HF's ByteLevel also numbers the sequences it is given, every token of each
                // (so after a template, the template's tokens get sequence 0 too).
                for (i, w) in (0u32..).zip(&mut parts) {
                    for t in &mut w.enc.toks {
                        t.sequence = i;
                    }
                }
                parts
            }
            Processor::Roberta {
                sep,
                cls,
                trim_offsets,
                add_prefix_space,
            } => {
                if *trim_offsets {
                    trim_all(&mut parts, *add_prefix_space, text);
                }
                if !add_special_tokens {
                    for w in &mut parts {
                        for t in &mut w.enc.toks {
                            t.type_id = 0;
                        }
                    }
                    return parts;
                }
                // Every window too: HF's Roberta builds the windows' type ids as zeros.
                for w in &mut parts {
                    w.set_type_ids(0);
                }
                apply_template(&roberta_template(sep, cls), parts, true)
            }
            Processor::Sequence(ps) => {
                for p in ps {
                    parts = p.process(parts, add_special_tokens, text);
                }
                parts
            }
        }
    }

    pub fn from_json(v: &Value, path: &str) -> Result<Self> {
        let (f, kind) = Fields::of(v, path, "post-processor")?;
        Ok(match kind {
            "TemplateProcessing" | "BertProcessing" => Processor::Template(parse_post(v, path)?),
            "ByteLevel" => Processor::ByteLevel {
                add_prefix_space: f.flag("add_prefix_space", true)?,
                trim_offsets: f.flag("trim_offsets", true)?,
                use_regex: f.flag("use_regex", true)?,
            },
            "RobertaProcessing" => Processor::Roberta {
                sep: f.token_and_id("sep")?,
                cls: f.token_and_id("cls")?,
                trim_offsets: f.flag("trim_offsets", true)?,
                add_prefix_space: f.flag("add_prefix_space", true)?,
            },
            "Sequence" => Processor::Sequence(
                f.list("processors")?
                    .into_iter()
                    .map(|(p, at)| Processor::from_json(p, &at))
                    .collect::<Result<_>>()?,
            ),
            other => {
                return Err(Error::invalid(format!(
                    "{path}: unknown post-processor {other:?} (TemplateProcessing,                      BertProcessing, RobertaProcessing, ByteLevel, Sequence)"
                )))
            }
        })
    }

    pub fn to_json(&self) -> Value {
        match self {
            Processor::Template(t) => render_post(t),
            Processor::ByteLevel {
                add_prefix_space,
                trim_offsets,
                use_regex,
            } => json!({
                "type": "ByteLevel",
                "add_prefix_space": add_prefix_space,
                "trim_offsets": trim_offsets,
                "use_regex": use_regex,
            }),
            Processor::Roberta {
                sep,
                cls,
                trim_offsets,
                add_prefix_space,
            } => json!({
                "type": "RobertaProcessing",
                "sep": [sep.0, sep.1],
                "cls": [cls.0, cls.1],
                "trim_offsets": trim_offsets,
                "add_prefix_space": add_prefix_space,
            }),
            Processor::Sequence(ps) => json!({
                "type": "Sequence",
                "processors": ps.iter().map(Processor::to_json).collect::<Vec<_>>(),
            }),
        }
    }
}

fn roberta_template(sep: &(String, u32), cls: &(String, u32)) -> Template {
    // Pieces name their special: a `sep` sharing `cls`'s string but not its id gets a key no
    // token string can equal (its string stays in `strings`).
    let sep_key = if sep.0 == cls.0 && sep.1 != cls.1 {
        format!("{}\u{0}sep", sep.0)
    } else {
        sep.0.clone()
    };
    let a = Piece::Sequence(false, 0);
    let b = Piece::Sequence(true, 0);
    let c = || Piece::Special(cls.0.clone(), 0);
    let s = || Piece::Special(sep_key.clone(), 0);
    Template {
        single: vec![c(), a.clone(), s()],
        pair: vec![c(), a, s(), s(), b, s()],
        specials: vec![(cls.0.clone(), vec![cls.1]), (sep_key.clone(), vec![sep.1])],
        strings: vec![vec![cls.0.clone()], vec![sep.0.clone()]],
        bert_form: false,
    }
}

/// The sequences joined by `t` into one (with `add_special_tokens` false only its type ids),
/// overflowing windows combined as HF combines them. More than two sequences cannot come from
/// an encode call; any extra ones are left after it.
fn apply_template(t: &Template, parts: Vec<Windows>, add_special_tokens: bool) -> Vec<Windows> {
    let t = if add_special_tokens {
        std::borrow::Cow::Borrowed(t)
    } else {
        std::borrow::Cow::Owned(t.without_specials())
    };
    let mut parts = parts.into_iter();
    let a = parts.next().unwrap_or_default();
    let b = parts.next();
    let mut all = vec![t.apply_windows(a, b)];
    all.extend(parts);
    all
}

/// Every sequence's offsets trimmed, and those of its overflowing windows (one level, as HF).
fn trim_all(parts: &mut [Windows], add_prefix_space: bool, text: TextOf<'_>) {
    for w in parts {
        byte_level::trim_offsets(&mut w.enc, add_prefix_space, text);
        for o in &mut w.overflow {
            byte_level::trim_offsets(&mut o.enc, add_prefix_space, text);
        }
    }
}

/// The sequences one after the other (HF's merge at the end of the stage).
pub fn join(parts: Vec<Windows>) -> Windows {
    let mut parts = parts.into_iter();
    let first = parts.next().unwrap_or_default();
    parts.fold(first, |all, w| all.merge(&w))
}

/// One item of HF's template syntax: `$A`, `$B` (or `$a`, `$b`), `$` (A), `$A:1`, `$1` (A with type id 1), or a
/// special token's name with an optional `:type_id`.
pub fn parse_piece(item: &str) -> Result<Piece> {
    let (name, type_id) = match item.rsplit_once(':') {
        Some((name, t)) if !name.is_empty() => {
            let type_id = t.parse::<u32>().map_err(|_| {
                Error::invalid(format!(
                    "Cannot build Piece from string {item:?}: the part after ':' must be a \
                     type id (e.g. $B:1)"
                ))
            })?;
            (name, type_id)
        }
        _ => (item, 0),
    };
    Ok(match name.strip_prefix('$') {
        // HF reads `$a` and `$b` as `$A` and `$B`.
        Some("" | "A" | "a") => Piece::Sequence(false, type_id),
        Some("B" | "b") => Piece::Sequence(true, type_id),
        Some(digits) if digits.bytes().all(|b| b.is_ascii_digit()) && type_id == 0 => {
            let t = digits.parse::<u32>().map_err(|_| {
                Error::invalid(format!(
                    "Cannot build Piece from string {item:?}: type id out of range"
                ))
            })?;
            Piece::Sequence(false, t)
        }
        Some(_) => {
            return Err(Error::invalid(format!(
                "Cannot build Piece from string {item:?}: a sequence is $A or $B (with an \
                 optional :type_id)"
            )))
        }
        None => Piece::Special(name.to_string(), type_id),
    })
}

/// A template from HF's items (one piece each) and the special tokens: name,
/// ids and the token strings results show for them (empty: the name for each id).
pub fn template(
    single: &[String],
    pair: &[String],
    specials: Vec<(String, Vec<u32>, Vec<String>)>,
) -> Result<Template> {
    for (name, ids, strings) in &specials {
        if !strings.is_empty() && strings.len() != ids.len() {
            return Err(Error::invalid(format!(
                "special token {name:?}: {} ids but {} tokens; give one token per id",
                ids.len(),
                strings.len()
            )));
        }
    }
    // Each item is one piece (HF's list form, where a special token's name may hold spaces);
    // a template string is split on whitespace by the caller.
    let parse =
        |items: &[String]| -> Result<Vec<Piece>> { items.iter().map(|s| parse_piece(s)).collect() };
    let t = Template {
        single: parse(single)?,
        pair: parse(pair)?,
        strings: specials.iter().map(|(_, _, s)| s.clone()).collect(),
        specials: specials.into_iter().map(|(n, ids, _)| (n, ids)).collect(),
        bert_form: false,
    };
    if !t.pair.iter().any(|p| matches!(p, Piece::Sequence(true, _))) {
        return Err(Error::invalid(
            "the pair template must use $B (e.g. \"[CLS] $A [SEP] $B:1 [SEP]:1\")",
        ));
    }
    if !t
        .single
        .iter()
        .chain(&t.pair)
        .any(|p| matches!(p, Piece::Sequence(false, _)))
    {
        return Err(Error::invalid("a template must use $A"));
    }
    t.validate()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_items_read_as_hf_writes_them() {
        let s = |name: &str, t| Piece::Special(name.to_string(), t);
        assert_eq!(parse_piece("$A").unwrap(), Piece::Sequence(false, 0));
        assert_eq!(parse_piece("$").unwrap(), Piece::Sequence(false, 0));
        assert_eq!(parse_piece("$B:1").unwrap(), Piece::Sequence(true, 1));
        assert_eq!(parse_piece("$2").unwrap(), Piece::Sequence(false, 2));
        assert_eq!(parse_piece("[SEP]:1").unwrap(), s("[SEP]", 1));
        assert_eq!(parse_piece("<s>").unwrap(), s("<s>", 0));
        assert_eq!(parse_piece("a:b:3").unwrap(), s("a:b", 3));
        assert_eq!(parse_piece("$b:2").unwrap(), Piece::Sequence(true, 2));
        assert!(parse_piece("$C").is_err());
        assert!(parse_piece("$$").is_err());
        assert!(parse_piece("$A:").is_err());
        assert!(parse_piece("$ab").is_err());
        assert!(parse_piece("[SEP]:x").is_err());
    }
}
