//! After the model: truncation, the special-token template (`[CLS] A [SEP] B [SEP]` with type ids)
//! and padding — HF's post-processing steps, on one plain `Encoding` record.

use crate::error::{Error, Result};
use std::ops::Range;

/// One token of a result. Offsets are character offsets into the text the token came from;
/// tokens the template adds have (0, 0) and no word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub id: u32,
    pub type_id: u32,
    pub offsets: (u32, u32),
    /// Index of the pre-token (word) it came from; [`NO_WORD`] for template tokens, which are
    /// exactly the special ones of HF's `special_tokens_mask`.
    pub word: u32,
    /// Which input (0 = first, 1 = pair) it belongs to; [`NO_WORD`] for template tokens.
    pub sequence: u32,
    /// Where its string is, for pipelines whose token strings are not the model's (an added
    /// token as matched): an index into that call's strings, or [`NO_TEXT`].
    pub text: u32,
}

/// A token whose string is its id's.
pub const NO_TEXT: u32 = u32::MAX;

/// One encoded sequence (or pair): its tokens in one array, so a result costs one allocation.
/// Padding is not stored: results carry a pad count and show the padded columns (see
/// [`Padding`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Encoding {
    pub toks: Vec<Token>,
}

pub const NO_WORD: u32 = u32::MAX;

impl Encoding {
    pub fn with_capacity(tokens: usize) -> Self {
        Encoding {
            toks: Vec::with_capacity(tokens),
        }
    }

    pub fn push(&mut self, id: u32, offsets: (u32, u32), word: u32) {
        self.toks.push(Token {
            id,
            type_id: 0,
            offsets,
            word,
            sequence: 0,
            text: NO_TEXT,
        });
    }

    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// Point the last token's string at `text` (see [`Token::text`]).
    pub fn set_text(&mut self, text: u32) {
        if let Some(t) = self.toks.last_mut() {
            t.text = text;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    pub fn clear(&mut self) {
        self.toks.clear();
    }

    pub fn ids(&self) -> Vec<u32> {
        self.toks.iter().map(|t| t.id).collect()
    }

    /// The tokens in `r`, as an encoding of their own.
    pub fn slice(&self, r: Range<usize>) -> Encoding {
        Encoding {
            toks: self.toks[r].to_vec(),
        }
    }

    /// Append `other`, giving its tokens `type_id` and `sequence` (None keeps theirs).
    pub fn extend_from(&mut self, other: &Encoding, type_id: Option<u32>, sequence: Option<u32>) {
        if type_id.is_none() && sequence.is_none() {
            self.toks.extend_from_slice(&other.toks);
            return;
        }
        self.toks.extend(other.toks.iter().map(|t| Token {
            type_id: type_id.unwrap_or(t.type_id),
            sequence: sequence.unwrap_or(t.sequence),
            ..*t
        }));
    }

    /// Give every token `type_id` and `sequence`.
    pub fn relabel(&mut self, type_id: u32, sequence: u32) {
        for t in &mut self.toks {
            t.type_id = type_id;
            t.sequence = sequence;
        }
    }

    /// Mark every token as of input `sequence`, keeping its type id.
    pub fn set_sequence(&mut self, sequence: u32) {
        for t in &mut self.toks {
            t.sequence = sequence;
        }
    }

    /// Set the last token's type id.
    pub fn set_type_id(&mut self, type_id: u32) {
        if let Some(t) = self.toks.last_mut() {
            t.type_id = type_id;
        }
    }

    pub fn push_added(&mut self, id: u32, type_id: u32) {
        self.toks.push(Token {
            id,
            type_id,
            offsets: (0, 0),
            word: NO_WORD,
            sequence: NO_WORD,
            text: NO_TEXT,
        });
    }
}

/// An encoding with the windows truncation cut off, each of which may carry windows of its own:
/// HF merges a pair's windows pairwise and keeps that nesting, so subword keeps it too.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Windows {
    pub enc: Encoding,
    pub overflow: Vec<Windows>,
}

impl Windows {
    pub fn new(enc: Encoding) -> Windows {
        Windows {
            enc,
            overflow: Vec::new(),
        }
    }

