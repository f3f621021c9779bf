//! subword: exact, fast byte-level BPE.
//!
//! Pipeline: `specials` splits text at special tokens → `pretokenize` cuts pieces → `encode` maps
//! each piece to ids (whole-piece lookup, word cache, rank merging) ; `vocab` is the single source
//! of truth for ids and bytes; `formats` reads and writes vocabulary files; `python` is the binding.

pub mod added_tokens;
pub mod bert;
pub mod decoders;
pub mod encode;
pub mod error;
pub mod files;
pub mod models;
pub mod normalize;
pub mod normalizers;
pub mod options;
pub mod pipeline;
pub mod pool;
pub mod postprocess;
pub mod pre_tokenizers;
pub mod pretokenize;
pub mod processors;
pub mod specials;
pub mod vocab;

pub use encode::Encoder;
pub use error::{Error, Result};
pub use vocab::{Rank, Vocab};
pub mod formats;

pub mod classic;
#[cfg(feature = "python")]
mod python;
pub mod train;
pub mod wordpiece;
