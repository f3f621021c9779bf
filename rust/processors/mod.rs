//! The post-processor stage: the special tokens a template puts around the sequences, and the
//! type ids it gives them (HF `tokenizers`' `TemplateProcessing`, with `BertProcessing` as its
//! `[CLS] $A [SEP]` case). The template itself and its application are `postprocess::Template`,
//! shared with the WordPiece pipeline; this module reads HF's template strings.
//!
//! Downside: RobertaProcessing and the ByteLevel post-processor are not here yet.

use crate::error::{Error, Result};
pub use crate::postprocess::{Piece, Template};

/// One item of HF's template syntax: `$A`, `$B`, `$` (A), `$A:1`, `$1` (A with type id 1), or a
/// special token's name with an optional `:type_id`.
pub fn parse_piece(item: &str) -> Result<Piece> {
    let (name, type_id) = match item.rsplit_once(':') {
        Some((name, t)) if !name.is_empty() => {
            let type_id = t.parse::<u32>().map_err(|_| {
                Error::invalid(format!(
                    "template item {item:?}: the part after ':' must be a type id (e.g. $B:1)"
                ))
            })?;
            (name, type_id)
        }
        _ => (item, 0),
    };
    Ok(match name.strip_prefix('$') {
        Some("" | "A") => Piece::Sequence(false, type_id),
        Some("B") => Piece::Sequence(true, type_id),
        Some(digits) if digits.bytes().all(|b| b.is_ascii_digit()) && type_id == 0 => {
            let t = digits.parse::<u32>().map_err(|_| {
                Error::invalid(format!("template item {item:?}: type id out of range"))
            })?;
            Piece::Sequence(false, t)
        }
        Some(_) => {
            return Err(Error::invalid(format!(
                "template item {item:?}: a sequence is $A or $B (with an optional :type_id)"
            )))
        }
        None => Piece::Special(name.to_string(), type_id),
    })
}

/// A template from HF's strings (items separated by whitespace) and the special tokens: name,
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
    let parse = |items: &[String]| -> Result<Vec<Piece>> {
        items
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(parse_piece)
            .collect()
    };
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
        assert!(parse_piece("$C").is_err());
        assert!(parse_piece("[SEP]:x").is_err());
    }
}
