//! HF `tokenizer.json` for WordPiece tokenizers (BERT family): read into a
//! [`WordPieceTokenizer`] and write back in the same schema. Parts subword does not implement are
//! errors that name them, never silently dropped.

use crate::bert::BertNormalizer;
use crate::error::{Error, Result};
use crate::formats::hf_post::{
    bad, get_str, get_u32, kind, opt_u32, parse_padding, parse_post, parse_truncation,
    render_padding, render_post, render_truncation,
};
use crate::postprocess::{Padding, Truncation};
use crate::wordpiece::pipeline::{AddedToken, WordPieceDecoder, WordPieceTokenizer};
use crate::wordpiece::WordPiece;
use serde_json::{json, Map, Value};

fn get_bool(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}

pub fn parse(text: &str, origin: &str) -> Result<WordPieceTokenizer> {
    let doc = super::parse_json(text, origin)?;
    let model = doc
        .get("model")
        .ok_or_else(|| bad(origin, "no \"model\""))?;
    if kind(model) != "WordPiece" {
        return Err(bad(
            origin,
            format!("model type {:?} is not WordPiece", kind(model)),
        ));
    }
    let vocab = model
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(origin, "model has no vocab object"))?;
    let mut tokens: Vec<Option<String>> = vec![None; vocab.len()];
    for (token, id) in vocab {
        let id = super::json_u32(id, format_args!("the id of {token:?}"), origin)? as usize;
        match tokens.get_mut(id) {
            Some(slot @ None) => *slot = Some(token.clone()),
            Some(Some(other)) => {
                return Err(bad(
                    origin,
                    format!("{token:?} and {other:?} both have id {id}"),
                ))
            }
            None => {
                return Err(bad(
                    origin,
                    format!(
                        "id {id} of {token:?} leaves a gap: ids must be 0..{}",
                        vocab.len()
                    ),
                ))
            }
        }
    }
    let tokens: Vec<String> = tokens.into_iter().map(|t| t.expect("dense")).collect();
    let wp = WordPiece::new(
        tokens,
        get_str(model, "unk_token", "[UNK]"),
        get_str(model, "continuing_subword_prefix", "##"),
        opt_u32(model, "max_input_chars_per_word", origin)?.unwrap_or(100) as usize,
    )
    .map_err(|e| bad(origin, e))?;

    let normalizer = normalizer_of(doc.get("normalizer"), origin)?;
    match doc.get("pre_tokenizer") {
        Some(p) if kind(p) == "BertPreTokenizer" => {}
        p => {
            return Err(bad(
                origin,
                format!(
                    "unsupported pre-tokenizer {}: subword's WordPiece pipeline has \
                     BertPreTokenizer",
                    p.map_or("null".to_string(), |p| format!("{:?}", kind(p)))
                ),
            ))
        }
    }
    finish_parse(doc, wp, normalizer, origin)
}

/// A normalizer given as its JSON text ("null" for none).
pub fn parse_normalizer(text: &str) -> Result<Option<BertNormalizer>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(format!("normalizer: not JSON: {e}")))?;
    normalizer_of(Some(&v), "normalizer")
}

fn normalizer_of(v: Option<&Value>, origin: &str) -> Result<Option<BertNormalizer>> {
    Ok(match v.filter(|v| !v.is_null()) {
        None => None,
        Some(n) if kind(n) == "BertNormalizer" => {
            let lowercase = get_bool(n, "lowercase", true);
            Some(BertNormalizer {
                clean_text: get_bool(n, "clean_text", true),
                handle_chinese_chars: get_bool(n, "handle_chinese_chars", true),
                strip_accents: n
                    .get("strip_accents")
                    .and_then(Value::as_bool)
                    .unwrap_or(lowercase),
                lowercase,
            })
        }
        Some(n) => {
            return Err(bad(
                origin,
                format!(
                    "unsupported normalizer {:?}: subword's WordPiece pipeline has BertNormalizer",
                    kind(n)
                ),
            ))
        }
    })
}

