//! Encoding bytes that need not be UTF-8 (tiktoken's `_encode_bytes`), and one piece without the
//! pattern (tiktoken's `encode_single_piece`).
//!
//! The pattern splits chars, so bytes that are not UTF-8 cannot be pre-tokenized. tiktoken's
//! answer, kept here id for id: pre-tokenize the valid UTF-8 prefix, take back the ids of its last
//! piece (widened over whitespace tokens before it, as `encode_with_unstable` does), and merge
//! those bytes together with everything from the first invalid byte on as one piece. Downside:
//! that tail is one piece however long it is, even where it holds valid text again, so its ids
//! may differ from what a pattern split would have given — the price of being tiktoken's ids.
//! Nothing is dropped: the ids always decode to the bytes given.

use super::Encoder;
use crate::error::Result;
use crate::specials::Selection;
use crate::vocab::Rank;

impl Encoder {
    /// tiktoken's `_encode_bytes`: specials are ordinary text (no split, no error).
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<Rank>> {
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => return self.encode_ordinary(text),
            Err(e) => e.valid_up_to(),
        };
        let text = std::str::from_utf8(&bytes[..valid]).expect("valid_up_to is a char boundary");
        let none = Selection::none();
        let encoded = self.encode(text, &none, &none)?;
        let mut ids = encoded.ids;
        let unstable_len = self.widen_over_whitespace(&ids, encoded.last_piece_len);
        let mut tail = self.decode_bytes(&ids[ids.len() - unstable_len..])?;
        ids.truncate(ids.len() - unstable_len);
        tail.extend_from_slice(&bytes[valid..]);
        ids.extend(self.encode_single_piece(&tail)?);
        Ok(ids)
    }

    /// The ids of `piece` as one piece: its own id if it is a token, else merged.
    pub fn encode_single_piece(&self, piece: &[u8]) -> Result<Vec<Rank>> {
        if piece.is_empty() {
            return Ok(Vec::new());
        }
        match self.vocab.rank(piece) {
            Some(id) => Ok(vec![id]),
            None => self.merge_bytes(piece),
        }
    }
}
