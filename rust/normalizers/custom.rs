//! A normalizer written outside the crate: the bindings wrap a Python object's `normalize`
//! (HF's `Normalizer.custom`) in a [`NormalizeFn`], so it runs as a stage like any other.
//!
//! Downside: such a stage is opaque. It cannot be written to tokenizer.json (HF refuses too),
//! it may move any word boundary (so a tokenizer holding one never cuts a long text for
//! parallel counting), and each call takes the interpreter's lock.

use super::Normalized;
use crate::error::Result;
use std::sync::Arc;

/// Rewrites `n` in place; `original` is the text `n`'s alignments point into.
pub trait NormalizeFn: Send + Sync {
    fn normalize(&self, original: &str, n: &mut Normalized) -> Result<()>;
}

#[derive(Clone)]
pub struct CustomNormalizer(pub Arc<dyn NormalizeFn>);

impl std::fmt::Debug for CustomNormalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomNormalizer")
    }
}
