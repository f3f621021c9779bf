//! The post-processing parts of HF's `tokenizer.json`: the `BertProcessing` /
//! `TemplateProcessing` template, `truncation` and `padding`, read with every field checked
//! (a bad value is an error naming it, never a default) and written back in HF's layout.

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::postprocess::{Padding, Piece, Template, Truncation, TruncationStrategy};
use serde_json::{json, Map, Value};

pub(crate) fn bad(origin: &str, msg: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{origin}: {msg}"))
}

pub(crate) fn kind(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("?")
}

pub(crate) fn get_str<'a>(v: &'a Value, key: &str, default: &'a str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or(default)
}

/// `key` as a u32: None when absent or null, an error when it is something else (a negative or
/// huge number would otherwise become a wrong setting silently).
pub(crate) fn opt_u32(v: &Value, key: &str, origin: &str) -> Result<Option<u32>> {
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

pub(crate) fn get_u32(v: &Value, key: &str, origin: &str) -> Result<u32> {
    opt_u32(v, key, origin)?
        .ok_or_else(|| bad(origin, format!("{key} must be a non-negative integer")))
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
        // `Template::bert` keeps `[cls, sep]` in that order, each with its own string.
        let get = |k: usize| {
            let (name, ids) = &t.specials[k];
            let shown = t.strings.get(k).and_then(|s| s.first()).unwrap_or(name);
            json!([shown, ids[0]])
        };
        return json!({"type": "BertProcessing", "sep": get(1), "cls": get(0)});
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
