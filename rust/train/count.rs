//! Counting pre-tokens: the only pass over the corpus. Memory is bounded by the number of distinct
//! pre-tokens, not by corpus size: text is fed in blocks, each block is cut at safe points into
//! sub-chunks counted in parallel (rayon), and the per-chunk maps are folded into one.

use crate::bert::{for_each_word, BertNormalizer, Normalized};
use crate::error::{Error, Result};
use crate::pretokenize::Pattern;
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Count and first position (in bytes of all text fed so far) of each distinct pre-token.
pub type Counts = FxHashMap<Box<[u8]>, (u64, u64)>;

/// Roughly how much text one parallel task counts.
const SUB_CHUNK: usize = 1 << 20;

/// The same for BERT words and a pipeline with a normalizer: each task keeps its normalized
/// text with its alignments (4 bytes or more per byte), so smaller tasks keep that buffer (and
/// the trainer's peak memory) small.
const SUB_CHUNK_NORMALIZED: usize = 1 << 18;

pub use crate::pretokenize::safe_cut::is_safe_cut;

thread_local! {
    static NORMALIZED: std::cell::RefCell<Normalized> = std::cell::RefCell::default();
}

/// How training text is cut into the words that are counted.
pub enum Splitter {
    /// A pre-tokenizer pattern (byte-level BPE).
    Pattern(Pattern),
    /// BERT's normalizer (if any), then BertPreTokenizer (WordPiece).
    Bert(Option<BertNormalizer>),
    /// Whitespace-separated words (classic `</w>` BPE).
    Whitespace,
    /// What a tokenizer's pipeline hands its model: added tokens cut out, then its normalizer
    /// and pre-tokenizer (HF's trainers). No safe cuts: a normalizer may treat a text's start
    /// differently (`Prepend`), so each text is counted whole.
    Pipeline(Box<crate::pipeline::Pipeline>),
}

impl Splitter {
    /// Whether `is_safe_cut` points never change the words (always true when whitespace
    /// separates words, as at every safe point).
    pub fn has_safe_cuts(&self) -> bool {
        match self {
            Splitter::Pattern(p) => p.has_safe_cuts(),
            Splitter::Bert(_) | Splitter::Whitespace => true,
            Splitter::Pipeline(p) => p.has_safe_cuts(),
        }
    }

    /// Call `f(word, position)` for each word of `text`; positions grow through the text.
    fn for_each_word(&self, text: &str, mut f: impl FnMut(&str, usize)) -> Result<()> {
        let origin = text.as_ptr() as usize;
        match self {
            Splitter::Pattern(p) => p.for_each_piece(text, |piece| {
                f(piece, piece.as_ptr() as usize - origin);
                Ok(())
            }),
            Splitter::Pipeline(p) => p.for_each_word(text, f),
            Splitter::Whitespace => {
                for w in text.split_whitespace() {
                    f(w, w.as_ptr() as usize - origin);
                }
                Ok(())
            }
            Splitter::Bert(normalizer) => {
                let Some(n) = normalizer else {
                    for_each_word(text, |s, e| f(&text[s..e], s));
                    return Ok(());
                };
                // A word's position is the index of its first original character: it orders
                // words like their byte offsets and never runs past this text's length, so
                // positions stay ordered across texts (normalized offsets could run past).
                NORMALIZED.with(|cell| {
                    let norm = &mut *cell.borrow_mut();
                    norm.clear();
                    n.normalize_into(text, 0, norm);
                    for_each_word(&norm.text, |s, e| {
                        f(&norm.text[s..e], norm.origin[s] as usize)
                    });
                });
                Ok(())
            }
        }
    }
}

pub struct PreTokenCounter {
    splitter: Splitter,
    /// Put a space before each stretch between specials that lacks one (HF ByteLevel
    /// `add_prefix_space`), as the encoder will.
    prefix_space: bool,
    specials: Option<AhoCorasick>,
    counts: Counts,
    offset: u64,
    /// Bytes of text given to the splitter, and bytes its pieces covered: a pattern that does not
    /// match everywhere drops text from training, which the caller must hear about.
    split_bytes: AtomicU64,
    covered_bytes: AtomicU64,
}

impl PreTokenCounter {
    pub fn new(pattern: Pattern, specials: &[String]) -> Result<Self> {
        Self::with_splitter(Splitter::Pattern(pattern), specials)
    }

