//! The BERT text pipeline before the model: `normalize` (clean, space out CJK, strip accents,
//! lowercase — each output byte remembers the input character it came from) and `split` (HF's
//! BertPreTokenizer: whitespace removed, punctuation isolated).
//!
//! Character classes come from the same Unicode tables HF `tokenizers` uses (`unicode_categories`
//! 0.1.1 for control / punctuation / nonspacing marks, `unicode-normalization-alignments` 0.1.12
//! for NFD), and case and whitespace from Rust's `char`, as HF does: parity is exact even on
//! characters those tables do not know yet (newer emoji are "unassigned" there, so they survive
//! cleaning but are neither marks nor punctuation).

pub mod classes;
pub mod normalize;
pub mod split;

pub use normalize::{BertNormalizer, Normalized};
pub use split::for_each_word;
