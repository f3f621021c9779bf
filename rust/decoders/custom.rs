//! A decoder written outside the crate: the bindings wrap a Python object's `decode_chain`
//! (HF's `Decoder.custom`) in a [`DecodeFn`], so it chains like any other decoder.
//!
//! Downside: no tokenizer.json form (HF refuses too), and the interpreter's lock on each call.

use crate::error::Result;
use std::sync::Arc;

/// The one call HF makes of a custom decoder, alone or inside a `Sequence` (its `decode` is
/// never called: a tokenizer joins what `decode_chain` returns).
pub trait DecodeFn: Send + Sync {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>>;
}

#[derive(Clone)]
pub struct CustomDecoder(pub Arc<dyn DecodeFn>);

impl std::fmt::Debug for CustomDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomDecoder")
    }
}