    pub fn with_splitter(splitter: Splitter, specials: &[String]) -> Result<Self> {
        let mut seen = rustc_hash::FxHashSet::default();
        for s in specials {
            if s.is_empty() {
                return Err(crate::Error::invalid(
                    "a special token cannot be the empty string",
                ));
            }
            if !seen.insert(s.as_str()) {
                return Err(crate::Error::invalid(format!(
                    "special token {s:?} is given twice"
                )));
            }
        }
        let specials = crate::specials::matcher(specials)?;
        Ok(PreTokenCounter {
            splitter,
            prefix_space: false,
            specials,
            counts: Counts::default(),
            offset: 0,
            split_bytes: AtomicU64::new(0),
            covered_bytes: AtomicU64::new(0),
        })
    }

    /// Count one document (documents never share a pre-token).
    pub fn feed(&mut self, text: &str) -> Result<()> {
        let base = self.offset;
        // Folded as tasks finish (sums and first positions do not depend on the order), so only
        // a few per-task maps are alive at once, not one per task of the block.
        let counted = self
            .chunks(text)
            .into_par_iter()
            .map(|(r, prefix)| self.count_chunk(text, r, prefix, base))
            .try_reduce(Counts::default, |a, b| Ok(merge_larger(a, b)))?;
        merge_into(&mut self.counts, counted);
        self.offset += text.len() as u64 + 1;
        Ok(())
    }

    /// Count documents as [`Self::feed`] one by one would (the same counts and first
    /// positions), in parallel across documents when the splitter has no safe cuts: many
    /// short documents (HF's `train_from_iterator`) would otherwise be counted one at a time.
    pub fn feed_many(&mut self, texts: &[&str]) -> Result<()> {
        if self.splitter.has_safe_cuts() {
            return texts.iter().try_for_each(|t| self.feed(t));
        }
        let mut bases = Vec::with_capacity(texts.len());
        let mut at = self.offset;
        for t in texts {
            bases.push(at);
            at += t.len() as u64 + 1;
        }
        let counted = texts
            .par_iter()
            .zip(&bases)
            .map(|(text, &base)| {
                self.chunks(text)
                    .into_iter()
                    .map(|(r, prefix)| self.count_chunk(text, r, prefix, base))
                    .try_fold(Counts::default(), |a, b| Ok(merge_larger(a, b?)))
            })
            .try_reduce(Counts::default, |a, b| Ok(merge_larger(a, b)))?;
        merge_into(&mut self.counts, counted);
        self.offset = at;
        Ok(())
    }

    /// The stretches of `text` to count, and whether each gets a prefix space: the text between
    /// specials (cut out first, so a cut below can never fall inside one), at safe points into
    /// sub-chunks when the splitter allows it.
    fn chunks(&self, text: &str) -> Vec<(std::ops::Range<usize>, bool)> {
        let b = text.as_bytes();
        let mut segments = Vec::new();
        let mut start = 0;
        if let Some(ac) = &self.specials {
            for m in ac.find_iter(b) {
                segments.push(start..m.start());
                start = m.end();
            }
        }
        segments.push(start..b.len());
        let mut chunks = Vec::new();
        for seg in segments.into_iter().filter(|r| !r.is_empty()) {
            let prefix = self.prefix_space && b[seg.start] != b' ';
            let parts = if self.splitter.has_safe_cuts() {
                let size = match &self.splitter {
                    Splitter::Bert(Some(_)) => SUB_CHUNK_NORMALIZED,
                    Splitter::Pipeline(p) if p.normalizer.is_some() => SUB_CHUNK_NORMALIZED,
                    _ => SUB_CHUNK,
                };
                crate::pretokenize::safe_cut::parts(b, seg, size)
            } else {
                vec![seg]
            };
            // Only the stretch's first part gets the prefix space.
            chunks.extend(
                parts
                    .into_iter()
                    .enumerate()
                    .map(|(k, r)| (r, prefix && k == 0)),
            );
        }
        chunks
    }

    /// Count `text[r]` of a document fed at corpus offset `base`.
    fn count_chunk(
        &self,
        text: &str,
        r: std::ops::Range<usize>,
        prefix: bool,
        base: u64,
    ) -> Result<Counts> {
        let at = base + r.start as u64;
        if prefix {
            self.count_text(&format!(" {}", &text[r]), at)
        } else {
            self.count_text(&text[r], at)
        }
    }

