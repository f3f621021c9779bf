//! The pipeline as HF's tokenizer.json: read with every part checked (an error names the JSON
//! path of what is wrong or not implemented), written back in HF's layout.
//!
//! Invariant: what is read is what runs; a part this pipeline cannot run yet (added tokens,
//! truncation, padding) is refused rather than dropped, so a file never loads into a tokenizer
//! that silently encodes differently from HF's.

use super::Pipeline;
use crate::decoders::Decoder;
use crate::error::{Error, Result};
use crate::formats::hf_wordpiece::{parse_post, render_post};
use crate::models::Model;
use crate::normalizers::Normalizer;
use crate::pre_tokenizers::PreTokenizer;
use serde_json::{json, Value};

/// A stage that may be null or absent.
fn stage<T>(doc: &Value, key: &str, read: impl Fn(&Value, &str) -> Result<T>) -> Result<Option<T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v, key).map(Some),
    }
}

impl Pipeline {
    /// The pipeline of a tokenizer.json document (`origin` names it in errors).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Self> {
        let doc = crate::formats::parse_json(text, origin)?;
        Self::from_json(&doc).map_err(|e| match e {
            Error::Invalid(msg) => Error::invalid(format!("{origin}: {msg}")),
            other => other,
        })
    }

    pub fn from_json(doc: &Value) -> Result<Self> {
        if !doc.is_object() {
            return Err(Error::invalid("a tokenizer.json must be a JSON object"));
        }
        for key in ["truncation", "padding"] {
            if doc.get(key).is_some_and(|v| !v.is_null()) {
                return Err(Error::invalid(format!(
                    "{key}: not implemented in subword.tokenizers.Tokenizer yet; set it to \
                     null in the file and call enable_{key} once it is"
                )));
            }
        }
        if doc
            .get("added_tokens")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            return Err(Error::invalid(
                "added_tokens: added tokens are not implemented in subword.tokenizers.Tokenizer \
                 yet (byte-level BPE files with them load through subword.Tokenizer.from_file)",
            ));
        }
        let model = doc
            .get("model")
            .ok_or_else(|| Error::invalid("model: a tokenizer.json needs a model"))?;
        Ok(Pipeline {
            normalizer: stage(doc, "normalizer", Normalizer::from_json)?,
            pre_tokenizer: stage(doc, "pre_tokenizer", PreTokenizer::from_json)?,
            model: Model::from_json(model, "model")?,
            post_processor: stage(doc, "post_processor", parse_post)?,
            decoder: stage(doc, "decoder", Decoder::from_json)?,
        })
    }

    /// HF's tokenizer.json document of this pipeline.
    pub fn to_json(&self) -> Value {
        json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [],
            "normalizer": self.normalizer.as_ref().map(Normalizer::to_json),
            "pre_tokenizer": self.pre_tokenizer.as_ref().map(PreTokenizer::to_json),
            "post_processor": self.post_processor.as_ref().map(render_post),
            "decoder": self.decoder.as_ref().map(Decoder::to_json),
            "model": self.model.to_json(),
        })
    }
}