    /// Every token of it and of its windows in `sequence`.
    pub fn set_sequence(&mut self, sequence: u32) {
        self.enc.set_sequence(sequence);
        for o in &mut self.overflow {
            o.set_sequence(sequence);
        }
    }

    /// `self` followed by `other`, with overflowing windows combined the way HF's
    /// `Encoding::merge_with` combines them: each of ours with `other` and with each of its
    /// windows, then the whole of `self` with each of `other`'s windows.
    pub fn merge(&self, other: &Windows) -> Windows {
        let mut overflow = Vec::new();
        for mine in &self.overflow {
            overflow.push(mine.merge(other));
            for theirs in &other.overflow {
                overflow.push(mine.merge(theirs));
            }
        }
        for theirs in &other.overflow {
            overflow.push(self.merge(theirs));
        }
        let mut enc = self.enc.clone();
        enc.extend_from(&other.enc, None, None);
        Windows { enc, overflow }
    }

    /// `self.merge(other)` in place: without windows on either side (no truncation cut, the
    /// common case) that is one extension of the tokens, not a copy of both.
    pub fn append(&mut self, other: &Windows) {
        if self.overflow.is_empty() && other.overflow.is_empty() {
            self.enc.extend_from(&other.enc, None, None);
        } else {
            *self = self.merge(other);
        }
    }

    /// Give every token of every window `sequence`.
    pub fn mark_all(&mut self, sequence: u32) {
        for t in &mut self.enc.toks {
            t.sequence = sequence;
        }
        for o in &mut self.overflow {
            o.mark_all(sequence);
        }
    }

    /// Give the tokens of the main window `type_id` and `sequence`; its overflowing windows
    /// keep theirs (HF's template relabels the encoding it is given, not its overflowing).
    pub fn relabel(&mut self, type_id: u32, sequence: u32) {
        self.enc.relabel(type_id, sequence);
    }

    /// Give every token of every window `type_id`.
    pub fn set_type_ids(&mut self, type_id: u32) {
        for t in &mut self.enc.toks {
            t.type_id = type_id;
        }
        for o in &mut self.overflow {
            o.set_type_ids(type_id);
        }
    }
}

/// Many encodings in one set of columns: a batch costs a few allocations, not a few per text.
/// Each item is a main encoding in one slot; slots may have overflowing windows (child slots).
#[derive(Debug, Default)]
pub struct Batch {
    pub cols: Encoding,
    /// Slot s is `bounds[s]..bounds[s + 1]`.
    pub bounds: Vec<usize>,
    /// Main slot of each item.
    pub items: Vec<u32>,
    /// Slots with overflowing windows: slot -> its window slots (absent: none).
    pub children: rustc_hash::FxHashMap<u32, Vec<u32>>,
}

impl Batch {
    pub fn with_capacity(tokens: usize, items: usize) -> Batch {
        let mut bounds = Vec::with_capacity(items + 1);
        bounds.push(0);
        Batch {
            cols: Encoding {
                toks: Vec::with_capacity(tokens),
            },
            bounds,
            items: Vec::with_capacity(items),
            children: Default::default(),
        }
    }

    fn push_slot(&mut self, e: &Encoding) -> u32 {
        if self.bounds.is_empty() {
            self.bounds.push(0);
        }
        self.cols.extend_from(e, None, None);
        self.bounds.push(self.cols.len());
        (self.bounds.len() - 2) as u32
    }

    /// Add an item without overflowing windows.
    pub fn push(&mut self, main: &Encoding) {
        let slot = self.push_slot(main);
        self.items.push(slot);
    }

    /// Add an item with its windows.
    pub fn push_windows(&mut self, w: &Windows) {
        let slot = self.push_tree(w);
        self.items.push(slot);
    }