    /// Count the pieces of special-free text starting at corpus offset `base`.
    fn count_text(&self, text: &str, base: u64) -> Result<Counts> {
        let mut counts = Counts::default();
        let mut covered = 0u64;
        self.splitter.for_each_word(text, |piece, pos| {
            covered += piece.len() as u64;
            let at = base + pos as u64;
            match counts.get_mut(piece.as_bytes()) {
                Some(e) => e.0 += 1,
                None => {
                    counts.insert(piece.as_bytes().into(), (1, at));
                }
            }
        })?;
        self.split_bytes
            .fetch_add(text.len() as u64, Ordering::Relaxed);
        self.covered_bytes.fetch_add(covered, Ordering::Relaxed);
        Ok(counts)
    }

    /// For a pattern splitter: (bytes of text its matches skipped, bytes of text it was given;
    /// specials excluded). Word splitters skip whitespace by design and report None.
    pub fn skipped_bytes(&self) -> Option<(u64, u64)> {
        let Splitter::Pattern(p) = &self.splitter else {
            return None;
        };
        if p.is_whole() {
            return None;
        }
        let total = self.split_bytes.load(Ordering::Relaxed);
        Some((total - self.covered_bytes.load(Ordering::Relaxed), total))
    }

    /// Move a block cut at `cut` back to the start of a special token that straddles it.
    pub fn respect_specials(&self, b: &[u8], cut: usize) -> usize {
        let Some(ac) = &self.specials else {
            return cut;
        };
        for m in ac.find_iter(b) {
            if m.start() >= cut {
                break;
            }
            if m.end() > cut {
                return m.start();
            }
        }
        cut
    }

    pub fn with_prefix_space(mut self, on: bool) -> Self {
        self.prefix_space = on;
        self
    }

    pub fn splitter(&self) -> &Splitter {
        &self.splitter
    }

    /// Add pre-tokens counted elsewhere (e.g. by a distributed job); order of first appearance is
    /// the order given.
    /// Sums saturate: the merge loop refuses totals that do not fit (see `queue::learn`).
    pub fn add_counts(&mut self, piece: &[u8], count: u64) {
        let at = self.offset;
        self.offset += 1;
        let e = self.counts.entry(piece.into()).or_insert((0, at));
        e.0 = e.0.saturating_add(count);
    }

    /// Counts and pattern of a byte-level BPE counter.
    ///
    /// A pattern that matched none of a non-empty corpus is an error: training would silently
    /// learn from nothing (a misspelt pattern name is taken as a regex that matches nothing).
    pub fn into_parts(self) -> Result<(Counts, Pattern)> {
        if let Some((skipped, total)) = self.skipped_bytes() {
            if total > 0 && skipped == total {
                let src = match &self.splitter {
                    Splitter::Pattern(p) => p.as_str().to_string(),
                    _ => String::new(),
                };
                let names: Vec<&str> = crate::pretokenize::PATTERN_NAMES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                return Err(Error::invalid(format!(
                    "the pattern {src:?} matched none of the {total} bytes of training text, so \
                     there is nothing to learn from; pass a built-in name ({}) or a regex that \
                     matches the text",
                    names.join(", ")
                )));
            }
        }
        match self.splitter {
            Splitter::Pattern(p) => Ok((self.counts, p)),
            _ => Err(Error::invalid(
                "this counter splits words for WordPiece or classic BPE, not byte-level BPE",
            )),
        }
    }

    pub fn into_counts(self) -> Counts {
        self.counts
    }

    pub fn n_distinct(&self) -> usize {
        self.counts.len()
    }
}

/// The two maps as one, the smaller folded into the larger.
fn merge_larger(mut a: Counts, mut b: Counts) -> Counts {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    merge_into(&mut a, b);
    a
}

fn merge_into(into: &mut Counts, part: Counts) {
    if into.is_empty() {
        *into = part;
        return;
    }
    for (k, (c, first)) in part {
        let e = into.entry(k).or_insert((0, first));
        e.0 = e.0.saturating_add(c);
        e.1 = e.1.min(first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_cuts_do_not_change_pieces() {
        let text = "Hello world.\nThe end\n\nAnd more!\nyes 12\nok  \nZ";
        let b = text.as_bytes();
        for name in ["gpt2", "cl100k_base", "o200k_base"] {
            let p = Pattern::new(name).unwrap();
            let whole = p.pieces(text).unwrap();
            for cut in 0..b.len() {
                if is_safe_cut(b, cut) {
                    let mut parts = p.pieces(&text[..cut]).unwrap();
                    parts.extend(p.pieces(&text[cut..]).unwrap());
                    assert_eq!(parts, whole, "{name} cut at {cut}");
                }
            }
        }
    }
}
