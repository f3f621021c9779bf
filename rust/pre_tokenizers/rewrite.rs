//! The pre-tokenizers that rewrite their pieces as well as cut them, each rewrite aligned (see
//! `normalizers::Normalized`) so that offsets still point into the original.

use super::split::{apply, chars_matching, Behavior};
use crate::error::Result;
use crate::formats::byte_unicode;
use crate::normalizers::Normalized;
use crate::options::PrependScheme;
use crate::pretokenize::{Pattern, GPT2_PATTERN};
use std::sync::LazyLock;

pub(crate) static GPT2: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(GPT2_PATTERN).expect("GPT-2's pattern compiles"));

/// HF's ByteLevel: a space first unless the piece starts with one (aligned with its first char),
/// GPT-2's pattern (with `use_regex`), then every byte as its printable char (a char's bytes all
/// aligned with it).
pub fn byte_level(
    mut piece: Normalized,
    prefix_space: bool,
    use_regex: bool,
) -> Result<Vec<Normalized>> {
    if prefix_space && !piece.normalized().starts_with(' ') {
        piece.prepend(" ");
    }
    let parts = if use_regex {
        GPT2.spans(piece.normalized())?
            .into_iter()
            .map(|(s, e)| piece.slice(s, e))
            .collect()
    } else {
        vec![piece]
    };
    Ok(parts
        .into_iter()
        .map(|mut p| {
            let mut dest = Vec::with_capacity(p.normalized().len());
            for c in p.normalized().chars() {
                let mut buf = [0u8; 4];
                let mapped = byte_unicode::encode(c.encode_utf8(&mut buf).as_bytes());
                dest.extend(
                    mapped
                        .chars()
                        .enumerate()
                        .map(|(k, m)| (m, isize::from(k > 0))),
                );
            }
            p.transform(dest, 0);
            p
        })
        .collect())
}

/// HF's Metaspace: spaces become `replacement`; one is put first as `scheme` says (`first`: only
/// on the piece that starts the text); with `split`, a piece per word, each `replacement`
/// starting the piece after it.
pub fn metaspace(
    mut piece: Normalized,
    replacement: char,
    scheme: PrependScheme,
    split: bool,
) -> Vec<Normalized> {
    let spaces: Vec<(usize, usize)> = piece
        .normalized()
        .match_indices(' ')
        .map(|(i, _)| (i, i + 1))
        .collect();
    let rep = replacement.to_string();
    piece.replace_ranges(&spaces, &rep);
    let starts_text = piece.alignments().first().is_some_and(|&(s, _)| s == 0);
    let prepend = match scheme {
        PrependScheme::Always => true,
        PrependScheme::First => starts_text,
        PrependScheme::Never => false,
    };
    if prepend && !piece.normalized().starts_with(replacement) {
        piece.prepend(&rep);
    }
    if !split {
        return vec![piece];
    }
    let ranges = apply(
        chars_matching(piece.normalized(), |c| c == replacement),
        Behavior::MergedWithNext,
    );
    ranges.into_iter().map(|(s, e)| piece.slice(s, e)).collect()
}
