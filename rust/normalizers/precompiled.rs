//! HF's Precompiled normalizer: SentencePiece's compiled normalization rules
//! (`precompiled_charsmap`, e.g. `nmt_nfkc`), as found in the tokenizer.json of converted
//! SentencePiece models.
//!
//! The charsmap is a little-endian `u32` byte length of a darts-clone double-array trie, the
//! trie's `u32` units, then the replacement strings, each ending in a NUL. A trie key is the
//! UTF-8 of a text fragment; a leaf's value is the byte offset of its replacement.
//!
//! Rule (HF's, kept for its results): each extended grapheme of fewer than 6 bytes is looked up
//! whole; otherwise, or when that finds nothing, each of its chars is looked up alone. A lookup
//! takes the *shortest* prefix of the fragment that has a replacement, and that replacement
//! stands for the whole fragment.
//!
//! Invariant: the trie is walked whole when read (every reachable unit and every replacement
//! checked), so a malformed charsmap is refused there and a lookup never indexes out of bounds.
//! Downside: reading costs a pass over every reachable node × 255 labels (a few ms for
//! `nmt_nfkc`'s 60 K units).

use super::Normalized;
use crate::error::{Error, Result};
use unicode_segmentation::UnicodeSegmentation;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Precompiled {
    /// The charsmap as given (written back as is).
    charsmap: Vec<u8>,
    units: Vec<u32>,
    /// The replacement strings, NUL-separated.
    replacements: String,
}

fn has_leaf(u: u32) -> bool {
    (u >> 8) & 1 == 1
}

fn value(u: u32) -> usize {
    (u & ((1 << 31) - 1)) as usize
}

/// A child's label; a leaf unit has bit 31 set, so it never equals a byte.
fn label(u: u32) -> u32 {
    u & ((1 << 31) | 0xFF)
}

fn offset(u: u32) -> usize {
    ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize
}

impl Precompiled {
    pub fn new(charsmap: Vec<u8>) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(format!(
                "precompiled_charsmap is not a SentencePiece charsmap ({why}); take it from the \
                 model's normalizer_spec unchanged"
            ))
        };
        let word = |at: usize| -> Option<u32> {
            let b = charsmap.get(at..at + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let trie_bytes = word(0).ok_or_else(|| bad("shorter than its 4-byte header"))? as usize;
        if !trie_bytes.is_multiple_of(4) || trie_bytes == 0 || 4 + trie_bytes > charsmap.len() {
            return Err(bad("the trie length does not fit the data"));
        }
        let units: Vec<u32> = (0..trie_bytes / 4)
            .map(|k| word(4 + 4 * k).expect("length checked"))
            .collect();
        let replacements = String::from_utf8(charsmap[4 + trie_bytes..].to_vec())
            .map_err(|_| bad("its replacements are not UTF-8"))?;
        let p = Precompiled {
            charsmap,
            units,
            replacements,
        };
        p.check().map_err(bad)?;
        Ok(p)
    }

    /// Walk every node reachable from the root; see the module invariant.
    fn check(&self) -> std::result::Result<(), &'static str> {
        let unit = |at: usize| {
            self.units
                .get(at)
                .copied()
                .ok_or("a node points outside the trie")
        };
        let mut seen = vec![false; self.units.len()];
        let mut bases = vec![offset(unit(0)?)];
        while let Some(base) = bases.pop() {
            for c in 1..=255usize {
                let child = base ^ c;
                let Some(&u) = self.units.get(child) else {
                    continue;
                };
                if label(u) as usize != c || std::mem::replace(&mut seen[child], true) {
                    continue;
                }
                let next = child ^ offset(u);
                if has_leaf(u) {
                    let start = value(unit(next)?);
                    if !self.replacements.is_char_boundary(start) {
                        return Err("a replacement starts outside its strings");
                    }
                }
                bases.push(next);
            }
        }
        Ok(())
    }

    /// The charsmap as read.
    pub fn charsmap(&self) -> &[u8] {
        &self.charsmap
    }

    /// The replacement of the shortest prefix of `fragment` that has one.
    fn lookup(&self, fragment: &str) -> Option<&str> {
        let mut pos = offset(*self.units.first()?);
        for &b in fragment.as_bytes() {
            if b == 0 {
                return None;
            }
            let child = pos ^ b as usize;
            let u = *self.units.get(child)?;
            if label(u) != b as u32 {
                return None;
            }
            pos = child ^ offset(u);
            if has_leaf(u) {
                let start = value(*self.units.get(pos)?);
                let rest = self.replacements.get(start..)?;
                return Some(&rest[..rest.find('\0').unwrap_or(rest.len())]);
            }
        }
        None
    }

    pub fn apply(&self, n: &mut Normalized) {
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(n.normalized().len());
        let mut changed = false;
        for grapheme in n.normalized().graphemes(true) {
            if grapheme.len() < 6 {
                if let Some(to) = self.lookup(grapheme) {
                    changed = true;
                    replace(&mut dest, grapheme, to);
                    continue;
                }
            }
            for (i, c) in grapheme.char_indices() {
                let one = &grapheme[i..i + c.len_utf8()];
                match self.lookup(one) {
                    Some(to) => {
                        changed = true;
                        replace(&mut dest, one, to);
                    }
                    None => dest.push((c, 0)),
                }
            }
        }
        if changed {
            n.transform(dest, 0);
        }
    }
}

/// `to` in place of `from` in HF's `(char, change)` stream: chars beyond `from`'s count are
/// marked as inserted, chars fewer are removed by the last entry so far (even one of an earlier
/// fragment, when `to` is empty: HF's rule).
fn replace(dest: &mut Vec<(char, isize)>, from: &str, to: &str) {
    let diff = to.chars().count() as isize - from.chars().count() as isize;
    dest.extend(to.chars().map(|c| (c, 0)));
    if diff > 0 {
        for entry in dest.iter_mut().rev().take(diff as usize) {
            entry.1 = 1;
        }
    } else if diff < 0 {
        if let Some(last) = dest.last_mut() {
            last.1 += diff;
        }
    }
}
