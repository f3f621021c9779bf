//! A string being normalized, with the way back to the original.
//!
//! Invariant: `align` has one entry per byte of `normalized`, the byte range of `original` that
//! byte came from; all bytes of one char share an entry. Offsets computed on the normalized text
//! map back through it, so every normalizer keeps offsets exact.
//!
//! Normalizers rewrite the text as a stream of `(char, change)`, HF `tokenizers`' convention (its
//! offsets are the yardstick): `change` 0 replaces the next char of the current text, 1 inserts a
//! char (it takes the alignment of the byte before it), `-n` replaces the next char and removes the
//! `n` after it. A replacing char takes the alignment of the char it replaces, so a char that
//! absorbs the chars after it (NFC composing `e` and U+0301) keeps only the first one's range —
//! HF's rule, kept for the same offsets.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// Bytes of the original text (the alignments point into it; the text itself is not kept,
    /// so that the pieces a pre-tokenizer cuts are cheap).
    original_len: usize,
    normalized: String,
    align: Vec<(usize, usize)>,
    /// The original bytes this string stands for: the whole text, or what a slice covered
    /// when it was cut. Edits leave it as it is, so a piece stripped or emptied still reports
    /// where it came from (HF's `offsets_original`).
    span: (usize, usize),
}

impl Normalized {
    pub fn new(text: &str) -> Self {
        Self::of_range(text, 0, text.len())
    }

    /// `Normalized::new(text).slice(start, end)` (char boundaries) without aligning the rest
    /// of `text`.
    pub fn of_range(text: &str, start: usize, end: usize) -> Self {
        let mut align = Vec::with_capacity(end - start);
        for (at, c) in text[start..end].char_indices() {
            let from = start + at;
            align.extend(std::iter::repeat_n(
                (from, from + c.len_utf8()),
                c.len_utf8(),
            ));
        }
        Normalized {
            original_len: text.len(),
            normalized: text[start..end].to_string(),
            align,
            span: (start, end),
        }
    }

    /// The normalized bytes `start..end` (char boundaries) as a piece of their own, aligned to
    /// the same original.
    pub fn slice(&self, start: usize, end: usize) -> Normalized {
        Normalized {
            original_len: self.original_len,
            normalized: self.normalized[start..end].to_string(),
            align: self.align[start..end].to_vec(),
            span: self.original_range(start, end),
        }
    }

    /// The original byte range this string stands for (see `span`).
    pub fn original_span(&self) -> (usize, usize) {
        self.span
    }

    pub fn normalized(&self) -> &str {
        &self.normalized
    }

    pub fn into_normalized(self) -> String {
        self.normalized
    }

    /// Per byte of the normalized text, the original byte range it came from.
    pub fn alignments(&self) -> &[(usize, usize)] {
        &self.align
    }

    /// The original byte range of the normalized byte range `start..end`: from the first
    /// byte's start to the last byte's end, as HF maps offsets (empty ranges map to the empty
    /// range where they stand).
    pub fn original_range(&self, start: usize, end: usize) -> (usize, usize) {
        if start >= end {
            let at = match self.align.get(start) {
                Some(&(s, _)) => s,
                None => self.align.last().map_or(0, |&(_, e)| e),
            };
            return (at, at);
        }
        let first = self.align[start].0;
        let last = self.align[start..end]
            .iter()
            .map(|&(_, e)| e)
            .max()
            .unwrap_or(first);
        (first, last)
    }

    /// Rewrite the text as `dest` says (see the module doc), after dropping its first
    /// `initial_removed` chars.
    pub fn transform(
        &mut self,
        dest: impl IntoIterator<Item = (char, isize)>,
        initial_removed: usize,
    ) {
        self.transform_range(0, self.normalized.len(), dest, initial_removed);
    }

