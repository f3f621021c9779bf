//! Decoding ids as they arrive, a few at a time (HF's `DecodeStream`, for streaming a model's
//! output): each step returns the text its ids add, or nothing while they end inside a
//! character.
//!
//! Idea: a token's text depends on its neighbours (a byte-level token may hold half of a
//! UTF-8 character; a Metaspace decoder drops the space of the first token only; ByteFallback
//! joins `<0xC3><0xA9>` into one character), so decoding ids one by one and concatenating is
//! wrong. Each step instead decodes a short window: the ids of the last emitted step (the
//! prefix, whose text was already returned) plus the new ones, and returns what the window's
//! text has beyond the prefix's. The window then slides: the prefix becomes the ids of the step
//! just emitted.
//!
//! Invariants: `prefix` is `decode(ids[..prefix_index])`, the text already returned for those
//! ids in this window; a step returns text only when the window's text is longer than the
//! prefix and does not end in U+FFFD (an incomplete character), so a character split over
//! several ids comes out whole, once.
//!
//! Downside: a decoder whose output for the prefix changes once more ids follow (the window's
//! text no longer starts with the prefix) cannot be streamed: the step fails, as HF's does.

use super::Pipeline;
use crate::error::{Error, Result};

#[derive(Clone, Debug, Default)]
pub struct DecodeStream {
    ids: Vec<u32>,
    prefix: String,
    prefix_index: usize,
    skip_special_tokens: bool,
}

impl DecodeStream {
    /// A stream whose context starts with `ids` (already shown to the reader, never returned).
    pub fn new(ids: Vec<u32>, skip_special_tokens: bool) -> Self {
        DecodeStream {
            ids,
            skip_special_tokens,
            ..Default::default()
        }
    }

    /// Add `new_ids`; the text they complete, or None while it ends inside a character.
    pub fn step(&mut self, pipeline: &Pipeline, new_ids: &[u32]) -> Result<Option<String>> {
        let decode = |ids: &[u32]| pipeline.decode(ids, self.skip_special_tokens);
        if self.prefix.is_empty() && !self.ids.is_empty() {
            // Ids given up front are context: their text counts as shown once it is whole.
            let text = decode(&self.ids)?;
            if !text.ends_with('\u{FFFD}') {
                self.prefix = text;
                self.prefix_index = self.ids.len();
            }
        }
        self.ids.extend_from_slice(new_ids);
        let text = decode(&self.ids)?;
        if text.len() <= self.prefix.len() || text.ends_with('\u{FFFD}') {
            return Ok(None);
        }
        let Some(new_text) = text.strip_prefix(self.prefix.as_str()) else {
            return Err(Error::invalid(format!(
                "cannot stream this decoder: after id {}, the text {text:?} no longer starts \
                 with the text already returned, {:?}; decode the whole sequence instead",
                self.ids.last().copied().unwrap_or_default(),
                self.prefix
            )));
        };
        let new_text = new_text.to_string();
        let emitted = self.ids.len() - self.prefix_index;
        self.ids.drain(..self.prefix_index);
        self.prefix = decode(&self.ids)?;
        self.prefix_index = emitted;
        Ok(Some(new_text))
    }
}
