//! The pipeline as HF's tokenizer.json: read with every part checked (an error names the JSON
//! path of what is wrong or not implemented), written back in HF's layout.
//!
//! Invariant: what is read is what runs; a part this pipeline cannot run is refused rather
//! than dropped, so a file never loads into a tokenizer that silently encodes differently
//! from HF's.

use super::Pipeline;
use crate::added_tokens::AddedToken;
use crate::decoders::Decoder;
use crate::error::{Error, Result};
use crate::formats::hf_post::{parse_padding, parse_truncation, render_padding, render_truncation};
use crate::models::Model;
use crate::normalizers::Normalizer;
use crate::pre_tokenizers::PreTokenizer;
use crate::processors::Processor;
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
        let pipeline = Self::from_json(&doc);
        drop(doc);
        crate::formats::release_freed_memory();
        pipeline.map_err(|e| match e {
            Error::Invalid(msg) => Error::invalid(format!("{origin}: {msg}")),
            other => other,
        })
    }

    pub fn from_json(doc: &Value) -> Result<Self> {
        if !doc.is_object() {
            return Err(Error::invalid("a tokenizer.json must be a JSON object"));
        }
        let mut added = Vec::new();
        match doc.get("added_tokens") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (k, item) in items.iter().enumerate() {
                    added.push(AddedToken::from_json(item, &format!("added_tokens[{k}]"))?);
                }
            }
            Some(_) => return Err(Error::invalid("added_tokens: expected a list")),
        }
        let model = doc
            .get("model")
            .ok_or_else(|| Error::invalid("model: a tokenizer.json needs a model"))?;
        Pipeline {
            added: Default::default(),
            normalizer: stage(doc, "normalizer", Normalizer::from_json)?,
            pre_tokenizer: stage(doc, "pre_tokenizer", PreTokenizer::from_json)?,
            model: Model::from_json(model, "model")?,
            post_processor: stage(doc, "post_processor", Processor::from_json)?,
            decoder: stage(doc, "decoder", Decoder::from_json)?,
            truncation: stage(doc, "truncation", parse_truncation)?,
            padding: stage(doc, "padding", parse_padding)?,
        }
        .with_added(added)
    }

    /// HF's tokenizer.json document of this pipeline (none with a custom component).
    pub fn to_json(&self) -> Result<Value> {
        Ok(json!({
            "version": "1.0",
            "truncation": render_truncation(&self.truncation),
            "padding": render_padding(&self.padding),
            "added_tokens": self.added.to_json(),
            "normalizer": self.normalizer.as_ref().map(Normalizer::to_json).transpose()?,
            "pre_tokenizer": self.pre_tokenizer.as_ref().map(PreTokenizer::to_json).transpose()?,
            "post_processor": self.post_processor.as_ref().map(Processor::to_json),
            "decoder": self.decoder.as_ref().map(Decoder::to_json).transpose()?,
            "model": self.model.to_json(),
        }))
    }
}
