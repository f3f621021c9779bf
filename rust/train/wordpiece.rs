//! WordPiece training: BERT words → characters with `##` on non-initial ones → the shared merge
//! loop ranking pairs by likelihood, count(ab) / (count(a) · count(b)).
//!
//! Vocabulary order: special tokens, the alphabet as word-initial characters, the alphabet as
//! `##` continuations (both in code point order, so any word spelled in the alphabet encodes),
//! then the learned tokens in the order they were learned.

use super::queue::{Handles, Score, TieBreak};
use super::symbols::{alphabet, spell, start, Boundary, Learned};
use super::{learn_with_progress, ordered_words, Counts};
use crate::error::{Error, Result};

pub struct WordPieceOptions {
    pub vocab_size: usize,
    pub specials: Vec<String>,
    pub min_frequency: u64,
    pub limit_alphabet: Option<usize>,
    pub prefix: String,
    pub tie_break: TieBreak,
    pub show_progress: bool,
}

pub fn train(counts: Counts, opts: &WordPieceOptions) -> Result<Learned> {
    if opts.prefix.is_empty() {
        return Err(Error::invalid(
            "the continuing-subword prefix cannot be empty",
        ));
    }
    let words = ordered_words(counts);
    let chars = alphabet(&words, opts.limit_alphabet);
    let base = opts.specials.len() + 2 * chars.len();
    if opts.vocab_size < base {
        return Err(Error::invalid(format!(
            "vocab_size={} is too small: {} special tokens and {} alphabet characters (each \
             also as {}c) need {base}; raise vocab_size or set limit_alphabet",
            opts.vocab_size,
            opts.specials.len(),
            chars.len(),
            opts.prefix
        )));
    }
    let start = start(&words, &chars, &Boundary::ContinuingPrefix(&opts.prefix));
    drop(words);
    let handles = Handles {
        score: Score::Likelihood,
        strip_right: opts.prefix.as_bytes().to_vec(),
        frozen: Vec::new(),
        max_chars: None,
    };
    let result = learn_with_progress(
        start.symbols,
        start.words,
        opts.vocab_size - base,
        opts.min_frequency,
        opts.tie_break,
        &handles,
        opts.show_progress,
    )?;
    Ok(spell(opts.specials.clone(), &result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::counts_of as counts;

    fn opts(n: usize) -> WordPieceOptions {
        WordPieceOptions {
            vocab_size: n,
            specials: vec!["[UNK]".into()],
            min_frequency: 1,
            limit_alphabet: None,
            prefix: "##".into(),
            tie_break: TieBreak::Lexicographic,
            show_progress: false,
        }
    }

    #[test]
    fn likelihood_prefers_pairs_that_always_occur_together() {
        // "e" and "##s" are frequent and often apart; "q" is always followed by "##z".
        let c = counts(&[("es", 10), ("ea", 30), ("bs", 30), ("qz", 2)]);
        let alphabet = 6; // a b e q s z
        let learned = train(c, &opts(1 + 2 * alphabet + 1)).unwrap();
        assert_eq!(learned.merges[0], ("q".to_string(), "##z".to_string()));
        assert_eq!(learned.tokens.last().unwrap(), "qz");
    }
}
