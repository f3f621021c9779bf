//! Lowercase, accents, and BERT's clean-up.

use super::Normalized;
use crate::bert::normalize::BertNormalizer;
use unicode_normalization_alignments::char::is_combining_mark;

/// Each char's full lowercase mapping (`char::to_lowercase`: `İ` gives two chars), char by char:
/// no context rules (a final `Σ` becomes `σ`), as HF does.
pub fn lowercase(n: &mut Normalized) {
    n.flat_map(char::to_lowercase);
}

/// Drop combining marks (HF's StripAccents; meant to follow NFD or NFKD).
pub fn strip_accents(n: &mut Normalized) {
    n.filter(|c| !is_combining_mark(c));
}

/// BERT's normalizer from `crate::bert` (the WordPiece pipeline's fast one pass), its per-byte
/// original char indices turned into this stage's alignments.
pub fn bert(b: &BertNormalizer, n: &mut Normalized) {
    let out = b.normalize(n.normalized());
    // Char index → byte range in the text given to the BERT pass.
    let starts: Vec<usize> = n.normalized().char_indices().map(|(i, _)| i).collect();
    let char_range = |i: u32| {
        let i = i as usize;
        let start = starts[i];
        let end = starts.get(i + 1).copied().unwrap_or(n.normalized().len());
        (start, end)
    };
    let dest: Vec<(usize, usize)> = out.origin.iter().map(|&i| char_range(i)).collect();
    n.replace_all(out.text, &dest);
}

/// Each char's full uppercase mapping, char by char (HF's `NormalizedString.uppercase`).
pub fn uppercase(n: &mut Normalized) {
    n.flat_map(char::to_uppercase);
}
