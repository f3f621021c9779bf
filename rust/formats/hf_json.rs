//! HF `tokenizers` `tokenizer.json` for byte-level BPE: version "1.0", model BPE with the vocabulary
//! in GPT-2's byte-to-unicode form and merges, `added_tokens`, a ByteLevel pre-tokenizer (alone for
//! the GPT-2 pattern, after a `Split` for any other pattern) and decoder.
//!
//! Exactness: HF merges listed pairs by list position; tiktoken-style ranks merge *any* adjacent
//! pair whose concatenation is a token, by that token's rank. So the export lists, for every token in
//! rank order, every split of it into two tokens, and sets `ignore_merges` (whole-word lookup first,
//! as tiktoken does): HF then makes the same choices. The import accepts a file only when merge order
//! and id order agree, which is what makes rank = id exact.

use super::byte_unicode;
use super::onig::{interval_dialect, Dialect};
use crate::encode::Encoder;
use crate::error::{Error, Result};
use crate::pretokenize::{GPT2_ORIGINAL_PATTERN, GPT2_PATTERN};
use crate::vocab::{Rank, Vocab};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

pub struct HfBpe {
    pub ranks: Vec<(Vec<u8>, Rank)>,
    pub specials: Vec<(String, Rank)>,
    /// The listed merges, in order: HF merges only these pairs.
    pub merges: Vec<(Vec<u8>, Vec<u8>)>,
    /// `ignore_merges`: look the whole piece up before merging (what tiktoken always does).
    pub whole_lookup: bool,
    /// ByteLevel `add_prefix_space`: a space is put before each stretch of text between specials.
    pub prefix_space: bool,
    /// An NFC normalizer (Qwen's files): texts are put in NFC first.
    pub nfc: bool,
    /// The pre-tokenization regexes, applied in turn (`Pattern::isolated_splits`); none = no split.
    pub patterns: Vec<String>,
}

fn byte_level(use_regex: bool, prefix_space: bool) -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": prefix_space, "trim_offsets": true,
           "use_regex": use_regex})
}

/// Every split of every token into two tokens, tokens in rank order.
fn all_merges(vocab: &Vocab) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (bytes, _) in vocab.mergeable() {
        for k in 1..bytes.len() {
            let (a, b) = bytes.split_at(k);
            if vocab.rank(a).is_some() && vocab.rank(b).is_some() {
                out.push((byte_unicode::encode(a), byte_unicode::encode(b)));
            }
        }
    }
    out
}

pub fn render(encoder: &Encoder, prefix_space: bool) -> String {
    serde_json::to_string_pretty(&document(encoder, prefix_space)).expect("a JSON value serializes")
}

