//! GPT-2's original files: `encoder.json` (token in byte-unicode form → id) and `vocab.bpe` (merges
//! in order). Ranks come from the byte order plus the merge order, and must agree with the ids in
//! `encoder.json` — otherwise the files do not describe a rank-ordered BPE and we refuse them.

use super::{byte_unicode, read};
use crate::error::{Error, Result};
use crate::vocab::Rank;
use std::collections::HashMap;
use std::path::Path;

pub struct Gpt2Files {
    pub ranks: Vec<(Vec<u8>, Rank)>,
    pub specials: Vec<(String, Rank)>,
}

const SPECIAL_NAMES: [&str; 2] = ["<|endoftext|>", "<|startoftext|>"];

pub fn load(encoder_json: &Path, vocab_bpe: &Path) -> Result<Gpt2Files> {
    let origin = encoder_json.display().to_string();
    let encoder: HashMap<String, Rank> =
        serde_json::from_slice(&read(encoder_json)?).map_err(|e| Error::Format {
            path: origin.clone(),
            line: e.line(),
            msg: format!("not a JSON object of token → id: {e}"),
        })?;
    let bpe_origin = vocab_bpe.display().to_string();
    let bpe = read(vocab_bpe)?;
    let bpe = String::from_utf8(bpe).map_err(|e| Error::Format {
        path: bpe_origin.clone(),
        line: 0,
        msg: format!("not UTF-8: {e}"),
    })?;
    let mut ranks: Vec<(Vec<u8>, Rank)> = byte_unicode::byte_order()
        .enumerate()
        .map(|(r, b)| (vec![b], r as Rank))
        .collect();
    for (k, line) in bpe.lines().enumerate() {
        if k == 0 && line.starts_with("#version") || line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| Error::Format {
            path: bpe_origin.clone(),
            line: k + 1,
            msg,
        };
        let (a, b) = line
            .split_once(' ')
            .ok_or_else(|| bad(format!("expected two space-separated tokens, got {line:?}")))?;
        let mut merged = byte_unicode::decode(a)
            .ok_or_else(|| bad(format!("{a:?} is not in GPT-2's byte alphabet")))?;
        merged.extend(
            byte_unicode::decode(b)
                .ok_or_else(|| bad(format!("{b:?} is not in GPT-2's byte alphabet")))?,
        );
        let rank = ranks.len() as Rank;
        ranks.push((merged, rank));
    }
    let mut specials = Vec::new();
    let mut from_json = HashMap::with_capacity(encoder.len());
    for (token, id) in &encoder {
        if SPECIAL_NAMES.contains(&token.as_str()) {
            specials.push((token.clone(), *id));
            continue;
        }
        let bytes = byte_unicode::decode(token).ok_or_else(|| Error::Format {
            path: origin.clone(),
            line: 0,
            msg: format!("token {token:?} is not in GPT-2's byte alphabet"),
        })?;
        from_json.insert(bytes, *id);
    }
    let agree =
        from_json.len() == ranks.len() && ranks.iter().all(|(b, r)| from_json.get(b) == Some(r));
    if !agree {
        return Err(Error::invalid(format!(
            "{origin} and {bpe_origin} disagree: the ids in encoder.json must be the byte order \
             followed by the merges of vocab.bpe in order"
        )));
    }
    Ok(Gpt2Files { ranks, specials })
}
