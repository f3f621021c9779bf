//! HF's ByteLevel offset trimming (its `ByteLevel` and `RobertaProcessing` post-processors with
//! `trim_offsets`): a token's offsets lose the spaces its string starts or ends with.
//!
//! A byte-level token carries the space before a word as `Ġ`; trimming moves the start past it
//! so that the offsets cover the word alone. The first token keeps one leading space when the
//! pre-tokenizer added it (`add_prefix_space`), since that space is not in the text. As HF
//! does, the count is in characters of the token string and is applied to character offsets.

use super::TextOf;
use crate::postprocess::Encoding;

fn is_space(c: char) -> bool {
    c == 'Ġ' || c.is_whitespace()
}

pub fn trim_offsets(enc: &mut Encoding, add_prefix_space: bool, text: TextOf<'_>) {
    for (i, tok) in enc.toks.iter_mut().enumerate() {
        let token = text(tok);
        let mut leading = token.chars().take_while(|&c| is_space(c)).count() as u32;
        let trailing = token.chars().rev().take_while(|&c| is_space(c)).count() as u32;
        let (start, end) = &mut tok.offsets;
        if leading > 0 {
            // Offsets that start at 0 may belong to a later word of pre-tokenized input.
            let first = i == 0 || *start == 0;
            if first && add_prefix_space && leading == 1 {
                leading = 0;
            }
            *start = (*start + leading).min(*end);
        }
        if trailing > 0 && *end >= trailing {
            *end = (*end - trailing).max(*start);
        }
    }
}