/// The tokenizer.json document of `encoder` (see [`render`]), for the pipeline to read.
pub fn document(encoder: &Encoder, prefix_space: bool) -> Value {
    let (vocab, pattern) = (encoder.vocab(), encoder.pattern());
    let mut model_vocab = Map::new();
    for (bytes, rank) in vocab.mergeable() {
        model_vocab.insert(byte_unicode::encode(bytes), json!(rank));
    }
    for (text, id) in vocab.specials() {
        model_vocab.insert(text.to_string(), json!(id));
    }
    // A vocabulary read from an HF file keeps its own merges and lookup rule; any other gets every
    // split, which makes HF's list-order merging equal to rank merging.
    let (merges, ignore_merges) = match vocab.listed_merges() {
        Some(listed) => (
            listed
                .iter()
                .map(|(a, b)| (byte_unicode::encode(a), byte_unicode::encode(b)))
                .collect(),
            encoder.whole_lookup(),
        ),
        None => (all_merges(vocab), true),
    };
    let merges: Vec<Value> = merges.into_iter().map(|(a, b)| json!([a, b])).collect();
    let added: Vec<Value> = vocab
        .specials()
        .into_iter()
        .map(|(text, id)| {
            json!({"id": id, "content": text, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let split = |p: &str| {
        json!({"type": "Split", "pattern": {"Regex": interval_dialect(p, Dialect::Onig)},
               "behavior": "Isolated", "invert": false})
    };
    let pre_tokenizer = match pattern.as_str() {
        _ if pattern.chain().is_some() => {
            let mut parts: Vec<Value> = pattern
                .chain()
                .unwrap_or_default()
                .iter()
                .map(|p| split(p))
                .collect();
            parts.push(byte_level(false, prefix_space));
            json!({"type": "Sequence", "pretokenizers": parts})
        }
        "" => byte_level(false, prefix_space),
        GPT2_PATTERN | GPT2_ORIGINAL_PATTERN => byte_level(true, prefix_space),
        other => json!({"type": "Sequence", "pretokenizers": [
            split(other),
            byte_level(false, prefix_space),
        ]}),
    };
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": if encoder.normalizes_nfc() { json!({"type": "NFC"}) } else { Value::Null },
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": byte_level(true, false),
        "model": {
            "type": "BPE",
            "dropout": null,
            "unk_token": null,
            "continuing_subword_prefix": null,
            "end_of_word_suffix": null,
            "fuse_unk": false,
            "byte_fallback": false,
            "ignore_merges": ignore_merges,
            "vocab": Value::Object(model_vocab),
            "merges": merges,
        },
    })
}

fn unsupported(what: &str, v: &Value) -> Error {
    Error::invalid(format!(
        "tokenizer.json: unsupported {what} {}; subword reads byte-level BPE files \
         (ByteLevel pre-tokenizer, optionally after Split regexes; no normalizer, or NFC)",
        short(v)
    ))
}

fn short(v: &Value) -> String {
    match v.get("type").and_then(Value::as_str) {
        Some(t) => format!("{t:?}"),
        None => {
            let s = v.to_string();
            s.chars().take(80).collect()
        }
    }
}

fn is_null(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

/// (use_regex, add_prefix_space) of a ByteLevel pre-tokenizer, with HF's defaults.
fn check_byte_level(v: &Value) -> Result<(bool, bool)> {
    if v.get("type").and_then(Value::as_str) != Some("ByteLevel") {
        return Err(unsupported("pre-tokenizer", v));
    }
    Ok((
        v.get("use_regex").and_then(Value::as_bool).unwrap_or(true),
        v.get("add_prefix_space")
            .and_then(Value::as_bool)
            .unwrap_or(true),
    ))
}

/// The patterns and `add_prefix_space` of a supported pre-tokenizer: ByteLevel alone, or one or
/// more isolating `Split`s followed by ByteLevel without its regex.
fn pattern_of(pre: &Value) -> Result<(Vec<String>, bool)> {
    match pre.get("type").and_then(Value::as_str) {
        Some("ByteLevel") => {
            let (use_regex, prefix) = check_byte_level(pre)?;
            let patterns = if use_regex {
                vec![GPT2_PATTERN.to_string()]
            } else {
                Vec::new()
            };
            Ok((patterns, prefix))
        }
        Some("Sequence") => {
            let parts = pre
                .get("pretokenizers")
                .and_then(Value::as_array)
                .ok_or_else(|| unsupported("pre-tokenizer", pre))?;
            let [splits @ .., bl] = parts.as_slice() else {
                return Err(unsupported("pre-tokenizer sequence", pre));
            };
            let (use_regex, prefix) = check_byte_level(bl)?;
            if use_regex || splits.is_empty() {
                return Err(unsupported(
                    "pre-tokenizer sequence (ByteLevel with use_regex after Split)",
                    pre,
                ));
            }
            let patterns = splits
                .iter()
                .map(|split| {
                    let ok = split.get("type").and_then(Value::as_str) == Some("Split")
                        && split.get("behavior").and_then(Value::as_str) == Some("Isolated")
                        && split.get("invert").and_then(Value::as_bool) != Some(true);
                    let regex = split
                        .get("pattern")
                        .and_then(|p| p.get("Regex"))
                        .and_then(Value::as_str);
                    match (ok, regex) {
                        (true, Some(r)) => Ok(interval_dialect(r, Dialect::Rust)),
                        _ => Err(unsupported("pre-tokenizer", split)),
                    }
                })
                .collect::<Result<_>>()?;
            Ok((patterns, prefix))
        }
        _ => Err(unsupported("pre-tokenizer", pre)),
    }
}

/// Whether the normalizer is NFC (true) or none (false): null, a Sequence of none (DeepSeek's
/// files), `NFC` or a Sequence of just NFC (Qwen's); anything else is unsupported.
fn normalizer_is_nfc(v: Option<&Value>) -> Result<bool> {
    let Some(n) = v.filter(|n| !n.is_null()) else {
        return Ok(false);
    };
    match n.get("type").and_then(Value::as_str) {
        Some("NFC") => Ok(true),
        Some("Sequence") => match n.get("normalizers").and_then(Value::as_array) {
            Some(list) if list.is_empty() => Ok(false),
            Some(list) if list.len() == 1 => normalizer_is_nfc(list.first()),
            // Name the member that cannot be had, not the Sequence around it.
            Some(list) => Err(unsupported(
                "normalizer",
                list.iter()
                    .find(|m| m.get("type").and_then(Value::as_str) != Some("NFC"))
                    .unwrap_or(n),
            )),
            None => Err(unsupported("normalizer", n)),
        },
        _ => Err(unsupported("normalizer", n)),
    }
}

/// [`parse`] of the file at `path`; errors name it.
pub fn load(path: &std::path::Path) -> Result<HfBpe> {
    parse(&super::read_text(path)?, &path.display().to_string())
}

pub fn parse(text: &str, origin: &str) -> Result<HfBpe> {
    let bpe = parse_doc(&super::parse_json(text, origin)?, origin);
    super::release_freed_memory();
    bpe
}

fn parse_doc(doc: &Value, origin: &str) -> Result<HfBpe> {
    let model = doc
        .get("model")
        .ok_or_else(|| Error::invalid(format!("{origin}: no \"model\"")))?;
    if model.get("type").and_then(Value::as_str) != Some("BPE") {
        return Err(unsupported("model", model));
    }
    for key in ["dropout", "continuing_subword_prefix", "end_of_word_suffix"] {
        if !is_null(model.get(key)) {
            return Err(Error::invalid(format!(
                "{origin}: BPE option {key}={} is not supported",
                model[key]
            )));
        }
    }
    if model.get("byte_fallback").and_then(Value::as_bool) == Some(true) {
        return Err(Error::invalid(format!(
            "{origin}: BPE byte_fallback is not supported"
        )));
    }
    let nfc = normalizer_is_nfc(doc.get("normalizer"))?;
    if let Some(pp) = doc.get("post_processor").filter(|v| !v.is_null()) {
        if pp.get("type").and_then(Value::as_str) != Some("ByteLevel") {
            return Err(unsupported("post-processor", pp));
        }
    }
    if let Some(d) = doc.get("decoder").filter(|v| !v.is_null()) {
        if d.get("type").and_then(Value::as_str) != Some("ByteLevel") {
            return Err(unsupported("decoder", d));
        }
    }
    let (patterns, prefix_space) = match doc.get("pre_tokenizer") {
        Some(p) if !p.is_null() => pattern_of(p)?,
        _ => (Vec::new(), false),
    };
    let mut specials = Vec::new();
    for t in doc
        .get("added_tokens")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let (Some(content), Some(id)) = (t.get("content").and_then(Value::as_str), t.get("id"))
        else {
            return Err(Error::invalid(format!(
                "{origin}: malformed added token {t}"
            )));
        };
        let id = super::json_u32(
            id,
            format_args!("the id of added token {content:?}"),
            origin,
        )?;
        specials.push((content.to_string(), id));
    }
    let special_ids: HashMap<Rank, ()> = specials.iter().map(|(_, id)| (*id, ())).collect();
    let vocab = model
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::invalid(format!("{origin}: model has no vocab object")))?;
    let mut ranks = Vec::with_capacity(vocab.len());
    for (token, id) in vocab {
        let id = super::json_u32(id, format_args!("the id of {token:?}"), origin)?;
        if special_ids.contains_key(&id) {
            continue;
        }
        let bytes = byte_unicode::decode(token).ok_or_else(|| {
            Error::invalid(format!(
                "{origin}: vocab token {token:?} is not in GPT-2's byte-to-unicode alphabet \
                 (is this a byte-level BPE?)"
            ))
        })?;
        ranks.push((bytes, id));
    }
    let merges = check_merge_order(model, &ranks, origin)?;
    let whole_lookup = model
        .get("ignore_merges")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(HfBpe {
        ranks,
        specials,
        merges,
        whole_lookup,
        prefix_space,
        nfc,
        patterns,
    })
}

/// Merges must produce tokens whose ids never decrease along the list; otherwise list order and id
/// order disagree and rank-by-id encoding would differ from HF's.
fn check_merge_order(
    model: &Value,
    ranks: &[(Vec<u8>, Rank)],
    origin: &str,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let by_bytes: HashMap<&[u8], Rank> = ranks.iter().map(|(b, r)| (b.as_slice(), *r)).collect();
    let merges = model
        .get("merges")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut last = 0;
    for (k, m) in merges.iter().enumerate() {
        let (a, b) = match m {
            Value::String(s) => s
                .split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| Error::invalid(format!("{origin}: merge {k} {s:?} has no space")))?,
            Value::Array(p) if p.len() == 2 => (
                p[0].as_str().unwrap_or_default().to_string(),
                p[1].as_str().unwrap_or_default().to_string(),
            ),
            _ => {
                return Err(Error::invalid(format!(
                    "{origin}: merge {k} is malformed: {m}"
                )))
            }
        };
        let not_bytes = || Error::invalid(format!("{origin}: merge {k} has non-byte-level text"));
        let (ab, bb) = (
            byte_unicode::decode(&a).ok_or_else(not_bytes)?,
            byte_unicode::decode(&b).ok_or_else(not_bytes)?,
        );
        let bytes = [ab.as_slice(), bb.as_slice()].concat();
        let id = *by_bytes.get(bytes.as_slice()).ok_or_else(|| {
            Error::invalid(format!(
                "{origin}: merge {k} ({a:?}, {b:?}) makes a token not in the vocab"
            ))
        })?;
        if id < last {
            return Err(Error::invalid(format!(
                "{origin}: merge {k} ({a:?}, {b:?}) makes id {id} after a merge made id {last}: \
                 merge order and id order disagree, so rank-by-id encoding cannot reproduce this file"
            )));
        }
        last = id;
        out.push((ab, bb));
    }
    Ok(out)
}
