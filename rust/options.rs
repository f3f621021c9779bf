//! Options that several pipeline stages share, in HF's tokenizer.json schema: ByteLevel's three
//! flags (pre-tokenizer, decoder, post-processor) and Metaspace's (pre-tokenizer, decoder).

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrependScheme {
    Always,
    First,
    Never,
}

impl PrependScheme {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "always" => Ok(PrependScheme::Always),
            "first" => Ok(PrependScheme::First),
            "never" => Ok(PrependScheme::Never),
            other => Err(Error::invalid(format!(
                "unknown prepend_scheme {other:?}: use always, first or never"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PrependScheme::Always => "always",
            PrependScheme::First => "first",
            PrependScheme::Never => "never",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteLevelOptions {
    pub add_prefix_space: bool,
    pub trim_offsets: bool,
    pub use_regex: bool,
}

impl ByteLevelOptions {
    pub fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(ByteLevelOptions {
            add_prefix_space: f.flag("add_prefix_space", true)?,
            trim_offsets: f.flag("trim_offsets", true)?,
            use_regex: f.flag("use_regex", true)?,
        })
    }

    pub fn to_json(&self) -> Value {
        json!({
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        })
    }
}

/// Metaspace's (replacement, prepend_scheme, split), HF's defaults where absent.
pub fn metaspace_fields(f: &Fields<'_>) -> Result<(char, PrependScheme, bool)> {
    let scheme = PrependScheme::parse(&f.text("prepend_scheme", Some("always"))?)
        .map_err(|e| Error::invalid(format!("{}: {e}", f.at("prepend_scheme"))))?;
    Ok((
        f.one_char("replacement", "▁")?,
        scheme,
        f.flag("split", true)?,
    ))
}

pub fn metaspace_json(replacement: char, scheme: PrependScheme, split: bool) -> Value {
    json!({
        "type": "Metaspace",
        "replacement": replacement.to_string(),
        "prepend_scheme": scheme.name(),
        "split": split,
    })
}
