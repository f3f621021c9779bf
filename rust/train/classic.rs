//! Classic BPE (Sennrich et al.): whitespace words → characters plus `</w>` → the shared merge
//! loop ranking pairs by count. With `merge_end_of_word` off, `</w>` never joins a merge.
//!
//! Vocabulary order: the unknown token (if any), the alphabet in code point order, `</w>`, then
//! the learned tokens in the order they were learned.

use super::queue::{Handles, Score, TieBreak};
use super::symbols::{alphabet, spell, start, Boundary, Learned};
use super::{learn_with_progress, ordered_words, Counts};
use crate::error::{Error, Result};

pub struct ClassicOptions {
    pub vocab_size: usize,
    pub unk_token: Option<String>,
    pub suffix: String,
    pub merge_end_of_word: bool,
    pub min_frequency: u64,
    pub tie_break: TieBreak,
    pub show_progress: bool,
}

pub fn train(counts: Counts, opts: &ClassicOptions) -> Result<Learned> {
    if opts.suffix.is_empty() {
        return Err(Error::invalid("the end-of-word suffix cannot be empty"));
    }
    let words = ordered_words(counts);
    let chars = alphabet(&words, None);
    let n_unk = opts.unk_token.is_some() as usize;
    let base = n_unk + chars.len() + 1;
    if opts.vocab_size < base {
        return Err(Error::invalid(format!(
            "vocab_size={} is too small: the alphabet ({} characters), {:?}{} need {base}",
            opts.vocab_size,
            chars.len(),
            opts.suffix,
            if n_unk == 1 {
                " and the unknown token"
            } else {
                ""
            }
        )));
    }
    let start = start(&words, &chars, &Boundary::EndOfWord(&opts.suffix));
    drop(words);
    let handles = Handles {
        score: Score::Count,
        strip_right: Vec::new(),
        frozen: if opts.merge_end_of_word {
            Vec::new()
        } else {
            start.end_of_word.into_iter().collect()
        },
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
    Ok(spell(opts.unk_token.iter().cloned().collect(), &result))
}
