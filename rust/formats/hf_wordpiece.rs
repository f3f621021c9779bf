//! HF `tokenizer.json` for WordPiece tokenizers (BERT family): read into a
//! [`WordPieceTokenizer`] and write back in the same schema. Parts subword does not implement are
//! errors that name them, never silently dropped.

use crate::bert::BertNormalizer;
use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::postprocess::{Padding, Piece, Template, Truncation, TruncationStrategy};
use crate::wordpiece::pipeline::{AddedToken, WordPieceDecoder, WordPieceTokenizer};
use crate::wordpiece::WordPiece;
use serde_json::{json, Map, Value};

fn bad(origin: &str, msg: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{origin}: {msg}"))
}

fn kind(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("?")
}

fn get_bool(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn get_str<'a>(v: &'a Value, key: &str, default: &'a str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or(default)
}

/// `key` as a u32: None when absent or null, an error when it is something else (a negative or
/// huge number would otherwise become a wrong setting silently).
fn opt_u32(v: &Value, key: &str, origin: &str) -> Result<Option<u32>> {
    match v.get(key).filter(|x| !x.is_null()) {
        None => Ok(None),
        Some(x) => x
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .map(Some)
            .ok_or_else(|| {
                bad(
                    origin,
                    format!("{key} must be a non-negative integer, not {x}"),
                )
            }),
    }
}

fn get_u32(v: &Value, key: &str, origin: &str) -> Result<u32> {
    opt_u32(v, key, origin)?
        .ok_or_else(|| bad(origin, format!("{key} must be a non-negative integer")))
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

pub fn parse_post(p: &Value, origin: &str) -> Result<Template> {
    match kind(p) {
        "BertProcessing" => {
            let (f, _) = Fields::of(p, origin, "post-processor")?;
            Ok(Template::bert(
                f.token_and_id("cls")?,
                f.token_and_id("sep")?,
            ))
        }
        "TemplateProcessing" => {
            let pieces = |key: &str| -> Result<Vec<Piece>> {
                let list = p
                    .get(key)
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad(origin, format!("TemplateProcessing has no {key} list")))?;
                list.iter()
                    .map(|item| {
                        if let Some(s) = item.get("SpecialToken") {
                            Ok(Piece::Special(
                                get_str(s, "id", "").to_string(),
                                get_u32(s, "type_id", origin)?,
                            ))
                        } else if let Some(s) = item.get("Sequence") {
                            let second = match get_str(s, "id", "") {
                                "A" => false,
                                "B" => true,
                                other => {
                                    return Err(bad(origin, format!("unknown sequence {other:?}")))
                                }
                            };
                            Ok(Piece::Sequence(second, get_u32(s, "type_id", origin)?))
                        } else {
                            Err(bad(origin, format!("unknown template piece {item}")))
                        }
                    })
                    .collect()
            };
            let mut specials = Vec::new();
            let mut strings = Vec::new();
            if let Some(map) = p.get("special_tokens").and_then(Value::as_object) {
                for (name, v) in map {
                    // The token strings results show; absent in hand-written files (then the
                    // name stands for each id).
                    strings.push(
                        v.get("tokens")
                            .and_then(Value::as_array)
                            .map(|t| {
                                t.iter()
                                    .map(|s| s.as_str().unwrap_or(name).to_string())
                                    .collect()
                            })
                            .unwrap_or_default(),
                    );
                    let ids = v
                        .get("ids")
                        .and_then(Value::as_array)
                        .ok_or_else(|| bad(origin, format!("special token {name:?} has no ids")))?
                        .iter()
                        .map(|x| {
                            x.as_u64()
                                .and_then(|x| u32::try_from(x).ok())
                                .ok_or_else(|| bad(origin, format!("bad id for {name:?}")))
                        })
                        .collect::<Result<Vec<u32>>>()?;
                    specials.push((name.clone(), ids));
                }
            }
            let t = Template {
                single: pieces("single")?,
                pair: pieces("pair")?,
                specials,
                strings,
                bert_form: false,
            };
            t.validate().map_err(|e| bad(origin, e))?;
            Ok(t)
        }
        other => Err(bad(
            origin,
            format!(
                "unsupported post-processor {other:?}: use TemplateProcessing or BertProcessing"
            ),
        )),
    }
}

pub fn parse_truncation(t: &Value, origin: &str) -> Result<Truncation> {
    let strategy = match get_str(t, "strategy", "LongestFirst") {
        "LongestFirst" => TruncationStrategy::LongestFirst,
        "OnlyFirst" => TruncationStrategy::OnlyFirst,
        "OnlySecond" => TruncationStrategy::OnlySecond,
        other => {
            return Err(bad(
                origin,
                format!("unknown truncation strategy {other:?}"),
            ))
        }
    };
    let stride = opt_u32(t, "stride", origin)?.unwrap_or(0) as usize;
    Ok(Truncation {
        max_length: get_u32(t, "max_length", origin)? as usize,
        strategy,
        stride,
        left: is_left(t, "truncation", origin)?,
    })
}