    /// [`Self::transform`] of the normalized bytes `start..end` (char boundaries) only; an
    /// inserted char at the range's start takes the alignment of the byte before the range.
    pub fn transform_range(
        &mut self,
        start: usize,
        end: usize,
        dest: impl IntoIterator<Item = (char, isize)>,
        initial_removed: usize,
    ) {
        let mut old = self.normalized[start..end].chars();
        let mut at = start
            + (&mut old)
                .take(initial_removed)
                .map(char::len_utf8)
                .sum::<usize>();
        let mut text = String::with_capacity(end - start);
        let mut align = Vec::with_capacity(end - start);
        for (c, change) in dest {
            let from = if change > 0 {
                if at == 0 {
                    (0, 0)
                } else {
                    self.align[at - 1]
                }
            } else {
                self.align
                    .get(at)
                    .copied()
                    .unwrap_or_else(|| self.end_alignment())
            };
            if change <= 0 {
                at += old.next().map_or(0, char::len_utf8);
            }
            if change < 0 {
                at += (&mut old)
                    .take(change.unsigned_abs())
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
            text.push(c);
            align.extend(std::iter::repeat_n(from, c.len_utf8()));
        }
        self.normalized.replace_range(start..end, &text);
        self.align.splice(start..end, align);
    }

    fn end_alignment(&self) -> (usize, usize) {
        let end = self.original_len;
        (end, end)
    }

    /// Keep only the chars `keep` accepts.
    pub fn filter(&mut self, keep: impl Fn(char) -> bool) {
        let mut dest = Vec::with_capacity(self.normalized.len());
        let mut leading_removed = 0;
        let mut removed = 0isize;
        let mut last: Option<char> = None;
        for c in self.normalized.chars() {
            if keep(c) {
                match last {
                    Some(l) => dest.push((l, -removed)),
                    None => leading_removed = removed as usize,
                }
                last = Some(c);
                removed = 0;
            } else {
                removed += 1;
            }
        }
        match last {
            Some(l) => dest.push((l, -removed)),
            None => leading_removed = removed as usize,
        }
        self.transform(dest, leading_removed);
    }

    /// Replace each char by what `f` gives (one char or several: the first replaces it, the rest
    /// are inserted after it).
    pub fn flat_map<I: IntoIterator<Item = char>>(&mut self, f: impl Fn(char) -> I) {
        let mut dest = Vec::with_capacity(self.normalized.len());
        for c in self.normalized.chars() {
            for (k, d) in f(c).into_iter().enumerate() {
                dest.push((d, isize::from(k > 0)));
            }
        }
        self.transform(dest, 0);
    }

    /// `s` before the text, aligned with its first char; nothing for an empty text.
    pub fn prepend(&mut self, s: &str) {
        let Some(first) = self.normalized.chars().next() else {
            return;
        };
        let dest = s
            .chars()
            .enumerate()
            .map(|(k, c)| (c, isize::from(k > 0)))
            .chain(std::iter::once((first, 1)));
        self.transform_range(0, first.len_utf8(), dest, 0);
    }

    /// `s` after the text, aligned with its last char (at the start of an empty text).
    pub fn append(&mut self, s: &str) {
        match self.normalized.char_indices().next_back() {
            Some((at, last)) => {
                let dest = std::iter::once((last, 0)).chain(s.chars().map(|c| (c, 1)));
                self.transform_range(at, self.normalized.len(), dest, 0);
            }
            None => self.transform(s.chars().map(|c| (c, 1)), 0),
        }
    }

    /// Drop every char.
    pub fn clear(&mut self) {
        let n = self.normalized.chars().count();
        self.transform(std::iter::empty(), n);
    }

    /// The byte range of the chars `start..end` of the normalized text, read as HF reads a
    /// slice of a `NormalizedString`: `start` must be a char of the text (except for the
    /// empty range at 0), an `end` past the text stops at its end, and a reversed range runs
    /// to the end (HF's `end - start` wraps around).
    pub fn char_range(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        if (start, end) == (0, 0) {
            return Some((0, 0));
        }
        let mut chars = self.normalized.char_indices().skip(start);
        let (s, first) = chars.next()?;
        if start == end {
            return Some((s, s));
        }
        let more = end.checked_sub(start).map_or(usize::MAX, |n| n - 1);
        let (at, last) = chars.take(more).last().unwrap_or((s, first));
        Some((s, at + last.len_utf8()))
    }

    /// Drop leading (`left`) and trailing (`right`) whitespace (`char::is_whitespace`).
    pub fn strip(&mut self, left: bool, right: bool) {
        let chars: Vec<char> = self.normalized.chars().collect();
        let lead = if left {
            chars.iter().take_while(|c| c.is_whitespace()).count()
        } else {
            0
        };
        let trail = if right {
            chars[lead..]
                .iter()
                .rev()
                .take_while(|c| c.is_whitespace())
                .count()
        } else {
            0
        };
        if lead == 0 && trail == 0 {
            return;
        }
        let keep = &chars[lead..chars.len() - trail];
        self.transform(keep.iter().map(|&c| (c, 0)), lead);
    }

    /// Each of the normalized byte ranges `matches` (in order, not overlapping, not empty, on
    /// char boundaries) becomes `to`; the new chars are inserted where the match ends, so they
    /// take the alignment of its last byte. One pass, whatever the number of matches.
    pub fn replace_ranges(&mut self, matches: &[(usize, usize)], to: &str) {
        if matches.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.normalized.len());
        let mut align = Vec::with_capacity(self.align.len());
        let mut last = 0;
        for &(start, end) in matches {
            debug_assert!(last <= start && start < end);
            text.push_str(&self.normalized[last..start]);
            align.extend_from_slice(&self.align[last..start]);
            let from = self.align[end - 1];
            text.push_str(to);
            align.extend(std::iter::repeat_n(from, to.len()));
            last = end;
        }
        text.push_str(&self.normalized[last..]);
        align.extend_from_slice(&self.align[last..]);
        self.normalized = text;
        self.align = align;
    }

    /// Put `text` in place of the normalized text, byte `k` of it made from the normalized
    /// bytes `sources[k]` (for a normalizer that computes its result in one pass): each char
    /// takes the alignment of the first byte it came from.
    pub fn replace_all(&mut self, text: String, sources: &[(usize, usize)]) {
        debug_assert_eq!(text.len(), sources.len());
        let end = self.end_alignment();
        self.align = sources
            .iter()
            .map(|&(start, _)| self.align.get(start).copied().unwrap_or(end))
            .collect();
        self.normalized = text;
    }
}
