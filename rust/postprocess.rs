//! After the model: truncation, the special-token template (`[CLS] A [SEP] B [SEP]` with type ids)
//! and padding — HF's post-processing steps, on one plain `Encoding` record.

use crate::error::{Error, Result};

/// One encoded sequence (or pair), column by column. Offsets are character offsets into the text
/// the tokens came from; tokens the template adds have (0, 0) and no word. Padding is not stored:
/// results carry a pad count and show the padded columns (see [`Padding`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Encoding {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
    pub offsets: Vec<(u32, u32)>,
    /// Index of the pre-token (word) each token came from; [`NO_WORD`] for template tokens,
    /// which are exactly the special ones of HF's `special_tokens_mask`.
    pub words: Vec<u32>,
    /// Which input (0 = first, 1 = pair) each token belongs to; [`NO_WORD`] for template tokens.
    pub sequence: Vec<u32>,
}

pub const NO_WORD: u32 = u32::MAX;

impl Encoding {
    pub fn push(&mut self, id: u32, offsets: (u32, u32), word: u32) {
        self.ids.push(id);
        self.type_ids.push(0);
        self.offsets.push(offsets);
        self.words.push(word);
        self.sequence.push(0);
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn clear(&mut self) {
        self.ids.clear();
        self.type_ids.clear();
        self.offsets.clear();
        self.words.clear();
        self.sequence.clear();
    }

    fn truncate(&mut self, n: usize, left: bool) {
        if self.len() <= n {
            return;
        }
        if left {
            let cut = self.len() - n;
            self.ids.drain(..cut);
            self.type_ids.drain(..cut);
            self.offsets.drain(..cut);
            self.words.drain(..cut);
            self.sequence.drain(..cut);
        } else {
            self.ids.truncate(n);
            self.type_ids.truncate(n);
            self.offsets.truncate(n);
            self.words.truncate(n);
            self.sequence.truncate(n);
        }
    }

    /// Append `other`, giving its tokens `type_id` and `sequence` (None keeps theirs).
    pub fn extend_from(&mut self, other: &Encoding, type_id: Option<u32>, sequence: Option<u32>) {
        self.ids.extend_from_slice(&other.ids);
        match type_id {
            Some(t) => self.type_ids.extend(std::iter::repeat_n(t, other.len())),
            None => self.type_ids.extend_from_slice(&other.type_ids),
        }
        self.offsets.extend_from_slice(&other.offsets);
        self.words.extend_from_slice(&other.words);
        match sequence {
            Some(s) => self.sequence.extend(std::iter::repeat_n(s, other.len())),
            None => self.sequence.extend_from_slice(&other.sequence),
        }
    }

    fn push_added(&mut self, id: u32, type_id: u32) {
        self.ids.push(id);
        self.type_ids.push(type_id);
        self.offsets.push((0, 0));
        self.words.push(NO_WORD);
        self.sequence.push(NO_WORD);
    }
}

/// Many encodings in one set of columns: a batch costs a few allocations, not a few per text.
#[derive(Debug, Default)]
pub struct Batch {
    pub cols: Encoding,
    /// Item i is `bounds[i]..bounds[i + 1]`.
    pub bounds: Vec<usize>,
}

impl Batch {
    pub fn with_capacity(tokens: usize, items: usize) -> Batch {
        let mut bounds = Vec::with_capacity(items + 1);
        bounds.push(0);
        Batch {
            cols: Encoding {
                ids: Vec::with_capacity(tokens),
                type_ids: Vec::with_capacity(tokens),
                offsets: Vec::with_capacity(tokens),
                words: Vec::with_capacity(tokens),
                sequence: Vec::with_capacity(tokens),
            },
            bounds,
        }
    }

    pub fn push(&mut self, e: &Encoding) {
        if self.bounds.is_empty() {
            self.bounds.push(0);
        }
        self.cols.extend_from(e, None, None);
        self.bounds.push(self.cols.len());
    }

    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.bounds[i]..self.bounds[i + 1]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A special token (its ids) with a type id.
    Special(String, u32),
    /// Sequence A (false) or B (true) with a type id.
    Sequence(bool, u32),
}

/// HF's TemplateProcessing (BertProcessing is the `[CLS] $A [SEP]` / `… $B:1 [SEP]:1` case).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub single: Vec<Piece>,
    pub pair: Vec<Piece>,
    /// Special token name -> its ids.
    pub specials: Vec<(String, Vec<u32>)>,
    /// Written back as BertProcessing rather than TemplateProcessing.
    pub bert_form: bool,
}

impl Template {
    pub fn bert(cls: (String, u32), sep: (String, u32)) -> Template {
        Template {
            single: vec![
                Piece::Special(cls.0.clone(), 0),
                Piece::Sequence(false, 0),
                Piece::Special(sep.0.clone(), 0),
            ],
            pair: vec![
                Piece::Special(cls.0.clone(), 0),
                Piece::Sequence(false, 0),
                Piece::Special(sep.0.clone(), 0),
                Piece::Sequence(true, 1),
                Piece::Special(sep.0.clone(), 1),
            ],
            specials: vec![(cls.0, vec![cls.1]), (sep.0, vec![sep.1])],
            bert_form: true,
        }
    }