    fn push_tree(&mut self, w: &Windows) -> u32 {
        let slot = self.push_slot(&w.enc);
        if !w.overflow.is_empty() {
            let kids = w.overflow.iter().map(|o| self.push_tree(o)).collect();
            self.children.insert(slot, kids);
        }
        slot
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Token range of slot `s`.
    pub fn slot(&self, s: usize) -> Range<usize> {
        self.bounds[s]..self.bounds[s + 1]
    }

    /// Main slot of item `i`.
    pub fn item(&self, i: usize) -> usize {
        self.items[i] as usize
    }

    /// The window slots of slot `s`.
    pub fn overflow(&self, s: usize) -> &[u32] {
        self.children.get(&(s as u32)).map_or(&[], |v| v.as_slice())
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
    /// The token strings results show for each special's ids, in `specials`' order (HF's
    /// `tokens`); a special with none here shows its name for each of its ids.
    pub strings: Vec<Vec<String>>,
    /// Written back as BertProcessing rather than TemplateProcessing.
    pub bert_form: bool,
}

impl Template {
    /// BertProcessing: specials are `[cls, sep]`, in that order (`render_post` relies on it).
    /// Template pieces name their special, so when `cls` and `sep` share a string but not an
    /// id, `sep` is keyed by a name no token string can equal and shows its own string.
    pub fn bert(cls: (String, u32), sep: (String, u32)) -> Template {
        let (sep_key, strings) = if cls.0 == sep.0 && cls.1 != sep.1 {
            let key = format!("{}\u{0}sep", sep.0);
            (key, vec![vec![cls.0.clone()], vec![sep.0.clone()]])
        } else {
            (sep.0.clone(), Vec::new())
        };
        Template {
            single: vec![
                Piece::Special(cls.0.clone(), 0),
                Piece::Sequence(false, 0),
                Piece::Special(sep_key.clone(), 0),
            ],
            pair: vec![
                Piece::Special(cls.0.clone(), 0),
                Piece::Sequence(false, 0),
                Piece::Special(sep_key.clone(), 0),
                Piece::Sequence(true, 1),
                Piece::Special(sep_key.clone(), 1),
            ],
            specials: vec![(cls.0, vec![cls.1]), (sep_key, vec![sep.1])],
            strings,
            bert_form: true,
        }
    }

    fn ids_of(&self, name: &str) -> Result<&[u32]> {
        self.specials
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, ids)| ids.as_slice())
            .ok_or_else(|| {
                // HF's words first, so code matching HF's message still matches.
                Error::invalid(format!(
                    "Missing SpecialToken(s) with id(s) `{name}`: the template uses special \
                     token {name:?} but does not list its ids; add it to special_tokens"
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

    /// The template with its special tokens left out (its type ids stay).
    pub fn without_specials(&self) -> Template {
        let keep = |t: &[Piece]| -> Vec<Piece> {
            t.iter()
                .filter(|p| matches!(p, Piece::Sequence(..)))
                .cloned()
                .collect()
        };
        Template {
            single: keep(&self.single),
            pair: keep(&self.pair),
            specials: Vec::new(),
            strings: Vec::new(),
            bert_form: self.bert_form,
        }
    }

    /// The string results show for the template token `id` (the first special that has it).
    pub fn string_of(&self, id: u32) -> Option<String> {
        self.specials
            .iter()
            .enumerate()
            .find_map(|(k, (name, ids))| {
                let j = ids.iter().position(|&i| i == id)?;
                Some(match self.strings.get(k).filter(|s| s.len() == ids.len()) {
                    Some(strings) => strings[j].clone(),
                    None => name.clone(),
                })
            })
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

impl Template {
    /// [`Template::apply`] for sequences with overflowing windows: HF folds the template's pieces
    /// together one merge at a time, which decides how windows combine.
    pub fn apply_windows(&self, a: Windows, b: Option<Windows>) -> Windows {
        if a.overflow.is_empty() && b.as_ref().is_none_or(|b| b.overflow.is_empty()) {
            // No windows to combine (the common call): one pass into one buffer, the same
            // tokens as the fold below (a test holds them equal).
            let specials: usize = self.added(b.is_some());
            let n = a.enc.len() + b.as_ref().map_or(0, |b| b.enc.len()) + specials;
            let mut out = Encoding::with_capacity(n);
            self.apply(&a.enc, b.as_ref().map(|b| &b.enc), &mut out);
            return Windows::new(out);
        }
        self.fold_windows(a, b)
    }

    /// HF's fold, one merge at a time (what decides how windows combine).
    fn fold_windows(&self, mut a: Windows, b: Option<Windows>) -> Windows {
        let pair = b.is_some();
        let mut b = b;
        let template = if pair { &self.pair } else { &self.single };
        let mut out: Option<Windows> = None;
        for p in template {
            let special;
            let piece: &Windows = match p {
                Piece::Special(name, type_id) => {
                    let mut e = Encoding::default();
                    for &id in self.ids_of(name).unwrap_or(&[]) {
                        e.push_added(id, *type_id);
                    }
                    special = Windows::new(e);
                    &special
                }
                Piece::Sequence(false, type_id) => {
                    a.relabel(*type_id, 0);
                    &a
                }
                Piece::Sequence(true, type_id) => match b.as_mut() {
                    Some(b) => {
                        b.relabel(*type_id, 1);
                        b
                    }
                    None => continue,
                },
            };
            match &mut out {
                None => out = Some(piece.clone()),
                Some(o) => o.append(piece),
            }
        }
        out.unwrap_or_default()
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
    /// How many tokens `a` (and `b`) may keep so that together, plus `added` template tokens,
    /// they fit `max_length`; None where nothing needs cutting.
    pub fn lengths(
        &self,
        a: usize,
        b: Option<usize>,
        added: usize,
    ) -> Result<(Option<usize>, Option<usize>)> {
        // HF subtracts the template's tokens from max_length unchecked: when they are more,
        // the limit wraps around and nothing is cut; a limit of 0 cuts everything, whatever
        // the strategy.
        let Some(budget) = self.max_length.checked_sub(added) else {
            return Ok((None, None));
        };
        if budget == 0 {
            return Ok((Some(0), b.map(|_| 0)));
        }
        if a + b.unwrap_or(0) <= budget {
            return Ok((None, None));
        }
        match (b, self.strategy) {
            (None, TruncationStrategy::OnlySecond) => Err(Error::invalid(
                "truncation strategy only_second needs a pair of sequences",
            )),
            (None, _) => Ok((Some(budget), None)),
            (Some(b), TruncationStrategy::LongestFirst) => {
                // HF's rule: the shorter keeps up to half the budget (rounded down), the longer
                // (the second on ties) the rest.
                let small = a.min(b).min(budget / 2);
                let large = budget - small;
                Ok(if a > b {
                    (Some(large), Some(small))
                } else {
                    (Some(small), Some(large))
                })
            }
            (Some(b), strategy) => {
                let (target, other) = if strategy == TruncationStrategy::OnlyFirst {
                    (a, b)
                } else {
                    (b, a)
                };
                // HF's rule: the truncated sequence must keep at least one token.
                let keep = budget
                    .checked_sub(other)
                    .filter(|&k| k > 0 && k < target)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "cannot truncate to max_length={} with this strategy: the other \
                             sequence alone is too long; use strategy longest_first",
                            self.max_length
                        ))
                    })?;
                Ok(if strategy == TruncationStrategy::OnlyFirst {
                    (Some(keep), None)
                } else {
                    (None, Some(keep))
                })
            }
        }
    }

    /// The windows a sequence of `len` tokens is cut into when it may keep `keep`: the first is
    /// the kept part, the others overflow, each `stride` tokens overlapping the one before (HF's
    /// overflowing tokens).
    pub fn windows(&self, len: usize, keep: Option<usize>) -> Result<Vec<Range<usize>>> {
        let keep = match keep {
            Some(k) if k < len => k,
            _ => {
                let whole = 0..len;
                return Ok(vec![whole]);
            }
        };
        if keep == 0 {
            return Ok(vec![0..0, 0..len]);
        }
        if self.stride >= keep {
            return Err(Error::invalid(format!(
                "stride={} must be less than the {keep} tokens a sequence keeps here \
                 (max_length minus the special tokens); lower the stride",
                self.stride
            )));
        }
        let step = keep - self.stride;
        let mut out = Vec::new();
        if self.left {
            let mut stop = len;
            loop {
                let start = stop.saturating_sub(keep);
                out.push(start..stop);
                if start == 0 || stop <= step {
                    break;
                }
                stop -= step;
            }
        } else {
            let mut start = 0;
            loop {
                let stop = (start + keep).min(len);
                out.push(start..stop);
                if stop == len {
                    break;
                }
                start += step;
            }
        }
        Ok(out)
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
    /// Longest padded length (and largest `pad_to_multiple_of`) accepted: padding allocates
    /// every column at this length per result, so a mistaken 10¹² must fail when set, not abort
    /// the process when read. 2²⁴ tokens is beyond any model's context.
    pub const MAX_LENGTH: usize = 1 << 24;

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
            let (a, b) = t.lengths(n1, Some(n2), 3).unwrap();
            assert_eq!((a.unwrap(), b.unwrap()), want, "{n1} {n2}");
        }
        let strided = Truncation {
            stride: 1,
            ..t.clone()
        };
        assert_eq!(strided.windows(7, Some(3)).unwrap(), [0..3, 2..5, 4..7]);
        let left = Truncation {
            left: true,
            ..strided
        };
        assert_eq!(left.windows(7, Some(3)).unwrap(), [4..7, 2..5, 0..3]);
    }

    /// Without windows, the one-pass path gives the fold's tokens: templates with specials of
    /// several ids, both sequences, a sequence twice, type ids, and empty sequences.
    #[test]
    fn one_pass_equals_the_fold() {
        let special = |name: &str, t| Piece::Special(name.into(), t);
        let templates = [
            Template::bert(("[CLS]".into(), 101), ("[SEP]".into(), 102)),
            Template::bert(("<s>".into(), 7), ("<s>".into(), 8)),
            Template {
                single: vec![
                    Piece::Sequence(false, 3),
                    special("X", 1),
                    Piece::Sequence(false, 0),
                ],
                pair: vec![
                    Piece::Sequence(true, 2),
                    special("X", 0),
                    Piece::Sequence(false, 1),
                    special("Y", 5),
                ],
                specials: vec![("X".into(), vec![4, 5, 6]), ("Y".into(), vec![])],
                strings: Vec::new(),
                bert_form: false,
            },
        ];
        for t in &templates {
            for (na, nb) in [
                (0, None),
                (3, None),
                (2, Some(0)),
                (0, Some(4)),
                (5, Some(2)),
            ] {
                let b = nb.map(|n| Windows::new(seq(n)));
                let fold = t.fold_windows(Windows::new(seq(na)), b.clone());
                let one = t.apply_windows(Windows::new(seq(na)), b);
                assert_eq!(one.enc, fold.enc, "{na} {nb:?}");
                assert!(one.overflow.is_empty() && fold.overflow.is_empty());
            }
        }
    }

    #[test]
    fn bert_template_and_padding() {
        let t = Template::bert(("[CLS]".into(), 101), ("[SEP]".into(), 102));
        let mut e = Encoding::default();
        t.apply(&seq(2), Some(&seq(1)), &mut e);
        let merged = t.fold_windows(Windows::new(seq(2)), Some(Windows::new(seq(1))));
        assert_eq!(merged.enc, e);
        assert_eq!(e.ids(), [101, 0, 1, 102, 0, 102]);
        let column = |f: fn(&Token) -> u32| e.toks.iter().map(f).collect::<Vec<_>>();
        assert_eq!(column(|t| t.type_id), [0, 0, 0, 0, 1, 1]);
        assert_eq!(column(|t| t.sequence), [NO_WORD, 0, 0, NO_WORD, 1, NO_WORD]);
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