/// A `direction` field: `Left` or `Right` (absent: Right); anything else is an error.
fn is_left(v: &Value, what: &str, origin: &str) -> Result<bool> {
    match get_str(v, "direction", "Right") {
        "Left" => Ok(true),
        "Right" => Ok(false),
        other => Err(bad(
            origin,
            format!("unknown {what} direction {other:?}: use \"Left\" or \"Right\""),
        )),
    }
}

pub fn parse_padding(p: &Value, origin: &str) -> Result<Padding> {
    let length = match p.get("strategy") {
        Some(Value::String(s)) if s == "BatchLongest" => None,
        Some(Value::Object(o)) if o.contains_key("Fixed") => Some(
            o["Fixed"]
                .as_u64()
                .ok_or_else(|| {
                    bad(
                        origin,
                        "padding Fixed length must be a non-negative integer",
                    )
                })?
                .try_into()
                .unwrap_or(usize::MAX),
        ),
        None => None,
        Some(other) => return Err(bad(origin, format!("unknown padding strategy {other}"))),
    };
    let multiple_of = opt_u32(p, "pad_to_multiple_of", origin)?.map(|x| x as usize);
    for (what, n) in [
        ("padding length", length),
        ("pad_to_multiple_of", multiple_of),
    ] {
        if n.is_some_and(|n| n > Padding::MAX_LENGTH) {
            return Err(bad(
                origin,
                format!(
                    "{what} {} is more than the limit of {} tokens",
                    n.unwrap_or_default(),
                    Padding::MAX_LENGTH
                ),
            ));
        }
    }
    Ok(Padding {
        length,
        multiple_of,
        left: is_left(p, "padding", origin)?,
        pad_id: opt_u32(p, "pad_id", origin)?.unwrap_or(0),
        pad_type_id: opt_u32(p, "pad_type_id", origin)?.unwrap_or(0),
        pad_token: get_str(p, "pad_token", "[PAD]").to_string(),
    })
}

fn render_piece(piece: &Piece) -> Value {
    match piece {
        Piece::Special(name, t) => json!({"SpecialToken": {"id": name, "type_id": t}}),
        Piece::Sequence(second, t) => {
            json!({"Sequence": {"id": if *second { "B" } else { "A" }, "type_id": t}})
        }
    }
}

pub fn render_post(t: &Template) -> Value {
    if t.bert_form {
        let get = |name: &str| {
            let ids = &t
                .specials
                .iter()
                .find(|(n, _)| n == name)
                .expect("bert form")
                .1;
            json!([name, ids[0]])
        };
        let (cls, sep) = match (&t.single[0], &t.single[2]) {
            (Piece::Special(c, _), Piece::Special(s, _)) => (c.clone(), s.clone()),
            _ => unreachable!("bert form has [CLS] $A [SEP]"),
        };
        return json!({"type": "BertProcessing", "sep": get(&sep), "cls": get(&cls)});
    }
    let mut specials = Map::new();
    for (k, (name, ids)) in t.specials.iter().enumerate() {
        let tokens = match t.strings.get(k).filter(|s| s.len() == ids.len()) {
            Some(strings) => strings.clone(),
            None => vec![name.clone(); ids.len()],
        };
        specials.insert(
            name.clone(),
            json!({"id": name, "ids": ids, "tokens": tokens}),
        );
    }
    json!({
        "type": "TemplateProcessing",
        "single": t.single.iter().map(render_piece).collect::<Vec<_>>(),
        "pair": t.pair.iter().map(render_piece).collect::<Vec<_>>(),
        "special_tokens": specials,
    })
}

pub fn render_truncation(t: &Option<Truncation>) -> Value {
    match t {
        None => Value::Null,
        Some(t) => json!({
            "direction": if t.left { "Left" } else { "Right" },
            "max_length": t.max_length,
            "strategy": match t.strategy {
                TruncationStrategy::LongestFirst => "LongestFirst",
                TruncationStrategy::OnlyFirst => "OnlyFirst",
                TruncationStrategy::OnlySecond => "OnlySecond",
            },
            "stride": t.stride,
        }),
    }
}

pub fn render_padding(p: &Option<Padding>) -> Value {
    match p {
        None => Value::Null,
        Some(p) => json!({
            "strategy": match p.length { Some(n) => json!({"Fixed": n}), None => json!("BatchLongest") },
            "direction": if p.left { "Left" } else { "Right" },
            "pad_to_multiple_of": p.multiple_of,
            "pad_id": p.pad_id,
            "pad_type_id": p.pad_type_id,
            "pad_token": p.pad_token,
        }),
    }
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