    fn ids_of(&self, name: &str) -> Result<&[u32]> {
        self.specials
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, ids)| ids.as_slice())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "template uses special token {name:?} but does not list its ids"
                ))
            })
    }

    pub fn validate(&self) -> Result<()> {
        for p in self.single.iter().chain(&self.pair) {
            if let Piece::Special(name, _) = p {
                self.ids_of(name)?;
            }
        }
        if self
            .single
            .iter()
            .any(|p| *p == Piece::Sequence(true, 0) || matches!(p, Piece::Sequence(true, _)))
        {
            return Err(Error::invalid("the single template cannot use $B"));
        }
        Ok(())
    }

    /// How many tokens the template adds.
    pub fn added(&self, pair: bool) -> usize {
        let t = if pair { &self.pair } else { &self.single };
        t.iter()
            .map(|p| match p {
                Piece::Special(name, _) => self.ids_of(name).map_or(0, |ids| ids.len()),
                Piece::Sequence(..) => 0,
            })
            .sum()
    }

    /// `a` (and `b`) with the template's tokens, into `out` (cleared first).
    pub fn apply(&self, a: &Encoding, b: Option<&Encoding>, out: &mut Encoding) {
        out.clear();
        let template = if b.is_some() {
            &self.pair
        } else {
            &self.single
        };
        for p in template {
            match p {
                Piece::Special(name, type_id) => {
                    for &id in self.ids_of(name).unwrap_or(&[]) {
                        out.push_added(id, *type_id);
                    }
                }
                Piece::Sequence(false, type_id) => out.extend_from(a, Some(*type_id), Some(0)),
                Piece::Sequence(true, type_id) => {
                    if let Some(b) = b {
                        out.extend_from(b, Some(*type_id), Some(1));
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TruncationStrategy {
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub max_length: usize,
    pub strategy: TruncationStrategy,
    pub stride: usize,
    /// Drop tokens from the start instead of the end.
    pub left: bool,
}

impl Truncation {
    /// Cut `a` (and `b`) so that together, plus `added` template tokens, they fit `max_length`.
    pub fn apply(&self, a: &mut Encoding, b: Option<&mut Encoding>, added: usize) -> Result<()> {
        let budget = self.max_length.saturating_sub(added);
        let total = a.len() + b.as_ref().map_or(0, |b| b.len());
        if total <= budget {
            return Ok(());
        }
        match (b, self.strategy) {
            (None, TruncationStrategy::OnlySecond) => Err(Error::invalid(
                "truncation strategy only_second needs a pair of sequences",
            )),
            (None, _) => {
                a.truncate(budget, self.left);
                Ok(())
            }
            (Some(b), TruncationStrategy::LongestFirst) => {
                // HF's rule: the shorter keeps up to half the budget (rounded down), the longer
                // (the second on ties) the rest.
                let first_longer = a.len() > b.len();
                let small = a.len().min(b.len()).min(budget / 2);
                let large = budget - small;
                let (n1, n2) = if first_longer {
                    (large, small)
                } else {
                    (small, large)
                };
                a.truncate(n1, self.left);
                b.truncate(n2, self.left);
                Ok(())
            }
            (Some(b), strategy) => {
                let (target, other) = if strategy == TruncationStrategy::OnlyFirst {
                    (a, b.len())
                } else {
                    (b, a.len())
                };
                // HF's rule: the truncated sequence must keep at least one token.
                let keep = budget.checked_sub(other).filter(|&k| k > 0).ok_or_else(|| {
                    Error::invalid(format!(
                        "cannot truncate to max_length={} with this strategy: the other sequence \
                         alone is too long; use strategy longest_first",
                        self.max_length
                    ))
                })?;
                target.truncate(keep, self.left);
                Ok(())
            }
        }
    }
}

/// Padding is applied when results are read: each result keeps its pad count, and its columns
/// show `pad_id` / `pad_type_id` / `pad_token`, attention 0, special 1 and offsets (0, 0) there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Padding {
    /// Pad to this length; None pads a batch to its longest member.
    pub length: Option<usize>,
    pub multiple_of: Option<usize>,
    pub left: bool,
    pub pad_id: u32,
    pub pad_type_id: u32,
    pub pad_token: String,
}

impl Padding {
    /// The length every member of a batch whose longest member has `longest` tokens is padded to.
    pub fn target(&self, longest: usize) -> usize {
        let n = self.length.unwrap_or(longest);
        match self.multiple_of {
            Some(m) if m > 0 && !n.is_multiple_of(m) => n + m - n % m,
            _ => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(n: usize) -> Encoding {
        let mut e = Encoding::default();
        for i in 0..n {
            e.push(i as u32, (i as u32, i as u32 + 1), i as u32);
        }
        e
    }

    #[test]
    fn longest_first_trims_the_longer_then_alternates() {
        let t = Truncation {
            max_length: 8,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            left: false,
        };
        // Measured with HF tokenizers at max_length 8 (budget 5 after [CLS] [SEP] [SEP]).
        for (n1, n2, want) in [
            (5, 5, (2, 3)),
            (4, 3, (3, 2)),
            (3, 6, (2, 3)),
            (2, 9, (2, 3)),
        ] {
            let (mut a, mut b) = (seq(n1), seq(n2));
            t.apply(&mut a, Some(&mut b), 3).unwrap();
            assert_eq!((a.len(), b.len()), want, "{n1} {n2}");
        }
    }

    #[test]
    fn bert_template_and_padding() {
        let t = Template::bert(("[CLS]".into(), 101), ("[SEP]".into(), 102));
        let mut e = Encoding::default();
        t.apply(&seq(2), Some(&seq(1)), &mut e);
        assert_eq!(e.ids, [101, 0, 1, 102, 0, 102]);
        assert_eq!(e.type_ids, [0, 0, 0, 0, 1, 1]);
        assert_eq!(e.sequence, [NO_WORD, 0, 0, NO_WORD, 1, NO_WORD]);
        let p = Padding {
            length: None,
            multiple_of: Some(4),
            left: false,
            pad_id: 0,
            pad_type_id: 0,
            pad_token: "[PAD]".into(),
        };
        assert_eq!(p.target(e.len()), 8);
    }
}
