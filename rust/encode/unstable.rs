//! `encode_with_unstable`: the ids that appending more text cannot change, plus every id sequence
//! the unstable tail could turn into. Same contract and results as tiktoken's: its brute force over
//! tokens that start with (a suffix of) the unstable bytes is kept, since callers compare sets.

use super::{Encoded, Encoder};
use crate::error::Result;
use crate::specials::Selection;
use crate::vocab::Rank;
use rustc_hash::FxHashSet;

impl Encoder {
    pub fn encode_with_unstable(
        &self,
        text: &str,
        allowed: &Selection,
        disallowed: &Selection,
    ) -> Result<(Vec<Rank>, FxHashSet<Vec<Rank>>)> {
        let Encoded {
            mut ids,
            last_piece_len,
        } = self.encode(text, allowed, disallowed)?;
        let mut completions = FxHashSet::default();
        if last_piece_len == 0 {
            return Ok((ids, completions));
        }
        let unstable_len = self.widen_over_whitespace(&ids, last_piece_len);
        let unstable = self.decode_bytes(&ids[ids.len() - unstable_len..])?;
        ids.truncate(ids.len() - unstable_len);
        if unstable.is_empty() {
            return Ok((ids, completions));
        }
        let sorted = self.sorted_token_bytes();
        fn starting_with<'a>(
            sorted: &'a [Box<[u8]>],
            prefix: &'a [u8],
        ) -> impl Iterator<Item = &'a Box<[u8]>> {
            let from = sorted.partition_point(|t| &**t < prefix);
            sorted[from..]
                .iter()
                .take_while(move |t| t.starts_with(prefix))
        }
        // A single token may cover all of the unstable bytes.
        for t in starting_with(sorted, &unstable) {
            completions.insert(vec![self.vocab.rank(t).expect("sorted tokens are tokens")]);
        }
        // Or a token may straddle the end: keep a prefix, complete the rest with any token that
        // starts with the remaining bytes, and re-encode, keeping ids up to the unstable length.
        for split in 1..unstable.len() {
            let (prefix, suffix) = unstable.split_at(split);
            for t in starting_with(sorted, suffix) {
                let candidate = [prefix, &**t].concat();
                let encoded = match std::str::from_utf8(&candidate) {
                    Ok(s) => self.encode_ordinary(s)?,
                    Err(_) => self.merge_bytes(&candidate)?,
                };
                let mut seq = Vec::new();
                let mut covered = 0;
                for id in encoded {
                    seq.push(id);
                    covered += self.token_bytes(id)?.len();
                    if covered >= unstable.len() {
                        break;
                    }
                }
                completions.insert(seq);
            }
        }
        // A whitespace char at the end may be split off by more text (the `\s+(?!\S)` give-back).
        if unstable.len() > 1 {
            if let Some((last, n)) = last_char(&unstable) {
                if n < unstable.len() && last.is_whitespace() {
                    let cut = unstable.len() - n;
                    let mut seq = self.merge_bytes(&unstable[..cut])?;
                    seq.extend(self.merge_bytes(&unstable[cut..])?);
                    completions.insert(seq);
                }
            }
        }
        Ok((ids, completions))
    }

    /// If the last piece starts with a token of only spaces, tabs and newlines, earlier such tokens
    /// may merge with it once more text arrives (cl100k's `\s*[\r\n]+` can move splits), so they are
    /// unstable too.
    pub(super) fn widen_over_whitespace(&self, ids: &[Rank], mut len: usize) -> usize {
        let all_space = |id: Rank| {
            self.vocab
                .token_bytes(id)
                .is_some_and(|b| b.iter().all(|c| matches!(c, b' ' | b'\n' | b'\t')))
        };
        if len > 0 && all_space(ids[ids.len() - len]) {
            while len < ids.len() && all_space(ids[ids.len() - len - 1]) {
                len += 1;
            }
        }
        len
    }
}

/// The last char of `bytes` if they end in valid UTF-8, and its length; `None` for a broken tail.
fn last_char(bytes: &[u8]) -> Option<(char, usize)> {
    let start = bytes.len().saturating_sub(4);
    (start..bytes.len()).find_map(|i| {
        let s = std::str::from_utf8(&bytes[i..]).ok()?;
        let mut chars = s.chars();
        let c = chars.next()?;
        chars.next().is_none().then_some((c, bytes.len() - i))
    })
}