fn finish_parse(
    doc: Value,
    wp: WordPiece,
    normalizer: Option<BertNormalizer>,
    origin: &str,
) -> Result<WordPieceTokenizer> {
    let mut added = Vec::new();
    for a in doc
        .get("added_tokens")
        .and_then(Value::as_array)
        .map(|v| v.as_slice())
        .unwrap_or(&[])
    {
        let content = a
            .get("content")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(origin, "an added token has no content"))?;
        for flag in ["single_word", "lstrip", "rstrip", "normalized"] {
            if get_bool(a, flag, false) {
                return Err(bad(
                    origin,
                    format!(
                        "added token {content:?} sets {flag}=true, which subword does not support"
                    ),
                ));
            }
        }
        added.push(AddedToken {
            content: content.to_string(),
            id: get_u32(a, "id", origin)?,
            special: get_bool(a, "special", false),
        });
    }

    let template = match doc.get("post_processor").filter(|v| !v.is_null()) {
        None => None,
        Some(p) => Some(parse_post(p, origin)?),
    };
    let decoder = match doc.get("decoder").filter(|v| !v.is_null()) {
        None => None,
        Some(d) if kind(d) == "WordPiece" => Some(WordPieceDecoder {
            prefix: get_str(d, "prefix", "##").to_string(),
            cleanup: get_bool(d, "cleanup", true),
        }),
        Some(d) => {
            return Err(bad(
                origin,
                format!("unsupported decoder {:?}: use WordPiece", kind(d)),
            ))
        }
    };
    let mut tok = WordPieceTokenizer::new(normalizer, wp, added, template, decoder)
        .map_err(|e| bad(origin, e))?;
    tok.truncation = match doc.get("truncation").filter(|v| !v.is_null()) {
        None => None,
        Some(t) => Some(parse_truncation(t, origin)?),
    };
    tok.padding = match doc.get("padding").filter(|v| !v.is_null()) {
        None => None,
        Some(p) => Some(parse_padding(p, origin)?),
    };
    Ok(tok)
}

pub fn render(tok: &WordPieceTokenizer) -> String {
    let m = &tok.model;
    let mut vocab = Map::new();
    for (id, t) in m.tokens().iter().enumerate() {
        vocab.insert(t.clone(), json!(id));
    }
    let added: Vec<Value> = tok
        .added()
        .iter()
        .map(|a| {
            json!({"id": a.id, "content": a.content, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": a.special})
        })
        .collect();
    let normalizer = match &tok.normalizer {
        None => Value::Null,
        Some(n) => json!({"type": "BertNormalizer", "clean_text": n.clean_text,
            "handle_chinese_chars": n.handle_chinese_chars, "strip_accents": n.strip_accents,
            "lowercase": n.lowercase}),
    };
    let decoder = match &tok.decoder {
        None => Value::Null,
        Some(d) => json!({"type": "WordPiece", "prefix": d.prefix, "cleanup": d.cleanup}),
    };
    let doc = json!({
        "version": "1.0",
        "truncation": render_truncation(&tok.truncation),
        "padding": render_padding(&tok.padding),
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": tok.template.as_ref().map_or(Value::Null, render_post),
        "decoder": decoder,
        "model": {"type": "WordPiece", "unk_token": m.unk_token(),
            "continuing_subword_prefix": m.prefix(), "max_input_chars_per_word": m.max_chars(),
            "vocab": vocab},
    });
    serde_json::to_string_pretty(&doc).expect("JSON")
}

/// `vocab.txt`: one token per line, line number = id.
pub fn parse_vocab_txt(text: &str, origin: &str) -> Result<Vec<String>> {
    let mut tokens = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (k, line) in text.lines().enumerate() {
        let t = line.trim_end_matches('\r').to_string();
        if !seen.insert(t.clone()) {
            return Err(Error::Format {
                path: origin.to_string(),
                line: k + 1,
                msg: format!("token {t:?} appears twice"),
            });
        }
        tokens.push(t);
    }
    Ok(tokens)
}

/// Truncation and padding given as their tokenizer.json values ("null" for off).
pub fn parse_settings(
    truncation: &str,
    padding: &str,
) -> Result<(Option<Truncation>, Option<Padding>)> {
    let value = |text: &str, what: &str| -> Result<Value> {
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("{what}: not JSON: {e}")))
    };
    let t = value(truncation, "truncation")?;
    let p = value(padding, "padding")?;
    Ok((
        (!t.is_null())
            .then(|| parse_truncation(&t, "truncation"))
            .transpose()?,
        (!p.is_null())
            .then(|| parse_padding(&p, "padding"))
            .transpose()?,
    ))
}
