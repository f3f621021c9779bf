//! A pre-tokenizer written outside the crate: the bindings wrap a Python object's
//! `pre_tokenize` (HF's `PreTokenizer.custom`) in a [`PreTokenizeFn`], so it runs as a stage
//! like any other.
//!
//! Downside: as for custom normalizers, no tokenizer.json form, no parallel cuts of one long
//! text, and the interpreter's lock on each call.

use crate::error::Result;
use crate::normalizers::Normalized;
use std::sync::Arc;

/// Cuts `pieces` (in order) further; `original` is the text their alignments point into.
pub trait PreTokenizeFn: Send + Sync {
    fn pre_tokenize(&self, original: &str, pieces: Vec<Normalized>) -> Result<Vec<Normalized>>;
}

#[derive(Clone)]
pub struct CustomPreTokenizer(pub Arc<dyn PreTokenizeFn>);

impl std::fmt::Debug for CustomPreTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomPreTokenizer")
    }
}
