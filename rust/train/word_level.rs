//! WordLevel training: the counted words themselves, most frequent first (HF's
//! `WordLevelTrainer`: ties in word order, those under `min_frequency` left out), after the
//! special tokens, `vocab_size` in all. A word that spells a special token keeps the special's
//! id instead of taking a second one (HF gives the text both and the special loses its id).

use super::Counts;

pub fn train(
    counts: Counts,
    specials: &[String],
    vocab_size: usize,
    min_frequency: u64,
) -> Vec<String> {
    let mut words: Vec<(Box<[u8]>, u64)> = counts
        .into_iter()
        .filter(|(_, (c, _))| *c >= min_frequency)
        .map(|(w, (c, _))| (w, c))
        .collect();
    words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut seen: rustc_hash::FxHashSet<&str> = specials.iter().map(String::as_str).collect();
    let mut out: Vec<String> = specials.to_vec();
    for (w, _) in &words {
        if out.len() >= vocab_size {
            break;
        }
        let w = std::str::from_utf8(w).expect("words are text");
        if seen.insert(w) {
            out.push(w.to_string());
        }
    }
    out.truncate(vocab_size);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_frequent_first_ties_by_word_specials_kept_once() {
        let counts = crate::train::counts_of(&[("b", 2), ("a", 2), ("c", 5), ("<s>", 9), ("d", 1)]);
        let specials = vec!["<s>".to_string()];
        assert_eq!(
            train(counts.clone(), &specials, 10, 2),
            ["<s>", "c", "a", "b"]
        );
        assert_eq!(train(counts, &specials, 3, 0), ["<s>", "c", "a"]);
    }
}
