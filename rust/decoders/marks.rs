//! Decoders that undo word marks: prefixes, suffixes, replacement chars, padding.

use crate::options::PrependScheme;

/// BERT's tidy-up of spaces before punctuation and English contractions, in HF's order.
fn cleanup(s: &str) -> String {
    let mut out = s.to_string();
    for (from, to) in [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// `prefix` marks a continuation; any other token after the first starts a new word.
pub fn wordpiece(tokens: Vec<String>, prefix: &str, tidy: bool) -> Vec<String> {
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let t = if i == 0 {
                t
            } else if let Some(rest) = t.strip_prefix(prefix) {
                rest.to_string()
            } else {
                format!(" {t}")
            };
            if tidy {
                cleanup(&t)
            } else {
                t
            }
        })
        .collect()
}

/// `replacement` back to spaces; in the first token (unless the scheme is `never`) it is dropped
/// instead, as HF does (every one in that token, not only a leading one).
pub fn metaspace(tokens: Vec<String>, replacement: char, scheme: PrependScheme) -> Vec<String> {
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.chars()
                .filter_map(|c| {
                    if c != replacement {
                        Some(c)
                    } else if i == 0 && scheme != PrependScheme::Never {
                        None
                    } else {
                        Some(' ')
                    }
                })
                .collect()
        })
        .collect()
}

/// `suffix` ends a word: a space, except in the last token.
pub fn bpe(tokens: Vec<String>, suffix: &str) -> Vec<String> {
    let last = tokens.len().saturating_sub(1);
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| t.replace(suffix, if i == last { "" } else { " " }))
        .collect()
}

/// CTC output: repeats merged, padding dropped, the word delimiter a space (with `tidy`).
pub fn ctc(tokens: Vec<String>, pad: &str, delimiter: &str, tidy: bool) -> Vec<String> {
    let mut deduped: Vec<String> = tokens;
    deduped.dedup();
    deduped
        .into_iter()
        .filter_map(|t| {
            let mut t = t.replace(pad, "");
            if tidy {
                t = cleanup(&t).replace(delimiter, " ");
            }
            (!t.is_empty()).then_some(t)
        })
        .collect()
}

/// Up to `start` leading and `stop` trailing `content` chars off each token.
pub fn strip(tokens: Vec<String>, content: char, start: usize, stop: usize) -> Vec<String> {
    tokens
        .into_iter()
        .map(|t| {
            let chars: Vec<char> = t.chars().collect();
            let from = chars
                .iter()
                .take(start)
                .take_while(|&&c| c == content)
                .count();
            let to = chars.len()
                - chars[from..]
                    .iter()
                    .rev()
                    .take(stop)
                    .take_while(|&&c| c == content)
                    .count();
            chars[from..to].iter().collect()
        })
        .collect()
}
