//! Mistral's `tekken.json`: `config` (pattern, vocabulary size, number of special tokens), `vocab`
//! (`{rank, token_bytes: base64}` in rank order) and, in newer files, `special_tokens`.
//!
//! A model's ids are the specials' ranks `0..n_special`, then token rank + `n_special`; only the
//! first `default_vocab_size - n_special` ranks are used (the file lists more). Shifting every
//! rank by the same amount keeps their order, so merging by id is merging by rank. Files without
//! a `special_tokens` list (version v3 and older) get Mistral's built-in list, padded with
//! `<SPECIAL_i>` up to `n_special`, as `mistral_common` does.

use super::{json_u32, parse_json, read_text};
use crate::error::{Error, Result};
use crate::vocab::Rank;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;
use std::path::Path;

/// The specials of tekken files that list none, in rank order.
const BUILT_IN_SPECIALS: &[&str] = &[
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

#[derive(Debug)]
pub struct Tekken {
    pub ranks: Vec<(Vec<u8>, Rank)>,
    pub specials: Vec<(String, Rank)>,
    pub pattern: String,
}

pub fn load(path: &Path) -> Result<Tekken> {
    let origin = path.display().to_string();
    let tekken = parse(&parse_json(&read_text(path)?, &origin)?, &origin);
    super::release_freed_memory();
    tekken
}

pub fn parse(doc: &Value, origin: &str) -> Result<Tekken> {
    let bad = |msg: String| Error::invalid(format!("{origin}: {msg}"));
    let config = doc
        .get("config")
        .ok_or_else(|| bad("no \"config\": not a tekken.json file".into()))?;
    let pattern = config
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("config has no \"pattern\" string".into()))?
        .to_string();
    let field = |name: &str| {
        config
            .get(name)
            .ok_or_else(|| bad(format!("config has no {name:?}")))
            .and_then(|v| json_u32(v, format!("config.{name}"), origin))
    };
    let vocab_size = field("default_vocab_size")?;
    let n_special = field("default_num_special_tokens")?;
    let n_tokens = vocab_size.checked_sub(n_special).ok_or_else(|| {
        bad(format!(
            "default_vocab_size {vocab_size} is smaller than default_num_special_tokens {n_special}"
        ))
    })?;
    let vocab = doc
        .get("vocab")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"vocab\" list".into()))?;
    if vocab.len() < n_tokens as usize {
        return Err(bad(format!(
            "vocab lists {} tokens, fewer than the {n_tokens} the config asks for",
            vocab.len()
        )));
    }
    let mut ranks = Vec::with_capacity(n_tokens as usize);
    for (i, entry) in vocab.iter().take(n_tokens as usize).enumerate() {
        let rank = entry
            .get("rank")
            .ok_or_else(|| bad(format!("vocab[{i}] has no rank")))
            .and_then(|v| json_u32(v, format!("vocab[{i}].rank"), origin))?;
        if rank as usize != i {
            return Err(bad(format!(
                "vocab[{i}] has rank {rank}; ranks must be 0, 1, 2, …"
            )));
        }
        let b64 = entry
            .get("token_bytes")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("vocab[{i}] has no token_bytes string")))?;
        let bytes = STANDARD
            .decode(b64)
            .map_err(|e| bad(format!("vocab[{i}].token_bytes is not base64 ({e})")))?;
        ranks.push((bytes, rank + n_special));
    }
    let specials = match doc.get("special_tokens") {
        Some(list) => listed_specials(list, n_special, origin)?,
        None => built_in_specials(n_special),
    };
    Ok(Tekken {
        ranks,
        specials,
        pattern,
    })
}

fn built_in_specials(n: u32) -> Vec<(String, Rank)> {
    (0..n)
        .map(|i| match BUILT_IN_SPECIALS.get(i as usize) {
            Some(s) => (s.to_string(), i),
            None => (format!("<SPECIAL_{i}>"), i),
        })
        .collect()
}

fn listed_specials(list: &Value, n: u32, origin: &str) -> Result<Vec<(String, Rank)>> {
    let bad = |msg: String| Error::invalid(format!("{origin}: {msg}"));
    let list = list
        .as_array()
        .ok_or_else(|| bad("special_tokens is not a list".into()))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let rank = entry
            .get("rank")
            .ok_or_else(|| bad(format!("special_tokens[{i}] has no rank")))
            .and_then(|v| json_u32(v, format!("special_tokens[{i}].rank"), origin))?;
        if rank >= n {
            return Err(bad(format!(
                "special_tokens[{i}] has rank {rank}, not below default_num_special_tokens {n}"
            )));
        }
        let text = entry
            .get("token_str")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("special_tokens[{i}] has no token_str")))?;
        out.push((text.to_string(), rank));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_ranks_shifted_past_the_specials() {
        let doc = json!({
            "config": {"pattern": "\\s+|\\S+", "default_vocab_size": 5, "default_num_special_tokens": 2},
            "vocab": [
                {"rank": 0, "token_bytes": "YQ=="},
                {"rank": 1, "token_bytes": "Yg=="},
                {"rank": 2, "token_bytes": "YWI="},
                {"rank": 3, "token_bytes": "Yw=="}
            ]
        });
        let t = parse(&doc, "t.json").unwrap();
        assert_eq!(
            t.ranks,
            vec![(b"a".to_vec(), 2), (b"b".to_vec(), 3), (b"ab".to_vec(), 4)]
        );
        assert_eq!(
            t.specials,
            vec![("<unk>".to_string(), 0), ("<s>".to_string(), 1)]
        );
        let mut doc = doc;
        doc["vocab"][1]["rank"] = json!(7);
        assert!(parse(&doc, "t.json")
            .unwrap_err()
            .to_string()
            .contains("vocab[1] has rank 7"));
    }
}
