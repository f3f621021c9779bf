//! BPE over characters with HF's `BpeTrainer` options: the trainer of `subword.tokenizers`,
//! for whatever pipeline counted the words (added tokens cut out, normalizer, pre-tokenizer).
//! The shared merge loop ranks pairs by count; the handles set the marks (a
//! `continuing_subword_prefix` dropped from the right part of a merge, an `end_of_word_suffix`
//! joined to a word's last character) and the longest token a merge may spell.
//!
//! Vocabulary order: the special tokens, the alphabet in code point order, each marked form of
//! a character in order of first appearance, then the learned tokens in the order they were
//! learned. `vocab_size` counts them all.
//!
//! Where this differs from HF, on purpose (HF's results depend on its hash maps' order): ties
//! between pairs go to the lexicographically greatest, not to the pair of lower ids (whose ids
//! HF assigns in hash order); the alphabet's limit keeps the most frequent characters with ties
//! to the lower code point; a character outside the alphabet splits its word instead of being
//! skipped (HF then learns pairs that never occur side by side); the special tokens are cut out
//! of the text before counting (by the counter), so no learned token holds one.

use super::queue::{Handles, Score, TieBreak};
use super::symbols::{alphabet_with, spell, start_marked, Learned};
use super::{learn_with_progress, ordered_words, Counts};
use crate::error::{Error, Result};

pub struct CharBpeOptions {
    pub vocab_size: usize,
    pub min_frequency: u64,
    pub specials: Vec<String>,
    pub limit_alphabet: Option<usize>,
    pub initial_alphabet: Vec<char>,
    pub prefix: String,
    pub suffix: String,
    pub max_token_length: Option<usize>,
    pub show_progress: bool,
}

pub fn train(counts: Counts, opts: &CharBpeOptions) -> Result<Learned> {
    if opts.max_token_length == Some(0) {
        return Err(Error::invalid(
            "max_token_length must be at least 1 (or None for no limit)",
        ));
    }
    let words = ordered_words(counts);
    let chars = alphabet_with(&words, opts.limit_alphabet, &opts.initial_alphabet);
    let start = start_marked(&words, &chars, &opts.prefix, &opts.suffix);
    drop(words);
    let base = opts.specials.len() + start.symbols.len();
    let handles = Handles {
        score: Score::Count,
        strip_right: opts.prefix.as_bytes().to_vec(),
        frozen: Vec::new(),
        max_chars: opts.max_token_length,
    };
    let result = learn_with_progress(
        start.symbols,
        start.words,
        opts.vocab_size.saturating_sub(base),
        opts.min_frequency,
        TieBreak::Lexicographic,
        &handles,
        opts.show_progress,
    )?;
    Ok(spell(opts.specials.clone(), &result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::counts_of as counts;

    fn opts() -> CharBpeOptions {
        CharBpeOptions {
            vocab_size: 100,
            min_frequency: 0,
            specials: vec!["<unk>".into()],
            limit_alphabet: None,
            initial_alphabet: Vec::new(),
            prefix: String::new(),
            suffix: String::new(),
            max_token_length: None,
            show_progress: false,
        }
    }

    #[test]
    fn marks_spell_merges_and_max_length_passes_pairs_over() {
        let c = || counts(&[("abab", 5), ("ab", 3)]);
        let o = CharBpeOptions {
            prefix: "##".into(),
            suffix: "</w>".into(),
            ..opts()
        };
        let learned = train(c(), &o).unwrap();
        // Symbols: a b, then ##b, ##a, ##b</w> in order of first appearance.
        assert_eq!(
            learned.tokens[..6],
            ["<unk>", "a", "b", "##b", "##a", "##b</w>"]
        );
        assert_eq!(learned.merges[0], ("a".to_string(), "##b".to_string()));
        assert!(learned.tokens.contains(&"ab</w>".to_string()));
        let short = train(
            c(),
            &CharBpeOptions {
                max_token_length: Some(2),
                ..opts()
            },
        )
        .unwrap();
        assert!(short.tokens.iter().skip(1).all(|t| t.chars().count() <= 2));
        assert_eq!(short.merges, [("a".to_string(), "b".to_string())]);
    }

    #[test]
    fn the_initial_alphabet_is_kept_first_under_the_limit() {
        let o = CharBpeOptions {
            limit_alphabet: Some(2),
            initial_alphabet: vec!['z'],
            vocab_size: 0,
            ..opts()
        };
        let learned = train(counts(&[("aab", 1)]), &o).unwrap();
        assert_eq!(learned.tokens, ["<unk>", "a", "z"]);
    }
}
